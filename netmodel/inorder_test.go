package netmodel

import (
	"testing"

	"simd/ccl"
	"simd/engine"
)

// sequencedDAG is a FlowDAG whose flows are issued in the sequences seq gives (flow id → key,
// place).
type sequencedDAG struct {
	*ccl.FlowDAG
	seq map[ccl.FlowID][2]int32
}

func (d sequencedDAG) Sequences() int { return 2 }

func (d sequencedDAG) Sequence(id ccl.FlowID) (key, pos int32, ok bool) {
	s, ok := d.seq[id]
	return s[0], s[1], ok
}

// GPU 0 sends two chunks of one channel to GPU 1, the first of 4 MiB, the second of 1 MiB, and
// GPU 1 passes each on to GPU 2 (64 KiB) when it has it. Every send is handed to the network
// IssueGap (G, astra-sim's memory-bus delay) after what releases it and starts a send latency L
// later. Both chunks share GPU 0's 400 Gbps link from G + L on, so the second arrives first, at
// G + L + 2·1 MiB/400 Gbps plus the two 500 ns hops, the first at G + L + 5 MiB/400 Gbps plus
// the hops. Passed on as they arrive, GPU 1's second chunk starts G + L after the second
// arrival; passed on in order (SetIssueInOrder, as astra-sim's channels do), it waits for the
// first chunk's send, handed over G after the first arrival, and is handed over G after that:
// 2G + L after the first arrival. (GPU 1's two sends are its sequence; GPU 0's are in none, so
// both start at G + L.)
func TestIssueInOrder(t *testing.T) {
	const L = 6 * engine.Microsecond
	hops := 2 * 500 * engine.Nanosecond
	const G = IssueGap
	firstIn := G + L + psOf(5<<20*8/400e9) + hops
	secondIn := G + L + psOf(2*(1<<20)*8/400e9) + hops
	for _, tc := range []struct {
		name          string
		inOrder       bool
		secondOutWant engine.Time
	}{
		{"as they arrive", false, secondIn + G + L},
		{"in order", true, firstIn + 2*G + L},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll := ccl.Collective{Op: ccl.OpAllGather, Ranks: ranks(3), GPUsPerServer: 1, TotalGPUs: 3, Bytes: 1 << 20, Pieces: 3}
			b := ccl.NewDAGBuilder(coll)
			in0 := b.Add(ccl.Flow{Src: 0, Dst: 1, Bytes: 4 << 20})
			in1 := b.Add(ccl.Flow{Src: 0, Dst: 1, Bytes: 1 << 20})
			out0 := b.Add(ccl.Flow{Src: 1, Dst: 2, Bytes: 64 << 10}, in0)
			out1 := b.Add(ccl.Flow{Src: 1, Dst: 2, Bytes: 64 << 10}, in1)
			fd, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			d := sequencedDAG{fd, map[ccl.FlowID][2]int32{out0: {1, 0}, out1: {1, 1}}}
			fab, err := NewFabric(star(t, 3, "400Gbps", "0.0005ms"))
			if err != nil {
				t.Fatal(err)
			}
			s := engine.NewScheduler()
			sim := NewSimulator(s, fab, Options{})
			sim.SetIssueInOrder(tc.inOrder)
			var recs []FlowRecord
			sim.Observe(recorder{&recs})
			sim.Run(d, Latency{Intra: L, Inter: L}, nil)
			s.Run()
			got := map[ccl.FlowID]FlowRecord{}
			for _, r := range recs {
				got[r.Flow] = r
			}
			if len(got) != 4 {
				t.Fatalf("%d flows done, want 4", len(got))
			}
			if at := got[in0].Arrived; !near(at, firstIn, engine.Nanosecond) {
				t.Errorf("the first chunk arrived at %v, want %v", at, firstIn)
			}
			if at := got[in1].Arrived; !near(at, secondIn, engine.Nanosecond) {
				t.Errorf("the second chunk arrived at %v, want %v", at, secondIn)
			}
			if st := got[out0].Start; !near(st, firstIn+G+L, engine.Nanosecond) {
				t.Errorf("the first chunk was passed on at %v, want %v", st, firstIn+G+L)
			}
			if st := got[out1].Start; !near(st, tc.secondOutWant, engine.Nanosecond) {
				t.Errorf("the second chunk was passed on at %v, want %v", st, tc.secondOutWant)
			}
		})
	}
}
