package moe

import (
	"fmt"
	"slices"

	"simd/ccl"
)

// DAG turns the plan into a flow DAG the event mode runs on a fabric: GPU x of the plan is rank
// x of the cluster (totalGPUs of them; the plan's servers are consecutive groups of
// GPUsPerNode). Transfers of one phase and stage between the same GPU pair become one flow
// carrying their tokens, Config.TokenBytes each, whose parents are the flows of everything the
// merged transfers depend on: DeepEP's NVLink forwards wait for the RDMA copies that brought
// their tokens, FAST's stage transfers for the balance moves into their sender and the previous
// stage on their ports, FAST's restores for the stage that delivered. A transfer from a GPU to
// itself moves nothing; whatever depends on it inherits its dependencies. Merging must not
// close a cycle (a flow waiting for itself); that is an error.
func (p *Plan) DAG(cfg *Config, totalGPUs int) (*ccl.FlowDAG, error) {
	return p.ChunkedDAG(cfg, totalGPUs, 1)
}

// ChunkedDAG is DAG with every flow of a DeepEP plan cut into up to chunks pieces sent one
// after the other (piece i+1 once piece i has arrived), and each dependency applied piece by
// piece: an NVLink forward's piece i waits for piece i of the copies that feed it. This is how
// DeepEP streams tokens through its proxies, so a forward overlaps the copy it depends on
// instead of waiting for all of it. FAST plans are not cut: their stages already pipeline.
func (p *Plan) ChunkedDAG(cfg *Config, totalGPUs, chunks int) (*ccl.FlowDAG, error) {
	if chunks < 1 {
		return nil, fmt.Errorf("%d chunks: want at least 1", chunks)
	}
	if p.Kind != DeepEP {
		chunks = 1
	}
	if p.Nodes*p.GPUsPerNode > totalGPUs {
		return nil, fmt.Errorf("the plan has %d GPUs, the cluster %d", p.Nodes*p.GPUsPerNode, totalGPUs)
	}
	type key struct {
		phase    Phase
		stage    int
		src, dst int
	}
	var flows []ccl.Flow
	var edges [][2]int32 // (parent, child) between flows
	// flowOf[t] is transfer t's flow, or -1 for a transfer to itself, which then stands for
	// via[t], its own dependencies resolved to flows.
	flowOf := make([]int32, len(p.Transfers))
	via := make([][]int32, len(p.Transfers))
	merged := map[key]int32{}
	tb := cfg.TokenBytes()
	for t := range p.Transfers {
		tr := &p.Transfers[t]
		var deps []int32
		for _, d := range tr.Deps {
			if d < 0 || d >= t {
				return nil, fmt.Errorf("transfer %d depends on transfer %d, not an earlier one", t, d)
			}
			if f := flowOf[d]; f >= 0 {
				deps = append(deps, f)
			} else {
				deps = append(deps, via[d]...)
			}
		}
		if tr.Src == tr.Dst {
			flowOf[t], via[t] = -1, deps
			continue
		}
		k := key{tr.Phase, tr.Stage, tr.Src, tr.Dst}
		f, ok := merged[k]
		if !ok {
			kind := ccl.KindDispatchNVL
			if tr.Phase.ScaleOut() {
				kind = ccl.KindDispatchRDMA
			}
			f = int32(len(flows))
			flows = append(flows, ccl.Flow{Src: int32(tr.Src), Dst: int32(tr.Dst), Kind: kind, Channel: int32(tr.Phase), Chunk: int32(max(tr.Stage, 0))})
			merged[k] = f
		}
		flowOf[t] = f
		flows[f].Bytes += int64(tr.Tokens) * tb
		for _, d := range deps {
			edges = append(edges, [2]int32{d, f})
		}
	}
	slices.SortFunc(edges, func(a, b [2]int32) int {
		if a[1] != b[1] {
			return int(a[1] - b[1])
		}
		return int(a[0] - b[0])
	})
	edges = slices.Compact(edges)
	if err := acyclic(len(flows), edges); err != nil {
		return nil, err
	}
	ranks := make([]int32, p.Nodes*p.GPUsPerNode)
	for i := range ranks {
		ranks[i] = int32(i)
	}
	b := ccl.NewDAGBuilder(ccl.Collective{Op: ccl.OpAllToAll, Ranks: ranks, GPUsPerServer: p.GPUsPerNode, TotalGPUs: totalGPUs})
	// first[f] is the id of flow f's first piece; it has pieces[f] of them, consecutive.
	first := make([]ccl.FlowID, len(flows))
	pieces := make([]int, len(flows))
	for f, fl := range flows {
		n := int(min(int64(chunks), max(fl.Bytes, 1)))
		first[f], pieces[f] = ccl.FlowID(b.Len()), n
		q, r := fl.Bytes/int64(n), fl.Bytes%int64(n)
		for i := range n {
			piece := fl
			piece.Bytes = q
			if int64(i) < r {
				piece.Bytes++
			}
			if i > 0 {
				b.Add(piece, first[f]+ccl.FlowID(i-1))
			} else {
				b.Add(piece)
			}
		}
	}
	for _, e := range edges {
		from, to := e[0], e[1]
		for i := range pieces[to] {
			// Piece i waits for the matching piece of its parent (its last one when the parent
			// has fewer).
			b.AddParent(first[to]+ccl.FlowID(i), first[from]+ccl.FlowID(min(i, pieces[from]-1)))
		}
	}
	return b.Build()
}

// acyclic reports an error if the edges (parent, child) over n flows close a cycle (Kahn's
// algorithm: a cycle leaves flows that never lose their last parent).
func acyclic(n int, edges [][2]int32) error {
	indeg := make([]int32, n)
	kids := make([][]int32, n)
	for _, e := range edges {
		if e[0] == e[1] {
			return fmt.Errorf("merging transfers made flow %d wait for itself", e[0])
		}
		indeg[e[1]]++
		kids[e[0]] = append(kids[e[0]], e[1])
	}
	var ready []int32
	for f := range n {
		if indeg[f] == 0 {
			ready = append(ready, int32(f))
		}
	}
	seen := 0
	for len(ready) > 0 {
		f := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, c := range kids[f] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if seen != n {
		return fmt.Errorf("merging transfers between the same GPUs closed a dependency cycle (%d of %d flows can never start)", n-seen, n)
	}
	return nil
}
