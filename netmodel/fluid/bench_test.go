package fluid

import (
	"sync"
	"testing"

	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// The figures in the package documentation come from
//
//	go test -run '^$' -bench . -benchmem -count 6 ./netmodel/fluid

// ring drives ring-like traffic: stream k (GPU k/channels, channel k%channels) sends flows of
// one size to GPU (k/channels + stride) mod gpus over the path route.Router gives its port,
// one after another: each flow is started the moment its predecessor arrives. It stops the
// scheduler after a given number of arrivals.
type ring struct {
	s       *engine.Scheduler
	n       *Network
	paths   []int32 // all the streams' paths, back to back
	off     []int32 // stream k's path is paths[off[k]:off[k+1]]
	delay   []engine.Time
	size    int64
	arrived int
	stopAt  int
}

func (r *ring) start(k int) {
	r.n.Start(r.paths[r.off[k]:r.off[k+1]], r.size, r.delay[k], int64(k))
}

func (r *ring) FlowSent(FlowID, engine.Time) {}

func (r *ring) FlowArrived(f FlowID, now engine.Time) {
	r.start(int(r.n.Tag(f)))
	r.arrived++
	if r.arrived == r.stopAt {
		r.s.Stop()
	}
}

// run processes events until k more flows have arrived.
func (r *ring) run(k int) {
	r.stopAt = r.arrived + k
	r.s.Run()
}

var (
	fabricMu    sync.Mutex
	fabricCache = map[[2]int]*route.Router{}
)

// fabricRouter is a router over topo.DefaultFabric(gpus, gps), built once per size.
func fabricRouter(tb testing.TB, gpus, gps int) *route.Router {
	fabricMu.Lock()
	defer fabricMu.Unlock()
	if r := fabricCache[[2]int{gpus, gps}]; r != nil {
		return r
	}
	tp, err := topo.DefaultFabric(gpus, gps)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := route.New(tp)
	if err != nil {
		tb.Fatal(err)
	}
	fabricCache[[2]int{gpus, gps}] = r
	return r
}

// newRing sets up the streams on DefaultFabric(gpus, gps) and starts their first flows.
func newRing(tb testing.TB, gpus, gps, channels, stride int, size int64, opt Options) *ring {
	rt := fabricRouter(tb, gpus, gps)
	g := rt.Graph()
	s := engine.NewScheduler()
	r := &ring{s: s, size: size, off: []int32{0}}
	r.n = NewWithOptions(s, g, r, opt)
	var buf []int32
	for k := range gpus * channels {
		src, ch := k/channels, k%channels
		dst := (src + stride) % gpus
		var err error
		buf, err = rt.Route(buf, int32(src), int32(dst), uint16(10000+ch), 100)
		if err != nil {
			tb.Fatal(err)
		}
		d := engine.Time(0)
		for _, l := range buf {
			d += g.Delay(l)
		}
		r.paths = append(r.paths, buf...)
		r.off = append(r.off, int32(len(r.paths)))
		r.delay = append(r.delay, d)
	}
	for k := range gpus * channels {
		r.start(k)
	}
	return r
}

// benchRing measures flow completions: one op is one flow arriving (and its successor
// starting).
func benchRing(b *testing.B, gpus, gps, channels, stride int, size int64, full bool) {
	r := newRing(b, gpus, gps, channels, stride, size, Options{})
	r.run(4 * gpus * channels) // warm up: grow every table
	r.n.fullSolve = full       // (the state is the same either way: both are exact)
	st0 := r.n.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	r.run(b.N)
	b.StopTimer()
	st := r.n.Stats()
	nf := float64(b.N)
	b.ReportMetric(nf/b.Elapsed().Seconds(), "flows/s")
	b.ReportMetric(float64(st.Recomputes-st0.Recomputes)/nf, "recomputes/flow")
	b.ReportMetric(float64(st.SolvedLinks-st0.SolvedLinks)/nf, "solvedlinks/flow")
	b.ReportMetric(float64(st.Rerated-st0.Rerated)/nf, "rerated/flow")
}

// BenchmarkRing1024 is the ring of the brief on the 1,024-GPU Spectrum-X fabric
// (topo.DefaultFabric(1024, 8)): each GPU sends to GPU+1 over 8 channels' paths, 8,192
// streams of 1 MB flows. Seven of the eight hops of a server are NVLink; the eighth crosses
// the fabric (NIC, ASW, PSW, ASW, NIC).
func BenchmarkRing1024(b *testing.B) { benchRing(b, 1024, 8, 8, 1, 1*MB, false) }

// BenchmarkRailRing1024: each GPU sends to the same local rank of the next server (GPU+8), so
// every flow crosses the fabric and shares NICs, ASW uplinks and PSW downlinks.
func BenchmarkRailRing1024(b *testing.B) { benchRing(b, 1024, 8, 8, 8, 1*MB, false) }

// BenchmarkCrossSegment1024: each GPU sends to GPU+512, in the other segment of the fabric,
// through the PSWs: the largest connected components.
func BenchmarkCrossSegment1024(b *testing.B) { benchRing(b, 1024, 8, 8, 512, 1*MB, false) }

// BenchmarkRing1024Full is BenchmarkRing1024 with every recompute solving every transmitting
// flow, the baseline the incremental region is measured against (the same solver and checks;
// the region is simply everything).
func BenchmarkRing1024Full(b *testing.B) { benchRing(b, 1024, 8, 8, 1, 1*MB, true) }

// BenchmarkCrossSegment1024Full is BenchmarkCrossSegment1024 solving everything every time.
func BenchmarkCrossSegment1024Full(b *testing.B) { benchRing(b, 1024, 8, 8, 512, 1*MB, true) }
