package netmodel

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/topo"
)

// Ranks that reach a collective one by one, on a star of three one-GPU servers (400 Gbps, 0.5
// µs links, no send latency), with flows A 0→1, B 1→0 and C 0→2 after B, of S bytes each: a
// flow takes IssueGap after it is ready, then S·8/400 Gbps plus two link delays. Rank 0 joins
// at 0 and sends A at once; rank 1 joins at T and sends B then; C follows B's arrival; rank 2,
// which only receives, joins at 100 µs, after its flow has arrived. Rank 1 is done when A and B
// are, rank 0 when C is, rank 2 at its join.
func TestRanksJoinOneByOne(t *testing.T) {
	tp := star(t, 3, "400Gbps", "0.0005ms")
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	const S = 1 << 20
	b := ccl.NewDAGBuilder(ccl.Collective{Op: ccl.OpAllToAll, Ranks: []int32{0, 1, 2}, GPUsPerServer: 1, TotalGPUs: 3})
	b.Add(ccl.Flow{Src: 0, Dst: 1, Bytes: S})
	fb := b.Add(ccl.Flow{Src: 1, Dst: 0, Bytes: S})
	b.Add(ccl.Flow{Src: 0, Dst: 2, Bytes: S}, fb)
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	done := map[int32]engine.Time{}
	id := sim.RunRanks(d, Latency{}, func(r int32) {
		if _, twice := done[r]; twice {
			t.Errorf("rank %d done twice", r)
		}
		done[r] = s.Now()
	})
	const T = 10 * engine.Microsecond
	join := func(r int32, at engine.Time) {
		s.AtFunc(at, func() {
			if err := sim.Join(id, r); err != nil {
				t.Error(err)
			}
		})
	}
	join(0, 0)
	join(1, T)
	join(2, 100*engine.Microsecond)
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	flow := engine.Time(S*8*1e12/400e9) + engine.Microsecond // rounded as the fluid rounds: within 2 ps
	arrivedA := IssueGap + flow
	arrivedB := T + IssueGap + flow
	arrivedC := arrivedB + IssueGap + flow
	got := map[int32]engine.Time{}
	for _, r := range recs {
		got[r.Src*10+r.Dst] = r.Arrived
	}
	for _, c := range []struct {
		name      string
		got, want engine.Time
	}{
		{"flow A (0→1)", got[1], arrivedA},
		{"flow B (1→0), sent once rank 1 joined", got[10], arrivedB},
		{"flow C (0→2), after B", got[2], arrivedC},
		{"rank 0 done (its last flow, C)", done[0], arrivedC},
		{"rank 1 done (A and B)", done[1], arrivedB},
		{"rank 2 done (at its join, after C)", done[2], 100 * engine.Microsecond},
	} {
		if !near(c.got, c.want, 4) {
			t.Errorf("%s at %v, want %v", c.name, c.got, c.want)
		}
	}
	if sim.Runs() != 0 {
		t.Errorf("%d runs still open after every rank joined and finished", sim.Runs())
	}
}

// A run whose ranks all join at its start is the run of the collective at once: the same flows
// at the same times (released rank by rank rather than in the DAG's order, so reported in
// another order among those that end together), and its last rank done when the run is.
func TestRanksJoinedTogetherAreOneRun(t *testing.T) {
	tp, err := topo.DefaultFabric(16, 8)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 4 << 20}, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lat := Latency{Intra: 6 * engine.Microsecond, Inter: 6 * engine.Microsecond}
	end, want := runDAGOn(t, fab, d, lat)

	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	var last engine.Time
	dones := 0
	id := sim.RunRanks(d, lat, func(int32) { dones++; last = max(last, s.Now()) })
	for r := range int32(16) {
		if err := sim.Join(id, r); err != nil {
			t.Fatal(err)
		}
	}
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if dones != 16 || last != end {
		t.Errorf("%d ranks done, the last at %v; want 16, at the run's end %v", dones, last, end)
	}
	byFlow := func(a, b FlowRecord) int { return cmp.Compare(a.Flow, b.Flow) }
	slices.SortFunc(recs, byFlow)
	slices.SortFunc(want, byFlow)
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("the flows differ from the run of the collective at once: %s", firstDiff(recs, want))
	}
}

// Join refuses what it cannot mean.
func TestJoinRefuses(t *testing.T) {
	tp := star(t, 3, "400Gbps", "0.0005ms")
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	b := ccl.NewDAGBuilder(ccl.Collective{Op: ccl.OpAllToAll, Ranks: []int32{0, 2}, GPUsPerServer: 1, TotalGPUs: 3})
	b.Add(ccl.Flow{Src: 0, Dst: 2, Bytes: 1000})
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	whole := sim.Run(d, Latency{}, nil)
	ranked := sim.RunRanks(d, Latency{}, func(int32) {})
	if err := sim.Join(ranked, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   RunID
		rank int32
		want string
	}{
		{"a run of the collective at once", whole, 0, "does not take ranks"},
		{"a rank outside the group", ranked, 1, "not in the group"},
		{"a rank twice", ranked, 0, "twice"},
	} {
		err := sim.Join(c.id, c.rank)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func firstDiff(a, b []FlowRecord) string {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("record %d: %+v against %+v", i, a[i], b[i])
		}
	}
	return ""
}

// A run without flows (a truncated collective with nothing to send) has each rank done as it
// joins, and ends with the last join.
func TestRanksOfAnEmptyRun(t *testing.T) {
	tp := star(t, 2, "400Gbps", "0.0005ms")
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ccl.NewDAGBuilder(ccl.Collective{Op: ccl.OpAllGather, Ranks: []int32{0, 1}, GPUsPerServer: 1, TotalGPUs: 2}).Build()
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	done := map[int32]engine.Time{}
	id := sim.RunRanks(d, Latency{}, func(r int32) { done[r] = s.Now() })
	for r, at := range []engine.Time{0, 5 * engine.Microsecond} {
		s.AtFunc(at, func() {
			if err := sim.Join(id, int32(r)); err != nil {
				t.Error(err)
			}
		})
	}
	s.Run()
	if done[0] != 0 || done[1] != 5*engine.Microsecond || len(done) != 2 {
		t.Errorf("ranks done at %v, want 0 at 0 and 1 at 5us", done)
	}
	if sim.Runs() != 0 {
		t.Errorf("%d runs still open", sim.Runs())
	}
}
