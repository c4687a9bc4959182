package netmodel

import (
	"math"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/topo"
)

// dualToR16 is SimAI's DCN+ dual-ToR fabric of two 8-GPU servers: every GPU has a 200 Gbps port
// to each of the two ASWs, so a flow between the servers crosses GPU → ASW → GPU on the port
// it leaves by.
func dualToR16(t *testing.T) *topo.Topology {
	t.Helper()
	o := topo.NewGeneratorOptions(topo.TemplateDCNPlus, false, true, false)
	o.GPUs = 16
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return g.Topology
}

// chainDAG is a DAG of flows from GPU src to GPU dst, each the child of the one before (a
// ring's steps between two ranks), on a 16-GPU cluster of 8-GPU servers.
func chainDAG(t *testing.T, src, dst int32, bytes []int64) ccl.DAG {
	t.Helper()
	b := ccl.NewDAGBuilder(ccl.Collective{Op: ccl.OpAllGather, Ranks: []int32{src, dst}, GPUsPerServer: 8, TotalGPUs: 16, Bytes: 1, Pieces: 2})
	for i, n := range bytes {
		f := ccl.Flow{Src: src, Dst: dst, Bytes: n, Chunk: int32(i)}
		if i == 0 {
			b.Add(f)
		} else {
			b.Add(f, ccl.FlowID(i-1))
		}
	}
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runQPs runs d alone on tp with n QPs per connection and returns its end and the records.
func runQPs(t *testing.T, tp *topo.Topology, d ccl.DAG, n int) (engine.Time, []FlowRecord) {
	t.Helper()
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	if err := sim.SetQPsPerConnection(n); err != nil {
		t.Fatal(err)
	}
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	var end engine.Time = -1
	sim.Run(d, Latency{}, func() { end = s.Now() })
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if end < 0 {
		t.Fatal("the run never finished")
	}
	if got, want := sim.Flows(), uint64(d.NumFlows()); got != want {
		t.Errorf("Flows() = %d, want the DAG's %d", got, want)
	}
	return end, recs
}

// With one QP per flow (SimAI's) a flow between two dual-ToR servers leaves by one 200 Gbps
// port, whichever ECMP picks; split over two QPs it leaves by both ports at once, each QP
// arriving on the receiver's port on the same ASW: S·8/400G plus the two hops' delay, after the
// send is handed over (IssueGap). More QPs than ports share the ports evenly (4 QPs: two per
// port), which changes nothing alone.
func TestQPsPerConnectionDualToR(t *testing.T) {
	tp := dualToR16(t)
	const S = 8 << 20
	hops := 2 * 500 * engine.Nanosecond
	at := func(rate float64) engine.Time { return IssueGap + engine.Time(math.Ceil(S*8/rate*1e12)) + hops }
	for _, tc := range []struct {
		qps  int
		want engine.Time
		recs int
	}{
		{1, at(200e9), 1},
		{2, at(400e9), 2},
		{3, 0, 3}, // two QPs on one port, one on the other: the pair finishes last (below)
		{4, at(400e9), 4},
	} {
		end, recs := runQPs(t, tp, chainDAG(t, 0, 8, []int64{S}), tc.qps)
		if tc.qps == 3 {
			// Ports get 2 and 1 QPs of S/3: the port with two carries 2S/3 at 200 Gbps.
			tc.want = IssueGap + engine.Time(math.Ceil(2*S/3*8/200e9*1e12)) + hops
		}
		if !near(end, tc.want, 4) {
			t.Errorf("%d QPs: done at %v, want %v", tc.qps, end, tc.want)
		}
		if len(recs) != tc.recs {
			t.Fatalf("%d QPs: %d records, want one per QP (%d)", tc.qps, len(recs), tc.recs)
		}
		var bytes int64
		ports := map[int32]bool{}
		sports := map[uint16]bool{}
		for _, r := range recs {
			bytes += r.Bytes
			ports[r.Path[0]] = true
			sports[r.Sport] = true
		}
		if bytes != S {
			t.Errorf("%d QPs carry %d bytes, want %d", tc.qps, bytes, S)
		}
		if len(sports) != tc.recs {
			t.Errorf("%d QPs have %d distinct source ports", tc.qps, len(sports))
		}
		if want := min(tc.qps, 2); len(ports) != want {
			t.Errorf("%d QPs leave by %d NIC ports, want %d", tc.qps, len(ports), want)
		}
	}
}

// A split flow's children start when its last QP is done, and each QP of a chain takes the
// pair's next source ports, as SimAI numbers QPs.
func TestQPsPerConnectionChain(t *testing.T) {
	tp := dualToR16(t)
	const S = 1 << 20
	end1, _ := runQPs(t, tp, chainDAG(t, 0, 8, []int64{S, S, S}), 1)
	end2, recs := runQPs(t, tp, chainDAG(t, 0, 8, []int64{S, S, S}), 2)
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	for i, r := range recs {
		if want := uint16(10000 + i); r.Sport != want {
			t.Errorf("QP %d has source port %d, want %d", i, r.Sport, want)
		}
		if i%2 == 1 && r.Start != recs[i-1].Start {
			t.Errorf("QPs of one flow start at %v and %v", recs[i-1].Start, r.Start)
		}
		if i >= 2 && i%2 == 0 && r.Start < max(recs[i-1].Arrived, recs[i-2].Arrived) {
			t.Errorf("flow %d started at %v, before its parent's last QP was done", i/2, r.Start)
		}
	}
	// Three steps at twice the rate: the bytes' time halves, the delays (the hops and the
	// hand-over, IssueGap) stay.
	delays := 3 * (2*500*engine.Nanosecond + IssueGap)
	if want := (end1-delays)/2 + delays; !near(end2, want, 8) {
		t.Errorf("2 QPs: done at %v, want %v (1 QP: %v)", end2, want, end1)
	}
}

// Flows inside a server, and flows of fewer bytes than QPs, are not split.
func TestQPsPerConnectionNotSplit(t *testing.T) {
	tp := dualToR16(t)
	for _, tc := range []struct {
		name     string
		src, dst int32
		bytes    int64
		recs     int
	}{
		{"NVLink", 0, 1, 1 << 20, 1},
		{"one byte", 0, 8, 1, 1},
		{"three bytes over four QPs", 0, 8, 3, 3},
	} {
		_, recs := runQPs(t, tp, chainDAG(t, tc.src, tc.dst, []int64{tc.bytes}), 4)
		if len(recs) != tc.recs {
			t.Errorf("%s: %d records, want %d", tc.name, len(recs), tc.recs)
		}
	}
}

func TestSetQPsPerConnectionRefuses(t *testing.T) {
	fab, err := NewFabric(dualToR16(t))
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	if err := sim.SetQPsPerConnection(0); err == nil {
		t.Error("0 QPs accepted")
	}
	sim.Run(chainDAG(t, 0, 8, []int64{1 << 10}), Latency{}, nil)
	s.Run()
	if err := sim.SetQPsPerConnection(2); err == nil {
		t.Error("accepted after the first flow")
	}
}

// A data-parallel ring all-reduce of S bytes between GPU 0 of one DCN+ dual-ToR server and GPU 8
// of the other: 2(n−1) = 2 steps in which each GPU sends S/2 to the other over the network. With
// 2 QPs per connection every flow uses both 200 Gbps ports of the NIC, the full 400 Gbps: a step
// takes (S/2)·8/400G plus the two hops' delay and the send's hand-over (IssueGap). With SimAI's
// one QP a flow has one port, and the ring takes longer.
func TestQPsPerConnectionRingAllReduce(t *testing.T) {
	tp := dualToR16(t)
	const S = 64 << 20
	req := ccl.Request{Op: ccl.OpAllReduce, Ranks: []int32{0, 8}, GPUsPerServer: 8, TotalGPUs: 16, Bytes: S}
	d, err := nccl.Ring(req, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hops := 2 * 500 * engine.Nanosecond
	step := IssueGap + engine.Time(math.Ceil(S/2*8/400e9*1e12)) + hops
	two, _ := runQPs(t, tp, d, 2)
	if !near(two, 2*step, 16) {
		t.Errorf("2 QPs: %v, want 2 × %v (the NIC's 400 Gbps)", two, step)
	}
	one, _ := runQPs(t, tp, d, 1)
	if one <= two+step/4 {
		t.Errorf("1 QP: %v, not slower than 2 QPs' %v", one, two)
	}
}

// A flow split into QPs counts once in Progress: at the end of a run of one split flow the
// simulator has done one flow's work, not one per QP; halfway, half of it.
func TestQPsPerConnectionProgress(t *testing.T) {
	fab, err := NewFabric(dualToR16(t))
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	if err := sim.SetQPsPerConnection(4); err != nil {
		t.Fatal(err)
	}
	const S = 8 << 20
	sim.Run(chainDAG(t, 0, 8, []int64{S}), Latency{}, nil)
	half := engine.Time(S * 8 / 400e9 / 2 * 1e12)
	var mid float64
	s.AtFunc(half, func() { mid = sim.Progress() })
	s.Run()
	// Started counts its part, ⅔, and sending half its 1/30: 0.683.
	if math.Abs(mid-41.0/60) > 0.01 {
		t.Errorf("halfway: progress %.3f flows, want 0.683", mid)
	}
	if got := sim.Progress(); got != 1 {
		t.Errorf("at the end: progress %v flows, want 1", got)
	}
}
