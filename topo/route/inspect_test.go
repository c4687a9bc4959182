package route

import (
	"math"
	"math/rand/v2"
	"testing"

	"simd/topo"
)

func TestNodeAndLinkCounts(t *testing.T) {
	tests := []struct {
		file  string
		nodes NodeCounts
		rates []RateCount
	}{
		{"Spectrum-X_8g_8gps_400Gbps_H100", NodeCounts{8, 1, 9}, []RateCount{{400e9, 16}, {2880e9, 8}}},
		{"DCN+SingleToR_16g_8gps_400Gbps_H100", NodeCounts{16, 2, 3}, []RateCount{{400e9, 18}, {2880e9, 16}}},
		{"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", NodeCounts{16, 2, 72}, []RateCount{{200e9, 16}, {400e9, 512}, {2400e9, 16}}},
	}
	for _, tc := range tests {
		g, err := NewGraph(testdata(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := g.NodeCounts(); got != tc.nodes {
			t.Errorf("%s: NodeCounts = %+v, want %+v", tc.file, got, tc.nodes)
		}
		got := g.LinkCountsByRate()
		if len(got) != len(tc.rates) {
			t.Fatalf("%s: LinkCountsByRate = %+v, want %+v", tc.file, got, tc.rates)
		}
		for i := range got {
			if got[i] != tc.rates[i] {
				t.Errorf("%s: LinkCountsByRate = %+v, want %+v", tc.file, got, tc.rates)
			}
		}
	}
}

func TestTiersAndLoads(t *testing.T) {
	// Three tiers drawn by hand: 4 GPUs on 2 leaves (2×100G down, 1×100G up each: 2:1), 2
	// spines (tier 2; 1×100G down from each leaf... each spine has one leaf below and a core
	// above), 1 core (tier 3), and a switch no GPU reaches.
	tp := handTopo(t, 2, "GGGGSSSSSS", []lk{
		{0, 4, 100, 1}, {1, 4, 100, 1}, {2, 5, 100, 1}, {3, 5, 100, 1}, // leaves 4, 5
		{4, 6, 100, 1}, {5, 7, 100, 1}, // spines 6, 7
		{6, 8, 400, 1}, {7, 8, 400, 1}, // core 8
		{6, 7, 50, 1}, // a lateral link between the spines
	})
	g, err := NewGraph(tp)
	if err != nil {
		t.Fatal(err)
	}
	wantTier := []int32{0, 0, 0, 0, 1, 1, 2, 2, 3, -1}
	for x, w := range wantTier {
		if got := g.Tiers()[x]; got != w {
			t.Errorf("tier of %d = %d, want %d", x, got, w)
		}
	}
	sw, tiers := g.Loads()
	wantSw := []SwitchLoad{
		{4, 1, 200e9, 100e9, 0}, {5, 1, 200e9, 100e9, 0},
		{6, 2, 100e9, 400e9, 50e9}, {7, 2, 100e9, 400e9, 50e9},
		{8, 3, 800e9, 0, 0},
	}
	if len(sw) != len(wantSw) {
		t.Fatalf("Loads switches = %+v", sw)
	}
	for i := range sw {
		if sw[i] != wantSw[i] {
			t.Errorf("switch load %+v, want %+v", sw[i], wantSw[i])
		}
	}
	if sw[0].Oversubscription() != 2 || sw[2].Oversubscription() != 0.25 || !math.IsInf(sw[4].Oversubscription(), 1) {
		t.Errorf("oversubscription %v %v %v", sw[0].Oversubscription(), sw[2].Oversubscription(), sw[4].Oversubscription())
	}
	wantTiers := []TierLoad{{1, 2, 400e9, 200e9, 0}, {2, 2, 200e9, 800e9, 100e9}, {3, 1, 800e9, 0, 0}}
	if len(tiers) != 3 {
		t.Fatalf("tiers %+v", tiers)
	}
	for i := range tiers {
		if tiers[i] != wantTiers[i] {
			t.Errorf("tier load %+v, want %+v", tiers[i], wantTiers[i])
		}
	}
	if tiers[0].Oversubscription() != 2 {
		t.Errorf("tier 1 oversubscription %v", tiers[0].Oversubscription())
	}
	if !math.IsNaN(ratio(0, 0)) {
		t.Error("ratio(0,0) is not NaN")
	}
}

func TestLoadsTestdata(t *testing.T) {
	tests := []struct {
		file string
		want []TierLoad
	}{
		// 16 GPUs on one ASW (16×400G down, 2×400G up: 8:1), 2 PSWs.
		{"DCN+SingleToR_16g_8gps_400Gbps_H100", []TierLoad{{1, 1, 6400e9, 800e9, 0}, {2, 2, 800e9, 0, 0}}},
		// 8 rails of 2 GPUs at 200G, 64 PSWs at 400G: 400G down, 25.6T up per ASW.
		{"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", []TierLoad{{1, 8, 3200e9, 204800e9, 0}, {2, 64, 204800e9, 0, 0}}},
	}
	for _, tc := range tests {
		g, err := NewGraph(testdata(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		_, tiers := g.Loads()
		if len(tiers) != len(tc.want) {
			t.Fatalf("%s: %+v", tc.file, tiers)
		}
		for i := range tiers {
			if tiers[i] != tc.want[i] {
				t.Errorf("%s: %+v, want %+v", tc.file, tiers[i], tc.want[i])
			}
		}
	}
}

func TestBisection(t *testing.T) {
	leafSpine := func(leafUp float64) *topo.Topology {
		// 4 servers of 2 GPUs, one leaf per server (100G NICs), 2 spines, each leaf linked to
		// each spine at leafUp Gbps.
		links := []lk{}
		for gpu := int32(0); gpu < 8; gpu++ {
			links = append(links, lk{gpu, 8 + gpu/2, 100, 500})
		}
		for leaf := int32(8); leaf < 12; leaf++ {
			links = append(links, lk{leaf, 12, leafUp, 500}, lk{leaf, 13, leafUp, 500})
		}
		return handTopo(t, 2, "GGGGGGGGSSSSSS", links)
	}
	tests := []struct {
		name      string
		tp        *topo.Topology
		want      float64
		nic       [2]float64
		cutLinks  int
		firstHalf int
	}{
		// Non-blocking: 2 leaves × 2 × 100G up = 400G = the half's NIC bandwidth (the cut found
		// is the one nearest the first half: its 4 NIC links).
		{"leaf-spine 1:1", leafSpine(100), 400e9, [2]float64{400e9, 400e9}, 4, 2},
		// 2:1: each leaf has 2×50G up; the first half can push 200G across.
		{"leaf-spine 2:1", leafSpine(50), 200e9, [2]float64{400e9, 400e9}, 4, 2},
		// DCN+ 16 GPUs: both servers on one ASW; the cut is server 0's 8 NICs (3.2T).
		{"DCN+ 16g", testdata(t, "DCN+SingleToR_16g_8gps_400Gbps_H100"), 3200e9, [2]float64{3200e9, 3200e9}, 8, 1},
		// Rail-optimised 16 GPUs at 200G: each rail ASW joins the halves; 8×200G.
		{"rail 16g", testdata(t, "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20"), 1600e9, [2]float64{1600e9, 1600e9}, 8, 1},
	}
	for _, tc := range tests {
		g, err := NewGraph(tc.tp)
		if err != nil {
			t.Fatal(err)
		}
		b, err := g.Bisection()
		if err != nil {
			t.Fatal(err)
		}
		if b.Bandwidth != tc.want || b.NIC != tc.nic || b.FirstHalf != tc.firstHalf || len(b.CutLinks) != tc.cutLinks {
			t.Errorf("%s: %+v, want %v bit/s, NIC %v, %d cut links", tc.name, b, tc.want, tc.nic, tc.cutLinks)
		}
		var cut float64
		for _, i := range b.CutLinks {
			cut += tc.tp.Links[i].Rate
		}
		if cut != b.Bandwidth {
			t.Errorf("%s: cut links carry %v, max flow %v", tc.name, cut, b.Bandwidth)
		}
	}
	g, _ := NewGraph(testdata(t, "Spectrum-X_8g_8gps_400Gbps_H100"))
	if _, err := g.Bisection(); err == nil {
		t.Error("bisection of one server succeeded")
	}
}

func TestMaxFlowAgainstMinCut(t *testing.T) {
	// Dinic against the brute-force minimum s-t cut over every subset, on random digraphs.
	rng := rand.New(rand.NewPCG(12, 13))
	for iter := 0; iter < 500; iter++ {
		n := 2 + rng.IntN(7)
		type arc struct {
			u, v int32
			c    int64
		}
		var arcs []arc
		f := newMaxFlow(n)
		for u := 0; u < n; u++ {
			for v := 0; v < n; v++ {
				if u != v && rng.Float64() < 0.4 {
					c := int64(rng.IntN(20))
					arcs = append(arcs, arc{int32(u), int32(v), c})
					f.addArc(int32(u), int32(v), c, 0)
				}
			}
		}
		s, tt := int32(0), int32(n-1)
		got := f.run(s, tt)
		best := int64(math.MaxInt64)
		for mask := 0; mask < 1<<n; mask++ {
			if mask&1 == 0 || mask&(1<<(n-1)) != 0 {
				continue
			}
			var cut int64
			for _, a := range arcs {
				if mask&(1<<a.u) != 0 && mask&(1<<a.v) == 0 {
					cut += a.c
				}
			}
			best = min(best, cut)
		}
		if got != best {
			t.Fatalf("iteration %d (%d nodes, arcs %v): max flow %d, min cut %d", iter, n, arcs, got, best)
		}
		side := f.sourceSide(s)
		var cut int64
		for _, a := range arcs {
			if side[a.u] && !side[a.v] {
				cut += a.c
			}
		}
		if side[tt] || cut != got {
			t.Fatalf("iteration %d: residual cut %d, flow %d", iter, cut, got)
		}
	}
}
