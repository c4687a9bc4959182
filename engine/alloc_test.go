package engine

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

// chain is a handler that keeps the queue at a constant size: every event schedules its
// successor a little later, with a spread of delays so the heap really reorders.
type chain struct{ id HandlerID }

func (c *chain) HandleEvent(s *Scheduler, ev Event) {
	s.After(Time(1+ev.Arg%13), c.id, ev.Target, (ev.Arg*7+3)%1000003)
}

// hintedChain is chain with a Prefetcher: it asks for the cache line its next event's target
// indexes.
type hintedChain struct {
	chain
	table [1024]int64
}

func (c *hintedChain) Prefetch(target int32, arg int64) {
	Prefetch(unsafe.Pointer(&c.table[uint32(target)%1024]))
}

// TestSteadyStateAllocs checks that once the tables have grown, scheduling and dispatching
// allocate nothing per event. AllocsPerRun counts allocations; nothing is timed.
func TestSteadyStateAllocs(t *testing.T) {
	cases := []struct {
		name string
		// setup fills s and returns one step of steady-state work plus the events it processes.
		setup func(s *Scheduler) func() uint64
	}{
		{
			name: "At/After dispatch",
			setup: func(s *Scheduler) func() uint64 {
				c := &chain{}
				c.id = s.Register(c)
				for i := range 1000 {
					s.At(Time(i%17), c.id, int32(i), int64(i))
				}
				return func() uint64 { return s.RunUntil(s.Now() + 20) }
			},
		},
		{
			name: "AfterFixed dispatch",
			setup: func(s *Scheduler) func() uint64 {
				h := &fourDelays{left: -1, fixed: true}
				h.id = s.Register(h)
				for i := range 1000 {
					s.At(Time(i%17), h.id, int32(i), int64(i))
				}
				return func() uint64 { return s.RunUntil(s.Now() + 2*Microsecond) }
			},
		},
		{
			name: "AfterFunc dispatch with a reused func",
			setup: func(s *Scheduler) func() uint64 {
				var f func()
				k := 0
				f = func() {
					k++
					s.AfterFunc(Time(1+k%11), f)
				}
				for range 500 {
					s.AfterFunc(0, f)
				}
				return func() uint64 { return s.RunUntil(s.Now() + 20) }
			},
		},
		{
			name: "At/After dispatch, looking ahead",
			setup: func(s *Scheduler) func() uint64 {
				c := &hintedChain{}
				c.id = s.Register(c)
				s.LookAhead(true)
				for i := range 1000 {
					s.At(Time(i%17), c.id, int32(i), int64(i))
				}
				return func() uint64 { return s.RunUntil(s.Now() + 20) }
			},
		},
		{
			name: "Cancel, Reschedule and At",
			setup: func(s *Scheduler) func() uint64 {
				c := &chain{}
				c.id = s.Register(c)
				timers := make([]Timer, 1000)
				for i := range timers {
					timers[i] = s.At(Time(i), c.id, int32(i), 0)
				}
				k := 0
				return func() uint64 {
					for range 100 {
						k++
						i, j := (k*31)%len(timers), (k*17+5)%len(timers)
						s.Reschedule(timers[i], s.Now()+Time(k%97))
						s.Cancel(timers[j])
						timers[j] = s.After(Time(k%89), c.id, int32(j), 0)
					}
					return s.RunUntil(s.Now() + 3)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler()
			step := tc.setup(s)
			var events uint64
			for range 10 { // warm-up: let every slice reach its steady size
				events += step()
			}
			if events == 0 {
				t.Fatal("warm-up processed no events")
			}
			start := s.Processed()
			allocs := testing.AllocsPerRun(20, func() { step() })
			if s.Processed() == start {
				t.Fatal("measured runs processed no events")
			}
			if allocs != 0 {
				t.Fatalf("%v allocations per step in steady state, want 0", allocs)
			}
		})
	}
}

// TestNoWallClockOrGlobalRand keeps the package deterministic: non-test code may not import
// time or any random source, and test code may only use math/rand/v2 through explicitly seeded
// generators (rand.New with rand.NewPCG), never the global functions.
func TestNoWallClockOrGlobalRand(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing sources: %v %v", files, err)
	}
	seededOnly := map[string]bool{"New": true, "NewPCG": true, "Rand": true, "PCG": true}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		isTest := strings.HasSuffix(name, "_test.go")
		randName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "time", "math/rand", "crypto/rand":
				t.Errorf("%s imports %s", name, path)
			case "math/rand/v2":
				if !isTest {
					t.Errorf("%s imports %s", name, path)
				}
				randName = "rand"
				if imp.Name != nil {
					randName = imp.Name.Name
				}
			}
		}
		if randName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == randName && !seededOnly[sel.Sel.Name] {
				t.Errorf("%s: global %s.%s", fset.Position(sel.Pos()), randName, sel.Sel.Name)
			}
			return true
		})
	}
}
