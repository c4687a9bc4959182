package nccl

import (
	"math"
	"testing"

	"simd/ccl"
)

func hopper(nodes int, nvls bool) TuneConfig {
	c := DefaultTuneConfig(nodes, 8, ArchHopper, 0)
	if !nvls {
		c.NVLS.Channels = 0
	}
	return c
}

// latBw is the model's latency (µs, at 0 bytes) and algorithm bandwidth (GB/s, between 1 and
// 2 GiB, where no size-dependent correction applies) of an (algorithm, protocol).
func latBw(t *testing.T, c TuneConfig, a Algorithm, p Protocol) (float64, float64) {
	t.Helper()
	lat, ok := c.Time(ccl.OpAllReduce, a, p, 0)
	t1, ok1 := c.Time(ccl.OpAllReduce, a, p, 1<<30)
	t2, ok2 := c.Time(ccl.OpAllReduce, a, p, 2<<30)
	if !ok || !ok1 || !ok2 {
		t.Fatalf("%s/%s disabled", a, p)
	}
	return lat, float64(1<<30) / (1000 * (t2 - t1))
}

// §7.2's latencies and algorithm bandwidths of the NCCL 2.30 model, to the digits it gives.
func TestTuningTable(t *testing.T) {
	for _, c := range []struct {
		nodes   int
		a       Algorithm
		p       Protocol
		lat, bw float64 // 0: not given
		latTol  float64
	}{
		{1, AlgoRing, ProtoLL, 15.0, 80.6, .05},
		{1, AlgoRing, ProtoLL128, 40.6, 189.3, .05},
		{1, AlgoRing, ProtoSimple, 56.0, 205.7, .05},
		{4, AlgoTree, ProtoLL, 35.2, 0, .05},
		{4, AlgoTree, ProtoLL128, 65.5, 116, .05},
		{4, AlgoRing, ProtoLL128, 144, 151.5, .5}, // 293.6 × 32/62; §7.2 prints 152
		{4, AlgoRing, ProtoSimple, 283, 198, .5},
		{16, AlgoTree, ProtoLL, 55, 0, .5},
		{16, AlgoTree, ProtoSimple, 176, 144, .5},
		{16, AlgoRing, ProtoSimple, 1190, 193.5, .5}, // 384 × 128/254; §7.2 prints 193
	} {
		lat, bw := latBw(t, hopper(c.nodes, false), c.a, c.p)
		if math.Abs(lat-c.lat) > c.latTol {
			t.Errorf("%d nodes %s/%s: latency %.2f µs, §7.2 %.1f", c.nodes, c.a, c.p, lat, c.lat)
		}
		if c.bw > 0 && math.Abs(bw-c.bw) > 0.5 {
			t.Errorf("%d nodes %s/%s: algbw %.2f GB/s, §7.2 %.1f", c.nodes, c.a, c.p, bw, c.bw)
		}
	}
	// The ring's plateau: multi-node Simple all-reduce latency ×1.4 once a channel's share of
	// a rank reaches 64 bytes.
	c := hopper(16, false)
	small, _ := c.Time(ccl.OpAllReduce, AlgoRing, ProtoSimple, 8*128*64-1)
	big, _ := c.Time(ccl.OpAllReduce, AlgoRing, ProtoSimple, 8*128*64)
	if big-small < 0.39*1190 {
		t.Errorf("no plateau: %.1f → %.1f µs", small, big)
	}
}

// crossover is the size (bytes) at which the selection changes from (a1,p1) to (a2,p2),
// bisected between lo and hi.
func crossover(t *testing.T, c TuneConfig, lo, hi float64, a1 Algorithm, p1 Protocol, a2 Algorithm, p2 Protocol) float64 {
	t.Helper()
	pick := func(b float64) (Algorithm, Protocol) {
		a, p, _, _ := c.Select(ccl.OpAllReduce, int64(b))
		return a, p
	}
	if a, p := pick(lo); a != a1 || p != p1 {
		t.Fatalf("at %.0f bytes: %s/%s, want %s/%s", lo, a, p, a1, p1)
	}
	if a, p := pick(hi); a != a2 || p != p2 {
		t.Fatalf("at %.0f bytes: %s/%s, want %s/%s", hi, a, p, a2, p2)
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if a, p := pick(mid); a == a1 && p == p1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// §7.2, 8 H100 in one node, all-reduce: LL below ~3.6 MB, LL128 to ~37 MB, Simple above; with
// NVLS on, NVLS beats ring LL from ≈1.1 MB and wins from there on.
func TestTuningCrossovers(t *testing.T) {
	c := hopper(1, false)
	within := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }
	if x := crossover(t, c, 1e6, 5e6, AlgoRing, ProtoLL, AlgoRing, ProtoLL128); !within(x, 3.6e6, 0.03) {
		t.Errorf("LL → LL128 at %.3g bytes, §7.2 ~3.6 MB", x)
	}
	if x := crossover(t, c, 10e6, 60e6, AlgoRing, ProtoLL128, AlgoRing, ProtoSimple); !within(x, 37e6, 0.03) {
		t.Errorf("LL128 → Simple at %.3g bytes, §7.2 ~37 MB", x)
	}
	nv := hopper(1, true)
	if x := crossover(t, nv, 1e5, 3e6, AlgoRing, ProtoLL, AlgoNVLS, ProtoSimple); !within(x, 1.1e6, 0.05) {
		t.Errorf("ring LL → NVLS at %.3g bytes, §7.2 ≈1.1 MB", x)
	}
	for b := int64(2 << 20); b <= 1<<34; b *= 2 {
		if a, _, _, _ := nv.Select(ccl.OpAllReduce, b); a != AlgoNVLS {
			t.Errorf("%d bytes with NVLS on: %s", b, a)
		}
	}
}

// §7.2's choices on a power-of-two grid.
func TestTuningGrid(t *testing.T) {
	type choice struct {
		from int64 // first size (bytes) of the range
		a    Algorithm
		p    Protocol
	}
	for _, c := range []struct {
		nodes int
		want  []choice
	}{
		{1, []choice{{0, AlgoRing, ProtoLL}, {4 << 20, AlgoRing, ProtoLL128}, {64 << 20, AlgoRing, ProtoSimple}}},
		{4, []choice{{0, AlgoTree, ProtoLL}, {256 << 10, AlgoTree, ProtoLL128}, {32 << 20, AlgoRing, ProtoLL128}, {256 << 20, AlgoRing, ProtoSimple}}},
		{16, []choice{{0, AlgoTree, ProtoLL}, {256 << 10, AlgoTree, ProtoLL128}, {128 << 20, AlgoTree, ProtoSimple}, {1 << 30, AlgoRing, ProtoSimple}}},
	} {
		cfg := hopper(c.nodes, false)
		for b := int64(1 << 10); b <= 1<<33; b *= 2 {
			w := c.want[0]
			for _, ch := range c.want {
				if b >= ch.from {
					w = ch
				}
			}
			if a, p, _, ok := cfg.Select(ccl.OpAllReduce, b); !ok || a != w.a || p != w.p {
				t.Errorf("%d nodes, %d bytes: %s/%s, §7.2 %s/%s", c.nodes, b, a, p, w.a, w.p)
			}
		}
	}
}

// Which pairs exist (§2.7, "Enable rules").
func TestTuningEnable(t *testing.T) {
	one, four := hopper(1, true), hopper(4, true)
	ppn1 := DefaultTuneConfig(8, 1, ArchHopper, 0)
	for _, c := range []struct {
		name string
		cfg  TuneConfig
		op   ccl.Op
		a    Algorithm
		p    Protocol
		ok   bool
	}{
		{"NVLS is Simple only", one, ccl.OpAllReduce, AlgoNVLS, ProtoLL, false},
		{"NVLS on one node", one, ccl.OpAllReduce, AlgoNVLS, ProtoSimple, true},
		{"NVLS across nodes needs SHARP", four, ccl.OpAllReduce, AlgoNVLS, ProtoSimple, false},
		{"NVLS-Tree off on one node", one, ccl.OpAllReduce, AlgoNVLSTree, ProtoSimple, false},
		{"NVLS-Tree across nodes", four, ccl.OpAllReduce, AlgoNVLSTree, ProtoSimple, true},
		{"no tree all-gather", four, ccl.OpAllGather, AlgoTree, ProtoSimple, false},
		{"ring all-gather", four, ccl.OpAllGather, AlgoRing, ProtoLL, true},
		{"no PAT all-reduce", ppn1, ccl.OpAllReduce, AlgoPAT, ProtoSimple, false},
		{"PAT all-gather with one GPU per node", ppn1, ccl.OpAllGather, AlgoPAT, ProtoSimple, true},
		{"no PAT with 8 per node", four, ccl.OpAllGather, AlgoPAT, ProtoSimple, false},
		{"no CollNet", four, ccl.OpAllReduce, AlgoCollNetDirect, ProtoSimple, false},
		{"no all-to-all", four, ccl.OpAllToAll, AlgoRing, ProtoSimple, false},
		{"no NVLS before Hopper", DefaultTuneConfig(1, 8, ArchAmpere, 0), ccl.OpAllReduce, AlgoNVLS, ProtoSimple, false},
	} {
		if _, ok := c.cfg.Time(c.op, c.a, c.p, 1<<20); ok != c.ok {
			t.Errorf("%s: enabled %v", c.name, ok)
		}
	}
	sharp := four
	sharp.CollNet = true
	if _, ok := sharp.Time(ccl.OpAllReduce, AlgoNVLS, ProtoSimple, 1<<20); !ok {
		t.Error("NVLS across nodes with SHARP disabled")
	}
	// PAT all-gather on 8 nodes × 1 GPU: 8 + log2(8)·14/3.5 + 8·2.8 = 42.4 µs.
	if lat, _ := ppn1.Time(ccl.OpAllGather, AlgoPAT, ProtoSimple, 0); math.Abs(lat-42.4) > 1e-9 {
		t.Errorf("PAT latency %.2f µs, want 42.4", lat)
	}
	// LL128 needs NVLink.
	pci := one
	pci.Ring.PCI = true
	if _, ok := pci.Time(ccl.OpAllReduce, AlgoRing, ProtoLL128, 1<<20); ok {
		t.Error("LL128 over PCI")
	}
	// The convenience form is the default configuration.
	a, _ := NCCLTime(ccl.OpAllReduce, AlgoRing, ProtoSimple, 4, 8, 1<<26, ArchHopper, 0)
	b, _ := four.Time(ccl.OpAllReduce, AlgoRing, ProtoSimple, 1<<26)
	if a != b {
		t.Errorf("NCCLTime %g, config %g", a, b)
	}
	if a, p, _, ok := NCCLSelect(ccl.OpAllReduce, 4, 8, 1<<30, ArchHopper, 0); !ok || a != AlgoNVLSTree || p != ProtoSimple {
		t.Errorf("4 × 8 H100, 1 GiB: %s/%s", a, p)
	}
	if x, ok := NCCLTime(ccl.OpAllReduce, AlgoRing, ProtoSimple, 1, 1, 1<<20, ArchHopper, 0); !ok || x != 0 {
		t.Errorf("one rank: %g %v", x, ok)
	}
}

// SimCCL's choice (§1.5): NVLS only for a TP all-reduce of ≥ 8 H100/H800 ranks with
// AS_NVLS_ENABLE=1, else the ring.
func TestSimCCLAlgorithm(t *testing.T) {
	for _, c := range []struct {
		op     ccl.Op
		group  ccl.GroupKind
		gpu    string
		n, srv int
		nvls   bool
		want   Algorithm
	}{
		{ccl.OpAllReduce, ccl.GroupTP, "H100", 8, 1, true, AlgoNVLS},
		{ccl.OpAllReduce, ccl.GroupTP, "h800", 8, 1, true, AlgoNVLS},
		{ccl.OpAllReduce, ccl.GroupTP, "H100", 8, 1, false, AlgoRing},
		{ccl.OpAllReduce, ccl.GroupTP, "H100", 4, 1, true, AlgoRing},
		{ccl.OpAllReduce, ccl.GroupTP, "A100", 8, 1, true, AlgoRing},
		{ccl.OpAllReduce, ccl.GroupTP, "H20", 8, 1, true, AlgoRing}, // basic version: H100/H800 only
		{ccl.OpAllReduce, ccl.GroupDP, "H100", 8, 1, true, AlgoRing},
		{ccl.OpAllGather, ccl.GroupTP, "H100", 8, 1, true, AlgoRing},
		{ccl.OpAllReduce, ccl.GroupTP, "H100", 16, 2, true, AlgoNVLSTree}, // SimCCL: no flows
	} {
		if got := SimCCLAlgorithm(c.op, c.group, c.gpu, c.n, c.srv, c.nvls); got != c.want {
			t.Errorf("%+v: %s", c, got)
		}
	}
	for _, c := range []struct {
		gpu  string
		want Arch
	}{{"H100", ArchHopper}, {"a800", ArchAmpere}, {"H20", ArchHopper}, {"B200", ArchBlackwell}, {"V100", ArchVolta}} {
		if a, ok := ArchOf(c.gpu); !ok || a != c.want {
			t.Errorf("ArchOf(%s) = %d %v", c.gpu, a, ok)
		}
	}
	if _, ok := ArchOf("TPU"); ok {
		t.Error("TPU is a GPU")
	}
}
