package route

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"simd/configs/lex"
)

// TestSummaryText: simd topo -info's text for two of SimAI's files, whose numbers follow from
// the files: Spectrum-X with 8 GPUs is one server, 8 NVLinks and 8 NICs, and 8 ASWs with one
// 400G uplink each to the single PSW (24 links); DCN+ with 16 GPUs is two servers whose 16 NICs
// share one ASW with 2 uplinks (16 + 16 + 2 = 34 links, 6.4 Tbps over 800 Gbps).
func TestSummaryText(t *testing.T) {
	cases := []struct{ file, want string }{
		{"Spectrum-X_8g_8gps_400Gbps_H100", `topology Spectrum-X_8g_8gps_400Gbps_H100
nodes: 8 GPUs, 1 NVSwitches, 9 switches; servers: 1 of 8 GPUs (H100)
NIC per GPU: 1 port of 400 Gbps (single ToR); 400 Gbps per NIC
links: 24
  400 Gbps     16
  2.88 Tbps    8
switch tiers (capacity toward GPUs / away from them):
  1 leaf (ASW)                    8 switches, down 3.2 Tbps, up 3.2 Tbps, oversubscription 1.00:1
  2 spine (PSW)                   1 switches, down 3.2 Tbps, up 0 Gbps, oversubscription none (top tier)
bisection: route: bisection needs at least 2 servers, the topology has 1
`},
		{"DCN+SingleToR_16g_8gps_400Gbps_H100", `topology DCN+SingleToR_16g_8gps_400Gbps_H100
nodes: 16 GPUs, 2 NVSwitches, 3 switches; servers: 2 of 8 GPUs (H100)
NIC per GPU: 1 port of 400 Gbps (single ToR); 400 Gbps per NIC
links: 34
  400 Gbps     18
  2.88 Tbps    16
switch tiers (capacity toward GPUs / away from them):
  1 leaf (ASW)                    1 switches, down 6.4 Tbps, up 800 Gbps, oversubscription 8.00:1
  2 spine (PSW)                   2 switches, down 800 Gbps, up 0 Gbps, oversubscription none (top tier)
bisection: 3.2 Tbps between the first 1 servers and the other 1 (their NICs: 3.2 Tbps and 3.2 Tbps)
`},
		// Dual ToR: each GPU's NIC has two 200G ports, to the A-side and the B-side ASW of its
		// rail (64 links of 200G for 32 GPUs); 16 ASWs with 4 uplinks of 400G each.
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", `topology AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100
nodes: 32 GPUs, 4 NVSwitches, 20 switches; servers: 4 of 8 GPUs (H100)
NIC per GPU: 2 ports of 200 Gbps, each to a different ToR (dual ToR); 400 Gbps per NIC
links: 160
  200 Gbps     64
  400 Gbps     64
  2.88 Tbps    32
switch tiers (capacity toward GPUs / away from them):
  1 leaf (ASW)                   16 switches, down 12.8 Tbps, up 25.6 Tbps, oversubscription 0.50:1
  2 spine (PSW)                   4 switches, down 25.6 Tbps, up 0 Gbps, oversubscription none (top tier)
bisection: 6.4 Tbps between the first 2 servers and the other 2 (their NICs: 6.4 Tbps and 6.4 Tbps)
`},
	}
	for _, c := range cases {
		tp := testdata(t, c.file)
		g, err := NewGraph(tp)
		if err != nil {
			t.Fatal(err)
		}
		s := Summarize(c.file, tp, g)
		var b strings.Builder
		if err := s.WriteText(&b); err != nil || b.String() != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.file, err, b.String(), c.want)
		}
	}
}

// TestSummaryTextTiers: a tier beyond the core is called by its number, and rates are written in
// Gbps below 1 Tbps.
func TestSummaryTextTiers(t *testing.T) {
	s := Summary{
		Name: "four tiers", Nodes: NodeCounts{GPUs: 4, Switches: 7}, Servers: 2, GPUsPerServer: 2, GPUType: "X", Links: 3,
		LinksByRate: []RateCount{{Rate: 25e9, Links: 1}, {Rate: 999.5e9, Links: 2}},
		Tiers: []TierLoad{
			{Tier: 3, Switches: 2, Down: 1.5e12, Up: 1e12},
			{Tier: 4, Switches: 1, Down: 1e12},
		},
		Bisection: Bisection{Servers: 3, FirstHalf: 1, Bandwidth: 100e9, NIC: [2]float64{50e9, 1e12}},
	}
	want := `topology four tiers
nodes: 4 GPUs, 0 NVSwitches, 7 switches; servers: 2 of 2 GPUs (X)
NIC per GPU: none (the first GPU has no link to a network switch)
links: 3
  25 Gbps      1
  999.5 Gbps   2
switch tiers (capacity toward GPUs / away from them):
  3 core                          2 switches, down 1.5 Tbps, up 1 Tbps, oversubscription 1.50:1
  4 tier 4                        1 switches, down 1 Tbps, up 0 Gbps, oversubscription none (top tier)
bisection: 100 Gbps between the first 1 servers and the other 2 (their NICs: 50 Gbps and 1 Tbps)
`
	var b strings.Builder
	if err := s.WriteText(&b); err != nil || b.String() != want {
		t.Errorf("%v\n%s\nwant\n%s", err, b.String(), want)
	}
}

// TestEqualCostPaths: in the dual-ToR AlibabaHPN fabric of 32 GPUs, GPU 0 (rail 0) reaches GPU 9
// (rail 1) over either of its two ASWs, any of the 4 PSWs and either of GPU 9's ASWs: 2·4·2 = 16
// routes of 4 hops. Inside a server the NVSwitch is the one route.
func TestEqualCostPaths(t *testing.T) {
	tp := testdata(t, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	r, err := New(tp)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		src, dst int32
		limit    int
		count    int64
		want     string
	}{
		{0, 9, 3, 16, `paths from GPU 0 to GPU 9: 4 hops, 16 equal-cost paths (the first 3)
  0 -> 36(switch) -> 52(switch) -> 37(switch) -> 9   delay 2us, bottleneck 200 Gbps
  0 -> 36(switch) -> 52(switch) -> 45(switch) -> 9   delay 2us, bottleneck 200 Gbps
  0 -> 36(switch) -> 53(switch) -> 37(switch) -> 9   delay 2us, bottleneck 200 Gbps
`},
		{0, 7, 16, 1, `paths from GPU 0 to GPU 7: 2 hops, 1 equal-cost paths
  0 -> 32(nvswitch) -> 7   delay 50ns, bottleneck 2.88 Tbps
`},
	}
	for _, c := range cases {
		l, err := r.EqualCostPaths(c.src, c.dst, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if l.Count != c.count || len(l.Paths) != min(c.limit, int(c.count)) || l.Complete != (int(c.count) <= c.limit) {
			t.Errorf("%d→%d: %d paths of %d, complete %v", c.src, c.dst, len(l.Paths), l.Count, l.Complete)
		}
		var b strings.Builder
		if err := l.WriteText(&b); err != nil || b.String() != c.want {
			t.Errorf("%d→%d: %v\n%s\nwant\n%s", c.src, c.dst, err, b.String(), c.want)
		}
	}
	if _, err := r.EqualCostPaths(3, 3, 1); err == nil {
		t.Error("a route from a GPU to itself")
	}
}

// Info reads the file, writes its summary and then the paths asked for; a missing file and an
// id that is not a GPU are input errors.
func TestInfoWriteText(t *testing.T) {
	file := filepath.Join("..", "testdata", "Spectrum-X_8g_8gps_400Gbps_H100")
	var b strings.Builder
	if err := (Info{File: file, Pair: true, Src: 0, Dst: 5, Limit: 16}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "topology "+file+"\n") || !strings.HasSuffix(out, "paths from GPU 0 to GPU 5: 2 hops, 1 equal-cost paths\n  0 -> 8(nvswitch) -> 5   delay 50ns, bottleneck 2.88 Tbps\n") {
		t.Errorf("output:\n%s", out)
	}
	for _, q := range []Info{{File: file + ".none", Limit: 1}, {File: file, Pair: true, Src: 0, Dst: 8, Limit: 1}} {
		if err := q.WriteText(io.Discard); !lex.IsInputError(err) {
			t.Errorf("%+v: %v, want an input error", q, err)
		}
	}
}
