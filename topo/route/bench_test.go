package route

import (
	"math/rand/v2"
	"sync"
	"testing"

	"simd/topo"
)

// The figures in the package documentation come from
//
//	go test -run '^$' -bench . -benchmem ./topo/route

var (
	bigOnce sync.Once
	bigTopo *topo.Topology
	bigErr  error
)

// spectrumX16384 is the 16,384-GPU Spectrum-X fabric: the template's pods of 4,096 GPUs (8
// segments of 512), 4 of them under a core layer.
func spectrumX16384(b *testing.B) *topo.Topology {
	bigOnce.Do(func() {
		p := topo.SpectrumXDefaults(16384)
		p.Pods = topo.AutoPods
		bigTopo, bigErr = p.Build()
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigTopo
}

// BenchmarkBuild16384 builds the graph and the router.
func BenchmarkBuild16384(b *testing.B) {
	tp := spectrumX16384(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(tp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildWarm16384 builds the graph and the router and computes every distance table.
func BenchmarkBuildWarm16384(b *testing.B) {
	tp := spectrumX16384(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := New(tp)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Warm(); err != nil {
			b.Fatal(err)
		}
	}
}

type flow struct {
	src, dst int32
	sport    uint16
}

func randomFlows(n, gpus int) []flow {
	rng := rand.New(rand.NewPCG(42, 43))
	fs := make([]flow, n)
	for i := range fs {
		s, d := rng.IntN(gpus), rng.IntN(gpus-1)
		if d >= s {
			d++
		}
		fs[i] = flow{int32(s), int32(d), uint16(rng.Uint32())}
	}
	return fs
}

// warmRouter16384 is the 16,384-GPU fabric and a router over it with every distance table built.
func warmRouter16384(b *testing.B) (*topo.Topology, *Router) {
	tp := spectrumX16384(b)
	r, err := New(tp)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Warm(); err != nil {
		b.Fatal(err)
	}
	return tp, r
}

// BenchmarkRoute16384 routes random flows (a cycle of 1M) on a warm router: ns/op is per flow.
func BenchmarkRoute16384(b *testing.B) {
	tp, r := warmRouter16384(b)
	var err error
	flows := randomFlows(1<<20, tp.NumGPUs())
	buf := make([]int32, 0, 16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := flows[i&(1<<20-1)]
		i++
		if buf, err = r.Route(buf, f.src, f.dst, f.sport, DefaultDport); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoute1M16384 builds a router and routes 1M random flows with it, cold: the distance
// tables are computed as the flows need them. ns/op is for the whole million.
func BenchmarkRoute1M16384(b *testing.B) {
	tp := spectrumX16384(b)
	flows := randomFlows(1_000_000, tp.NumGPUs())
	buf := make([]int32, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		r, err := New(tp)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range flows {
			if buf, err = r.Route(buf, f.src, f.dst, f.sport, DefaultDport); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRouteSameFlow routes one cross-pod flow again and again: no allocation.
func BenchmarkRouteSameFlow(b *testing.B) {
	tp := spectrumX16384(b)
	r, err := New(tp)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]int32, 0, 16)
	if buf, err = r.Route(buf, 1, 16000, DefaultSport, DefaultDport); err != nil || len(buf) != 6 {
		b.Fatal(err, len(buf))
	}
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = r.Route(buf, 1, 16000, DefaultSport, DefaultDport)
	}
}

// BenchmarkMaxRTTBDP16384 computes SimAI's maxRtt and maxBdp of the fabric.
func BenchmarkMaxRTTBDP16384(b *testing.B) {
	tp := spectrumX16384(b)
	r, err := New(tp)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.MaxRTTBDP(9000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaxRTTBDP256 computes SimAI's maxRtt and maxBdp of the 256-GPU AlibabaHPN fabric
// (the template's defaults): as MaxRTTBDP does it, and pair by pair wherever a component of
// the switch graph has at most 256 GPUs, as it did before NVLink domains alone counted as
// small (here the fabric's whole switch component).
func BenchmarkMaxRTTBDP256(b *testing.B) {
	tp, err := topo.RailOptimizedDualToRSinglePlane(topo.AlibabaHPNDefaults(256, false)).Build()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		nvOnly bool
	}{{"nvlink-small", true}, {"pair-by-pair", false}} {
		b.Run(c.name, func(b *testing.B) {
			r, err := New(tp)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.maxRTTBDP(9000, smallComp, c.nvOnly); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBisection16384 computes the bisection bandwidth of the fabric.
func BenchmarkBisection16384(b *testing.B) {
	g, err := NewGraph(spectrumX16384(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Bisection(); err != nil {
			b.Fatal(err)
		}
	}
}

// flowAckPairs is the simulator's mix of pairs on the 16,384-GPU fabric, shuffled: every GPU
// with its data-parallel ring neighbour (the same rank of the next server), a GPU of another
// segment, of another pod (same rail and another rail) and of its own server.
func flowAckPairs(gpus int) []flow {
	var fs []flow
	for i := 0; i < gpus; i++ {
		for j, off := range []int{8, 520, 4096 + 8, 2*4096 + 3*512 + 8 + 3, 1} {
			d := (i + off) % gpus
			if off == 1 {
				d = i ^ 1
			}
			fs = append(fs, flow{int32(i), int32(d), DefaultSport + uint16(i%7+j)})
		}
	}
	rng := rand.New(rand.NewPCG(44, 45))
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	return fs
}

// BenchmarkRouteFlowAck16384 routes, as the simulator does, a flow and then its ACK (the
// reverse route, ports swapped), so that consecutive routes alternate destinations, for many
// pairs on a warm router: ns/op is per flow and ACK.
func BenchmarkRouteFlowAck16384(b *testing.B) {
	tp, r := warmRouter16384(b)
	var err error
	flows := flowAckPairs(tp.NumGPUs())
	buf := make([]int32, 0, 16)
	ack := make([]int32, 0, 16)
	for _, f := range flows {
		if buf, err = r.Route(buf, f.src, f.dst, f.sport, DefaultDport); err != nil {
			b.Fatal(err)
		}
		if ack, err = r.Route(ack, f.dst, f.src, DefaultDport, f.sport); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := flows[i%len(flows)]
		i++
		if buf, err = r.Route(buf, f.src, f.dst, f.sport, DefaultDport); err != nil {
			b.Fatal(err)
		}
		if ack, err = r.Route(ack, f.dst, f.src, DefaultDport, f.sport); err != nil {
			b.Fatal(err)
		}
	}
}
