package netmodel

import (
	"errors"
	"math"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/configs"
	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// spectrumX16 is the 16-GPU Spectrum-X fabric with psws PSWs: two servers whose eight rails
// each have one ASW, every ASW linked to every PSW at 400 Gbps (500 ns).
func spectrumX16(t *testing.T, psws int) *Fabric {
	t.Helper()
	p := topo.SpectrumXDefaults(16)
	p.PSWs = psws
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

// usesLink reports whether path crosses the link between nodes a and b, either way.
func usesLink(g *route.Graph, path []int32, a, b int32) bool {
	for _, l := range path {
		if x, y := g.From(l), g.To(l); x == a && y == b || x == b && y == a {
			return true
		}
	}
	return false
}

// Two cross-rail flows leave rail 0's ASW through different PSWs (S = 10 MB each, 400 Gbps all
// the way). At 100 µs, when each has 5 MB left, the first one's ASW–PSW link fails: it moves
// to the other PSW, the two share that uplink at 200 Gbps, and both finish their 5 MB 200 µs
// later: sent at 300 µs, arriving after the four 500 ns hops at 302 µs. Without the failure
// both would arrive at 202 µs.
func TestLinkDownMovesAFlow(t *testing.T) {
	fab := spectrumX16(t, 2)
	g := fab.Graph
	const S = 10_000_000
	// Pick two flows from rail 0 (GPUs 0 and 8) to different rails whose first flow's
	// routes climb to different PSWs.
	sport := route.QPSport(0)
	var pair [2]RawFlow
	var psw [2]int32
	found := false
	for _, d1 := range []int32{9, 10, 11, 12} {
		for _, d2 := range []int32{2, 3, 4, 5} {
			if d2%8 == d1%8 {
				continue
			}
			p1, err1 := fab.Router.Route(nil, 0, d1, sport, DPort)
			p2, err2 := fab.Router.Route(nil, 8, d2, sport, DPort)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if g.To(p1[1]) != g.To(p2[1]) {
				pair = [2]RawFlow{{Src: 0, Dst: d1, Bytes: S, DPort: DPort}, {Src: 8, Dst: d2, Bytes: S, DPort: DPort}}
				psw = [2]int32{g.To(p1[1]), g.To(p2[1])}
				found = true
			}
		}
	}
	if !found {
		t.Fatal("no two flows from rail 0 climb to different PSWs")
	}
	asw := g.To(mustRoute(t, fab, pair[0])[0])
	for _, fail := range []bool{false, true} {
		s := engine.NewScheduler()
		sim := NewSimulator(s, fab, Options{})
		if fail {
			if err := sim.LinkDown(100*engine.Microsecond, asw, psw[0]); err != nil {
				t.Fatal(err)
			}
		}
		var recs []FlowRecord
		sim.Observe(recorder{&recs})
		sim.StartRaw(pair[:])
		s.Run()
		if err := sim.Err(); err != nil {
			t.Fatal(err)
		}
		want := engine.Time(math.Ceil(S*8/400e9*1e12)) + 2*engine.Microsecond
		if fail {
			want = 300*engine.Microsecond + 2*engine.Microsecond
		}
		if len(recs) != 2 {
			t.Fatalf("%d flows arrived", len(recs))
		}
		for _, r := range recs {
			if !near(r.Arrived, want, 2) {
				t.Errorf("failure %v: flow %d→%d arrived at %v, want %v", fail, r.Src, r.Dst, r.Arrived, want)
			}
			if fail && usesLink(g, r.Path, asw, psw[0]) {
				t.Errorf("flow %d→%d finished on the failed link: %v", r.Src, r.Dst, r.Path)
			}
		}
		if got := sim.Network().Stats().Rerouted; got != map[bool]uint64{false: 0, true: 1}[fail] {
			t.Errorf("failure %v: %d flows moved", fail, got)
		}
		if fail && fab.Router.LinkUp(g.Links(nil, asw, psw[0])[0]) {
			t.Error("the router still has the link up")
		}
		fab.Router.SetLinkUp(asw, psw[0]) // the fabric is shared by the two runs
	}
}

func mustRoute(t *testing.T, fab *Fabric, f RawFlow) []int32 {
	t.Helper()
	p, err := fab.Router.Route(nil, f.Src, f.Dst, route.QPSport(0), f.DPort)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A PSW uplink fails in the middle of a ring all-reduce across two rail-optimised servers with
// two PSWs: the collective still completes, later than without the failure, the flows on the
// link at the failure move (every flow still transmitting after it avoids the link), and the
// flows started later are routed around it. The link is the ASW–PSW link that carried the most
// bytes in the run without the failure.
func TestLinkDownMidCollective(t *testing.T) {
	for _, bundles := range []bool{false, true} {
		t.Run(map[bool]string{false: "flows apart", true: "bundles"}[bundles], func(t *testing.T) { linkDownMidCollective(t, bundles) })
	}
}

// linkDownMidCollective is TestLinkDownMidCollective with the ideal model's flows of one path
// bundled or not (Options.Bundles): members of a bundle on the failed link move out of it.
func linkDownMidCollective(t *testing.T, bundles bool) {
	run := func(fail bool, a, b int32, at engine.Time) (engine.Time, []FlowRecord, *Simulator) {
		fab := spectrumX16(t, 2)
		s := engine.NewScheduler()
		sim := NewSimulator(s, fab, Options{Bundles: bundles})
		if fail {
			if err := sim.LinkDown(at, a, b); err != nil {
				t.Fatal(err)
			}
		}
		var recs []FlowRecord
		sim.Observe(recorder{&recs})
		d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 64 << 20}, nccl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var end engine.Time = -1
		sim.Run(d, Latency{}, func() { end = s.Now() })
		s.Run()
		if err := sim.Err(); err != nil {
			t.Fatal(err)
		}
		if end < 0 {
			t.Fatal("the collective never finished")
		}
		return end, recs, sim
	}
	base, recs, sim := run(false, 0, 0, 0)
	g := sim.Fabric().Graph
	carried := map[[2]int32]int64{}
	for _, r := range recs {
		for _, l := range r.Path {
			if x, y := g.From(l), g.To(l); g.Kind(x) == topo.Switch && g.Kind(y) == topo.Switch {
				carried[[2]int32{min(x, y), max(x, y)}] += r.Bytes
			}
		}
	}
	var link [2]int32
	for k, v := range carried {
		if v > carried[link] || v == carried[link] && (k[0] < link[0] || k[0] == link[0] && k[1] < link[1]) {
			link = k
		}
	}
	if carried[link] == 0 {
		t.Fatal("no flow crossed a PSW")
	}
	at := base / 2
	end, recs, sim := run(true, link[0], link[1], at)
	if !(end > base) {
		t.Errorf("with the link down at %v the all-reduce ended at %v, without at %v", at, end, base)
	}
	moved := sim.Network().Stats().Rerouted
	if moved == 0 {
		t.Error("no flow was moved")
	}
	if n := sim.Network().Stats().Bundled; (n > 0) != bundles {
		t.Errorf("%d flows bundled", n)
	}
	after := 0
	for _, r := range recs {
		if r.Sent > at && usesLink(g, r.Path, link[0], link[1]) {
			t.Errorf("flow %d (%d→%d, sent %v) crossed link %d–%d after it failed at %v", r.Flow, r.Src, r.Dst, r.Sent, link[0], link[1], at)
		}
		if r.Start > at {
			after++
		}
	}
	if after == 0 {
		t.Error("no flow started after the failure")
	}
	t.Logf("link %d–%d down at %v: end %v (was %v), %d flows moved, %d started after", link[0], link[1], at, end, base, moved, after)
}

// The same failure under congestion control: the all-reduce completes and no flow that was
// still sending after the failure finished on the failed link.
func TestLinkDownCongestionControl(t *testing.T) {
	conf, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	fab := spectrumX16(t, 2)
	cfg, on, err := CCConfig(&conf, fab, 1)
	if err != nil || !on {
		t.Fatal(on, err)
	}
	s := engine.NewScheduler()
	sim, err := NewCCSimulator(s, fab, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := fab.Graph
	// Rail 0's ASW (node 18: GPUs 0–15, NVSwitches 16–17) to the first PSW (node 26).
	const asw, psw = 18, 26
	if len(g.Links(nil, asw, psw)) != 1 || g.Kind(psw) != topo.Switch {
		t.Fatalf("nodes %d and %d are not an ASW–PSW link", asw, psw)
	}
	at := 20 * engine.Microsecond
	if err := sim.LinkDown(at, asw, psw); err != nil {
		t.Fatal(err)
	}
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 16 << 20}, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	sim.Run(d, Latency{}, func() { done = true })
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatal("the collective never finished")
	}
	for _, r := range recs {
		if r.Sent > at && usesLink(g, r.Path, asw, psw) {
			t.Errorf("flow %d (%d→%d, sent %v) finished on the failed link", r.Flow, r.Src, r.Dst, r.Sent)
		}
	}
}

// A failure that cuts a GPU off (its only NIC link) stops the run with an error naming the link
// and the flow, wrapping route.ErrNoRoute: for a flow in flight, and for one started later.
func TestLinkDownNoRoute(t *testing.T) {
	fab := spectrumX16(t, 2)
	g := fab.Graph
	nicASW := func(gpu int32) int32 {
		nbrs, _ := g.Adjacent(gpu)
		for _, x := range nbrs {
			if g.Kind(x) == topo.Switch {
				return x
			}
		}
		t.Fatalf("GPU %d has no NIC", gpu)
		return -1
	}
	for _, c := range []struct {
		name  string
		start engine.Time
		want  string
	}{
		{"in flight", 0, "flow 0 (node 9 → 1)"},
		{"started later", 50 * engine.Microsecond, "flow 0 (node 9 → 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := engine.NewScheduler()
			sim := NewSimulator(s, fab, Options{})
			at := 10 * engine.Microsecond
			if err := sim.LinkDown(at, 1, nicASW(1)); err != nil {
				t.Fatal(err)
			}
			sim.StartRaw([]RawFlow{{Src: 9, Dst: 1, Bytes: 10_000_000, DPort: DPort, Start: c.start}})
			s.Run()
			err := sim.Err()
			var ld *LinkDownError
			if !errors.As(err, &ld) || !errors.Is(err, route.ErrNoRoute) || ld.A != 1 || ld.B != nicASW(1) || ld.At != at {
				t.Fatalf("error %v (%#v)", err, ld)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "link 1–") {
				t.Errorf("error %q does not name the flow and the link", msg)
			}
			fab.Router.SetLinkUp(1, nicASW(1))
		})
	}
}

// LinkDown refuses nodes that are not linked, times in the past, a simulator whose flows have
// started without their ports kept, and a network model that cannot move flows.
func TestLinkDownErrors(t *testing.T) {
	fab := spectrumX16(t, 2)
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	for _, c := range []struct {
		a, b int32
		want string
	}{
		{0, 1, "not linked"},   // two GPUs of a server
		{0, 0, "not linked"},   // a node and itself
		{0, 999, "0 to"},       // out of range
		{-1, 18, "0 to"},       // negative
		{26, 27, "not linked"}, // two PSWs
	} {
		if err := sim.LinkDown(engine.Microsecond, c.a, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LinkDown(%d, %d): %v, want an error mentioning %q", c.a, c.b, err, c.want)
		}
	}
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 9, Bytes: 1000, DPort: DPort}})
	s.RunUntil(engine.Microsecond)
	if err := sim.LinkDown(0, 0, 18); err == nil || !strings.Contains(err.Error(), "past") {
		t.Errorf("a failure in the past: %v", err)
	}
	if err := sim.LinkDown(2*engine.Microsecond, 0, 18); err == nil || !strings.Contains(err.Error(), "before the first flow") {
		t.Errorf("after flows started: %v", err)
	}
	other := NewSimulator(engine.NewScheduler(), fab, Options{})
	other.net = fixedPaths{other.net}
	if err := other.LinkDown(5*engine.Microsecond, 0, 18); err == nil || !strings.Contains(err.Error(), "cannot move flows") {
		t.Errorf("a network that cannot move flows: %v", err)
	}
}

// fixedPaths is a network model that cannot move flows.
type fixedPaths struct{ flowNetwork }

// A pair with a single shortest path has it cached; a failure on it must reroute both the flow
// in flight and the ones that follow. GPU 0 hangs off switch 2, GPU 1 off switch 3; the
// switches are linked directly and through switch 4 (all 400 Gbps, 500 ns). A 10 MB flow
// 0 → 1 takes the direct link (three hops); at 100 µs, halfway, the link fails and the flow
// sends its last 5 MB over the four-hop detour at the same rate: sent at 200 µs, arriving 2 µs
// later instead of 1.5 µs. A second flow started at 300 µs takes the detour from the start.
func TestLinkDownForgetsCachedPaths(t *testing.T) {
	tp, err := topo.Parse(strings.NewReader("5 1 0 3 5 H100\n2 3 4\n"+
		"0 2 400Gbps 0.0005ms 0\n1 3 400Gbps 0.0005ms 0\n2 3 400Gbps 0.0005ms 0\n2 4 400Gbps 0.0005ms 0\n4 3 400Gbps 0.0005ms 0\n"), "triangle")
	if err != nil {
		t.Fatal(err)
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	if err := sim.LinkDown(100*engine.Microsecond, 3, 2); err != nil {
		t.Fatal(err)
	}
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	const S = 10_000_000
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 1, Bytes: S, DPort: DPort}, {Src: 0, Dst: 1, Bytes: S, DPort: DPort, Start: 300 * engine.Microsecond}})
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d flows arrived", len(recs))
	}
	us := engine.Microsecond
	for i, want := range []engine.Time{202 * us, 502 * us} {
		r := recs[i]
		if !near(r.Arrived, want, 2) || len(r.Path) != 4 || usesLink(fab.Graph, r.Path, 2, 3) {
			t.Errorf("flow %d: arrived at %v (want %v) over %v", i, r.Arrived, want, r.Path)
		}
	}
}
