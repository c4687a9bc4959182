package fluid

import (
	"reflect"
	"strings"
	"testing"

	"simd/engine"
)

const (
	KB = 1000
	MB = 1000 * KB
	us = engine.Microsecond
)

// TestOneFlowIdlePath: one flow alone on an idle 3-hop path arrives at
// delay + size·8/min(rate).
func TestOneFlowIdlePath(t *testing.T) {
	cases := []struct {
		name  string
		rates []float64
		bytes int64
		delay engine.Time
	}{
		{"slow middle hop", []float64{G400, G100, G200}, 1 * MB, 1500 * engine.Nanosecond},
		{"slow last hop", []float64{G400, G400, G200}, 3*MB + 17, 0},
		{"odd rate", []float64{2880e9, 400e9, 2880e9}, 123457, 2 * us},
		{"zero bytes is one byte", []float64{G100, G100, G100}, 0, 5},
		{"one byte", []float64{G100, G200, G400}, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := lineGraph(t, c.rates...)
			s, n, rec := setup(g)
			f := n.Start([]int32{0, 2, 4}, c.bytes, c.delay, 7)
			s.RunUntil(0)
			bottle, rate := int32(0), c.rates[0]
			for i, r := range c.rates {
				if r < rate {
					bottle, rate = int32(2*i), r
				}
			}
			if got := n.Rate(f); got != rate {
				t.Errorf("rate %v, want %v", got, rate)
			}
			if got := n.Bottleneck(f); got != bottle {
				t.Errorf("bottleneck %d, want %d", got, bottle)
			}
			s.Run()
			size := max(c.bytes, 1)
			if err := roundedUp(rec.sentAt[7], psFor(size, rate)); err != nil {
				t.Errorf("sent: %v", err)
			}
			if got, want := rec.arrived[7], rec.sentAt[7]+c.delay; got != want {
				t.Errorf("arrived at %d, want sent+delay %d", got, want)
			}
			if n.InFlight() != 0 || n.Active() != 0 {
				t.Errorf("InFlight %d Active %d after the run", n.InFlight(), n.Active())
			}
		})
	}
}

// TestEqualFlowsOneLink: N equal flows started together on one link each get rate/N and arrive
// together at N·size·8/rate + delay, with one recompute for the starts and one for the sends.
func TestEqualFlowsOneLink(t *testing.T) {
	for nf := 1; nf <= 8; nf++ {
		for _, rate := range []float64{G100, G400, 2880e9} {
			g := lineGraph(t, rate)
			s, n, rec := setup(g)
			const size = 1*MB + 3
			const delay = 700 * engine.Nanosecond
			ids := make([]FlowID, nf)
			for i := range ids {
				ids[i] = n.Start([]int32{0}, size, delay, int64(i))
			}
			s.RunUntil(0)
			for _, f := range ids {
				if got, want := n.Rate(f), rate/float64(nf); !relEq(got, want, 1e-15) {
					t.Fatalf("N=%d rate %v: flow rate %v, want %v", nf, rate, got, want)
				}
			}
			if got := n.LinkLoad(0); !relEq(got, rate, 1e-12) {
				t.Errorf("N=%d: link load %v, want %v", nf, got, rate)
			}
			s.Run()
			first := rec.arrived[0]
			for i := range nf {
				if rec.arrived[int64(i)] != first {
					t.Errorf("N=%d: flow %d arrived at %d, flow 0 at %d", nf, i, rec.arrived[int64(i)], first)
				}
			}
			if err := roundedUp(first-delay, float64(nf)*psFor(size, rate)); err != nil {
				t.Errorf("N=%d rate %v: %v", nf, rate, err)
			}
			if st := n.Stats(); st.Recomputes != 2 || st.Sent != uint64(nf) || st.Arrived != uint64(nf) {
				t.Errorf("N=%d: stats %+v, want 2 recomputes (starts, sends)", nf, st)
			}
		}
	}
}

// TestDifferentSizesOneLink: flows of 1, 2 and 4 MB start together on a 100 Gb/s link.
//
//	0–240 µs: three flows at 100/3 Gb/s; the 1 MB flow is out at 3·8e6/1e11 s = 240 µs,
//	          when the others have sent 1 MB each.
//	240–400 µs: two at 50 Gb/s; the 2 MB flow's last 1 MB takes 8e6/5e10 s = 160 µs → 400 µs,
//	          the 4 MB flow has then sent 2 MB.
//	400–560 µs: the 4 MB flow alone at 100 Gb/s; its last 2 MB take 160 µs → 560 µs
//	          (= 7 MB at 100 Gb/s: the link never idles).
func TestDifferentSizesOneLink(t *testing.T) {
	g := lineGraph(t, G100)
	s, n, rec := setup(g)
	sizes := []int64{1 * MB, 2 * MB, 4 * MB}
	for i, b := range sizes {
		n.Start([]int32{0}, b, 10, int64(i))
	}
	type probe struct {
		at    engine.Time
		rates []float64 // per tag, 0 once sent
	}
	probes := []probe{
		{100 * us, []float64{G100 / 3, G100 / 3, G100 / 3}},
		{300 * us, []float64{0, G100 / 2, G100 / 2}},
		{500 * us, []float64{0, 0, G100}},
	}
	for _, p := range probes {
		s.RunUntil(p.at)
		for tag, want := range p.rates {
			got := 0.0
			for f := FlowID(0); int(f) < len(n.flows); f++ {
				if n.hot[f].state == stateActive && n.Tag(f) == int64(tag) {
					got = n.Rate(f)
				}
			}
			if !relEq(got, want, 1e-12) {
				t.Errorf("at %v: flow %d rate %v, want %v", p.at, tag, got, want)
			}
		}
	}
	s.Run()
	for i, want := range []engine.Time{240 * us, 400 * us, 560 * us} {
		if err := roundedUp(rec.sentAt[int64(i)], float64(want)); err != nil {
			t.Errorf("flow %d sent: %v", i, err)
		}
		if rec.arrived[int64(i)] != rec.sentAt[int64(i)]+10 {
			t.Errorf("flow %d arrived at %d, sent at %d", i, rec.arrived[int64(i)], rec.sentAt[int64(i)])
		}
	}
}

// TestStaticAllocations checks the rates of classic configurations against allocations
// worked out by hand. paths are lists of directed links (2i is link i forward).
func TestStaticAllocations(t *testing.T) {
	cases := []struct {
		name  string
		rates []float64 // link capacities of a line graph
		paths [][]int32
		want  []float64
		bn    []int32 // expected bottlenecks, -2 where several are valid
	}{
		{
			// Parking lot, k = 3: the long flow crosses links 0, 1, 2; one short flow on each.
			// Every link has two flows and the same capacity C: every flow gets C/2.
			name:  "parking lot k=3",
			rates: []float64{G100, G100, G100},
			paths: [][]int32{{0, 2, 4}, {0}, {2}, {4}},
			want:  []float64{50e9, 50e9, 50e9, 50e9},
			bn:    []int32{-2, 0, 2, 4},
		},
		{
			// Parking lot, k = 5, capacity 400 Gb/s: 200 Gb/s each.
			name:  "parking lot k=5",
			rates: []float64{G400, G400, G400, G400, G400},
			paths: [][]int32{{0, 2, 4, 6, 8}, {0}, {2}, {4}, {6}, {8}},
			want:  []float64{200e9, 200e9, 200e9, 200e9, 200e9, 200e9},
			bn:    []int32{-2, 0, 2, 4, 6, 8},
		},
		{
			// Two bottlenecks. Links A (0) = 100, B (2) = 300, C (4) = 60 Gb/s.
			// f0: A; f1: A,B; f2: B; f3: B; f4: B,C.
			// Fair shares: A 100/2 = 50, B 300/4 = 75, C 60/1 = 60. A is smallest: f0 = f1 = 50.
			// Then B (300−50)/3 = 83.3 and C 60: C fixes f4 = 60. Then B (250−60)/2 = 95:
			// f2 = f3 = 95. Check: A 50+50 = 100, B 50+95+95+60 = 300, C 60: all saturated.
			name:  "two bottlenecks",
			rates: []float64{100e9, 300e9, 60e9},
			paths: [][]int32{{0}, {0, 2}, {2}, {2}, {2, 4}},
			want:  []float64{50e9, 50e9, 95e9, 95e9, 60e9},
			bn:    []int32{0, 0, 2, 2, 4},
		},
		{
			// A long flow over an idle fast link and a shared slow one: 100 Gb/s link 0 with
			// the long flow and one other, 400 Gb/s link 1 with the long flow and two others.
			// A: 50 each. B: (400−50)/2 = 175 each; B is saturated, the others are fastest there.
			name:  "slow then fast",
			rates: []float64{G100, G400},
			paths: [][]int32{{0, 2}, {0}, {2}, {2}},
			want:  []float64{50e9, 50e9, 175e9, 175e9},
			bn:    []int32{0, 0, 2, 2},
		},
		{
			// Reverse directions are separate links: flows on 0 and 1 (the two directions of
			// link 0) do not share.
			name:  "directions",
			rates: []float64{G100},
			paths: [][]int32{{0}, {1}, {1}},
			want:  []float64{100e9, 50e9, 50e9},
			bn:    []int32{0, 1, 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := lineGraph(t, c.rates...)
			s, n, _ := setup(g)
			ids := make([]FlowID, len(c.paths))
			for i, p := range c.paths {
				ids[i] = n.Start(p, 100*MB, 0, int64(i))
			}
			s.RunUntil(0)
			for i, f := range ids {
				if got := n.Rate(f); !relEq(got, c.want[i], 1e-12) {
					t.Errorf("flow %d: rate %v, want %v", i, got, c.want[i])
				}
				if c.bn[i] != -2 && n.Bottleneck(f) != c.bn[i] {
					t.Errorf("flow %d: bottleneck %d, want %d", i, n.Bottleneck(f), c.bn[i])
				}
			}
			if err := n.Check(); err != nil {
				t.Error(err)
			}
			if st := n.Stats(); st.Recomputes != 1 {
				t.Errorf("%d recomputes for flows started at one instant, want 1", st.Recomputes)
			}
		})
	}
}

// TestStartWhileActive: a 2 MB flow alone on 100 Gb/s; at 80 µs (1 MB sent) a 0.5 MB flow
// joins: both at 50 Gb/s, the new one is out after 80 µs (160 µs), the first has then 0.5 MB
// left, which takes 40 µs at 100 Gb/s: 200 µs (= 2.5 MB at 100 Gb/s).
func TestStartWhileActive(t *testing.T) {
	g := lineGraph(t, G100)
	s, n, rec := setup(g)
	a := n.Start([]int32{0}, 2*MB, 0, 0)
	var b FlowID
	s.AtFunc(80*us, func() {
		if got := n.Remaining(a); !relEq(got, 1*MB, 1e-12) {
			t.Errorf("remaining of a at 80us: %v, want 1e6", got)
		}
		b = n.Start([]int32{0}, MB/2, 0, 1)
	})
	s.RunUntil(100 * us)
	if n.Rate(a) != 50e9 || n.Rate(b) != 50e9 {
		t.Errorf("rates at 100us: %v %v, want 50e9 each", n.Rate(a), n.Rate(b))
	}
	s.Run()
	if err := roundedUp(rec.sentAt[1], float64(160*us)); err != nil {
		t.Errorf("b: %v", err)
	}
	if err := roundedUp(rec.sentAt[0], float64(200*us)); err != nil {
		t.Errorf("a: %v", err)
	}
	if got := n.LinkBytes(0); !relEq(got, 2.5*MB, 1e-12) {
		t.Errorf("link bytes %v, want 2.5e6", got)
	}
}

// TestBatching checks that changes at one instant are solved in one recompute: flows started
// together, flows sent together, and flows started from the arrival callbacks of that instant
// together with a flow started by another event of the same instant.
func TestBatching(t *testing.T) {
	g := lineGraph(t, G100, G100)
	s, n, rec := setup(g)
	for i := range 5 {
		n.Start([]int32{0, 2}, 1*MB, 0, int64(i))
	}
	s.RunUntil(0)
	if st := n.Stats(); st.Recomputes != 1 || st.Solves != 1 || st.Rerated != 5 {
		t.Fatalf("after 5 starts: %+v, want 1 recompute, 1 solve, 5 re-rated", st)
	}
	// All five are sent together at 400 µs and arrive together (delay 0): one recompute for
	// the sends; each arrival starts a new flow: one recompute for the five starts.
	next := int64(100)
	rec.onArr = func(f FlowID, now engine.Time) {
		if n.Tag(f) < 100 {
			n.Start([]int32{2}, 1*MB, 0, next)
			next++
		}
	}
	s.Run()
	st := n.Stats()
	// starts at 0; the sends at 400µs together with the 5 starts of that instant (the
	// arrivals, at delay 0, run in the same instant, before its end-of-instant recompute);
	// sends at 800µs.
	if st.Recomputes != 3 {
		t.Errorf("recomputes %d, want 3 (%+v)", st.Recomputes, st)
	}
	if st.Started != 10 || st.Arrived != 10 {
		t.Errorf("stats %+v", st)
	}
}

// TestBadStart checks the programming errors Start refuses.
func TestBadStart(t *testing.T) {
	g := lineGraph(t, G100, G100)
	cases := []struct {
		name  string
		path  []int32
		bytes int64
		delay engine.Time
		want  string
	}{
		{"negative size", []int32{0}, -1, 0, "negative size"},
		{"negative delay", []int32{0}, 1, -1, "negative delay"},
		{"link out of range", []int32{0, 4}, 1, 0, "out of range"},
		{"repeated link", []int32{0, 2, 0}, 1, 0, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, n, _ := setup(g)
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, c.want) {
					t.Errorf("panic %v, want one mentioning %q", r, c.want)
				}
			}()
			n.Start(c.path, c.bytes, c.delay, 0)
		})
	}
}

// TestEmptyPath: a flow with no links is sent at once and arrives after its delay.
func TestEmptyPath(t *testing.T) {
	g := lineGraph(t, G100)
	s, n, rec := setup(g)
	s.RunUntil(5 * us)
	n.Start(nil, 10*MB, 3*us, 1)
	s.Run()
	if rec.sentAt[1] != 5*us || rec.arrived[1] != 8*us {
		t.Errorf("sent %v arrived %v, want 5us and 8us", rec.sentAt[1], rec.arrived[1])
	}
}

// TestSlotReuse: a slot is reused only after its flow has arrived, and the reused flow has its
// own path, size and tag.
func TestSlotReuse(t *testing.T) {
	g := lineGraph(t, G100, G100, G100)
	s, n, rec := setup(g)
	a := n.Start([]int32{0}, 1*MB, 10*us, 1)
	var b FlowID = -1
	rec.onArr = func(f FlowID, now engine.Time) {
		if n.Tag(f) == 1 {
			if got := n.Start([]int32{0, 2, 4}, 2*MB, 0, 2); got == f {
				t.Errorf("slot %d reused before FlowArrived returned", f)
			}
		}
	}
	s.RunUntil(80 * us) // a sent at 80us, arrives at 90us
	if n.Rate(a) != 0 || n.Bottleneck(a) != -1 || n.InFlight() != 1 || n.Active() != 0 {
		t.Errorf("after send: rate %v bn %d inflight %d active %d", n.Rate(a), n.Bottleneck(a), n.InFlight(), n.Active())
	}
	s.RunUntil(91 * us)
	b = n.Start([]int32{2, 4}, 3*MB, 0, 3)
	if b != a {
		t.Errorf("new flow got slot %d, want the freed slot %d", b, a)
	}
	if got := n.Path(b); len(got) != 2 || got[0] != 2 || got[1] != 4 || n.Bytes(b) != 3*MB || n.Tag(b) != 3 {
		t.Errorf("reused slot: path %v bytes %d tag %d", got, n.Bytes(b), n.Tag(b))
	}
	s.Run()
	if n.InFlight() != 0 {
		t.Errorf("in flight %d", n.InFlight())
	}
}

// segment is one BottleneckObserver call.
type segment struct {
	tag   int64
	link  int32
	bytes float64
}

type segRecorder struct {
	recorder
	segs []segment
}

func (r *segRecorder) FlowBottleneck(f FlowID, link int32, bytes float64, now engine.Time) {
	r.segs = append(r.segs, segment{r.n.Tag(f), link, bytes})
}

// TestTrackBottlenecks follows a flow whose bottleneck moves. Link A (directed 0) is
// 100 Gb/s, link B (directed 2) 120 Gb/s; f0 (10 MB) crosses both, f1 (1 MB) only A, f2
// (10 MB) only B.
//
//	0–160 µs: shares A 50, B 60: A fixes f0 = f1 = 50, then f2 = 120−50 = 70 (bottleneck B).
//	          f1 is out at 1 MB / 50 Gb/s = 160 µs; f0 has sent 1 MB (on A), f2 1.4 MB.
//	160–1306.67 µs: shares A 100, B 60: B fixes f0 = f2 = 60. f2's last 8.6 MB take
//	          8.6e6·8/60e9 s = 1146.67 µs; f0 sends 8.6 MB meanwhile (on B).
//	then: f0 alone, 100 Gb/s on A, its last 0.4 MB.
//
// So A was the bottleneck of 1 + 1 + 0.4 = 2.4 MB, B of 8.6 + 10 = 18.6 MB.
func TestTrackBottlenecks(t *testing.T) {
	g := lineGraph(t, 100e9, 120e9)
	s := engine.NewScheduler()
	rec := &segRecorder{recorder: *newRecorder()}
	n := NewWithOptions(s, g, rec, Options{TrackBottlenecks: true})
	rec.n = n
	n.Start([]int32{0, 2}, 10*MB, 0, 0)
	n.Start([]int32{0}, 1*MB, 0, 1)
	n.Start([]int32{2}, 10*MB, 0, 2)
	s.Run()
	want := []segment{{1, 0, 1 * MB}, {0, 0, 1 * MB}, {2, 2, 1.4 * MB}, {2, 2, 8.6 * MB}, {0, 2, 8.6 * MB}, {0, 0, 0.4 * MB}}
	// f2's bottleneck stays B but its rate changes at 160 µs, which closes a segment.
	if len(rec.segs) != len(want) {
		t.Fatalf("segments %v, want %v", rec.segs, want)
	}
	for i, w := range want {
		got := rec.segs[i]
		if got.tag != w.tag || got.link != w.link || !relEq(got.bytes, w.bytes, 1e-6) {
			t.Errorf("segment %d: %+v, want %+v", i, got, w)
		}
	}
	if got := n.BottleneckBytes(0); !relEq(got, 2.4*MB, 1e-6) {
		t.Errorf("BottleneckBytes(A) %v, want 2.4e6", got)
	}
	if got := n.BottleneckBytes(2); !relEq(got, 18.6*MB, 1e-6) {
		t.Errorf("BottleneckBytes(B) %v, want 18.6e6", got)
	}
	if err := roundedUp(rec.sentAt[0], 1338.6666666666667e6); err != nil {
		t.Errorf("f0 sent: %v", err)
	}
	if got := n.LinkBytes(0); got != 11*MB {
		t.Errorf("LinkBytes(A) %v, want 11e6", got)
	}
}

// TestLocality: on 40 independent links with 3 flows each, every completion after the first
// batch re-solves only the flows of its own link, however many other flows are active.
func TestLocality(t *testing.T) {
	rates := make([]float64, 40)
	for i := range rates {
		rates[i] = G100
	}
	g := lineGraph(t, rates...)
	s, n, _ := setup(g)
	for i := range rates {
		for k := range 3 {
			n.Start([]int32{int32(2 * i)}, int64(1*MB+1000*i+100*k), 0, int64(3*i+k))
		}
	}
	s.RunUntil(0)
	recomputes := 0
	n.afterRecompute = func() {
		recomputes++
		if len(n.region) > 2 || len(n.rl) > 1 {
			t.Errorf("at %v: region of %d flows on %d links, want at most the 2 others of one link", s.Now(), len(n.region), len(n.rl))
		}
		if err := n.Check(); err != nil {
			t.Error(err)
		}
	}
	st0 := n.Stats()
	s.Run()
	st := n.Stats()
	if recomputes != 120 || st.SolvedLinks-st0.SolvedLinks > 80 {
		t.Errorf("%d recomputes, %d links solved; want 120 recomputes (one per completion), at most 80 links", recomputes, st.SolvedLinks-st0.SolvedLinks)
	}
}

// With ArrivalAtSend the arrival is reported from the send event, with the arrival time, and the
// same times as without it; no arrival event is scheduled.
func TestArrivalAtSend(t *testing.T) {
	g := lineGraph(t, G100, G100)
	var times [2]map[int64]engine.Time
	var events [2]uint64
	for i, at := range []bool{false, true} {
		s := engine.NewScheduler()
		rec := newRecorder()
		n := NewWithOptions(s, g, rec, Options{ArrivalAtSend: at})
		rec.n = n
		n.Start([]int32{0, 2}, MB, 3*us, 1)
		n.Start([]int32{2}, 2*MB, 1*us, 2)
		s.Run()
		times[i], events[i] = rec.arrived, s.Processed()
		if at {
			for _, r := range rec.log {
				if r.kind == "arrived" && r.at != rec.sentAt[n.Tag(r.f)]+map[int64]engine.Time{1: 3 * us, 2: us}[n.Tag(r.f)] {
					t.Errorf("arrival of %d reported at %v", n.Tag(r.f), r.at)
				}
			}
		}
	}
	if !reflect.DeepEqual(times[0], times[1]) {
		t.Errorf("arrival times differ: %v vs %v", times[0], times[1])
	}
	if events[1] != events[0]-2 {
		t.Errorf("events %d with ArrivalAtSend, %d without: want two fewer", events[1], events[0])
	}
}

// LinkBytesAt reads ahead: at 100 µs, with no event before 150 µs, it gives what LinkBytes
// gives once the clock is there, and reading it changes nothing.
func TestLinkBytesAt(t *testing.T) {
	g := lineGraph(t, G100)
	s, n, _ := setup(g)
	n.Start([]int32{0}, 2*MB, 0, 0)
	s.AtFunc(80*us, func() { n.Start([]int32{0}, MB/2, 0, 1) })
	s.RunUntil(100 * us)
	ahead := n.LinkBytesAt(0, 150*us)
	s.RunUntil(150 * us)
	// 80 µs alone at 100 Gb/s (1 MB), then 70 µs at 50 Gb/s each (0.875 MB in all).
	if got := n.LinkBytes(0); !relEq(got, 1.875*MB, 1e-12) || !relEq(ahead, got, 1e-12) {
		t.Errorf("LinkBytesAt(150us) from 100us %v, LinkBytes at 150us %v, want 1.875e6", ahead, got)
	}
}

// TestRecomputesByLinks checks the solver's size classes: a flow alone on its path is fixed
// without the solver (no link held: class 0), and its send queues a recompute with nothing to
// solve (class 0 again); two flows started together on a path of three links share all three
// (class 2: 2–3 links), and their sends queue one more empty recompute.
func TestRecomputesByLinks(t *testing.T) {
	g := lineGraph(t, G100, G100, G100)
	s, n, _ := setup(g)
	n.Start([]int32{0}, 1*MB, 0, 1)
	s.Run()
	n.Start([]int32{0, 2, 4}, 1*MB, 0, 2)
	n.Start([]int32{0, 2, 4}, 1*MB, 0, 3)
	s.Run()
	st := n.Stats()
	var wantRec, wantFlows [SizeClasses]uint64
	wantRec[0], wantFlows[0] = 3, 1
	wantRec[2], wantFlows[2] = 1, 2
	if st.Recomputes != 4 || st.RecomputesByLinks != wantRec || st.RegionFlowsByLinks != wantFlows {
		t.Errorf("recomputes %d by links %v, region flows by links %v; want 4, %v, %v",
			st.Recomputes, st.RecomputesByLinks, st.RegionFlowsByLinks, wantRec, wantFlows)
	}
}
