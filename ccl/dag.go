package ccl

import (
	"fmt"
	"slices"
)

// FlowID names a flow of one collective: 0 .. NumFlows-1.
type FlowID int32

// FlowKind says which algorithm, and which part of it, produced a flow.
type FlowKind uint8

// Flow kinds. The names follow SimCCL's conn_type strings where SimCCL has one.
const (
	KindRing         FlowKind = iota // a ring step (SimCCL "RING")
	KindTree                         // a tree edge, up or down (SimCCL "TREE_INIT")
	KindNVLS                         // a flow to or from an NVSwitch that reduces or multicasts ("NVLS")
	KindNVLSTree                     // NVLS inside a server, tree between servers ("NVLS_TREE")
	KindPXNInit                      // SimCCL's "PXN_INIT": the network hop a PXN entry sends for its exit (SimCCL's PXN), or the NVLink hop of a relay (the NCCL-like PXN)
	KindPXN                          // the rail-aligned network hop of a relay in the NCCL-like PXN ("PXN")
	KindMultiRing                    // a step of one of several edge-disjoint rings (TASP)
	KindRHD                          // a recursive halving-doubling exchange
	KindDirect                       // all-to-all, every pair at once
	KindPairwise                     // all-to-all, one shift per round
	KindDispatchRDMA                 // an MoE dispatch's copy across servers (DeepEP's RDMA copy, FAST's stage transfer)
	KindDispatchNVL                  // an MoE dispatch's move inside a server (DeepEP's NVLink forward, FAST's balance or restore)
	KindP2P                          // a point-to-point send between pipeline stages
)

var kindNames = [...]string{"RING", "TREE", "NVLS", "NVLS_TREE", "PXN_INIT", "PXN", "MULTIRING", "RHD", "DIRECT", "PAIRWISE", "DISPATCH_RDMA", "DISPATCH_NVL", "P2P"}

func (k FlowKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("FlowKind(%d)", int(k))
}

// Flow is one point-to-point transfer of a collective.
//
// Endpoints are GPU ranks (0 .. TotalGPUs-1) or NVSwitches, numbered after the GPUs as SimAI
// does: the NVSwitch of server s is TotalGPUs + s.
//
// A flow carries the data pieces [PieceLo, PieceHi) of the collective (see Collective): its
// Bytes are the sum of their sizes. Which pieces a flow carries is what lets Check prove a DAG
// correct; the network only needs Src, Dst and Bytes.
type Flow struct {
	Src, Dst         int32
	Bytes            int64
	Channel          int32
	Chunk            int32 // the step within the channel, or the chunk index
	Kind             FlowKind
	PieceLo, PieceHi int32
}

// Collective describes what a DAG implements: the operation, the group, and how its data is cut
// into pieces.
//
// Pieces are the unit of data the checker tracks. For a reduction (all-reduce, reduce-scatter)
// every rank starts with its own contribution to every piece; for all-gather, the rank at group
// index i starts with pieces [i·P/n, (i+1)·P/n); for all-to-all, piece (i·n + j)·P/n² + c is the
// c-th piece that group index i sends to group index j and starts on i. At the end: all-reduce —
// every rank holds every piece reduced over all ranks; reduce-scatter — group index i holds
// pieces [i·P/n, (i+1)·P/n) fully reduced; all-gather — every rank holds every piece;
// all-to-all — group index j holds every piece addressed to it.
type Collective struct {
	Op            Op
	Ranks         []int32 // the group, in group-index order
	GPUsPerServer int
	TotalGPUs     int   // GPUs in the cluster: NVSwitch endpoint ids start here
	Bytes         int64 // all-reduce, reduce-scatter, all-gather: the whole buffer; all-to-all: what each rank sends in all
	Pieces        int   // P, a multiple of n (all-to-all: of n²)
	// Truncate: every piece is ⌊Bytes/P⌋ bytes (all-to-all: ⌊Bytes/(P/n)⌋), the remainder
	// not sent, as SimCCL divides (Request.Truncate).
	Truncate bool
}

// PieceBytes is the size of piece p: Bytes split as evenly as possible, the first Bytes mod P
// pieces one byte larger; with Truncate every piece ⌊Bytes/P⌋.
func (c *Collective) PieceBytes(p int) int64 {
	per := c.Pieces
	if c.Op == OpAllToAll {
		// Each rank's Bytes split over n·(P/n²) pieces of its own.
		per = c.Pieces / len(c.Ranks)
		p %= per
	}
	q, r := c.Bytes/int64(per), c.Bytes%int64(per)
	if !c.Truncate && int64(p) < r {
		return q + 1
	}
	return q
}

// Empty says that a truncated collective has nothing to send: its pieces are 0 bytes.
func (c *Collective) Empty() bool { return c.Truncate && c.PieceBytes(0) == 0 }

// RangeBytes is the size of pieces [lo, hi).
func (c *Collective) RangeBytes(lo, hi int32) int64 {
	var b int64
	for p := lo; p < hi; p++ {
		b += c.PieceBytes(int(p))
	}
	return b
}

// NVSwitch is the endpoint id of server s's NVSwitch.
func (c *Collective) NVSwitch(server int) int32 { return int32(c.TotalGPUs + server) }

// DAG is a collective decomposed into flows with dependencies: a flow may start once every one of
// its parents has arrived at its sender. Algorithms may implement it arithmetically, without
// storing every flow (a ring over 1,024 GPUs has 16.7 million flows); FlowDAG stores them.
type DAG interface {
	Collective() *Collective
	NumFlows() int
	Flow(id FlowID) Flow
	// Parents and Children append to buf and return it.
	Parents(id FlowID, buf []FlowID) []FlowID
	Children(id FlowID, buf []FlowID) []FlowID
}

// SingleParentDAG is implemented by DAGs in which no flow has more than one parent (rings): a
// runner can then release a child as soon as its one parent arrives, without counting.
type SingleParentDAG interface {
	DAG
	SingleParent() bool
}

// SequencedDAG is implemented by DAGs whose senders issue their flows in sequences: astra-sim
// (SimAI's NcclTreeFlowModel) posts a rank's receive of a channel's next chunk only when the
// rank's send of the chunk before is ready, so data that overtook an earlier chunk on the way
// (each chunk is a queue pair of its own, hashed onto its own path) waits until that chunk has
// been passed on. Sequence reports flow id's sequence (0 ≤ key < Sequences()) and its place in
// it (0, 1, ...), ok false for a flow in none; a runner releases a flow no earlier than the
// flow before it in its sequence.
type SequencedDAG interface {
	DAG
	Sequences() int
	Sequence(id FlowID) (key, pos int32, ok bool)
}

// MembersDAG is implemented by DAGs that can tell a flow's sender and receiver as members of the
// group — their group indices, −1 for an endpoint outside it (an NVSwitch) — for less than the
// whole Flow (its piece and size): a runner whose ranks join one by one asks it of every flow.
// ok false: ask Flow.
type MembersDAG interface {
	DAG
	Members(id FlowID) (src, dst int32, ok bool)
}

// RankFlowsDAG is implemented by DAGs that can count the flows each member of the group sends
// or receives without visiting every flow: RankFlows sets counts[i] (len(counts) is the group's
// size) to those of the member of group index i.
type RankFlowsDAG interface {
	DAG
	RankFlows(counts []int32)
}

// RootsDAG is implemented by DAGs that can list their roots (the flows without parents)
// without visiting every flow: Roots appends them to buf in ascending id order, the order a
// scan of every flow's parents would find them in, and returns it.
type RootsDAG interface {
	DAG
	Roots(buf []FlowID) []FlowID
}

// FlowDAG is a DAG stored as flat slices: the flows, and their parents and children in
// compressed sparse rows.
type FlowDAG struct {
	Coll  Collective
	Flows []Flow

	parentStart []int32 // parents of flow i: parents[parentStart[i]:parentStart[i+1]]
	parents     []FlowID
	childStart  []int32
	children    []FlowID
}

// Collective implements DAG.
func (d *FlowDAG) Collective() *Collective { return &d.Coll }

// NumFlows implements DAG.
func (d *FlowDAG) NumFlows() int { return len(d.Flows) }

// Flow implements DAG.
func (d *FlowDAG) Flow(id FlowID) Flow { return d.Flows[id] }

// Parents implements DAG.
func (d *FlowDAG) Parents(id FlowID, buf []FlowID) []FlowID {
	return append(buf, d.parents[d.parentStart[id]:d.parentStart[id+1]]...)
}

// Children implements DAG.
func (d *FlowDAG) Children(id FlowID, buf []FlowID) []FlowID {
	return append(buf, d.children[d.childStart[id]:d.childStart[id+1]]...)
}

// DAGBuilder assembles a FlowDAG: add flows with their parents, then Build.
type DAGBuilder struct {
	coll  Collective
	flows []Flow
	edges [][2]FlowID // (parent, child)
}

// NewDAGBuilder starts a DAG for collective c.
func NewDAGBuilder(c Collective) *DAGBuilder { return &DAGBuilder{coll: c} }

// Grow makes room for flows more flows and edges more parent links, so that a generator that
// knows its size allocates once: growing a slice of a million flows by doubling copies it about
// twice over, through freshly faulted pages (ccl/alltoall's BenchmarkDirect1024 times a
// 1,024-rank all-to-all's plan).
func (b *DAGBuilder) Grow(flows, edges int) {
	b.flows = slices.Grow(b.flows, flows)
	b.edges = slices.Grow(b.edges, edges)
}

// Collective is the collective being built.
func (b *DAGBuilder) Collective() *Collective { return &b.coll }

// Add appends a flow with its parents (which must already exist) and returns its id. Bytes is
// filled in from the pieces when it is 0 and the range is not empty.
func (b *DAGBuilder) Add(f Flow, parents ...FlowID) FlowID {
	if f.Bytes == 0 && f.PieceHi > f.PieceLo {
		f.Bytes = b.coll.RangeBytes(f.PieceLo, f.PieceHi)
	}
	id := FlowID(len(b.flows))
	b.flows = append(b.flows, f)
	for _, p := range parents {
		b.edges = append(b.edges, [2]FlowID{p, id})
	}
	return id
}

// AddParent adds one more parent to an existing flow.
func (b *DAGBuilder) AddParent(child, parent FlowID) {
	b.edges = append(b.edges, [2]FlowID{parent, child})
}

// Len is the number of flows added so far.
func (b *DAGBuilder) Len() int { return len(b.flows) }

// Build returns the DAG. It refuses parents that do not exist; cycles are Check's business.
func (b *DAGBuilder) Build() (*FlowDAG, error) {
	n := len(b.flows)
	d := &FlowDAG{Coll: b.coll, Flows: b.flows}
	d.parentStart = make([]int32, n+1)
	d.childStart = make([]int32, n+1)
	for _, e := range b.edges {
		if e[0] < 0 || int(e[0]) >= n || e[1] < 0 || int(e[1]) >= n {
			return nil, fmt.Errorf("edge %d→%d names a flow that does not exist (%d flows)", e[0], e[1], n)
		}
		d.parentStart[e[1]+1]++
		d.childStart[e[0]+1]++
	}
	for i := range n {
		d.parentStart[i+1] += d.parentStart[i]
		d.childStart[i+1] += d.childStart[i]
	}
	d.parents = make([]FlowID, len(b.edges))
	d.children = make([]FlowID, len(b.edges))
	pfill := slices.Clone(d.parentStart[:n])
	cfill := slices.Clone(d.childStart[:n])
	// Edges in insertion order give parents and children in a deterministic order.
	for _, e := range b.edges {
		d.parents[pfill[e[1]]] = e[0]
		pfill[e[1]]++
		d.children[cfill[e[0]]] = e[1]
		cfill[e[0]]++
	}
	return d, nil
}

// SendDAG is the point-to-point transfer of bytes from every rank of src to the rank at the same
// index of dst (the two slices pair up), one independent flow per pair: the activations or
// gradients one pipeline stage sends the next. Pairs with the same rank on both sides move
// nothing and are left out.
func SendDAG(src, dst []int32, gpusPerServer, totalGPUs int, bytes int64) (*FlowDAG, error) {
	if len(src) != len(dst) {
		return nil, fmt.Errorf("send: %d senders but %d receivers", len(src), len(dst))
	}
	if bytes <= 0 {
		return nil, fmt.Errorf("send: %d bytes: need at least 1", bytes)
	}
	ranks := append(append(make([]int32, 0, 2*len(src)), src...), dst...)
	b := NewDAGBuilder(Collective{Op: OpSend, Ranks: ranks, GPUsPerServer: gpusPerServer, TotalGPUs: totalGPUs, Bytes: bytes, Pieces: 1})
	b.Grow(len(src), 0)
	for i := range src {
		if src[i] == dst[i] {
			continue
		}
		b.Add(Flow{Src: src[i], Dst: dst[i], Bytes: bytes, Channel: int32(i), Kind: KindP2P})
	}
	return b.Build()
}

// Members is flow f's sender and receiver as group indices (−1 outside the group), through
// MembersDAG where d has it, else from Flow with index (a rank's group index, −1 for none).
func Members(d DAG, f FlowID, index func(rank int32) int32) (src, dst int32) {
	if m, ok := d.(MembersDAG); ok {
		if s, t, ok := m.Members(f); ok {
			return s, t
		}
	}
	fl := d.Flow(f)
	return index(fl.Src), index(fl.Dst)
}

// RankFlows sets counts[i] to the flows the member of group index i of d's collective sends or
// receives (len(counts) is the group's size), through RankFlowsDAG where d has it.
func RankFlows(d DAG, counts []int32) {
	if r, ok := d.(RankFlowsDAG); ok {
		r.RankFlows(counts)
		return
	}
	CountRankFlows(d, counts)
}

// CountRankFlows is RankFlows by a pass over every flow (endpoints outside the group, such as
// NVSwitches, are not counted).
func CountRankFlows(d DAG, counts []int32) {
	clear(counts)
	at := make(map[int32]int32, len(counts))
	for i, r := range d.Collective().Ranks {
		at[r] = int32(i)
	}
	index := func(r int32) int32 {
		if i, ok := at[r]; ok {
			return i
		}
		return -1
	}
	for f := range d.NumFlows() {
		src, dst := Members(d, FlowID(f), index)
		if src >= 0 {
			counts[src]++
		}
		if dst >= 0 {
			counts[dst]++
		}
	}
}
