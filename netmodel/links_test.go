package netmodel

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
	"simd/topo"
	"simd/topo/route"
)

// starFabric is GPUs 0..len(rates)-1, one per server, on one switch (the ASW, node len(rates)),
// GPU i's link at rates[i] with a 1 µs delay.
func starFabric(t testing.TB, rates ...float64) *Fabric {
	t.Helper()
	n := len(rates)
	tp := &topo.Topology{GPUsPerServer: 1, GPUType: "H100", Kinds: make([]topo.NodeKind, n+1), Switches: []int32{int32(n)}}
	tp.Kinds[n] = topo.Switch
	for i, r := range rates {
		tp.Links = append(tp.Links, topo.Link{Src: int32(i), Dst: int32(n), Rate: r, Delay: engine.Microsecond})
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

// Closed forms on a star with the ideal model: every link of a flow's path carries its bytes,
// at the flow's max-min rate over that link's capacity in every bin the flow fills, and is busy
// exactly while the flow is sent.
func TestLinkSamplerClosedForm(t *testing.T) {
	const us = engine.Microsecond
	const S = 1_250_000 // 100 µs at 100 Gb/s
	type want struct {
		link  int32
		bytes float64
		busy  engine.Time
		util  float64 // in every full bin the flows fill
		class route.LinkClass
		name  string
	}
	tests := []struct {
		name  string
		rates []float64
		flows []RawFlow
		want  []want
	}{
		{"one flow, NIC twice as fast as the bottleneck", []float64{200e9, 100e9},
			[]RawFlow{{Src: 0, Dst: 1, Bytes: S}},
			[]want{
				{0, S, 100 * us, 0.5, route.ClassNICToASW, "server 0 GPU 0 NIC → ASW 0"},
				{3, S, 100 * us, 1, route.ClassASWToNIC, "ASW 0 → server 1 GPU 1 NIC"},
			}},
		{"two flows into one NIC", []float64{100e9, 100e9, 100e9},
			[]RawFlow{{Src: 0, Dst: 2, Bytes: S / 2}, {Src: 1, Dst: 2, Bytes: S / 2, Sport: 1}},
			[]want{
				{0, S / 2, 100 * us, 0.5, route.ClassNICToASW, "server 0 GPU 0 NIC → ASW 0"},
				{2, S / 2, 100 * us, 0.5, route.ClassNICToASW, "server 1 GPU 1 NIC → ASW 0"},
				{5, S, 100 * us, 1, route.ClassASWToNIC, "ASW 0 → server 2 GPU 2 NIC"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fab := starFabric(t, tc.rates...)
			s := engine.NewScheduler()
			sim := NewSimulator(s, fab, Options{})
			ls, err := sim.SampleLinks(LinkSamplerOptions{Width: 4 * us, MaxBins: 8})
			if err != nil {
				t.Fatal(err)
			}
			sim.StartRaw(tc.flows)
			s.Run()
			ls.Finish()
			width, n := ls.Bins()
			// 100 µs of flows in 4 µs bins, 8 at most: 8 bins of 4 µs merge at 32 µs into 4
			// of 8, which grow to 8 and merge at 64 µs into 4 of 16: 7 bins of 16 µs at
			// 100 µs, the last cut there.
			if width != 16*us || n != 7 || ls.End() != 100*us {
				t.Fatalf("bins of %v, %d of them, end %v; want 16µs, 7, 100µs", width, n, ls.End())
			}
			stats := ls.Stats()
			if len(stats) != len(tc.want) {
				t.Fatalf("%d links with bytes, want %d: %+v", len(stats), len(tc.want), stats)
			}
			for i, w := range tc.want {
				st := stats[i]
				if st.Link != w.link || st.Class != w.class || st.Name != w.name || math.Abs(st.Bytes-w.bytes) > 1e-6 || st.Busy != w.busy {
					t.Errorf("link %+v, want %+v", st, w)
				}
				if math.Abs(st.PeakUtil-w.util) > 1e-9 || math.Abs(st.BusyUtil-w.util) > 1e-9 || math.Abs(st.MeanUtil-w.util) > 1e-9 {
					t.Errorf("link %d: utilisation peak %v, busy %v, mean %v; want %v", st.Link, st.PeakUtil, st.BusyUtil, st.MeanUtil, w.util)
				}
				for b, x := range ls.BinBytes(w.link) {
					a, e := ls.binSpan(b)
					if u := util(float64(x), fab.Graph.Rate(w.link), e-a); math.Abs(u-w.util) > 1e-6 {
						t.Errorf("link %d bin %d: utilisation %v, want %v", w.link, b, u, w.util)
					}
				}
			}
		})
	}
}

// The class rows of two flows into one NIC: the NIC→ASW class (two links at 50%) and the
// ASW→NIC class (one at 100%), in every bin.
func TestLinkClassBins(t *testing.T) {
	fab := starFabric(t, 100e9, 100e9, 100e9)
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	ls, err := sim.SampleLinks(LinkSamplerOptions{Width: 25 * engine.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 2, Bytes: 625_000}, {Src: 1, Dst: 2, Bytes: 625_000, Sport: 1}})
	s.Run()
	ls.Finish()
	var buf bytes.Buffer
	if err := ls.WriteClassesCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := "start_us,end_us,class,links,mean_util_pct,p50_util_pct,p90_util_pct,max_util_pct\n"
	for _, a := range []string{"0.000,25.000", "25.000,50.000", "50.000,75.000", "75.000,100.000"} {
		want += a + ",nic-asw,2,50.000,50.000,50.000,50.000\n" + a + ",asw-nic,1,100.000,100.000,100.000,100.000\n"
	}
	if buf.String() != want {
		t.Errorf("link_classes.csv:\n%s\nwant\n%s", buf.String(), want)
	}
}

// Properties, in both models, of random flows on a 16-GPU Spectrum-X fabric with random bins
// (seeded cases): the sampler leaves every flow's times and the number of events as they are;
// the bins of a link add up to what the network says it sent, none above its capacity; there
// are at most MaxBins of them and they cover the run.
func TestLinkSamplerProperties(t *testing.T) {
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cc := int(seed % 2)
		flows := make([]RawFlow, 1+rng.IntN(12))
		for i := range flows {
			src := rng.Int32N(16)
			dst := rng.Int32N(15)
			if dst >= src {
				dst++
			}
			flows[i] = RawFlow{Src: src, Dst: dst, Sport: uint16(i), Bytes: 1 + rng.Int64N(4<<20),
				Start: engine.Time(rng.IntN(200)) * engine.Microsecond}
		}
		opt := LinkSamplerOptions{Width: engine.Time(1+rng.IntN(5000)) * engine.Nanosecond, MaxBins: 2 * (1 + rng.IntN(8))}
		run := func(sample bool) ([]FlowRecord, uint64, *LinkSampler, *Simulator) {
			s, sim := shippedSimulator(t, cc, fluid.Transport{})
			var recs []FlowRecord
			sim.Observe(recorder{&recs})
			var ls *LinkSampler
			if sample {
				var err error
				if ls, err = sim.SampleLinks(opt); err != nil {
					t.Fatal(err)
				}
			}
			sim.StartRaw(flows)
			s.Run()
			if ls != nil {
				ls.Finish()
			}
			return recs, s.Processed(), ls, sim
		}
		plain, events, _, _ := run(false)
		got, events2, ls, sim := run(true)
		if events != events2 || !slices.EqualFunc(plain, got, func(a, b FlowRecord) bool {
			return a.Start == b.Start && a.Sent == b.Sent && a.Arrived == b.Arrived && a.Flow == b.Flow && slices.Equal(a.Path, b.Path)
		}) {
			t.Fatalf("seed %d: the sampler changed the run: %d events, %d with it", seed, events, events2)
		}
		width, n := ls.Bins()
		if n > opt.MaxBins || engine.Time(n)*width < ls.End() || n > 0 && engine.Time(n-1)*width >= ls.End() {
			t.Fatalf("seed %d: %d bins of %v for a run ending at %v (at most %d)", seed, n, width, ls.End(), opt.MaxBins)
		}
		for l := range int32(sim.Fabric().Graph.NumDirLinks()) {
			var want float64
			if sim.Network() != nil {
				want = sim.Network().LinkBytes(l)
			} else {
				want = sim.CCNetwork().LinkBytes(l)
			}
			sum := 0.0
			for i, b := range ls.BinBytes(l) {
				sum += float64(b)
				a, e := ls.binSpan(i)
				if u := util(float64(b), sim.Fabric().Graph.Rate(l), e-a); u > 1+1e-6 {
					t.Fatalf("seed %d, link %d: %v of its capacity in bin %d", seed, l, u, i)
				}
			}
			if math.Abs(ls.Bytes(l)-want) > 1e-6*want+1e-3 || math.Abs(sum-want) > 1e-6*want+1e-3 {
				t.Fatalf("seed %d, link %d: %v bytes in the sampler, %v in its bins, %v in the network", seed, l, ls.Bytes(l), sum, want)
			}
		}
	}
}

// A flow that starts and ends between two bin boundaries at which the network is idle is
// counted in its own bin, not in the bin of the next flow.
func TestLinkSamplerShortFlowBetweenIdleBoundaries(t *testing.T) {
	const us = engine.Microsecond
	fab := starFabric(t, 100e9, 100e9)
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	ls, err := sim.SampleLinks(LinkSamplerOptions{Width: 10 * us})
	if err != nil {
		t.Fatal(err)
	}
	// 50 kB at 100 Gb/s is 4 µs: the flows are sent in [12, 16] and [35, 39] µs.
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 1, Bytes: 50_000, Start: 12 * us}, {Src: 0, Dst: 1, Bytes: 50_000, Start: 35 * us, Sport: 1}})
	s.Run()
	ls.Finish()
	got := ls.BinBytes(0)
	want := []float32{0, 50_000, 0, 50_000}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("bins %v, want %v first", got, want)
	}
	// The run ends when the second flow is sent (its arrival is reported then): the last bin
	// is [30, 39] µs.
	if ls.End() != 39*us || ls.Busy(0) != 19*us {
		t.Errorf("busy %v up to %v, want a bin of 10 µs and one of 9 µs, to 39 µs", ls.Busy(0), ls.End())
	}
}
