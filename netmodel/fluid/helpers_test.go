package fluid

import (
	"fmt"
	"math"
	"testing"

	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// Rates used in the tests, bits/s.
const (
	G100 = 100e9
	G200 = 200e9
	G400 = 400e9
)

// graphOf builds a route.Graph of nodes GPU nodes joined by links; every link gets delay 0.
// Directed link 2i goes from links[i][0] to links[i][1].
func graphOf(t testing.TB, nodes int, links [][2]int32, rates []float64) *route.Graph {
	t.Helper()
	tp := &topo.Topology{GPUsPerServer: 1, GPUType: "H100", Kinds: make([]topo.NodeKind, nodes)}
	for i, l := range links {
		tp.Links = append(tp.Links, topo.Link{Src: l[0], Dst: l[1], Rate: rates[i]})
	}
	g, err := route.NewGraph(tp)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// lineGraph is a chain of len(rates)+1 nodes; directed link 2i goes from node i to node i+1
// at rates[i].
func lineGraph(t testing.TB, rates ...float64) *route.Graph {
	links := make([][2]int32, len(rates))
	for i := range links {
		links[i] = [2]int32{int32(i), int32(i + 1)}
	}
	return graphOf(t, len(rates)+1, links, rates)
}

// record is one observer callback.
type record struct {
	kind string // "sent" or "arrived"
	f    FlowID
	at   engine.Time
}

// recorder logs the callbacks and remembers each tag's sent and arrival times.
type recorder struct {
	n       *Network
	log     []record
	sentAt  map[int64]engine.Time
	arrived map[int64]engine.Time
	onArr   func(f FlowID, now engine.Time) // optional, after recording
}

func newRecorder() *recorder {
	return &recorder{sentAt: map[int64]engine.Time{}, arrived: map[int64]engine.Time{}}
}

func (r *recorder) FlowSent(f FlowID, now engine.Time) {
	r.log = append(r.log, record{"sent", f, now})
	r.sentAt[r.n.Tag(f)] = now
}

func (r *recorder) FlowArrived(f FlowID, now engine.Time) {
	r.log = append(r.log, record{"arrived", f, now})
	r.arrived[r.n.Tag(f)] = now
	if r.onArr != nil {
		r.onArr(f, now)
	}
}

// setup returns a scheduler, a network over g and its recorder.
func setup(g *route.Graph) (*engine.Scheduler, *Network, *recorder) {
	s := engine.NewScheduler()
	rec := newRecorder()
	n := New(s, g, rec)
	rec.n = n
	return s, n, rec
}

// psFor is the exact time in picoseconds to send bytes at rate bits/s, as a float (not rounded).
func psFor(bytes int64, rate float64) float64 { return float64(bytes) * 8 * 1e12 / rate }

// roundedUp checks that got is want rounded up to a picosecond, allowing one more picosecond
// for the rounding of the float computations that lead to it.
func roundedUp(got engine.Time, want float64) error {
	lo := engine.Time(math.Ceil(want - 1e-6))
	if got < lo || got > lo+1 {
		return fmt.Errorf("got %d ps, want %.3f ps rounded up (%d)", got, want, lo)
	}
	return nil
}

// relEq reports whether a and b agree within a relative tolerance tol.
func relEq(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}
