package nccl

import (
	"fmt"
	"sort"

	"simd/ccl"
)

// Ring builds SimCCL's ring decomposition of an all-reduce, reduce-scatter or all-gather
// (ccl-facts.md §1.3–1.4), or, for an all-to-all, SimCCL's one-shot all-to-all (every ordered
// pair one flow of Bytes/n on channel 0, no dependencies). With opt.PXN the server-crossing hops
// are relayed as opt.PXNVariant says (see the package documentation). With req.Truncate the
// flows carry SimCCL's integer chunks, and a ring whose chunks are 0 bytes has no flows.
//
// The DAG is arithmetic: flows, parents and children are computed from the flow id, so a ring
// over 1,024 GPUs (16.7 million flows) takes O(n) memory.
func Ring(req ccl.Request, opt Options) (ccl.DAG, error) {
	if err := validate(&req, ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather, ccl.OpAllToAll); err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	if req.Op == ccl.OpAllToAll {
		return allToAll(&req, opt.PXNApplies(req.Op))
	}
	return newRing(&req, opt.PXNApplies(req.Op), opt.PXNVariant == PXNSimCCL)
}

// blockKind is what the flows of one step of one channel look like.
type blockKind uint8

const (
	blockPlain       blockKind = iota // every rank sends one flow to its ring successor
	blockSplit                        // PXN: each server's exit sends to its server's entry over NVLink, which sends on over the network (every step of SimCCL's PXN)
	blockDirect                       // PXN: each server's entry already holds what its exit would send, and sends it itself
	blockDropped                      // PXN: the next server's entry already holds it: nothing crosses servers
	blockDroppedLast                  // PXN all-reduce, last step: as dropped, and each exit already holds what its predecessor would send it
)

// ringDAG is the ring decomposition as arithmetic on flow ids.
//
// Channel c's ring visits the servers in order and, on server k, its members rotated left by c
// (position off[k]+i holds member (c+i) mod m_k). Flow ids run channel by channel, step by step;
// inside a step the first n slots belong to the senders in group order (the order in which
// SimCCL creates them). In a split step of SimCCL's PXN each server's network hop follows its
// exit's NVLink hop, as SimCCL creates them (server k's m+1 slots start at k·(m+1)); in a split
// step of the NCCL-like PXN the n slots are followed by each server's network hop, server by
// server. In a dropped step the exits, which send nothing, have no slot (in the last step of
// an all-reduce neither have the GPUs before them).
type ringDAG struct {
	coll      ccl.Collective
	g         geometry
	C         int // channels
	steps     int // steps per channel
	rsSteps   int // steps of the reduce-scatter phase: n-1 for all-reduce and reduce-scatter, 0 for all-gather
	pxn       bool
	simccl    bool    // PXN as SimCCL: every step split, SimCCL's slot order and labels
	m         int     // members per server (uniform when pxn is set)
	stepStart []int64 // first slot of each step inside a channel
	chanSize  int64   // flows per channel
	// chanDiv divides by chanSize, nDiv by n: decode is on the event mode's hot path.
	chanDiv, nDiv divider
}

func newRing(req *ccl.Request, pxn, simccl bool) (*ringDAG, error) {
	g := newGeometry(req)
	n := g.n
	C := req.Channels
	if C == 0 {
		C = g.maxM
	}
	d := &ringDAG{g: g, C: C, m: g.maxM}
	d.coll = collective(req, n*C)
	switch {
	case d.coll.Empty():
		// SimCCL sends a channel's chunks while less than its share is out
		// (genAllReduceRingFlowModels' `while (send_size < data_size)`): a share of 0 bytes
		// sends nothing, and the collective is done when it is issued.
	case req.Op == ccl.OpAllReduce:
		d.steps, d.rsSteps = 2*(n-1), n-1
	case req.Op == ccl.OpReduceScatter:
		d.steps, d.rsSteps = n-1, n-1
	case req.Op == ccl.OpAllGather:
		d.steps, d.rsSteps = n-1, 0
	}
	d.pxn = pxn && g.nsrv >= 2 && g.maxM >= 2
	d.simccl = d.pxn && simccl
	if d.pxn && !g.uniform() {
		return nil, fmt.Errorf("ring with PXN: the group has between %d and %d members per server; PXN needs the same number on every server", g.minM, g.maxM)
	}
	d.stepStart = make([]int64, d.steps+1)
	for s := 0; s < d.steps; s++ {
		d.stepStart[s+1] = d.stepStart[s] + d.blockSize(d.kind(s))
	}
	d.chanSize = d.stepStart[d.steps]
	if err := checkSize(int64(C)*d.chanSize, "the ring"); err != nil {
		return nil, err
	}
	d.chanDiv, d.nDiv = newDivider(d.chanSize), newDivider(int64(n))
	return d, nil
}

func (d *ringDAG) kind(s int) blockKind {
	if !d.pxn {
		return blockPlain
	}
	if s < d.rsSteps || d.simccl {
		return blockSplit
	}
	// Gather phase, step t: the chunk a server's exit holds started on its own server while
	// t < m-1, so its entry does not have it and the exit relays it (split); from t = m-1 the
	// chunk has passed the entry, which sends it itself (direct); from t = n-m it is a chunk of
	// the next server's, which that server's entry got from its own exit over NVLink, so nothing
	// crosses (dropped). In an all-reduce this starts one step earlier: at t = n-m-1 the chunk
	// is that of the entry of the server after next, which the next server's entry holds
	// complete since it relayed it at the last reduce-scatter step.
	dropFrom := d.g.n - d.m
	if d.rsSteps > 0 {
		dropFrom--
	}
	switch t := s - d.rsSteps; {
	case t < d.m-1:
		return blockSplit
	case t < dropFrom:
		return blockDirect
	case d.rsSteps > 0 && s == d.steps-1:
		// In an all-reduce the chunk of server k's entry is complete when it reaches the
		// exit of server k-1 at the end of the reduce-scatter (the entry added its part
		// when it relayed the chunk at the start), so the exit does not get it again.
		return blockDroppedLast
	}
	return blockDropped
}

// skipped is how many members of each server send nothing in a step of this kind, and which
// (their local indices in channel c, ascending; -1 when unused).
func (d *ringDAG) skipped(kind blockKind, c int) (cnt, a, b int) {
	switch kind {
	case blockDropped:
		return 1, mod(c-1, d.m), -1
	case blockDroppedLast:
		a, b = mod(c-2, d.m), mod(c-1, d.m)
		if a > b {
			a, b = b, a
		}
		return 2, a, b
	}
	return 0, -1, -1
}

func (d *ringDAG) blockSize(k blockKind) int64 {
	n, N := int64(d.g.n), int64(d.g.nsrv)
	switch k {
	case blockSplit:
		return n + N
	case blockDropped:
		return n - N
	case blockDroppedLast:
		return n - 2*N
	}
	return n
}

// Collective implements ccl.DAG.
func (d *ringDAG) Collective() *ccl.Collective { return &d.coll }

// NumFlows implements ccl.DAG.
func (d *ringDAG) NumFlows() int { return int(int64(d.C) * d.chanSize) }

// pos is the position of group index gi in channel c's ring.
func (d *ringDAG) pos(c, gi int) int {
	k := int(d.g.srv[gi])
	off := int(d.g.off[k])
	return off + mod(gi-off-c, d.g.count(k))
}

// at is the group index at position p of channel c's ring.
func (d *ringDAG) at(c, p int) int {
	k := int(d.g.srv[p])
	off := int(d.g.off[k])
	return off + mod(p-off+c, d.g.count(k))
}

func (d *ringDAG) entry(k int) int { return int(d.g.off[k]) }
func (d *ringDAG) exit(k int) int  { return int(d.g.off[k+1]) - 1 }
func (d *ringDAG) isExit(p int) bool {
	return p == int(d.g.off[d.g.srv[p]+1])-1
}
func (d *ringDAG) next(k int) int { return (k + 1) % d.g.nsrv }

// owner is the ring position whose chunk position p sends at step s. In the reduce-scatter
// phase the chunk of position o starts at o+1 and arrives fully reduced at o after n-1 steps, so
// p sends the chunk of p-s-1; in the gather phase the chunk of o starts at o, so at gather step t
// p sends the chunk of p-t.
func (d *ringDAG) owner(s, p int) int {
	if s < d.rsSteps {
		return mod(p-s-1, d.g.n)
	}
	return mod(p-(s-d.rsSteps), d.g.n)
}

func (d *ringDAG) base(c, s int) int64 { return int64(c)*d.chanSize + d.stepStart[s] }

// primary is the id of the flow of sender gi at step s of channel c (for a PXN exit: its NVLink
// hop, or in a direct step the network hop sent for it by its entry), or -1 if it has none.
func (d *ringDAG) primary(c, s, gi int) int64 {
	kind := d.kind(s)
	if d.simccl {
		k := int(d.g.srv[gi])
		j := gi - int(d.g.off[k])
		if j > d.exitLocal(c) {
			j++
		}
		return d.base(c, s) + int64(k*(d.m+1)+j)
	}
	cnt, a, b := d.skipped(kind, c)
	if cnt == 0 {
		return d.base(c, s) + int64(gi)
	}
	k := int(d.g.srv[gi])
	j := gi - int(d.g.off[k])
	if j == a || j == b {
		return -1
	}
	if j > a {
		j--
	}
	if cnt == 2 && j >= b { // j was above b before the first decrement
		j--
	}
	return d.base(c, s) + int64(k*(d.m-cnt)+j)
}

// extra is the id of server k's network hop in a PXN split step.
func (d *ringDAG) extra(c, s, k int) int64 {
	if d.simccl {
		return d.base(c, s) + int64(k*(d.m+1)+d.exitLocal(c)+1)
	}
	return d.base(c, s) + int64(d.g.n+k)
}

// exitLocal is the local index (among its server's members, ascending) of every server's exit
// in channel c.
func (d *ringDAG) exitLocal(c int) int { return mod(c-1, d.m) }

// extraOf says whether a slot of a split step of channel c holds a server's network hop, and
// whose.
func (d *ringDAG) extraOf(c, slot int) (k int, ok bool) {
	if d.simccl {
		return slot / (d.m + 1), slot%(d.m+1) == d.exitLocal(c)+1
	}
	return slot - d.g.n, slot >= d.g.n
}

// decode splits a flow id into channel, step and slot.
func (d *ringDAG) decode(id ccl.FlowID) (c, s, slot int) {
	c64, r := d.chanDiv.divmod(int64(id))
	c = int(c64)
	if !d.pxn {
		s64, sl := d.nDiv.divmod(r)
		return c, int(s64), int(sl)
	}
	if d.simccl { // every step split: n+N slots each
		sz := int64(d.g.n + d.g.nsrv)
		return c, int(r / sz), int(r % sz)
	}
	s = sort.Search(d.steps, func(i int) bool { return d.stepStart[i+1] > r })
	return c, s, int(r - d.stepStart[s])
}

// slotSender is the group index that owns a primary slot.
func (d *ringDAG) slotSender(c, s, slot int) int {
	if d.simccl {
		k, j := slot/(d.m+1), slot%(d.m+1)
		if j > d.exitLocal(c) {
			j--
		}
		return int(d.g.off[k]) + j
	}
	cnt, a, b := d.skipped(d.kind(s), c)
	if cnt == 0 {
		return slot
	}
	k, j := slot/(d.m-cnt), slot%(d.m-cnt)
	if j >= a {
		j++
	}
	if cnt == 2 && j >= b {
		j++
	}
	return int(d.g.off[k]) + j
}

// what a flow is, in ring terms.
type ringFlow struct {
	c, s      int
	src, dst  int // group indices
	ownerPos  int
	kind      ccl.FlowKind
	recvPos   int  // ring position of the receiver
	nvlinkHop bool // a PXN exit → entry hop
	server    int  // the sender's server (for a PXN hop, the relaying server)
}

func (d *ringDAG) describe(id ccl.FlowID) ringFlow {
	c, s, slot := d.decode(id)
	f := ringFlow{c: c, s: s, kind: ccl.KindRing}
	kind := d.kind(s)
	if k, ok := d.extraOf(c, slot); kind == blockSplit && ok {
		f.server = k
		f.src, f.recvPos = d.at(c, d.entry(k)), d.entry(d.next(k))
		f.ownerPos = d.owner(s, d.exit(k))
		f.kind = ccl.KindPXN
		if d.simccl {
			f.kind = d.simcclNetKind(s)
		}
		f.dst = d.at(c, f.recvPos)
		return f
	}
	gi := d.slotSender(c, s, slot)
	p := d.pos(c, gi)
	f.ownerPos = d.owner(s, p)
	k := int(d.g.srv[gi])
	f.server = k
	switch {
	case kind == blockPlain || !d.isExit(p):
		f.src, f.recvPos = gi, (p+1)%d.g.n
	case kind == blockSplit:
		f.src, f.recvPos = gi, d.entry(k)
		f.kind, f.nvlinkHop = ccl.KindPXNInit, true
		if d.simccl {
			f.kind = ccl.KindRing
		}
	default: // direct
		f.src, f.recvPos = d.at(c, d.entry(k)), d.entry(d.next(k))
		f.kind = ccl.KindPXN
	}
	f.dst = d.at(c, f.recvPos)
	return f
}

// Flow implements ccl.DAG.
// RankFlows implements ccl.RankFlowsDAG where it needs no pass over the flows: in a plain ring
// every member sends one flow and receives one at every step of every channel.
func (d *ringDAG) RankFlows(counts []int32) {
	if d.pxn {
		ccl.CountRankFlows(d, counts)
		return
	}
	per := int32(2 * d.NumFlows() / d.g.n)
	for i := range counts {
		counts[i] = per
	}
}

// Members implements ccl.MembersDAG for a plain ring: the sender's slot and the next member of
// its channel's ring (a PXN ring's flows are asked of Flow).
func (d *ringDAG) Members(id ccl.FlowID) (src, dst int32, ok bool) {
	if d.pxn {
		return 0, 0, false
	}
	c, _, gi := d.decode(id)
	q := d.pos(c, gi) + 1
	if q == d.g.n {
		q = 0
	}
	return int32(gi), int32(d.at(c, q)), true
}

func (d *ringDAG) Flow(id ccl.FlowID) ccl.Flow {
	if !d.pxn {
		// A plain ring: describe's case for it, without the general record (this is the
		// hot path of the event mode).
		c, s, gi := d.decode(id)
		p := d.pos(c, gi)
		q := p + 1
		if q == d.g.n {
			q = 0
		}
		piece := d.at(c, d.owner(s, p))*d.C + c
		return ccl.Flow{
			Src:     d.g.ranks[gi],
			Dst:     d.g.ranks[d.at(c, q)],
			Bytes:   d.coll.PieceBytes(piece),
			Channel: int32(c),
			Chunk:   int32(s),
			Kind:    ccl.KindRing,
			PieceLo: int32(piece),
			PieceHi: int32(piece + 1),
		}
	}
	f := d.describe(id)
	piece := d.at(f.c, f.ownerPos)*d.C + f.c
	return ccl.Flow{
		Src:     d.g.ranks[f.src],
		Dst:     d.g.ranks[f.dst],
		Bytes:   d.coll.PieceBytes(piece),
		Channel: int32(f.c),
		Chunk:   int32(f.s),
		Kind:    f.kind,
		PieceLo: int32(piece),
		PieceHi: int32(piece + 1),
	}
}

// into is the flow that brought position q of channel c what q sends at step x+1, or -1.
func (d *ringDAG) into(c, q, x int) int64 {
	if x < 0 {
		return -1
	}
	k := int(d.g.srv[q])
	if !d.pxn || q != d.entry(k) {
		return d.primary(c, x, d.at(c, mod(q-1, d.g.n)))
	}
	kp := mod(k-1, d.g.nsrv)
	switch d.kind(x) {
	case blockSplit:
		return d.extra(c, x, kp)
	case blockDirect:
		return d.primary(c, x, d.at(c, d.exit(kp)))
	}
	// Dropped: the entry got it over NVLink from its own exit, n-m steps earlier (in an
	// all-reduce at step n-m-1 of the gather phase, that is the last reduce-scatter step).
	return d.primary(c, x-(d.g.n-d.m), d.at(c, d.exit(k)))
}

// simcclNetKind is SimCCL's label of the network hop an entry sends for its exit at step s:
// "PXN_INIT" at every step of an all-reduce, at step 0 of a reduce-scatter, "RING" after.
func (d *ringDAG) simcclNetKind(s int) ccl.FlowKind {
	if d.coll.Op == ccl.OpAllReduce || s == 0 {
		return ccl.KindPXNInit
	}
	return ccl.KindRing
}

func (d *ringDAG) parent(id ccl.FlowID) int64 {
	c, s, slot := d.decode(id)
	kind := d.kind(s)
	if k, ok := d.extraOf(c, slot); kind == blockSplit && ok {
		return d.primary(c, s, d.at(c, d.exit(k)))
	}
	gi := d.slotSender(c, s, slot)
	p := d.pos(c, gi)
	if kind == blockDirect && d.isExit(p) {
		// The entry sends the chunk it received m steps ago (its own at the start of an
		// all-gather).
		return d.into(c, d.entry(int(d.g.srv[gi])), s-d.m)
	}
	return d.into(c, p, s-1)
}

// Sequences implements ccl.SequencedDAG: one sequence per channel and sender, whose places are
// the steps.
func (d *ringDAG) Sequences() int { return d.C * d.g.n }

// Sequence implements ccl.SequencedDAG for a plain ring: a sender's flows of a channel, step by
// step. PXN's relays (a rank sending two flows in a step, or none) are in no sequence.
func (d *ringDAG) Sequence(id ccl.FlowID) (key, pos int32, ok bool) {
	if d.pxn {
		return 0, 0, false
	}
	c, s, gi := d.decode(id)
	return int32(c*d.g.n + gi), int32(s), true
}

// SingleParent implements ccl.SingleParentDAG: every ring flow has at most one parent.
func (d *ringDAG) SingleParent() bool { return true }

// Roots implements ccl.RootsDAG. In a plain ring they are the flows of every channel's first
// step; with PXN every flow is asked for its parent.
func (d *ringDAG) Roots(buf []ccl.FlowID) []ccl.FlowID {
	if d.pxn {
		for id := range ccl.FlowID(d.NumFlows()) {
			if d.parent(id) < 0 {
				buf = append(buf, id)
			}
		}
		return buf
	}
	if d.steps == 0 {
		return buf
	}
	for c := range d.C {
		for gi := range d.g.n {
			buf = append(buf, ccl.FlowID(d.base(c, 0)+int64(gi)))
		}
	}
	return buf
}

// Parents implements ccl.DAG: every ring flow has at most one parent.
func (d *ringDAG) Parents(id ccl.FlowID, buf []ccl.FlowID) []ccl.FlowID {
	if p := d.parent(id); p >= 0 {
		buf = append(buf, ccl.FlowID(p))
	}
	return buf
}

// Children implements ccl.DAG. The candidates are the flows that can wait for id; each is
// kept if its parent is id.
func (d *ringDAG) Children(id ccl.FlowID, buf []ccl.FlowID) []ccl.FlowID {
	if !d.pxn {
		// A plain ring: the one child is the receiver's flow of the next step (this is the hot
		// path of the event mode, so the general search below is skipped).
		c, s, gi := d.decode(id)
		if s+1 >= d.steps {
			return buf
		}
		q := d.pos(c, gi) + 1
		if q == d.g.n {
			q = 0
		}
		return append(buf, ccl.FlowID(d.base(c, s+1)+int64(d.at(c, q))))
	}
	f := d.describe(id)
	var cand [4]int64
	nc := 0
	add := func(x int64) {
		if x >= 0 {
			cand[nc] = x
			nc++
		}
	}
	if f.s+1 < d.steps {
		add(d.primary(f.c, f.s+1, f.dst))
	}
	if d.pxn {
		kq := int(d.g.srv[f.recvPos])
		if f.recvPos == d.entry(kq) {
			if x := f.s + d.m; x < d.steps && d.kind(x) == blockDirect {
				add(d.primary(f.c, x, d.at(f.c, d.exit(kq))))
			}
		}
		if f.nvlinkHop {
			add(d.extra(f.c, f.s, f.server))
			if x := f.s + d.g.n - d.m; x+1 < d.steps && d.kind(x) == blockDropped {
				add(d.primary(f.c, x+1, d.at(f.c, d.entry(f.server))))
			}
		}
	}
	for _, x := range cand[:nc] {
		if d.parent(ccl.FlowID(x)) == int64(id) {
			buf = append(buf, ccl.FlowID(x))
		}
	}
	return buf
}
