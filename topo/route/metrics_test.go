package route

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"simd/engine"
	"simd/topo"
)

func TestPathStats(t *testing.T) {
	r := mustRouter(t, mustFabric(t, 16, 8))
	g := r.Graph()
	p, err := r.Route(nil, 0, 9, DefaultSport, DefaultDport)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Stats(p)
	if s.Hops != 4 || s.Delay != 2000*engine.Nanosecond || s.Bottleneck != 400e9 {
		t.Errorf("cross rail: %+v", s)
	}
	p, _ = r.Route(nil, 0, 1, DefaultSport, DefaultDport)
	if s := g.Stats(p); s.Hops != 2 || s.Delay != 50*engine.Nanosecond || s.Bottleneck != 2880e9 {
		t.Errorf("NVLink: %+v", s)
	}
	if s := g.Stats(nil); s.Hops != 0 || !math.IsInf(s.Bottleneck, 1) {
		t.Errorf("empty: %+v", s)
	}
}

func TestPairMetricsSpectrumX16(t *testing.T) {
	// simai-formats.md §7.6: Spectrum-X, 16 GPUs, 400G NICs at 500 ns, 2880G NVLink at 25 ns,
	// payload 9000: a cross-rail pair has rtt = 4·2·500 + 4·180 = 4720 ns, bdp = 236 000 B.
	r := mustRouter(t, mustFabric(t, 16, 8))
	tests := []struct {
		src, dst int32
		want     PairMetrics
	}{
		{0, 9, PairMetrics{Hops: 4, RTT: 4720 * engine.Nanosecond, Bandwidth: 400e9, BDP: 236000}},
		{0, 8, PairMetrics{Hops: 2, RTT: 2360 * engine.Nanosecond, Bandwidth: 400e9, BDP: 118000}},
		// NVLink: 2·(2·25) + 2·⌊72e12/2.88e12⌋ = 150 ns; 150·2880e9/8e9 = 54 000 B.
		{0, 1, PairMetrics{Hops: 2, RTT: 150 * engine.Nanosecond, Bandwidth: 2880e9, BDP: 54000}},
		// NVLS: GPU to its NVSwitch, one hop.
		{0, 16, PairMetrics{Hops: 1, RTT: 75 * engine.Nanosecond, Bandwidth: 2880e9, BDP: 27000}},
	}
	for _, tc := range tests {
		got, err := r.PairMetrics(tc.src, tc.dst, 9000)
		if err != nil || got != tc.want {
			t.Errorf("PairMetrics(%d,%d) = %+v, %v; want %+v", tc.src, tc.dst, got, err, tc.want)
		}
	}
	m, err := r.MaxRTTBDP(9000)
	if err != nil || m.RTT != 4720*engine.Nanosecond || m.BDP != 236000 {
		t.Errorf("MaxRTTBDP = %+v, %v", m, err)
	}
}

func TestPairMetricsMixedRoutes(t *testing.T) {
	// Two routes of different delay and rate between GPU 0 and GPU 1: RTT is the worst route's,
	// Bandwidth the slowest link of any route, BDP the largest rtt·bw of one route.
	tp := handTopo(t, 1, "GGSSSS", []lk{
		{0, 2, 400, 100}, {2, 3, 400, 1000}, {2, 4, 100, 100}, {3, 5, 400, 100}, {4, 5, 100, 100}, {5, 1, 400, 100},
	})
	r := mustRouter(t, tp)
	m, err := r.PairMetrics(0, 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Route A (via 3): delays 100+1000+100+100, all 400G: tx 20 ns per hop.
	rttA := int64(2*1300 + 4*20)
	// Route B (via 4): delays 4·100, two hops at 100G (80 ns), two at 400G.
	rttB := int64(2*400 + 2*20 + 2*80)
	want := PairMetrics{Hops: 4, RTT: engine.Time(max(rttA, rttB)) * engine.Nanosecond, Bandwidth: 100e9,
		BDP: max(rttA*400e9/8e9, rttB*100e9/8e9)}
	if m != want {
		t.Errorf("PairMetrics = %+v, want %+v", m, want)
	}
}

// bruteMax is maxRtt and maxBdp from PairMetrics over every ordered pair of GPUs.
func bruteMax(t *testing.T, r *Router, payload int) SimAIMax {
	var m SimAIMax
	g := r.Graph()
	for s := int32(0); int(s) < g.NumNodes(); s++ {
		for d := int32(0); int(d) < g.NumNodes(); d++ {
			if s == d || g.Kind(s) != topo.GPU || g.Kind(d) != topo.GPU {
				continue
			}
			pm, err := r.PairMetrics(s, d, payload)
			if err != nil {
				continue
			}
			m.RTT = max(m.RTT, pm.RTT)
			m.BDP = max(m.BDP, pm.BDP)
		}
	}
	return m
}

func TestMaxRTTBDPAgainstBruteForce(t *testing.T) {
	check := func(t *testing.T, name string, r *Router) {
		want := bruteMax(t, r, 9000)
		for _, small := range []int{0, 8, smallComp, 1 << 30} {
			for _, nvOnly := range []bool{false, true} {
				got, err := r.maxRTTBDP(9000, small, nvOnly)
				if err != nil || got != want {
					t.Fatalf("%s: small %d, NVLink only %v: %+v, %v; brute force %+v", name, small, nvOnly, got, err, want)
				}
			}
		}
	}
	for _, f := range testdataFiles(t) {
		check(t, f, mustRouter(t, loadTopo(t, f)))
	}
	rng := rand.New(rand.NewPCG(10, 11))
	for i := 0; i < 300; i++ {
		tp := randomTopo(rng)
		r := mustRouter(t, tp)
		check(t, fmt.Sprintf("random %d", i), r)
		// And with a link down.
		if len(tp.Links) > 0 {
			l := tp.Links[rng.IntN(len(tp.Links))]
			if err := r.SetLinkDown(l.Src, l.Dst); err != nil {
				t.Fatal(err)
			}
			check(t, fmt.Sprintf("random %d, link %d-%d down", i, l.Src, l.Dst), r)
		}
	}
	p := topo.SpectrumXDefaults(256)
	p.PSWs, p.NICsPerASW = 4, 8
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	check(t, "Spectrum-X 256 GPUs", mustRouter(t, tp))
}

func TestMaxRTTBDPAgainstSimAI(t *testing.T) {
	// On the generated fabrics all routes of a pair have the same delays and rates, so SimAI's
	// BFS-tree figures and simd's agree exactly.
	for _, f := range testdataFiles(t) {
		tp := loadTopo(t, f)
		for _, payload := range []int{1000, 9000} {
			ref := newSimAIRef(tp, uint64(payload))
			wantRtt, wantBdp := ref.max()
			got, err := mustRouter(t, tp).MaxRTTBDP(payload)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(got.RTT/engine.Nanosecond) != wantRtt || uint64(got.BDP) != wantBdp {
				t.Errorf("%s, payload %d: %+v, SimAI maxRtt=%d maxBdp=%d", f, payload, got, wantRtt, wantBdp)
			}
			t.Logf("%s, payload %d: maxRtt=%d maxBdp=%d", f, payload, wantRtt, wantBdp)
		}
	}
}

func TestMaxRTTBDPErrors(t *testing.T) {
	r := mustRouter(t, mustFabric(t, 16, 8))
	if _, err := r.MaxRTTBDP(-1); err == nil {
		t.Error("negative payload accepted")
	}
	if _, err := r.PairMetrics(0, 9, -1); err == nil {
		t.Error("negative payload accepted")
	}
	if _, err := r.PairMetrics(0, 0, 9000); err == nil {
		t.Error("same node accepted")
	}
}

func TestAllPathsLimit(t *testing.T) {
	r := mustRouter(t, mustFabric(t, 16, 8)) // 64 PSWs
	paths, complete, err := r.AllPaths(0, 9, 10)
	if err != nil || complete || len(paths) != 10 {
		t.Errorf("AllPaths limit 10: %d paths, complete %v, %v", len(paths), complete, err)
	}
	paths, complete, err = r.AllPaths(0, 9, 64)
	if err != nil || !complete || len(paths) != 64 {
		t.Errorf("AllPaths limit 64: %d paths, complete %v, %v", len(paths), complete, err)
	}
	if n, err := r.CountPaths(0, 9); n != 64 || err != nil {
		t.Errorf("CountPaths = %d, %v", n, err)
	}
	paths, complete, err = r.AllPaths(3, 16, 5) // NVLS: the direct link
	if err != nil || !complete || len(paths) != 1 {
		t.Errorf("AllPaths to the NVSwitch: %v %v %v", paths, complete, err)
	}
}
