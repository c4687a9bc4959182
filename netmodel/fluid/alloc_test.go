package fluid

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestSteadyStateAllocs: once the tables have grown, starting, re-rating, sending and
// delivering flows allocates nothing. AllocsPerRun counts allocations; nothing is timed.
func TestSteadyStateAllocs(t *testing.T) {
	cases := []struct {
		name                  string
		gpus, gps, ch, stride int
		opt                   Options
	}{
		{"ring", 64, 8, 8, 1, Options{}},
		{"cross-segment", 128, 8, 4, 64, Options{}},
		{"ring, bottleneck tracking", 64, 8, 8, 1, Options{TrackBottlenecks: true}},
		{"ring, bundles", 64, 8, 8, 1, Options{Bundles: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRing(t, c.gpus, c.gps, c.ch, c.stride, 64*KB, c.opt)
			r.run(20 * c.gpus * c.ch)
			sent := r.n.Stats().Sent
			allocs := testing.AllocsPerRun(20, func() { r.run(500) })
			if allocs != 0 {
				t.Errorf("%v allocations per 500 flows in steady state, want 0", allocs)
			}
			// (Counted in flows: a bundle sends its members that finish together at one event.)
			if r.n.Stats().Sent-sent < 20*500 {
				t.Errorf("only %d flows sent in the measured runs", r.n.Stats().Sent-sent)
			}
		})
	}
}

// TestNoWallClockOrGlobalRand keeps the package deterministic: non-test code imports no clock
// and no random source, and tests use math/rand/v2 only through seeded generators.
func TestNoWallClockOrGlobalRand(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing sources: %v %v", files, err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		test := strings.HasSuffix(name, "_test.go")
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case path == "time" || path == "math/rand" || path == "crypto/rand":
				t.Errorf("%s imports %s", name, path)
			case path == "math/rand/v2" && !test:
				t.Errorf("%s imports %s", name, path)
			case path == "math/rand/v2":
				ast.Inspect(f, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "rand" {
							switch sel.Sel.Name {
							case "New", "NewPCG", "Rand":
							default:
								t.Errorf("%s: rand.%s (use a seeded generator)", fset.Position(sel.Pos()), sel.Sel.Name)
							}
						}
					}
					return true
				})
			}
		}
	}
}

// TestRecordSizes keeps the records the hot path reads as small as the layout promises.
func TestRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name     string
		got, max uintptr
	}{
		{"linkState", unsafe.Sizeof(linkState{}), 64},
		{"flowHot", unsafe.Sizeof(flowHot{}), 32},
		{"flow", unsafe.Sizeof(flow{}), 64},
	} {
		if c.got > c.max {
			t.Errorf("%s is %d bytes, more than %d", c.name, c.got, c.max)
		}
	}
}
