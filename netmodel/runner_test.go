package netmodel

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/topo"
)

// runDAG runs one DAG alone on a fabric and returns when it finished and the flow records.
func runDAG(t *testing.T, tp *topo.Topology, d ccl.DAG, lat Latency) (engine.Time, []FlowRecord) {
	t.Helper()
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	return runDAGOn(t, fab, d, lat)
}

// runDAGOn is runDAG on a fabric already built.
func runDAGOn(t *testing.T, fab *Fabric, d ccl.DAG, lat Latency) (engine.Time, []FlowRecord) {
	t.Helper()
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	var end engine.Time = -1
	sim.Run(d, lat, func() { end = s.Now() })
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if end < 0 {
		t.Fatal("the run never finished")
	}
	return end, recs
}

type recorder struct{ recs *[]FlowRecord }

func (r recorder) FlowDone(f *FlowRecord) {
	c := *f
	c.Path = append([]int32(nil), f.Path...)
	*r.recs = append(*r.recs, c)
}

func ranks(n int) []int32 {
	r := make([]int32, n)
	for i := range r {
		r[i] = int32(i)
	}
	return r
}

func near(got, want engine.Time, tol engine.Time) bool {
	d := got - want
	return d <= tol && d >= -tol
}

// A ring all-reduce of S bytes over 8 GPUs behind one NVSwitch (2880 Gbps ports, 25 ns links)
// takes 2(n−1)/n·S/B plus, per step, the send's hand-over (IssueGap), the send latency and the
// two NVLink hops' delay: every step each GPU sends S/n over its port (8 channels of S/(n·8)
// each).
func TestRingAllReduceOneServer(t *testing.T) {
	tp, err := topo.DefaultFabric(8, 8)
	if err != nil {
		t.Fatal(err)
	}
	const S = 64 << 20
	for _, lat := range []engine.Time{0, 6 * engine.Microsecond} {
		d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(8), GPUsPerServer: 8, TotalGPUs: 8, Bytes: S}, nccl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		end, recs := runDAG(t, tp, d, Latency{Intra: lat, Inter: lat})
		bw := 2880e9 / 8 // bytes/s
		ideal := 2 * 7.0 / 8 * S / bw
		want := engine.Time(ideal*1e12) + 14*(IssueGap+lat+50*engine.Nanosecond)
		// Completion times round up to the picosecond, once per step.
		if !near(end, want, 14) {
			t.Errorf("send latency %v: end %v, want %v", lat, end, want)
		}
		if len(recs) != 8*8*14 {
			t.Errorf("%d flows", len(recs))
		}
	}
}

// 8 → 1 incast over one switch: each of 8 equal flows gets an eighth of the receiver's link and
// all finish together at 8·S·8/B, plus the two hops' delay.
func TestIncast(t *testing.T) {
	tp := star(t, 9, "400Gbps", "0.0005ms")
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	const S = 1 << 20
	var raw []RawFlow
	for i := range 8 {
		raw = append(raw, RawFlow{Src: int32(i), Dst: 8, Bytes: S, DPort: DPort})
	}
	sim.StartRaw(raw)
	s.Run()
	want := engine.Time(math.Ceil(8*S*8/400e9*1e12)) + engine.Microsecond
	for _, r := range recs {
		if !near(r.Arrived, want, 2) {
			t.Errorf("flow %d→%d arrived at %v, want %v", r.Src, r.Dst, r.Arrived, want)
		}
	}
	if len(recs) != 8 {
		t.Fatalf("%d flows arrived", len(recs))
	}
}

// star is a topology of n one-GPU servers on one switch.
func star(t *testing.T, n int, rate, delay string) *topo.Topology {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%d 1 0 1 %d H100\n%d \n", n+1, n, n)
	for i := range n {
		fmt.Fprintf(&b, "%d %d %s %s 0\n", i, n, rate, delay)
	}
	tp, err := topo.Parse(strings.NewReader(b.String()), "star")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// Cross-rail traffic between rail-optimised servers climbs to the PSWs: on a 16-GPU Spectrum-X
// fabric with one PSW, GPU 0 → GPU 9 and GPU 8 → GPU 1 (rail 0 to rail 1, in opposite
// directions between the servers) share rail 0's ASW uplink and rail 1's ASW downlink, so each
// gets 200 of their 400 Gbps: S·8/200 Gbps plus four 500 ns hops. A rail-aligned pair (GPU 2 →
// GPU 10) meanwhile crosses only its ASW at the full 400 Gbps.
func TestCrossRailSharesUplinks(t *testing.T) {
	p := topo.SpectrumXDefaults(16)
	p.PSWs = 1
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	const S = 1 << 20
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 9, Bytes: S, DPort: DPort}, {Src: 8, Dst: 1, Bytes: S, DPort: DPort}, {Src: 2, Dst: 10, Bytes: S, DPort: DPort}})
	s.Run()
	cross := engine.Time(math.Ceil(S*8/200e9*1e12)) + 2*engine.Microsecond
	aligned := engine.Time(math.Ceil(S*8/400e9*1e12)) + engine.Microsecond
	if len(recs) != 3 {
		t.Fatalf("%d flows arrived", len(recs))
	}
	for _, r := range recs {
		want := cross
		if r.Src == 2 {
			want = aligned
		}
		if !near(r.Arrived, want, 2) {
			t.Errorf("flow %d→%d arrived at %v, want %v", r.Src, r.Dst, r.Arrived, want)
		}
	}
}

// A ring all-reduce across two rail-optimised servers is slower when the servers' ASWs share
// one PSW than when each ASW has 64 uplinks to spread its cross-rail flows over.
func TestCrossRailRingNeedsUplinks(t *testing.T) {
	var ends [2]engine.Time
	for i, psn := range []int{1, 64} {
		p := topo.SpectrumXDefaults(16)
		p.PSWs = psn
		tp, err := p.Build()
		if err != nil {
			t.Fatal(err)
		}
		d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 64 << 20}, nccl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ends[i], _ = runDAG(t, tp, d, Latency{})
	}
	// With 64 PSWs each cross-server hop can run at the NIC's 400 Gbps: 30 steps of 512 KiB
	// take at least 30 · 10.49 µs; with one PSW they cannot.
	if !(ends[0] > ends[1]) || ends[1] < 30*engine.Time(math.Ceil((64<<20)/128*8/400e9*1e12)) {
		t.Errorf("one PSW: %v, 64 PSWs: %v", ends[0], ends[1])
	}
}

// NVLS flows go to and from the server's NVSwitch node, and the run still completes.
func TestNVLSEndpoints(t *testing.T) {
	tp, err := topo.DefaultFabric(8, 8)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nccl.NVLS(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(8), GPUsPerServer: 8, TotalGPUs: 8, Bytes: 8 << 20}, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, recs := runDAG(t, tp, d, Latency{})
	sawNVS := false
	for _, r := range recs {
		if tp.Kind(r.Src) == topo.NVSwitch || tp.Kind(r.Dst) == topo.NVSwitch {
			sawNVS = true
			if len(r.Path) != 1 {
				t.Errorf("NVLS flow %d→%d took %d hops", r.Src, r.Dst, len(r.Path))
			}
		}
	}
	if !sawNVS {
		t.Error("no flow touched the NVSwitch")
	}
}

// Two identical runs give identical flow records.
func TestDeterministic(t *testing.T) {
	tp, _ := topo.DefaultFabric(16, 8)
	var runs [2][]FlowRecord
	for i := range runs {
		d, _ := nccl.Ring(ccl.Request{Op: ccl.OpAllGather, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 16 << 20}, nccl.Options{})
		_, runs[i] = runDAG(t, tp, d, Latency{Intra: 7 * engine.Microsecond, Inter: 9 * engine.Microsecond})
	}
	if len(runs[0]) != len(runs[1]) {
		t.Fatal("different flow counts")
	}
	for i := range runs[0] {
		a, b := runs[0][i], runs[1][i]
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("record %d differs: %+v vs %+v", i, a, b)
		}
	}
}

// The ideal model reports a flow's arrival when it is sent, so a flow sent later may be
// reported after one that arrives later than it: a collective ends at its latest arrival, and
// a flow with several parents starts from the latest of theirs, whatever the order of the
// reports. On the 16-GPU Spectrum-X fabric, flows without parents start after the send's
// hand-over G (IssueGap) and the send latency L: A, 8 KiB from GPU 0 to GPU 9 across the fabric
// (four 400 Gb/s links of 500 ns), is sent 8,192·8/C = 163.84 ns later and arrives 2 µs after
// that; B, 512 KiB from GPU 0 to GPU 1 through the NVSwitch (2,880 Gb/s, two links of 25 ns), is
// sent at G + L + 1,456.36 ns and arrives 50 ns later, before A. Alone, A and B end at A's
// arrival. C, 8 KiB from GPU 0 to GPU 2 with parents A and B, starts G + L after A arrives and
// ends the collective.
func TestRunEndsAtItsLatestArrival(t *testing.T) {
	fab := spectrumX16(t, 8)
	lat := Latency{Intra: 6 * engine.Microsecond, Inter: 6 * engine.Microsecond}
	arrA := IssueGap + lat.Inter + psOf(8192*8/400e9) + 2000*engine.Nanosecond
	arrB := IssueGap + lat.Intra + psOf(512*1024*8/2880e9) + 50*engine.Nanosecond
	startC := arrA + IssueGap + lat.Intra
	arrC := startC + psOf(8192*8/2880e9) + 50*engine.Nanosecond
	for _, tc := range []struct {
		name   string
		withC  bool
		end    engine.Time
		startC engine.Time
	}{
		{"A and B", false, arrA, 0},
		{"A and B, then C", true, arrC, startC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll := ccl.Collective{Op: ccl.OpAllToAll, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 1 << 20, Pieces: 256}
			b := ccl.NewDAGBuilder(coll)
			a := b.Add(ccl.Flow{Src: 0, Dst: 9, Bytes: 8 << 10})
			bb := b.Add(ccl.Flow{Src: 0, Dst: 1, Bytes: 512 << 10})
			if tc.withC {
				b.Add(ccl.Flow{Src: 0, Dst: 2, Bytes: 8 << 10}, a, bb)
			}
			d, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			end, recs := runDAGOn(t, fab, d, lat)
			got := map[ccl.FlowID]FlowRecord{}
			for _, r := range recs {
				got[r.Flow] = r
			}
			if at := got[a].Arrived; !near(at, arrA, engine.Nanosecond) {
				t.Errorf("A arrived at %v, want %v", at, arrA)
			}
			if at := got[bb].Arrived; !near(at, arrB, engine.Nanosecond) || at >= got[a].Arrived {
				t.Errorf("B arrived at %v, want %v, before A", at, arrB)
			}
			if tc.withC {
				if st := got[2].Start; !near(st, tc.startC, engine.Nanosecond) {
					t.Errorf("C started at %v, want %v: the send latency after A, its last parent to arrive", st, tc.startC)
				}
			}
			if !near(end, tc.end, engine.Nanosecond) {
				t.Errorf("the collective ended at %v, want %v", end, tc.end)
			}
		})
	}
}
