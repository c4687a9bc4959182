package ccfluid

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/cc"
	"simd/engine"
	"simd/netmodel/fluid"
	"simd/topo"
	"simd/topo/route"
)

// twoSwitches is hosts 0–2 on switch 6 and hosts 3–5 on switch 7, the switches joined by one
// link, every link at 400 Gb/s with delay. Directed links: host i (i < 3) sends on 2i and
// receives on 2i+1; the switches' link is 6 (6 → 7) and 7 (7 → 6); host j ≥ 3 sends on
// 2j+2 and receives on 2j+3.
func twoSwitches(t testing.TB, delay engine.Time) *route.Graph {
	kinds := []topo.NodeKind{topo.GPU, topo.GPU, topo.GPU, topo.GPU, topo.GPU, topo.GPU, topo.Switch, topo.Switch}
	return graphOf(t, kinds, []tlink{{0, 6, G400, delay}, {1, 6, G400, delay}, {2, 6, G400, delay},
		{6, 7, G400, delay}, {3, 7, G400, delay}, {4, 7, G400, delay}, {5, 7, G400, delay}})
}

// route2 is the path from host a to host b on twoSwitches, and its ACKs' route back.
func route2(a, b int) (path, ack []int32) {
	up := func(h int) int32 {
		if h < 3 {
			return int32(2 * h)
		}
		return int32(2*h + 2)
	}
	down := func(h int) int32 { return up(h) + 1 }
	cross := func(from, to int) []int32 {
		switch {
		case from < 3 && to >= 3:
			return []int32{6}
		case from >= 3 && to < 3:
			return []int32{7}
		}
		return nil
	}
	path = append(append([]int32{up(a)}, cross(a, b)...), down(b))
	ack = append(append([]int32{up(b)}, cross(b, a)...), down(a))
	return path, ack
}

// plainConfig is DCQCN without marks, PFC or windows: every sender stays at line rate, so the
// queues follow the arrivals alone.
func plainConfig(reshape bool) Config {
	cfg := repoConfig()
	cfg.ECN, cfg.PFC, cfg.Reshape = nil, false, reshape
	return cfg
}

func newTwoSwitches(t *testing.T, cfg Config) (*engine.Scheduler, *Network, *recorder) {
	t.Helper()
	s, n, rec, _ := setup(t, twoSwitches(t, engine.Microsecond), cfg)
	return s, n, rec
}

// Two hosts of one switch send to one host of the other at line rate C: the switches' link
// receives 2C and queues C·t/8 bytes. What it passes on is C, which the last link sends as it
// comes: no second queue there. Without reshaping the last link receives both injections, 2C,
// and queues as much as the first. Either way the flows end when the switches' link has sent
// both: 16·S/C after the start, plus the three links' delays.
func TestReshapedLinkPassesOnItsRate(t *testing.T) {
	const size = 1e6
	for _, reshape := range []bool{true, false} {
		s, n, rec := newTwoSwitches(t, plainConfig(reshape))
		for i, h := range []int{0, 1} {
			p, a := route2(h, 3)
			n.Start(p, a, size, int64(i))
		}
		at := 10 * engine.Microsecond
		s.RunUntil(at)
		wantFirst := G400 * secs(at) / 8
		wantLast := 0.0
		if !reshape {
			wantLast = wantFirst
		}
		if q := n.Queue(6); math.Abs(q-wantFirst) > 1 {
			t.Errorf("reshape %v: the switches' link holds %.0f bytes at 10 µs, want %.0f", reshape, q, wantFirst)
		}
		if q := n.Queue(9); math.Abs(q-wantLast) > 1 {
			t.Errorf("reshape %v: the last link holds %.0f bytes at 10 µs, want %.0f", reshape, q, wantLast)
		}
		s.Run()
		want := ceilPs(16*size/G400) + 3*engine.Microsecond
		for tag := range int64(2) {
			if got := rec.arrived[tag]; absTime(got-want) > 2*engine.Picosecond {
				t.Errorf("reshape %v: flow %d arrives at %v, want %v", reshape, tag, got, want)
			}
		}
	}
}

// A queue keeps sending the bytes of a flow whose sender is done. A (host 0 → 3) and B (host 1
// → 4) meet 2:1 on the switches' link, each of S bytes at C from t = 0: the link sends each at
// C/2, and when the senders are done, at t1 = 8S/C, it holds S, half of it A's, which it sends
// by t2 = 16S/C. D, host 5 → 3, starts at t1: host 3's link receives D at C and A's rest at
// C/2, and queues (C/2)(t2 − t1)/8 = S/2 by t2; A's last byte, out of the first queue at t2,
// waits that long behind it, 4S/C: A arrives at 20S/C plus its three links' delays, B at 16S/C
// plus its own. Without reshaping A's bytes reached host 3's link as it sent them, before D
// started, which then finds the link empty: A arrives at 16S/C too.
func TestReshapedQueueDrainsAfterItsSender(t *testing.T) {
	const size = 1e6
	t1 := ceilPs(8 * size / G400)
	for _, reshape := range []bool{true, false} {
		s, n, rec := newTwoSwitches(t, plainConfig(reshape))
		pa, aa := route2(0, 3)
		pb, ab := route2(1, 4)
		n.Start(pa, aa, size, 0)
		n.Start(pb, ab, size, 1)
		s.RunUntil(t1)
		pd, ad := route2(5, 3)
		n.Start(pd, ad, 100*size, 2)
		s.RunUntil(2 * t1)
		wantQ, wantA := size/2, ceilPs(20*size/G400)
		if !reshape {
			wantQ, wantA = 0, ceilPs(16*size/G400)
		}
		if q := n.Queue(9); math.Abs(q-wantQ) > 1 {
			t.Errorf("reshape %v: host 3's link holds %.0f bytes at t2, want %.0f", reshape, q, wantQ)
		}
		s.Run()
		if got, want := rec.arrived[0], wantA+3*engine.Microsecond; absTime(got-want) > 3*engine.Picosecond {
			t.Errorf("reshape %v: A arrives at %v, want %v", reshape, got, want)
		}
		if got, want := rec.arrived[1], ceilPs(16*size/G400)+3*engine.Microsecond; absTime(got-want) > 3*engine.Picosecond {
			t.Errorf("reshape %v: B arrives at %v, want %v", reshape, got, want)
		}
	}
}

// Reshaping moves bytes, it does not make or lose them: random flows between the six hosts of
// twoSwitches, under DCQCN with marks on arrival or on departure, windows or neither, the NICs'
// ports shared in turn or fairly, all arrive, every link has sent exactly the bytes of the flows that cross it, and at
// every look the flows that reach a host's link from the switches' link arrive there at no more
// than the switches' link's rate, and every link that keeps its flows' departure weights keeps
// one for each flow on it, and their sum.
func TestReshapingConservesBytes(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := repoConfig()
		cfg.PFC = false
		if rng.IntN(2) == 0 {
			cfg.Window = 236000
		}
		cfg.Turns = rng.IntN(2) == 0
		cfg.MarkDepartures = rng.IntN(2) == 0
		cfg.ECN = func(float64) (cc.ECNMarker, bool) { // low thresholds: the queues here mark
			return cc.ECNMarker{KMin: 20 * KB, KMax: 200 * KB, PMax: 0.2}, true
		}
		s, n, rec := newTwoSwitches(t, cfg)
		want := make([]float64, 14)
		k := 4 + rng.IntN(12)
		type start struct {
			at   engine.Time
			a, b int
			size int64
		}
		var starts []start
		for range k {
			a := rng.IntN(6)
			b := (a + 1 + rng.IntN(5)) % 6
			starts = append(starts, start{engine.Time(rng.IntN(40)) * engine.Microsecond, a, b, int64(10e3 + rng.IntN(2e6))})
			p, _ := route2(a, b)
			for _, l := range p {
				want[l] += float64(starts[len(starts)-1].size)
			}
		}
		slices.SortStableFunc(starts, func(x, y start) int { return cmp.Compare(x.at, y.at) })
		next := 0
		for step := range 200 {
			now := engine.Time(step) * 500 * engine.Nanosecond
			for next < k && starts[next].at <= now {
				s.RunUntil(starts[next].at)
				p, a := route2(starts[next].a, starts[next].b)
				n.Start(p, a, starts[next].size, int64(next))
				next++
			}
			s.RunUntil(now)
			for _, l := range []int32{9, 11, 13} {
				from := 0.0
				for i, e := range n.links[l].on {
					if f := &n.flows[e.f]; e.ap > f.off && n.arena[e.ap-1] == 6 {
						from += n.weights[l].rt[i].arr
					}
				}
				if from > G400*(1+1e-9) {
					t.Fatalf("seed %d at %v: link %d receives %.6g bits/s from the switches' link, more than its rate", seed, now, l, from)
				}
			}
			for l := range int32(14) {
				lw := &n.weights[l]
				if len(lw.rt) != len(n.links[l].on) {
					t.Fatalf("seed %d at %v: link %d keeps %d flows' rates for %d flows", seed, now, l, len(lw.rt), len(n.links[l].on))
				}
				if !n.weighted(l) {
					continue // it keeps no sum
				}
				sum := 0.0
				for _, e := range lw.rt {
					sum += e.w
				}
				if math.Abs(sum-lw.wsum) > 1e-6*G400 {
					t.Fatalf("seed %d at %v: link %d's weights sum to %.6g bits/s, its sum says %.6g", seed, now, l, sum, lw.wsum)
				}
			}
		}
		s.Run()
		if len(rec.arrived) != k {
			t.Fatalf("seed %d: %d of %d flows arrived", seed, len(rec.arrived), k)
		}
		for l := range int32(14) {
			if got := n.LinkBytes(l); math.Abs(got-want[l]) > 1e-6*max(want[l], 1) {
				t.Errorf("seed %d: link %d sent %.1f bytes, its flows %.1f", seed, l, got, want[l])
			}
		}
	}
}

// A switch counts what each of its ports holds by the bytes of its queues that came in through
// it, and a queue keeps those bytes after the port they came through is paused: the pause holds
// until the queue has sent enough of them. Five hosts send 4 MB each into host 3 without windows
// or ECN marks, three of them through the switches' link, on switches of 1 MB buffers, and
// switch 7 pauses the switches' link as its queue to host 3 fills. With reshaping the paused link
// passes nothing on; when the bytes it had brought counted by what arrives, they were no port's
// the moment the pause took effect, and switch 7 resumed the link at once: every one of its 159
// pauses lasted the link's delay, 1 µs. Counted by the weights of what the queue sends, the
// median pause lasts until those bytes have left, over 3 µs.
func TestReshapedPauseHoldsItsQueue(t *testing.T) {
	cfg := plainConfig(true)
	cfg.PFC, cfg.BufferBytes = true, 1*MB
	cfg.MarkDepartures = true
	cfg.ECN = func(float64) (cc.ECNMarker, bool) { // ports that mark what they send, never here
		return cc.ECNMarker{KMin: 1 << 40, KMax: 1 << 41}, true
	}
	s, n, rec, pl := setup(t, twoSwitches(t, engine.Microsecond), cfg)
	for i, h := range []int{0, 1, 2, 4, 5} {
		p, a := route2(h, 3)
		n.Start(p, a, 4e6, int64(i))
	}
	s.Run()
	if len(rec.arrived) != 5 {
		t.Fatalf("%d of 5 flows arrived", len(rec.arrived))
	}
	var since engine.Time
	var d []engine.Time
	for _, f := range pl.frames {
		if f.node != 6 { // switch 6, paused on its link to switch 7
			continue
		}
		if f.pause {
			since = f.at
		} else {
			d = append(d, f.at-since)
		}
	}
	if len(d) == 0 {
		t.Fatal("switch 7 never paused the switches' link")
	}
	slices.Sort(d)
	if m := d[len(d)/2]; m <= 2*engine.Microsecond {
		t.Errorf("the switches' link was paused %d times, for %v at the median, want more than two link delays", len(d), m)
	}
}

// A flow's change of arrival queued behind a backlog goes with the flow when its last byte
// finds that backlog gone. S = 1 MB, C = 400 Gb/s. A (host 0 → 3, 2.25 S) and D (host 4 → 3,
// S) send at C from t = 0: host 3's link queues at C and holds S when D is done, at 20 µs. B
// (host 1 → 5) joins A on the switches' link at 25 µs: that link sends A at C/2 from then, a
// change host 3's link queues behind its S bytes, which it drains at C/2 by 25 + 40 = 65 µs.
// A is sent by 45 µs, and its last byte leaves the switches' link when the S queued there
// before it (at 2C in, C out since 25 µs) has gone, at 45 + 20 = 65 µs: it finds host 3's link empty, at the instant its
// queued change falls due. Its ACK then waits at the switches' link back, behind F (4 → 0) and
// G (5 → 1), so A is not done when the instant ends and the links settle: the change must not
// be applied to the entry A has left (it was applied to whichever flow took that place in the
// link's list, or past the list's end). Fair sharing and turns alike.
func TestQueuedChangeLeavesWithItsFlow(t *testing.T) {
	for _, turns := range []bool{false, true} {
		cfg := plainConfig(true)
		cfg.ECN = func(float64) (cc.ECNMarker, bool) { // a port that marks what it sends keeps its weights; no queue here reaches KMin
			return cc.ECNMarker{KMin: 3 * MB, KMax: 10 * MB, PMax: 0.2}, true
		}
		cfg.MarkDepartures, cfg.Turns = true, turns
		cfg.Transport = fluid.Transport{AtAck: true}
		s, n, rec := newTwoSwitches(t, cfg)
		const size = 1e6
		us := engine.Microsecond
		for i, f := range []struct {
			at   engine.Time
			a, b int
			size float64
		}{{0, 0, 3, 2.25 * size}, {0, 4, 3, size}, {25 * us, 1, 5, 10 * size}, {40 * us, 4, 0, 10 * size}, {40 * us, 5, 1, 10 * size}} {
			s.AtFunc(f.at, func() {
				p, a := route2(f.a, f.b)
				n.Start(p, a, int64(f.size), int64(i))
			})
		}
		s.RunUntil(65*us + engine.Picosecond)
		if q, lw := n.Queue(9), &n.weights[9]; q > 1 || len(lw.rt) != 0 || lw.pending() || lw.wsum != 0 {
			t.Errorf("turns %v: after 65 µs host 3's link holds %.0f bytes, %d flows' rates, weights summing to %g, changes pending %v; want none",
				turns, q, len(lw.rt), lw.wsum, lw.pending())
		}
		if _, done := rec.arrived[0]; done {
			t.Errorf("turns %v: A is done before its ACK has passed the queue at the switches' link", turns)
		}
		s.Run()
		if len(rec.arrived) != 5 {
			t.Fatalf("turns %v: %d of 5 flows arrived", turns, len(rec.arrived))
		}
		if got, want := rec.arrived[1], ceilPs(16*size/G400)+2*us; absTime(got-want) > 2*engine.Picosecond {
			t.Errorf("turns %v: D arrives at %v, want %v", turns, got, want)
		}
	}
}
