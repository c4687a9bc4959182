package route

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"simd/topo"
)

func TestGraphNumbering(t *testing.T) {
	tp := testdata(t, "Spectrum-X_8g_8gps_400Gbps_H100")
	g, err := NewGraph(tp)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 18 || g.NumLinks() != 24 || g.NumDirLinks() != 48 {
		t.Fatalf("sizes %d %d %d", g.NumNodes(), g.NumLinks(), g.NumDirLinks())
	}
	for i, l := range tp.Links {
		fwd, rev := int32(2*i), int32(2*i+1)
		if g.From(fwd) != l.Src || g.To(fwd) != l.Dst || g.From(rev) != l.Dst || g.To(rev) != l.Src {
			t.Errorf("link %d: %d→%d / %d→%d", i, g.From(fwd), g.To(fwd), g.From(rev), g.To(rev))
		}
		if Reverse(fwd) != rev || LinkIndex(rev) != i || g.Rate(rev) != l.Rate || g.Delay(fwd) != l.Delay {
			t.Errorf("link %d attributes", i)
		}
	}
	// Adjacency of ASW 9 (GPU 0's rail switch): switches first (PSW 17), then GPU 0.
	nb, ls := g.Adjacent(9)
	if !equalInt32s(nb, []int32{17, 0}) {
		t.Errorf("Adjacent(9) = %v", nb)
	}
	for k := range nb {
		if g.From(ls[k]) != 9 || g.To(ls[k]) != nb[k] {
			t.Errorf("Adjacent(9) link %d", k)
		}
	}
	if got := g.Links(nil, 0, 9); len(got) != 1 || g.To(got[0]) != 9 {
		t.Errorf("Links(0,9) = %v", got)
	}
	if got := g.Links(nil, 0, 10); len(got) != 0 {
		t.Errorf("Links(0,10) = %v", got)
	}
}

// kindsOf renders the node kinds along a path: G, N (NVSwitch) or S.
func kindsOf(g *Graph, path []int32) string {
	var b strings.Builder
	for _, x := range nodes(g, path) {
		b.WriteByte("GNS"[g.Kind(x)])
	}
	return b.String()
}

func TestRouteShapesTestdata(t *testing.T) {
	// The shape of every route between every pair of GPUs of the generated files: inside a
	// server GPU→NVSwitch→GPU; between servers, GPU→ASW→GPU when both GPUs hang off a common
	// ASW (same rail in a rail-optimised fabric, same ASW in DCN+), else GPU→ASW→PSW→ASW→GPU.
	for _, file := range testdataFiles(t) {
		tp := loadTopo(t, file)
		r := mustRouter(t, tp)
		g := r.Graph()
		gps := int32(tp.GPUsPerServer)
		ngpu := int32(tp.NumGPUs())
		shapes := map[string]int{}
		for s := int32(0); s < ngpu; s++ {
			for d := int32(0); d < ngpu; d++ {
				if s == d {
					continue
				}
				paths, complete, err := r.AllPaths(s, d, 1000)
				if err != nil || !complete || len(paths) == 0 {
					t.Fatalf("%s: AllPaths(%d,%d): %v %v %d", file, s, d, err, complete, len(paths))
				}
				sharesASW := false
				nb, _ := g.Adjacent(s)
				for _, a := range nb {
					if g.Kind(a) == topo.Switch && len(g.Links(nil, a, d)) > 0 {
						sharesASW = true
					}
				}
				want := "GSSSG"
				switch {
				case s/gps == d/gps:
					want = "GNG"
				case sharesASW:
					want = "GSG"
				}
				for _, p := range paths {
					if got := kindsOf(g, p); got != want {
						t.Fatalf("%s: %d→%d: route %v is %s, want %s", file, s, d, nodes(g, p), got, want)
					}
				}
				shapes[want]++
				p, err := r.Route(nil, s, d, DefaultSport, DefaultDport)
				if err != nil || kindsOf(g, p) != want {
					t.Fatalf("%s: Route(%d,%d) = %v, %v", file, s, d, nodes(g, p), err)
				}
			}
		}
		t.Logf("%s: %v", file, shapes)
	}
}

func TestRailRoutes(t *testing.T) {
	// 16 GPUs, 2 servers, 8 rails, 4 PSWs: GPU i's NIC is on ASW 18 + i mod 8 (ids: GPUs 0-15,
	// NVSwitches 16-17, ASWs 18-25, PSWs 26-29).
	p := topo.SpectrumXDefaults(16)
	p.PSWs = 4
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRouter(t, tp)
	g := r.Graph()
	tests := []struct {
		src, dst int32
		want     []int32 // nodes; -1 matches any PSW
		paths    int64
	}{
		{0, 1, []int32{0, 16, 1}, 1},           // same server: NVLink
		{9, 15, []int32{9, 17, 15}, 1},         // same server, second one
		{0, 8, []int32{0, 18, 8}, 1},           // same rail: one ASW
		{3, 11, []int32{3, 21, 11}, 1},         // same rail
		{0, 9, []int32{0, 18, -1, 19, 9}, 4},   // cross rail: any of 4 PSWs
		{15, 2, []int32{15, 25, -1, 20, 2}, 4}, // cross rail, other direction
	}
	for _, tc := range tests {
		n, err := r.CountPaths(tc.src, tc.dst)
		if err != nil || n != tc.paths {
			t.Errorf("CountPaths(%d,%d) = %d, %v; want %d", tc.src, tc.dst, n, err, tc.paths)
		}
		if d, _ := r.Distance(tc.src, tc.dst); d != len(tc.want)-1 {
			t.Errorf("Distance(%d,%d) = %d", tc.src, tc.dst, d)
		}
		for qp := 0; qp < 16; qp++ {
			path, err := r.Route(nil, tc.src, tc.dst, QPSport(qp), DefaultDport)
			if err != nil {
				t.Fatal(err)
			}
			got := nodes(g, path)
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				if tc.want[i] >= 0 && got[i] != tc.want[i] || tc.want[i] < 0 && (got[i] < 26 || got[i] > 29) {
					ok = false
				}
			}
			if !ok {
				t.Errorf("Route(%d,%d, qp %d) = %v, want %v", tc.src, tc.dst, qp, got, tc.want)
			}
		}
	}
}

func TestRouteByHash(t *testing.T) {
	// The choice at each hop is Hash(key, seed) mod the number of candidates, with candidates in
	// SimAI's order, by descending switch id: recompute it by hand for cross-rail flows.
	p := topo.SpectrumXDefaults(16)
	p.PSWs = 5
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRouter(t, tp)
	g := r.Graph()
	for sport := uint16(10000); sport < 10200; sport++ {
		key := FlowKey(NodeIP(0), NodeIP(9), sport, 77)
		psw := int32(30) - int32(Hash(key, 18)%5) // at ASW 18, PSWs 30..26 in SimAI's order
		want := []int32{0, 18, psw, 19, 9}
		path, err := r.Route(nil, 0, 9, sport, 77)
		if err != nil {
			t.Fatal(err)
		}
		if got := nodes(g, path); !equalInt32s(got, want) {
			t.Fatalf("sport %d: %v, want %v", sport, got, want)
		}
	}
}

func TestDualToRNICChoice(t *testing.T) {
	// Dual ToR: a GPU has two NICs at equal distance; the NIC is chosen by Hash(key, NICSeed).
	tp := testdata(t, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	r := mustRouter(t, tp)
	g := r.Graph()
	used := map[int32]int{}
	for sport := uint16(10000); sport < 10400; sport++ {
		first, err := r.NextHops(nil, 0, 9)
		if err != nil || len(first) != 2 {
			t.Fatalf("NextHops(0,9) = %v, %v", first, err)
		}
		key := FlowKey(NodeIP(0), NodeIP(9), sport, DefaultDport)
		want := first[Hash(key, NICSeed)%2]
		path, err := r.Route(nil, 0, 9, sport, DefaultDport)
		if err != nil {
			t.Fatal(err)
		}
		if path[0] != want {
			t.Fatalf("sport %d: first hop %d, want %d", sport, path[0], want)
		}
		used[g.To(path[0])]++
	}
	if len(used) != 2 {
		t.Errorf("NICs used: %v", used)
	}
}

// RouteQP gives the QPs of a connection the NIC's interfaces in turn from the one the hash gives
// the first QP, and hashes every later hop with the QP's own ports, as Route does.
func TestRouteQP(t *testing.T) {
	tp := testdata(t, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	r := mustRouter(t, tp)
	first, err := r.NextHops(nil, 0, 9)
	if err != nil || len(first) != 2 {
		t.Fatalf("NextHops(0,9) = %v, %v", first, err)
	}
	index := func(l int32) int { return slices.Index(first, l) }
	for base := uint16(10000); base < 10100; base++ {
		plain, err := r.Route(nil, 0, 9, base, DefaultDport)
		if err != nil {
			t.Fatal(err)
		}
		for shift := range 4 {
			sport := base + uint16(shift)
			got, err := r.RouteQP(nil, 0, 9, sport, DefaultDport, base, shift)
			if err != nil {
				t.Fatal(err)
			}
			if want := (index(plain[0]) + shift) % 2; index(got[0]) != want {
				t.Fatalf("QP %d after sport %d leaves by interface %d, want %d", shift, base, index(got[0]), want)
			}
			own, err := r.Route(nil, 0, 9, sport, DefaultDport)
			if err != nil {
				t.Fatal(err)
			}
			if shift == 0 && !slices.Equal(got, own) {
				t.Fatalf("RouteQP with shift 0 = %v, Route = %v", got, own)
			}
			// Beyond the first hop, the QP's own hash: the route Route gives when its first hop
			// is the same.
			if got[0] == own[0] && !slices.Equal(got, own) {
				t.Fatalf("sport %d: RouteQP %v, Route %v", sport, got, own)
			}
			g, at := r.Graph(), int32(0)
			for _, l := range got {
				if g.From(l) != at {
					t.Fatalf("RouteQP gave %v: link %d does not start at node %d", got, l, at)
				}
				at = g.To(l)
			}
			if at != 9 || len(got) != len(plain) {
				t.Fatalf("RouteQP gave %v, which is not a shortest route to 9 (%v)", got, plain)
			}
		}
	}
}

func TestHandDrawn(t *testing.T) {
	// Four small topologies drawn by hand, with the expected route sets.
	tests := []struct {
		name     string
		gps      int
		kinds    string
		links    []lk
		src, dst int32
		want     [][]int32 // node sequences, in enumeration order
	}{
		{
			// Two GPUs on one NVSwitch and one switch: NVLink is preferred at equal distance.
			name: "nvswitch preferred", gps: 2, kinds: "GGNS",
			links: []lk{{0, 2, 900, 25}, {1, 2, 900, 25}, {0, 3, 100, 500}, {1, 3, 100, 500}},
			src:   0, dst: 1,
			want: [][]int32{{0, 2, 1}},
		},
		{
			// A direct GPU–GPU link beats any switch path; hosts never forward.
			name: "direct link", gps: 4, kinds: "GGGGS",
			links: []lk{{0, 1, 100, 10}, {1, 2, 100, 10}, {0, 4, 100, 10}, {2, 4, 100, 10}, {3, 4, 100, 10}},
			src:   0, dst: 2,
			want: [][]int32{{0, 4, 2}}, // not 0→1→2: GPU 1 does not forward
		},
		{
			// A diamond of switches: two equal paths, both enumerated by ascending id.
			name: "diamond", gps: 1, kinds: "GGSSSS",
			links: []lk{{0, 2, 100, 1}, {2, 4, 100, 1}, {2, 3, 100, 1}, {3, 5, 100, 1}, {4, 5, 100, 1}, {5, 1, 100, 1}},
			src:   0, dst: 1,
			want: [][]int32{{0, 2, 3, 5, 1}, {0, 2, 4, 5, 1}},
		},
		{
			// An NVSwitch that also links to the network: at switch 4, NVSwitch 3 and switch 5
			// are both 1 hop from GPU 1; the NVSwitch wins.
			name: "nvswitch transit", gps: 1, kinds: "GGSNSS",
			links: []lk{{0, 2, 100, 1}, {2, 4, 100, 1}, {4, 3, 100, 1}, {4, 5, 100, 1}, {3, 1, 100, 1}, {5, 1, 100, 1}},
			src:   0, dst: 1,
			want: [][]int32{{0, 2, 4, 3, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRouter(t, handTopo(t, tc.gps, tc.kinds, tc.links))
			paths, complete, err := r.AllPaths(tc.src, tc.dst, 100)
			if err != nil || !complete {
				t.Fatal(err, complete)
			}
			var got [][]int32
			for _, p := range paths {
				got = append(got, nodes(r.Graph(), p))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("routes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRouteErrors(t *testing.T) {
	r := mustRouter(t, testdata(t, "Spectrum-X_8g_8gps_400Gbps_H100"))
	tests := []struct {
		src, dst int32
		noRoute  bool
	}{
		{0, 0, false},    // same node
		{-1, 3, false},   // out of range
		{0, 18, false},   // out of range
		{9, 3, false},    // a network switch as source
		{0, 17, true},    // a switch as destination
		{1, 8, false},    // an adjacent NVSwitch: fine (NVLS)
		{8, 3, false},    // NVSwitch as source: fine
		{0, 9, false},    // an adjacent ASW: reachable as a neighbour
		{0, 10, true},    // a non-adjacent ASW
		{3, 8, false},    // GPU → its NVSwitch
		{8, 17, true},    // NVSwitch → switch
		{1, 1000, false}, // out of range
	}
	for _, tc := range tests {
		path, err := r.Route(nil, tc.src, tc.dst, DefaultSport, DefaultDport)
		valid := tc.src >= 0 && tc.src < 18 && tc.dst >= 0 && tc.dst < 18 && tc.src != tc.dst && tc.src != 9 && !tc.noRoute
		switch {
		case valid && err != nil:
			t.Errorf("Route(%d,%d): %v", tc.src, tc.dst, err)
		case !valid && err == nil:
			t.Errorf("Route(%d,%d) = %v, want an error", tc.src, tc.dst, path)
		case tc.noRoute && !errors.Is(err, ErrNoRoute):
			t.Errorf("Route(%d,%d): %v, want ErrNoRoute", tc.src, tc.dst, err)
		}
	}
	// NVLS: GPU 3 to its NVSwitch is the direct link; the NVSwitch to GPU 5 likewise.
	g := r.Graph()
	if p, _ := r.Route(nil, 3, 8, DefaultSport, DefaultDport); !equalInt32s(nodes(g, p), []int32{3, 8}) {
		t.Errorf("3→8: %v", nodes(g, p))
	}
	if p, _ := r.Route(nil, 8, 5, DefaultSport, DefaultDport); !equalInt32s(nodes(g, p), []int32{8, 5}) {
		t.Errorf("8→5: %v", nodes(g, p))
	}
	if err := r.SetLinkDown(0, 5); err == nil {
		t.Error("SetLinkDown of a pair without a link succeeded")
	}
	if err := r.SetLinkDown(0, 99); err == nil {
		t.Error("SetLinkDown out of range succeeded")
	}
}

func TestLinkDown(t *testing.T) {
	p := topo.SpectrumXDefaults(16)
	p.PSWs = 4
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRouter(t, tp)
	g := r.Graph()
	const src, dst, asw = 0, 9, 18
	sport := DefaultSport
	before, err := r.Route(nil, src, dst, sport, DefaultDport)
	if err != nil {
		t.Fatal(err)
	}
	psw := nodes(g, before)[2]
	ep := r.Epoch()
	if err := r.SetLinkDown(asw, psw); err != nil {
		t.Fatal(err)
	}
	if r.Epoch() == ep || r.LinksDown() != 1 || r.LinkUp(before[1]) {
		t.Errorf("epoch %d→%d, down %d, up %v", ep, r.Epoch(), r.LinksDown(), r.LinkUp(before[1]))
	}
	after, err := r.Route(nil, src, dst, sport, DefaultDport)
	if err != nil {
		t.Fatal(err)
	}
	an := nodes(g, after)
	if len(after) != 4 || an[1] != asw || an[2] == psw {
		t.Fatalf("after taking %d–%d down: %v (before %v)", asw, psw, an, nodes(g, before))
	}
	if n, _ := r.CountPaths(src, dst); n != 3 {
		t.Errorf("%d routes left, want 3", n)
	}
	// Every flow avoids the link now.
	for sp := uint16(0); sp < 500; sp++ {
		pth, err := r.Route(nil, src, dst, sp, DefaultDport)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pth {
			if !r.LinkUp(l) {
				t.Fatalf("sport %d uses a down link: %v", sp, nodes(g, pth))
			}
		}
	}
	// Taking the same link down again changes nothing.
	ep = r.Epoch()
	if err := r.SetLinkDown(psw, asw); err != nil || r.Epoch() != ep {
		t.Errorf("second SetLinkDown: %v, epoch %d→%d", err, ep, r.Epoch())
	}
	// All uplinks of ASW 18 down: GPU 0 reaches only its rail and its server.
	for p := int32(26); p < 30; p++ {
		if err := r.SetLinkDown(asw, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Route(nil, src, dst, sport, DefaultDport); !errors.Is(err, ErrNoRoute) {
		t.Errorf("with every uplink down: %v, want ErrNoRoute", err)
	}
	if _, err := r.Route(nil, dst, src, sport, DefaultDport); !errors.Is(err, ErrNoRoute) {
		t.Errorf("reverse with every uplink down: %v, want ErrNoRoute", err)
	}
	if _, err := r.Route(nil, src, 8, sport, DefaultDport); err != nil {
		t.Errorf("same rail: %v", err)
	}
	if _, err := r.Route(nil, src, 5, sport, DefaultDport); err != nil {
		t.Errorf("same server: %v", err)
	}
	// Back up: the original route returns.
	for p := int32(26); p < 30; p++ {
		if err := r.SetLinkUp(asw, p); err != nil {
			t.Fatal(err)
		}
	}
	again, err := r.Route(nil, src, dst, sport, DefaultDport)
	if err != nil || !equalInt32s(again, before) || r.LinksDown() != 0 {
		t.Errorf("after SetLinkUp: %v %v, down %d; want %v", nodes(g, again), err, r.LinksDown(), nodes(g, before))
	}
	// A NIC link down: GPU 9 is reachable from server 0 no more, still from its own server.
	if err := r.SetLinkDown(9, 19); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Route(nil, 0, 9, sport, DefaultDport); !errors.Is(err, ErrNoRoute) {
		t.Errorf("NIC down: %v", err)
	}
	if p, err := r.Route(nil, 10, 9, sport, DefaultDport); err != nil || !equalInt32s(nodes(g, p), []int32{10, 17, 9}) {
		t.Errorf("NIC down, same server: %v %v", nodes(g, p), err)
	}
}

func TestDualPlane(t *testing.T) {
	// AlibabaHPN dual plane, 64 GPUs: ASWs 72-79 (set A) and 80-87 (set B), PSWs 88-95 (plane
	// A) and 96-103 (plane B). Every route stays in the plane of its first ASW.
	tp := testdata(t, "AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100")
	r := mustRouter(t, tp)
	g := r.Graph()
	plane := func(x int32) int {
		switch {
		case x >= 72 && x < 80, x >= 88 && x < 96:
			return 0
		case x >= 80 && x < 88, x >= 96 && x < 104:
			return 1
		}
		return -1
	}
	crossPlane := 0
	for s := int32(0); s < 64; s++ {
		for d := int32(0); d < 64; d++ {
			if s/8 == d/8 {
				continue
			}
			paths, _, err := r.AllPaths(s, d, 10000)
			if err != nil {
				t.Fatal(err)
			}
			planes := map[int]bool{}
			for _, p := range paths {
				ns := nodes(g, p)
				pl := plane(ns[1])
				planes[pl] = true
				for _, x := range ns[1 : len(ns)-1] {
					if plane(x) != pl {
						t.Fatalf("%d→%d: route %v leaves plane %d", s, d, ns, pl)
					}
				}
			}
			if len(planes) == 2 {
				crossPlane++
			}
		}
	}
	if crossPlane == 0 {
		t.Error("no pair uses both planes")
	}
}

func TestSeveralQPs(t *testing.T) {
	// QPs of one pair (sports 10000, 10001, ...) spread over the equal-cost routes.
	r := mustRouter(t, mustFabric(t, 64, 8))
	seen := map[string]bool{}
	for qp := 0; qp < 64; qp++ {
		p, err := r.Route(nil, 0, 9, QPSport(qp), DefaultDport)
		if err != nil {
			t.Fatal(err)
		}
		seen[fmt.Sprint(p)] = true
	}
	if len(seen) < 20 {
		t.Errorf("64 QPs took %d distinct routes", len(seen))
	}
}

func mustFabric(t testing.TB, gpus, gps int) *topo.Topology {
	t.Helper()
	tp, err := topo.DefaultFabric(gpus, gps)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestECMPSpread(t *testing.T) {
	// 10,000 random flows leaving one ToR spread evenly over its 8 uplinks: each within 10% of
	// 1/8 (a binomial count of 1,250 has σ ≈ 33, so 10% is ~3.8σ).
	p := topo.SpectrumXDefaults(1024)
	p.PSWs = 8
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRouter(t, tp)
	g := r.Graph()
	// ASW of rail 0 in segment 0: its GPUs are 0, 8, 16, ... < 512.
	rng := rand.New(rand.NewPCG(7, 11))
	count := map[int32]int{}
	var buf []int32
	const flows = 10000
	for i := 0; i < flows; i++ {
		src := int32(8 * rng.IntN(64))
		dst := int32(rng.IntN(1024))
		for dst%8 == 0 && dst < 512 || dst/8 == src/8 {
			dst = int32(rng.IntN(1024))
		}
		buf, err = r.Route(buf, src, dst, uint16(rng.Uint32()), DefaultDport)
		if err != nil {
			t.Fatal(err)
		}
		count[g.To(buf[1])]++
	}
	if len(count) != 8 {
		t.Fatalf("uplinks used: %v", count)
	}
	for psw, n := range count {
		if n < flows/8*9/10 || n > flows/8*11/10 {
			t.Errorf("PSW %d carries %d of %d flows (even: %d)", psw, n, flows, flows/8)
		}
	}
}

func TestRouteAllocs(t *testing.T) {
	r := mustRouter(t, mustFabric(t, 256, 8))
	if err := r.Warm(); err != nil {
		t.Fatal(err)
	}
	buf := make([]int32, 0, 8)
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		buf, err = r.Route(buf, 3, 200, 10007, DefaultDport)
	})
	if err != nil || allocs != 0 {
		t.Errorf("Route: %v allocs/op, err %v", allocs, err)
	}
	allocs = testing.AllocsPerRun(100, func() {
		buf, err = r.Route(buf, 3, 200, 10007, DefaultDport)
		buf, err = r.Route(buf, 17, 200, 10007, DefaultDport)
		buf, err = r.Route(buf, 5, 4, 10007, DefaultDport)
	})
	if err != nil || allocs != 0 {
		t.Errorf("Route, several pairs: %v allocs/op, err %v", allocs, err)
	}
}

// slowRoute routes a flow with NextHops and Hash, hop by hop: the definition Route implements.
func slowRoute(t *testing.T, r *Router, src, dst int32, sport, dport uint16) []int32 {
	t.Helper()
	key := FlowKey(NodeIP(src), NodeIP(dst), sport, dport)
	var out []int32
	x, seed := src, NICSeed
	for x != dst {
		hops, err := r.NextHops(nil, x, dst)
		if err != nil || len(hops) == 0 {
			t.Fatalf("NextHops(%d,%d): %v %v", x, dst, hops, err)
		}
		l := hops[Hash(key, seed)%uint32(len(hops))]
		out = append(out, l)
		x, seed = r.Graph().To(l), uint32(r.Graph().To(l))
	}
	return out
}

func multiPod(t testing.TB, mesh bool) *topo.Topology {
	t.Helper()
	p := topo.SpectrumXDefaults(64)
	p.Pods, p.PSWs, p.NICsPerASW = 2, 4, 4
	p.Mesh = mesh
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestRouteMatchesNextHops(t *testing.T) {
	tops := map[string]*topo.Topology{"multi-pod": multiPod(t, false), "multi-pod mesh": multiPod(t, true)}
	for _, f := range testdataFiles(t) {
		tops[f] = loadTopo(t, f)
	}
	rng := rand.New(rand.NewPCG(20, 21))
	for i := 0; i < 30; i++ {
		tops[fmt.Sprint("random ", i)] = randomTopo(rng)
	}
	for _, name := range slices.Sorted(maps.Keys(tops)) { // one order: the shared generator draws the same pairs
		tp := tops[name]
		r := mustRouter(t, tp)
		ng := tp.NumGPUs()
		for k := 0; k < 300; k++ {
			if k == 150 && len(tp.Links) > 0 { // half of the flows with a link down
				l := tp.Links[rng.IntN(len(tp.Links))]
				if err := r.SetLinkDown(l.Src, l.Dst); err != nil {
					t.Fatal(err)
				}
			}
			s, d := int32(rng.IntN(ng)), int32(rng.IntN(ng))
			sport := uint16(rng.Uint32())
			if s == d {
				continue
			}
			got, err := r.Route(nil, s, d, sport, 100)
			if errors.Is(err, ErrNoRoute) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := slowRoute(t, r, s, d, sport, 100); !equalInt32s(got, want) {
				t.Fatalf("%s: %d→%d sport %d: Route %v, hop by hop %v", name, s, d, sport, nodes(r.Graph(), got), nodes(r.Graph(), want))
			}
		}
	}
}

func TestMultiPod(t *testing.T) {
	// Two pods of 32 GPUs (4 servers, 8 ASWs, 4 PSWs each) under 32 cores (4 groups of 8).
	tp := multiPod(t, false)
	r := mustRouter(t, tp)
	g := r.Graph()
	tiers := g.Tiers()
	count := map[int32]int{}
	for x := int32(0); int(x) < g.NumNodes(); x++ {
		if g.Kind(x) == topo.Switch {
			count[tiers[x]]++
		}
	}
	if count[1] != 16 || count[2] != 8 || count[3] != 32 {
		t.Errorf("switches per tier: %v", count)
	}
	tests := []struct {
		src, dst int32
		shape    string
		paths    int64
	}{
		{0, 1, "GNG", 1},        // same server
		{0, 8, "GSG", 1},        // same rail, same pod
		{0, 9, "GSSSG", 4},      // cross rail, same pod: 4 PSWs
		{0, 32, "GSSSSSG", 32},  // same rail, other pod: 4 PSWs × 8 cores
		{3, 60, "GSSSSSG", 32},  // cross rail, other pod
		{63, 2, "GSSSSSG", 32},  // back
		{33, 58, "GSSSG", 4},    // second pod, cross rail
		{40, 32, "GSG", 1},      // second pod, same rail
		{47, 44, "GNG", 1},      // second pod, same server
		{31, 32, "GSSSSSG", 32}, // last GPU of pod 0 to first of pod 1
	}
	for _, tc := range tests {
		n, err := r.CountPaths(tc.src, tc.dst)
		if err != nil || n != tc.paths {
			t.Errorf("CountPaths(%d,%d) = %d, %v; want %d", tc.src, tc.dst, n, err, tc.paths)
		}
		paths, _, err := r.AllPaths(tc.src, tc.dst, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if got := kindsOf(g, p); got != tc.shape {
				t.Errorf("%d→%d: %v is %s, want %s", tc.src, tc.dst, nodes(g, p), got, tc.shape)
			}
			if len(p) == 6 && (tiers[g.To(p[1])] != 2 || tiers[g.To(p[2])] != 3 || tiers[g.To(p[3])] != 2) {
				t.Errorf("%d→%d: %v does not go up to a core", tc.src, tc.dst, nodes(g, p))
			}
		}
	}
	var pairs [][2]int32
	for s := int32(0); s < 64; s += 5 {
		for d := int32(1); d < 64; d += 7 {
			if s != d {
				pairs = append(pairs, [2]int32{s, d})
			}
		}
	}
	checkAgainstGonum(t, "multi-pod", tp, pairs, 800)
}

func TestMeshServers(t *testing.T) {
	// Servers without NVSwitch, GPUs fully meshed: inside a server the direct link; across, the
	// network.
	tp := multiPod(t, true)
	r := mustRouter(t, tp)
	g := r.Graph()
	if g.NodeCounts().NVSwitches != 0 {
		t.Fatalf("mesh has NVSwitches: %+v", g.NodeCounts())
	}
	for s := int32(0); s < 64; s++ {
		for d := int32(0); d < 64; d++ {
			if s == d {
				continue
			}
			p, err := r.Route(nil, s, d, DefaultSport, DefaultDport)
			if err != nil {
				t.Fatal(err)
			}
			want := "GSSSSSG"
			switch {
			case s/8 == d/8:
				want = "GG"
			case s%8 == d%8 && s/32 == d/32:
				want = "GSG"
			case s/32 == d/32:
				want = "GSSSG"
			}
			if got := kindsOf(g, p); got != want {
				t.Fatalf("%d→%d: %v is %s, want %s", s, d, nodes(g, p), got, want)
			}
		}
	}
	var pairs [][2]int32
	for s := int32(0); s < 64; s += 3 {
		for d := int32(2); d < 64; d += 11 {
			if s != d {
				pairs = append(pairs, [2]int32{s, d})
			}
		}
	}
	checkAgainstGonum(t, "multi-pod mesh", tp, pairs, 800)
	want := bruteMax(t, r, 9000)
	for _, small := range []int{0, smallComp} {
		for _, nvOnly := range []bool{false, true} {
			if got, err := r.maxRTTBDP(9000, small, nvOnly); err != nil || got != want {
				t.Errorf("mesh MaxRTTBDP (small %d, NVLink only %v) = %+v, %v; brute force %+v", small, nvOnly, got, err, want)
			}
		}
	}
}

func TestDualPlaneMultiPod(t *testing.T) {
	// A dual-plane fabric of 2 pods under a core layer: every route keeps to one plane, i.e. to
	// one component of the switch graph, up to the cores and down again; both planes are used.
	p := topo.AlibabaHPNDefaults(64, true)
	p.Pods, p.PSWs, p.NICsPerASW = 2, 4, 4
	tp, err := topo.RailOptimizedDualToRDualPlane(p).Build()
	if err != nil {
		t.Fatal(err)
	}
	r := mustRouter(t, tp)
	g := r.Graph()
	comps := map[int32]bool{}
	for s := int32(0); s < 64; s += 3 {
		for d := int32(0); d < 64; d++ {
			if s/8 == d/8 {
				continue
			}
			paths, _, err := r.AllPaths(s, d, 10000)
			if err != nil {
				t.Fatal(err)
			}
			for _, pth := range paths {
				ns := nodes(g, pth)
				c := g.comp[ns[1]]
				comps[c] = true
				for _, x := range ns[1 : len(ns)-1] {
					if g.comp[x] != c {
						t.Fatalf("%d→%d: route %v changes plane", s, d, ns)
					}
				}
			}
		}
	}
	if len(comps) != 2 {
		t.Errorf("routes use %d planes, want 2", len(comps))
	}
}

// TestCandidateMemo checks the remembered candidates against a scan of the neighbours, for
// flows and their ACKs routed alternately on one long-lived router while links go down and up
// (the memo must follow every change), on fabrics whose lists are runs of the adjacency and on
// random topologies with parallel links, whose lists are not always.
func TestCandidateMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 31))
	tops := map[string]*topo.Topology{"multi-pod": multiPod(t, false), "multi-pod mesh": multiPod(t, true)}
	for _, f := range testdataFiles(t) {
		tops[f] = loadTopo(t, f)
	}
	for i := 0; i < 40; i++ {
		tp := randomTopo(rng)
		for _, l := range tp.Links {
			if tp.Kinds[l.Src] != topo.GPU && tp.Kinds[l.Dst] != topo.GPU && rng.IntN(3) == 0 {
				tp.Links = append(tp.Links, l)
			}
		}
		tops[fmt.Sprint("random ", i)] = tp
	}
	// scanRoute is Route with every candidate list computed afresh.
	scanRoute := func(r *Router, src, dst int32, sport, dport uint16) ([]int32, error) {
		d, err := r.prepare(src, dst)
		if err != nil {
			return nil, err
		}
		key := FlowKey(NodeIP(src), NodeIP(dst), sport, dport)
		var out []int32
		for x, seed := src, NICSeed; x != dst; d-- {
			c := r.scanCandidates(x, dst, d)
			if len(c) == 0 {
				return nil, fmt.Errorf("no candidates at %d", x)
			}
			l := c[simaiIndex(Hash(key, seed), uint32(len(c)))]
			out = append(out, l)
			x = r.g.To(l)
			seed = uint32(x)
		}
		return out, nil
	}
	// tally counts the memo entries of the router's current epoch. It runs
	// before every link change too, since a change starts a new epoch.
	var runs, arena int
	tally := func(r *Router) {
		for _, p := range r.profs {
			if p.ep != r.epoch {
				continue
			}
			for _, e := range p.tab {
				switch {
				case e == 0:
				case e&memoArena != 0:
					arena++
				default:
					runs++
				}
			}
		}
	}
	// Sorted names: the shared generator must draw the same pairs on every run.
	for _, name := range slices.Sorted(maps.Keys(tops)) {
		tp := tops[name]
		r := mustRouter(t, tp)
		ng := tp.NumGPUs()
		var down []topo.Link
		var buf []int32
		for k := 0; k < 1500; k++ {
			if k%100 == 99 && len(tp.Links) > 0 {
				tally(r)
				if len(down) > 0 && rng.IntN(2) == 0 {
					l := down[len(down)-1]
					down = down[:len(down)-1]
					if err := r.SetLinkUp(l.Src, l.Dst); err != nil {
						t.Fatal(err)
					}
				} else {
					l := tp.Links[rng.IntN(len(tp.Links))]
					down = append(down, l)
					if err := r.SetLinkDown(l.Src, l.Dst); err != nil {
						t.Fatal(err)
					}
				}
			}
			s, d := int32(rng.IntN(ng)), int32(rng.IntN(ng))
			sport := uint16(rng.Uint32())
			if s == d {
				continue
			}
			for _, p := range [][2]int32{{s, d}, {d, s}} {
				want, werr := scanRoute(r, p[0], p[1], sport, 100)
				var err error
				buf, err = r.Route(buf, p[0], p[1], sport, 100)
				if (err != nil) != (werr != nil) || err == nil && !equalInt32s(buf, want) {
					t.Fatalf("%s: %d→%d sport %d: Route %v %v, scanned %v %v", name, p[0], p[1], sport, nodes(r.Graph(), buf), err, nodes(r.Graph(), want), werr)
				}
				for _, l := range want {
					x := r.g.From(l)
					got, err := r.NextHops(nil, x, p[1])
					if err != nil {
						t.Fatal(err)
					}
					slices.Reverse(got)
					dist := r.nodeDist(x, p[1])
					if scan := r.scanCandidates(x, p[1], dist); !equalInt32s(got, scan) {
						t.Fatalf("%s: candidates of %d toward %d: %v, scanned %v", name, x, p[1], got, scan)
					}
				}
			}
		}
		tally(r)
	}
	if runs == 0 || arena == 0 {
		t.Errorf("remembered %d runs and %d lists in the arena; want both", runs, arena)
	}
}
