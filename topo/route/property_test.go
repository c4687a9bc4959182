package route

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"

	"simd/engine"
	"simd/topo"
)

// randomTopo draws a small random topology without parallel links: GPUs, NVSwitches and
// switches, with GPU–switch, GPU–NVSwitch, switch–switch, NVSwitch–switch and some GPU–GPU
// links of random rates and delays.
func randomTopo(rng *rand.Rand) *topo.Topology {
	ng, nn, ns := 2+rng.IntN(6), rng.IntN(3), 1+rng.IntN(6)
	tp := &topo.Topology{GPUsPerServer: 1 + rng.IntN(3), GPUType: "H100"}
	for i := 0; i < ng; i++ {
		tp.Kinds = append(tp.Kinds, topo.GPU)
	}
	for i := 0; i < nn; i++ {
		tp.NVSwitches = append(tp.NVSwitches, int32(len(tp.Kinds)))
		tp.Kinds = append(tp.Kinds, topo.NVSwitch)
	}
	for i := 0; i < ns; i++ {
		tp.Switches = append(tp.Switches, int32(len(tp.Kinds)))
		tp.Kinds = append(tp.Kinds, topo.Switch)
	}
	n := len(tp.Kinds)
	rates := []float64{100e9, 200e9, 400e9}
	delays := []engine.Time{100 * engine.Nanosecond, 500 * engine.Nanosecond}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			p := 0.45
			if tp.Kinds[a] == topo.GPU && tp.Kinds[b] == topo.GPU {
				p = 0.1
			}
			if rng.Float64() < p {
				tp.Links = append(tp.Links, topo.Link{Src: int32(a), Dst: int32(b),
					Rate: rates[rng.IntN(len(rates))], Delay: delays[rng.IntN(len(delays))]})
			}
		}
	}
	return tp
}

// gonumRoutes is the reference route set from src to dst: gonum's shortest paths in the graph
// of the switches, NVSwitches and the two endpoints (hosts never forward), kept when at every
// hop they take an NVSwitch whenever one is among the next hops on a shortest path.
func gonumRoutes(tp *topo.Topology, src, dst int32) [][]int32 {
	keep := func(x int32, withSrc bool) bool {
		return tp.Kinds[x] != topo.GPU || x == dst || (withSrc && x == src)
	}
	build := func(withSrc bool) *simple.UndirectedGraph {
		g := simple.NewUndirectedGraph()
		for x := range tp.Kinds {
			if keep(int32(x), withSrc) {
				g.AddNode(simple.Node(x))
			}
		}
		for _, l := range tp.Links {
			if keep(l.Src, withSrc) && keep(l.Dst, withSrc) {
				g.SetEdge(simple.Edge{F: simple.Node(l.Src), T: simple.Node(l.Dst)})
			}
		}
		return g
	}
	withSrc := build(true)
	toDst := path.DijkstraFrom(simple.Node(dst), build(false)) // distances through switches only
	all, w := path.DijkstraAllFrom(simple.Node(src), withSrc).AllTo(int64(dst))
	if math.IsInf(w, 1) {
		return nil
	}
	adjacent := func(a, b int32) bool { return withSrc.HasEdgeBetween(int64(a), int64(b)) }
	var out [][]int32
	for _, p := range all {
		ok := true
		for t := 0; t+1 < len(p) && ok; t++ {
			x, y := int32(p[t].ID()), int32(p[t+1].ID())
			if tp.Kinds[y] == topo.NVSwitch {
				continue
			}
			remaining := float64(len(p) - 1 - t)
			for z := range tp.Kinds {
				if tp.Kinds[z] == topo.NVSwitch && adjacent(x, int32(z)) && toDst.WeightTo(int64(z)) == remaining-1 {
					ok = false // an NVSwitch next hop exists: SimAI would not take y
				}
			}
		}
		if ok {
			out = append(out, nodeIDs(p))
		}
	}
	return out
}

func nodeIDs(p []graph.Node) []int32 {
	out := make([]int32, len(p))
	for i, n := range p {
		out[i] = int32(n.ID())
	}
	return out
}

func sortedStrings(ps [][]int32) []string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprint(p))
	}
	sort.Strings(s)
	return s
}

// checkAgainstGonum compares, for the given pairs, the route set of r with gonum's, and checks
// that Route with many source ports produces every route and nothing else.
func checkAgainstGonum(t *testing.T, name string, tp *topo.Topology, pairs [][2]int32, sports int) {
	t.Helper()
	r := mustRouter(t, tp)
	g := r.Graph()
	for _, pr := range pairs {
		src, dst := pr[0], pr[1]
		want := gonumRoutes(tp, src, dst)
		paths, complete, err := r.AllPaths(src, dst, 1<<20)
		if len(want) == 0 {
			if err == nil {
				t.Fatalf("%s: %d→%d: routes %v, gonum finds none", name, src, dst, paths)
			}
			continue
		}
		if err != nil || !complete {
			t.Fatalf("%s: %d→%d: %v (complete %v); gonum: %v", name, src, dst, err, complete, want)
		}
		var got [][]int32
		for _, p := range paths {
			got = append(got, nodes(g, p))
		}
		gs, ws := sortedStrings(got), sortedStrings(want)
		if fmt.Sprint(gs) != fmt.Sprint(ws) {
			t.Fatalf("%s: %d→%d: routes\n%v\ngonum\n%v", name, src, dst, gs, ws)
		}
		if n, _ := r.CountPaths(src, dst); n != int64(len(want)) {
			t.Fatalf("%s: %d→%d: CountPaths %d, want %d", name, src, dst, n, len(want))
		}
		if one, err := r.SinglePath(src, dst); one != (len(want) == 1) || err != nil {
			t.Fatalf("%s: %d→%d: SinglePath %v (%v), gonum finds %d routes", name, src, dst, one, err, len(want))
		}
		if sports == 0 || len(want) > 32 {
			continue
		}
		seen := map[string]bool{}
		var buf []int32
		for sp := 0; sp < sports; sp++ {
			buf, err = r.Route(buf, src, dst, uint16(sp), DefaultDport)
			if err != nil {
				t.Fatal(err)
			}
			seen[fmt.Sprint(nodes(g, buf))] = true
		}
		var seenList []string
		for s := range seen {
			seenList = append(seenList, s)
		}
		sort.Strings(seenList)
		if fmt.Sprint(seenList) != fmt.Sprint(ws) {
			t.Fatalf("%s: %d→%d: %d source ports produced\n%v\nroutes\n%v", name, src, dst, sports, seenList, ws)
		}
	}
}

func TestRoutesAgainstGonumRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		tp := randomTopo(rng)
		var pairs [][2]int32
		for s := int32(0); int(s) < tp.NumGPUs(); s++ {
			for d := int32(0); int(d) < tp.NumGPUs(); d++ {
				if s != d {
					pairs = append(pairs, [2]int32{s, d})
				}
			}
		}
		checkAgainstGonum(t, fmt.Sprintf("random %d", i), tp, pairs, 800)
	}
}

func TestRoutesAgainstGonumFabrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tops []*topo.Topology
	var names []string
	for _, f := range testdataFiles(t) {
		tops = append(tops, loadTopo(t, f))
		names = append(names, f)
	}
	p := topo.SpectrumXDefaults(256)
	p.PSWs, p.NICsPerASW = 4, 8 // 4 segments of 64 GPUs
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	tops = append(tops, tp)
	names = append(names, "Spectrum-X 256 GPUs, 4 segments")
	for k, tp := range tops {
		var pairs [][2]int32
		for i := 0; i < 60; i++ {
			s, d := int32(rng.IntN(tp.NumGPUs())), int32(rng.IntN(tp.NumGPUs()))
			if s != d {
				pairs = append(pairs, [2]int32{s, d})
			}
		}
		checkAgainstGonum(t, names[k], tp, pairs, 1500)
	}
}

func TestNextHopsAgainstSimAIReference(t *testing.T) {
	// Every next-hop list of SimAI's tables (as re-implemented in simairef_test.go) has the
	// same members as NextHops; on the generated fabrics, also the same order (SimAI's order
	// assuming node objects at ascending addresses).
	check := func(t *testing.T, name string, tp *topo.Topology, order bool) {
		r := mustRouter(t, tp)
		g := r.Graph()
		ref := newSimAIRef(tp, 9000)
		entries := 0
		for k, want := range ref.nextHop {
			x, h := k[0], k[1]
			if x == h {
				continue
			}
			ls, err := r.NextHops(nil, x, h)
			if err != nil {
				t.Fatalf("%s: NextHops(%d,%d): %v", name, x, h, err)
			}
			var got []int32
			for _, l := range ls {
				got = append(got, g.To(l))
			}
			if order {
				if !equalInt32s(got, want) {
					t.Fatalf("%s: next hops of %d toward %d: %v, SimAI %v", name, x, h, got, want)
				}
			} else if fmt.Sprint(sortedInt32s(got)) != fmt.Sprint(sortedInt32s(want)) {
				t.Fatalf("%s: next hops of %d toward %d: %v, SimAI %v", name, x, h, got, want)
			}
			entries++
		}
		// And no node has a route SimAI lacks.
		for x := int32(0); int(x) < tp.NumNodes(); x++ {
			if tp.Kinds[x] == topo.Switch && g.Degree(x) == 0 {
				continue
			}
			for _, h := range ref.hosts {
				if x == h {
					continue
				}
				if _, ok := ref.nextHop[[2]int32{x, h}]; ok {
					continue
				}
				if ls, err := r.NextHops(nil, x, h); err == nil && len(ls) > 0 {
					t.Fatalf("%s: %d has next hops %v toward %d, SimAI none", name, x, ls, h)
				}
			}
		}
		if entries == 0 && order {
			t.Fatalf("%s: no entries", name)
		}
	}
	for _, f := range testdataFiles(t) {
		check(t, f, loadTopo(t, f), true)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for i := 0; i < 200; i++ {
		check(t, fmt.Sprintf("random %d", i), randomTopo(rng), false)
	}
}

func sortedInt32s(a []int32) []int32 {
	b := append([]int32(nil), a...)
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return b
}
