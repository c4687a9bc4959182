package ccl

import (
	"strings"
	"testing"
)

func group(n int) []int32 {
	r := make([]int32, n)
	for i := range r {
		r[i] = int32(i)
	}
	return r
}

// refRingAllReduce is a textbook one-channel ring all-reduce, written independently of the
// algorithm packages: reduce-scatter for n−1 steps (rank i sends piece i−s), then all-gather for
// n−1 steps (rank i sends piece i+1−t); each flow waits for the one its sender received last.
func refRingAllReduce(n int, bytes int64) *DAGBuilder {
	b := NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(n), GPUsPerServer: n, TotalGPUs: n, Bytes: bytes, Pieces: n})
	last := make([]FlowID, n) // flow each rank received most recently
	for i := range last {
		last[i] = -1
	}
	for s := 0; s < 2*(n-1); s++ {
		next := make([]FlowID, n)
		for i := range n {
			piece := ((i-s)%n + n) % n
			if s >= n-1 {
				piece = ((i+1-(s-(n-1)))%n + n) % n
			}
			f := Flow{Src: int32(i), Dst: int32((i + 1) % n), Chunk: int32(s), Kind: KindRing, PieceLo: int32(piece), PieceHi: int32(piece + 1)}
			var id FlowID
			if last[i] >= 0 {
				id = b.Add(f, last[i])
			} else {
				id = b.Add(f)
			}
			next[(i+1)%n] = id
		}
		last = next
	}
	return b
}

func build(t *testing.T, b *DAGBuilder) *FlowDAG {
	t.Helper()
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCheckAcceptsCorrectDAGs(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 13} {
		if err := Check(build(t, refRingAllReduce(n, 1000))); err != nil {
			t.Errorf("ring all-reduce n=%d: %v", n, err)
		}
	}
	// All-to-all, every pair at once.
	n := 6
	b := NewDAGBuilder(Collective{Op: OpAllToAll, Ranks: group(n), GPUsPerServer: 8, TotalGPUs: 8, Bytes: 600, Pieces: n * n})
	for i := range n {
		for j := range n {
			if i != j {
				b.Add(Flow{Src: int32(i), Dst: int32(j), Kind: KindDirect, PieceLo: int32(i*n + j), PieceHi: int32(i*n + j + 1)})
			}
		}
	}
	if err := Check(build(t, b)); err != nil {
		t.Errorf("all-to-all: %v", err)
	}
	// NVLS all-reduce on one server: up to the NVSwitch, down after every up flow.
	n = 4
	b = NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(n), GPUsPerServer: 4, TotalGPUs: 4, Bytes: 4096, Pieces: 1})
	nvs := b.Collective().NVSwitch(0)
	var ups []FlowID
	for i := range n {
		ups = append(ups, b.Add(Flow{Src: int32(i), Dst: nvs, Kind: KindNVLS, PieceLo: 0, PieceHi: 1}))
	}
	for i := range n {
		b.Add(Flow{Src: nvs, Dst: int32(i), Kind: KindNVLS, PieceLo: 0, PieceHi: 1}, ups...)
	}
	if err := Check(build(t, b)); err != nil {
		t.Errorf("NVLS: %v", err)
	}
}

// The checker rejects deliberately broken DAGs, each for the reason it is broken.
func TestCheckRejectsBrokenDAGs(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(d *FlowDAG) *FlowDAG
		want   string
	}{
		{"missing flow", func(d *FlowDAG) *FlowDAG { return dropFlow(t, d, len(d.Flows)-1) }, "lost"},
		{"wrong parent", func(d *FlowDAG) *FlowDAG {
			// Flow 5 (step 1 of rank 0) waits for a flow that did not bring it the data it
			// sends, so it forwards its own contribution only and the sum comes out short.
			d.parents[d.parentStart[5]] = 2
			return d
		}, "lost"},
		{"duplicated chunk", func(d *FlowDAG) *FlowDAG { return duplicateFlow(t, d, 7) }, "already holds"},
		{"bytes invented", func(d *FlowDAG) *FlowDAG { d.Flows[3].Bytes++; return d }, "bytes"},
		{"cycle", func(d *FlowDAG) *FlowDAG {
			// Make flow 0 wait for its own child.
			b := rebuild(d)
			b.AddParent(0, d.Children(0, nil)[0])
			return build(t, b)
		}, "cycle"},
		{"outsider", func(d *FlowDAG) *FlowDAG { d.Flows[0].Dst = 99; return d }, "neither a group member"},
		{"self", func(d *FlowDAG) *FlowDAG { d.Flows[0].Dst = d.Flows[0].Src; return d }, "to itself"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.break_(build(t, refRingAllReduce(5, 1000)))
			err := Check(d)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// rebuild turns a FlowDAG back into a builder with the same flows and edges.
func rebuild(d *FlowDAG) *DAGBuilder {
	b := NewDAGBuilder(d.Coll)
	for i, f := range d.Flows {
		b.Add(f, d.Parents(FlowID(i), nil)...)
	}
	return b
}

func dropFlow(t *testing.T, d *FlowDAG, drop int) *FlowDAG {
	b := NewDAGBuilder(d.Coll)
	remap := make([]FlowID, len(d.Flows))
	for i, f := range d.Flows {
		if i == drop {
			remap[i] = -1
			continue
		}
		var ps []FlowID
		for _, p := range d.Parents(FlowID(i), nil) {
			if remap[p] >= 0 {
				ps = append(ps, remap[p])
			}
		}
		remap[i] = b.Add(f, ps...)
	}
	return build(t, b)
}

func duplicateFlow(t *testing.T, d *FlowDAG, dup int) *FlowDAG {
	b := rebuild(d)
	b.Add(d.Flows[dup], d.Parents(FlowID(dup), nil)...)
	return build(t, b)
}

// Data reaching a sender only by a path its flow does not wait for does not count: an
// all-gather where the second hop does not depend on the first is refused even though a fast
// network would deliver in time.
func TestCheckNeedsTheDependency(t *testing.T) {
	b := NewDAGBuilder(Collective{Op: OpAllGather, Ranks: group(3), GPUsPerServer: 8, TotalGPUs: 8, Bytes: 300, Pieces: 3})
	// Rank i sends its piece to i+1, then i+1 forwards it to i+2 — but without waiting.
	for i := range 3 {
		b.Add(Flow{Src: int32(i), Dst: int32((i + 1) % 3), PieceLo: int32(i), PieceHi: int32(i + 1)})
	}
	for i := range 3 {
		b.Add(Flow{Src: int32((i + 1) % 3), Dst: int32((i + 2) % 3), PieceLo: int32(i), PieceHi: int32(i + 1)})
	}
	err := Check(build(t, b))
	if err == nil || !strings.Contains(err.Error(), "parent is missing") {
		t.Fatalf("err = %v", err)
	}
}

func TestPieceBytes(t *testing.T) {
	c := Collective{Op: OpAllReduce, Ranks: group(3), Bytes: 10, Pieces: 3}
	if c.PieceBytes(0) != 4 || c.PieceBytes(1) != 3 || c.PieceBytes(2) != 3 || c.RangeBytes(0, 3) != 10 {
		t.Errorf("pieces of 10 bytes in 3: %d %d %d", c.PieceBytes(0), c.PieceBytes(1), c.PieceBytes(2))
	}
	a := Collective{Op: OpAllToAll, Ranks: group(2), Bytes: 5, Pieces: 4}
	// Each rank's 5 bytes in 2 pieces: 3 + 2.
	if a.PieceBytes(0) != 3 || a.PieceBytes(1) != 2 || a.PieceBytes(2) != 3 || a.PieceBytes(3) != 2 {
		t.Error("all-to-all pieces")
	}
}

// nccl-tests' bus factors (doc/PERFORMANCE.md): all-reduce 2(n−1)/n, all-gather, reduce-scatter
// and all-to-all (n−1)/n.
func TestBusFactor(t *testing.T) {
	cases := []struct {
		op   Op
		n    int
		want float64
	}{
		{OpAllReduce, 8, 1.75}, {OpAllGather, 8, 0.875}, {OpReduceScatter, 4, 0.75}, {OpAllToAll, 2, 0.5}, {OpNone, 8, 1}, {OpAllReduce, 0, 0},
	}
	for _, c := range cases {
		if got := BusFactor(c.op, c.n); got != c.want {
			t.Errorf("%s n=%d: %v, want %v", c.op, c.n, got, c.want)
		}
	}
}
