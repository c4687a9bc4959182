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
			child := d.Children(0, nil)[0]
			out, err := EditDAG(d, func(id FlowID, _ *Flow, ps []FlowID) ([]FlowID, bool, bool) {
				if id == 0 {
					ps = append(ps, child)
				}
				return ps, true, false
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
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

func dropFlow(t *testing.T, d *FlowDAG, drop int) *FlowDAG {
	out, err := EditDAG(d, func(id FlowID, _ *Flow, ps []FlowID) ([]FlowID, bool, bool) { return ps, int(id) != drop, false })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func duplicateFlow(t *testing.T, d *FlowDAG, dup int) *FlowDAG {
	out, err := EditDAG(d, func(id FlowID, _ *Flow, ps []FlowID) ([]FlowID, bool, bool) { return ps, true, int(id) == dup })
	if err != nil {
		t.Fatal(err)
	}
	return out
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
	// Truncated as SimCCL divides: ⌊10/3⌋ each, the remainder dropped; ⌊5/2⌋ per all-to-all
	// piece; pieces of 0 bytes make the collective empty.
	c.Truncate, a.Truncate = true, true
	if c.PieceBytes(0) != 3 || c.PieceBytes(2) != 3 || c.RangeBytes(0, 3) != 9 || c.Empty() {
		t.Errorf("truncated pieces of 10 bytes in 3: %d %d %d", c.PieceBytes(0), c.PieceBytes(1), c.PieceBytes(2))
	}
	if a.PieceBytes(0) != 2 || a.PieceBytes(3) != 2 {
		t.Error("truncated all-to-all pieces")
	}
	if e := (Collective{Op: OpAllReduce, Ranks: group(3), Bytes: 2, Pieces: 3, Truncate: true}); !e.Empty() {
		t.Error("2 bytes in 3 truncated pieces: not empty")
	}
	if e := (Collective{Op: OpAllReduce, Ranks: group(3), Bytes: 2, Pieces: 3}); e.Empty() {
		t.Error("2 bytes in 3 pieces, every byte sent: empty")
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

// EditDAG keeps, drops, duplicates and rewires flows; a dropped flow's children lose it as a
// parent, and a parent may point forward.
func TestEditDAG(t *testing.T) {
	d := build(t, refRingAllReduce(3, 300)) // 12 flows, flow i+3 waits for flow (i+2) mod 3 of the step before
	same, err := EditDAG(d, nil)
	if err != nil || len(same.Flows) != 12 {
		t.Fatalf("copy: %v", err)
	}
	for i := range 12 {
		if a, b := d.Parents(FlowID(i), nil), same.Parents(FlowID(i), nil); len(a) != len(b) || (len(a) > 0 && a[0] != b[0]) {
			t.Fatalf("flow %d parents %v, copy %v", i, a, b)
		}
	}
	out, err := EditDAG(d, func(id FlowID, f *Flow, ps []FlowID) ([]FlowID, bool, bool) {
		switch id {
		case 2:
			return ps, false, false // dropped: flow 3 (its child) loses its parent
		case 4:
			return append(ps, 11), true, true // waits for a later flow, and is duplicated
		}
		return ps, true, false
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Flows) != 12 {
		t.Fatalf("%d flows, want 11 + 1 copy", len(out.Flows))
	}
	if ps := out.Parents(2, nil); len(ps) != 0 { // old flow 3
		t.Errorf("the child of the dropped flow has parents %v", ps)
	}
	if ps := out.Parents(3, nil); len(ps) != 2 || ps[1] != 10 { // old flow 4 → old 0 and old 11
		t.Errorf("rewired flow has parents %v", ps)
	}
	if ps := out.Parents(11, nil); len(ps) != 1 || ps[0] != 0 { // the copy keeps the original parent
		t.Errorf("the copy has parents %v", ps)
	}
}

// CheckWith's AllowRedundant accepts a finished piece delivered again to a rank that holds it
// (as SimCCL's PXN relays do), and nothing else that Check refuses.
func TestCheckAllowRedundant(t *testing.T) {
	const n = 4
	redundant := func() *FlowDAG {
		b := refRingAllReduce(n, 1000)
		// Once the last flow into rank 0 and every flow into rank 1 (flows s·n of step s) have
		// arrived, rank 0 sends every piece, finished, to rank 1, which holds them finished.
		parents := []FlowID{FlowID((2*n-3)*n + n - 1)}
		for s := range 2 * (n - 1) {
			parents = append(parents, FlowID(s*n))
		}
		for p := range int32(n) {
			b.Add(Flow{Src: 0, Dst: 1, Chunk: 2 * (n - 1), Kind: KindRing, PieceLo: p, PieceHi: p + 1}, parents...)
		}
		return build(t, b)
	}
	allow := CheckOptions{AllowRedundant: true}
	if err := CheckWith(redundant(), allow); err != nil {
		t.Errorf("redundant finished deliveries refused: %v", err)
	}
	if err := Check(redundant()); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("Check accepted redundant deliveries: %v", err)
	}
	// A partial sum delivered twice is still refused (flow 7 is a reduce-scatter step).
	if err := CheckWith(duplicateFlow(t, build(t, refRingAllReduce(5, 1000)), 7), allow); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("a duplicated partial sum: %v", err)
	}
	// The correct DAG still passes, and the other broken ones still fail.
	if err := CheckWith(build(t, refRingAllReduce(5, 1000)), allow); err != nil {
		t.Error(err)
	}
	for name, d := range map[string]*FlowDAG{
		"missing flow":   dropFlow(t, build(t, refRingAllReduce(5, 1000)), 39),
		"bytes invented": func() *FlowDAG { d := build(t, refRingAllReduce(5, 1000)); d.Flows[3].Bytes++; return d }(),
	} {
		if err := CheckWith(d, allow); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// An all-gather piece sent again to a rank that has it is finished, hence allowed.
	b := NewDAGBuilder(Collective{Op: OpAllGather, Ranks: group(2), GPUsPerServer: 8, TotalGPUs: 8, Bytes: 200, Pieces: 2})
	first := b.Add(Flow{Src: 0, Dst: 1, PieceLo: 0, PieceHi: 1})
	b.Add(Flow{Src: 1, Dst: 0, PieceLo: 1, PieceHi: 2})
	b.Add(Flow{Src: 0, Dst: 1, PieceLo: 0, PieceHi: 1}, first)
	if err := CheckWith(build(t, b), allow); err != nil {
		t.Errorf("all-gather: %v", err)
	}
	if err := Check(build(t, b)); err == nil {
		t.Error("Check accepted an all-gather piece sent twice")
	}
}
