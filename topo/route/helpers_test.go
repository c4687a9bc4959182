package route

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"simd/engine"
	"simd/topo"
)

// testdataFiles lists the topology files of topo/testdata.
func testdataFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatal("no files in ../testdata")
	}
	return out
}

func loadTopo(t testing.TB, path string) *topo.Topology {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp, err := topo.Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func testdata(t testing.TB, name string) *topo.Topology {
	t.Helper()
	return loadTopo(t, filepath.Join("..", "testdata", name))
}

func mustRouter(t testing.TB, tp *topo.Topology) *Router {
	t.Helper()
	r, err := New(tp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lk is a link of a hand-drawn topology: rate in Gbps, delay in ns.
type lk struct {
	a, b  int32
	gbps  float64
	delay int64
}

// handTopo builds a topology from a kind string (G GPU, N NVSwitch, S switch, one letter per
// node id) and links.
func handTopo(t testing.TB, gps int, kinds string, links []lk) *topo.Topology {
	t.Helper()
	tp := &topo.Topology{GPUsPerServer: gps, GPUType: "H100"}
	for i, c := range kinds {
		switch c {
		case 'G':
			tp.Kinds = append(tp.Kinds, topo.GPU)
		case 'N':
			tp.Kinds = append(tp.Kinds, topo.NVSwitch)
			tp.NVSwitches = append(tp.NVSwitches, int32(i))
		case 'S':
			tp.Kinds = append(tp.Kinds, topo.Switch)
			tp.Switches = append(tp.Switches, int32(i))
		default:
			t.Fatalf("bad kind %q", c)
		}
	}
	for _, l := range links {
		tp.Links = append(tp.Links, topo.Link{Src: l.a, Dst: l.b, Rate: l.gbps * 1e9, Delay: engine.Time(l.delay) * engine.Nanosecond})
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// nodes returns the nodes a path visits, starting with its source.
func nodes(g *Graph, path []int32) []int32 {
	if len(path) == 0 {
		return nil
	}
	out := []int32{g.From(path[0])}
	for _, l := range path {
		out = append(out, g.To(l))
	}
	return out
}

func equalInt32s(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
