package nccl

import (
	"fmt"
	"slices"
	"testing"

	"simd/ccl"
)

// consecutive is the group 0..n-1 with gps GPUs per server.
func consecutive(op ccl.Op, n, gps int, bytes int64) ccl.Request {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(i)
	}
	return ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: (n + gps - 1) / gps * gps, Bytes: bytes}
}

// strided is a DP-style group: ranks off, off+stride, off+2·stride, ...
func strided(op ccl.Op, n, gps, stride, off int, bytes int64) ccl.Request {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(off + i*stride)
	}
	total := int(ranks[n-1]) + 1
	total = (total + gps - 1) / gps * gps
	return ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: total, Bytes: bytes}
}

func explicitRanks(op ccl.Op, gps, total int, bytes int64, ranks ...int32) ccl.Request {
	return ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: total, Bytes: bytes}
}

func materialize(t testing.TB, d ccl.DAG) *ccl.FlowDAG {
	t.Helper()
	fd, err := ccl.EditDAG(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// rebuild copies a DAG with a change: edit may drop a flow (return false) or change it and its
// parents (ids of the original DAG).
func rebuild(t testing.TB, d ccl.DAG, edit func(id int, f *ccl.Flow, parents []ccl.FlowID) ([]ccl.FlowID, bool)) *ccl.FlowDAG {
	t.Helper()
	fd, err := ccl.EditDAG(d, func(id ccl.FlowID, f *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
		ps, keep := edit(int(id), f, ps)
		return ps, keep, false
	})
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// depths is, for every flow, the number of flows on the longest chain ending with it.
func depths(d ccl.DAG) []int {
	n := d.NumFlows()
	indeg := make([]int, n)
	var buf []ccl.FlowID
	for i := range n {
		indeg[i] = len(d.Parents(ccl.FlowID(i), buf[:0]))
	}
	depth := make([]int, n)
	var queue []int
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, i)
			depth[i] = 1
		}
	}
	for h := 0; h < len(queue); h++ {
		i := queue[h]
		buf = d.Children(ccl.FlowID(i), buf[:0])
		for _, c := range buf {
			depth[c] = max(depth[c], depth[i]+1)
			if indeg[c]--; indeg[c] == 0 {
				queue = append(queue, int(c))
			}
		}
	}
	return depth
}

// longestChain is the number of flows on the DAG's longest dependency chain.
func longestChain(d ccl.DAG) int {
	return slices.Max(append(depths(d), 0))
}

// lockstepDepth is the critical path of a stepped DAG run in lockstep: for each step (the
// Chunk field), the longest chain of flows of that step that wait for each other, summed over
// the steps.
func lockstepDepth(d ccl.DAG) int {
	n := d.NumFlows()
	in := make([]int, n)
	perStep := map[int32]int{}
	var buf []ccl.FlowID
	// Flows of a step only wait for flows of the same or earlier steps, and ids grow with the
	// step inside a channel, so one pass in id order works within a channel.
	for i := range n {
		f := d.Flow(ccl.FlowID(i))
		in[i] = 1
		for _, p := range d.Parents(ccl.FlowID(i), buf[:0]) {
			pf := d.Flow(p)
			if pf.Chunk == f.Chunk && pf.Channel == f.Channel {
				in[i] = max(in[i], in[p]+1)
			}
		}
		perStep[f.Chunk] = max(perStep[f.Chunk], in[i])
	}
	total := 0
	for _, v := range perStep {
		total += v
	}
	return total
}

func flowString(f ccl.Flow) string {
	return fmt.Sprintf("%d→%d ch%d s%d %s [%d,%d) %dB", f.Src, f.Dst, f.Channel, f.Chunk, f.Kind, f.PieceLo, f.PieceHi, f.Bytes)
}

// sameDAG fails unless a and b have the same flows under the same ids, with the same parents and
// children.
func sameDAG(t *testing.T, a, b ccl.DAG) {
	t.Helper()
	if a.NumFlows() != b.NumFlows() {
		t.Fatalf("%d flows, want %d", a.NumFlows(), b.NumFlows())
	}
	ca, cb := a.Collective(), b.Collective()
	if ca.Pieces != cb.Pieces || ca.Bytes != cb.Bytes || ca.Op != cb.Op {
		t.Fatalf("collective %+v, want %+v", *ca, *cb)
	}
	var x, y []ccl.FlowID
	bad := 0
	for i := 0; i < a.NumFlows() && bad < 5; i++ {
		id := ccl.FlowID(i)
		if fa, fb := a.Flow(id), b.Flow(id); fa != fb {
			t.Errorf("flow %d is %s, want %s", i, flowString(fa), flowString(fb))
			bad++
			continue
		}
		x, y = a.Parents(id, x[:0]), b.Parents(id, y[:0])
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			t.Errorf("flow %d (%s) has parents %v, want %v", i, flowString(a.Flow(id)), x, y)
			bad++
		}
		x, y = a.Children(id, x[:0]), b.Children(id, y[:0])
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			t.Errorf("flow %d (%s) has children %v, want %v", i, flowString(a.Flow(id)), x, y)
			bad++
		}
	}
}
