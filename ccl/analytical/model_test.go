package analytical

import (
	"strings"
	"testing"

	"simd/ccl"
	"simd/configs"
)

func shippedRatios(t *testing.T) Ratios {
	t.Helper()
	nic, nv, ata, err := configs.ShippedRatioTables()
	if err != nil {
		t.Fatal(err)
	}
	return Ratios{NIC: nic, NVLink: nv, AllToAll: ata}
}

func newModel(t *testing.T, gpus, gps, nps, tp, pp, ep int, nv, nic float32) *Model {
	t.Helper()
	m, err := New(Params{
		Layout:        ccl.Layout{GPUs: gpus, GPUsPerServer: gps, TP: tp, PP: pp, EP: ep},
		NICsPerServer: nps, NVLinkGBps: nv, NICGBps: nic, Ratios: shippedRatios(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The worked checks of simai-formats.md §5.3, computed by hand from the formulas:
//
//	TP8 AllReduce 16 MiB at -nv 360: 16777216/2^30/360·1e9·2·7/8 = 75954.86 ns → 75954.
//	DP AllGather 2 807 758 848 B, tp 2, 8 GPUs and 8 NICs per server, -nic 48.5, DP 384:
//	  B = min(360, 48.5·4) = 194, ratio 1 → 2807758848/2^30/194·1e9·383/384 = 13 443 914 ns.
//	TP8 AllGather 3 248 619 520 B at -nv 240: ratio (0.78 + 0.01·(3248619520−2^31)/2^31)/0.81
//	  = 0.9692933 (single precision), r·B = 232.63039 → 3248619520/2^30/232.63039·1e9·7/8
//	  = 11 379 956 ns.
//
// SimAI's CSV shows them as 76, 13444 and 11380 µs.
func TestWorkedChecks(t *testing.T) {
	cases := []struct {
		name             string
		m                *Model
		op               ccl.Op
		group            ccl.GroupKind
		n                int
		bytes            uint64
		wantNs           uint64
		wantUsRounded    int
		wantBus          float32
		wantRatioApprox  float64
		wantSmallMessage bool
	}{
		{"TP8 AR 16MiB nv360", newModel(t, 8, 8, 8, 8, 1, 1, 360, 48.5), ccl.OpAllReduce, ccl.GroupTP, 8, 16777216, 75954, 76, 360, 1, false},
		{"DP AG tp2 nic48.5", newModel(t, 9216, 8, 8, 2, 12, 16, 360, 48.5), ccl.OpAllGather, ccl.GroupDP, 384, 2807758848, 13443914, 13444, 194, 1, false},
		{"TP8 AG nv240", newModel(t, 8, 8, 8, 8, 1, 1, 240, 48.5), ccl.OpAllGather, ccl.GroupTP, 8, 3248619520, 11379956, 11380, 240, 0.969293, false},
		{"small message 8 ranks", newModel(t, 8, 8, 8, 8, 1, 1, 360, 48.5), ccl.OpAllReduce, ccl.GroupTP, 8, 4096, 15000, 15, 0, 0, true},
		{"small message unknown size", newModel(t, 24, 8, 8, 8, 1, 1, 360, 48.5), ccl.OpAllReduce, ccl.GroupDP, 3, 4096, 0, 0, 0, 0, true},
		{"one rank costs nothing", newModel(t, 8, 8, 8, 1, 1, 1, 360, 48.5), ccl.OpAllReduce, ccl.GroupTP, 1, 1 << 30, 0, 0, 0, 0, false},
		{"no op", newModel(t, 8, 8, 8, 8, 1, 1, 360, 48.5), ccl.OpNone, ccl.GroupTP, 8, 1 << 30, 0, 0, 0, 0, false},
		{"group NONE", newModel(t, 8, 8, 8, 8, 1, 1, 360, 48.5), ccl.OpAllReduce, ccl.GroupNone, 8, 1 << 30, 0, 0, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.m.CollectiveTime(c.op, c.group, c.n, c.bytes)
			if err != nil {
				t.Fatal(err)
			}
			if got.Ns != c.wantNs {
				t.Errorf("ns = %d, want %d", got.Ns, c.wantNs)
			}
			if r := int(float64(got.Ns)/1000 + 0.5); r != c.wantUsRounded {
				t.Errorf("µs = %d, want %d", r, c.wantUsRounded)
			}
			if got.BusGBps != c.wantBus {
				t.Errorf("busbw = %v, want %v", got.BusGBps, c.wantBus)
			}
			if c.wantRatioApprox != 0 && (float64(got.Ratio)-c.wantRatioApprox > 1e-6 || c.wantRatioApprox-float64(got.Ratio) > 1e-6) {
				t.Errorf("ratio = %v, want ≈%v", got.Ratio, c.wantRatioApprox)
			}
			if got.Small != c.wantSmallMessage {
				t.Errorf("small = %v", got.Small)
			}
		})
	}
}

func TestBusBW(t *testing.T) {
	cases := []struct {
		name            string
		nv, nic, nics   float32
		nodes, perNode  int
		op              string
		want            float32
		wantNV, invalid bool
	}{
		{"one node is NVLink", 360, 48.5, 8, 1, 8, "allreduce", 360, false, false},
		{"one GPU per node is NIC", 360, 48.5, 1, 16, 1, "allgather", 48.5, false, false},
		{"NIC bound", 360, 48.5, 4, 16, 4, "allgather", 194, false, false},
		// 8 NICs of 48.5 = 388 > 360: cross-NIC, NVLink·8/7 = 411.43 > 388 → NIC.
		{"cross NIC, NIC bound", 360, 48.5, 8, 2, 8, "allreduce", 388, false, false},
		// 8 NICs of 100 = 800 > 360: NVLink·8/7 = 411.43 < 800 → NVLink.
		{"cross NIC, NVLink bound", 360, 100, 8, 2, 8, "allreduce", float32(float32(360*float32(8)) / 7), true, false},
		// All-to-all over 4 nodes of 8: 48.5·8/8·31/(3·8).
		{"alltoall multi node", 360, 48.5, 8, 4, 8, "alltoall", float32(float32(float32(float32(48.5*8)/8)*31) / 24), false, false},
		{"alltoall one node", 360, 48.5, 8, 1, 8, "alltoall", 360, true, false},
		{"zero NICs", 360, 48.5, 0, 4, 8, "allgather", 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := calBusBW(c.nv, c.nic, c.nics, c.nodes, c.op, c.perNode)
			if (b.invalid != "") != c.invalid {
				t.Fatalf("invalid = %q", b.invalid)
			}
			if c.invalid {
				return
			}
			if b.gbps != c.want || b.isNVLink != c.wantNV {
				t.Errorf("got %v nvlink=%v, want %v nvlink=%v", b.gbps, b.isNVLink, c.want, c.wantNV)
			}
		})
	}
}

// SimAI computes a negative bandwidth when the integer division n_p_s/tp gives 0 NICs; simd
// refuses the input and names the flag to change.
func TestRefusesZeroNICs(t *testing.T) {
	m := newModel(t, 64, 8, 4, 8, 1, 1, 360, 48.5)
	_, err := m.CollectiveTime(ccl.OpAllReduce, ccl.GroupDP, 8, 1<<30)
	if err == nil || !strings.Contains(err.Error(), "-n_p_s") {
		t.Fatalf("err = %v, want a refusal naming -n_p_s", err)
	}
}

func TestRatioValue(t *testing.T) {
	r := shippedRatios(t)
	cases := []struct {
		name  string
		table configs.RatioTable
		size  float64
		nnode int
		want  float32
	}{
		{"exact first row nvlink", r.NVLink, 16777216, 1, float32(0.45 / 0.81)},
		{"below first row", r.NVLink, 1048576, 1, float32(0.45 / 0.81)},
		{"last row is 1", r.NIC, 17179869184, 2, 1},
		{"above last row uses last", r.NIC, 1 << 40, 2, 1},
		{"empty cell reads 1", r.AllToAll, 16777216, 32, 1},
		{"multi column 9", r.AllToAll, 16777216, 9, float32(0.86 / 0.96)},
		{"unknown node count is column 5", r.AllToAll, 16777216, 3, float32(0.62 / 0.9)},
		{"interpolated", r.NVLink, 3248619520, 1, float32((0.78 + 0.01*(3248619520.0-2147483648.0)/2147483648.0) / 0.81)},
		{"size 0", r.NIC, 0, 1, 1},
	}
	for _, c := range cases {
		got, err := ratioValue(c.table, c.size, c.nnode)
		if err != nil || got != c.want {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	good := Params{Layout: ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 8, PP: 1, EP: 1}, NICsPerServer: 8, NVLinkGBps: 360, NICGBps: 48.5, Ratios: shippedRatios(t)}
	bad := []func(p *Params){
		func(p *Params) { p.NVLinkGBps = 0 },
		func(p *Params) { p.NICGBps = -1 },
		func(p *Params) { p.NICsPerServer = 0 },
		func(p *Params) { p.Layout.GPUsPerServer = 0 },
		func(p *Params) { p.Ratios.NIC.Rows = nil },
	}
	if _, err := New(good); err != nil {
		t.Fatal(err)
	}
	for i, f := range bad {
		p := good
		f(&p)
		if _, err := New(p); err == nil {
			t.Errorf("case %d: accepted", i)
		}
	}
}

func TestGPUTables(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float32
	}{{"H100", float32(370.8)}, {"h20", float32(370.8)}, {"H800", float32(164.8)}, {"A100", 240}, {"a800", 160}} {
		g, ok := ParseGPUType(c.s)
		v, ok2 := NVLinkGBps(g)
		if !ok || !ok2 || v != c.want {
			t.Errorf("%s: %v %v %v", c.s, v, ok, ok2)
		}
	}
	if _, ok := ParseGPUType("B200"); ok {
		t.Error("B200 accepted")
	}
	for _, c := range []struct {
		s    string
		want float32
	}{{"cx6", 23.5}, {"CX7", 48.5}, {"bf3", 48.5}} {
		if v, ok := NICGBps(c.s); !ok || v != c.want {
			t.Errorf("%s: %v", c.s, v)
		}
	}
}
