package ccfluid

import (
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
	"simd/topo"
)

// A switch marks the packets it sends, so a flow can carry a mark only once per packet it puts
// through the port, 8·(P+H)/injection apart (ns-3 marks a packet at dequeue; a flow's CNPs
// then come at most one per packet). Three flows into one 400 Gb/s port, from NICs of 400, 400
// and 40 Gb/s: three marks at one instant fall on three different flows and a fourth finds no
// packet to mark; each flow has a packet again one packet time later — 181.04 ns at 400 Gb/s,
// 1,810.4 ns at 40 Gb/s — and not before. Marks far apart are drawn in proportion to the
// flows' arrival rates, 400 : 400 : 40.
func TestMarksOnePerPacket(t *testing.T) {
	kinds := []topo.NodeKind{topo.GPU, topo.GPU, topo.GPU, topo.GPU, topo.Switch}
	us := engine.Microsecond
	g := graphOf(t, kinds, []tlink{{0, 4, G400, us}, {1, 4, G400, us}, {2, 4, 40e9, us}, {3, 4, G400, us}})
	cfg := repoConfig()
	cfg.Transport = fluid.SimAITransport(9000, 0)
	s, n, _, _ := setup(t, g, cfg)
	for i := range 3 {
		n.Start([]int32{int32(2 * i), 7}, nil, 1<<30, int64(i))
	}
	s.RunUntil(5 * us)
	const port = int32(7) // switch → host 3
	now := s.Now()
	rates := map[int32]float64{}
	for _, e := range n.links[port].on {
		rates[e.f] = n.flows[e.f].cinj
	}
	if len(rates) != 3 || rates[2] != 40e9 {
		t.Fatalf("arrivals at the port %v, want 400, 400 and 40 Gb/s", rates)
	}

	seen := map[int32]bool{}
	for range 3 {
		id, _ := n.markedFlow(port, now)
		if id < 0 || seen[id] {
			t.Fatalf("marks at one instant fell on %v, then %d: want three different flows", seen, id)
		}
		seen[id] = true
		n.setMarkAt(id, now)
	}
	if id, _ := n.markedFlow(port, now); id != -1 {
		t.Errorf("a fourth mark at the same instant fell on flow %d, which has no packet there yet", id)
	}

	// One packet time after the marks, and a nanosecond before it.
	full := float64(cfg.Transport.Full() * 8)
	for id, r := range rates {
		gap := engine.Time(math.Ceil(full / r * 1e12))
		for _, c := range []struct {
			at   engine.Time
			want bool
		}{{now + gap - engine.Nanosecond, false}, {now + gap, true}} {
			got := false
			for range 200 {
				if p, _ := n.markedFlow(port, c.at); p == id {
					got = true
				}
			}
			if got != c.want {
				t.Errorf("flow %d (%.0f Gb/s), %v after its mark: marked %v, want %v", id, r/1e9, c.at-now, got, c.want)
			}
		}
	}

	for id := range rates {
		n.setMarkAt(id, 0)
	}
	counts := map[int32]int{}
	const draws = 20000
	for range draws {
		id, _ := n.markedFlow(port, now)
		counts[id]++
	}
	for id, r := range rates {
		want := r / 840e9
		if got := float64(counts[id]) / draws; math.Abs(got-want) > 0.01 {
			t.Errorf("flow %d: %.4f of the marks, want %.4f (its share of the arrivals)", id, got, want)
		}
	}
}

// A port whose queue stands above KMAX marks every packet it sends (RED's probability is 1
// there), and every packet it sends is some flow's: each mark reaches a sender as a CNP, as
// in ns-3, where the mark is set on a packet it dequeues. Eight 400 Gb/s senders of 4 MB into
// one port keep its queue above KMAX (3.2 MB) for tens of microseconds, where the marks come at
// the port's packet rate — eight flows, each due a packet every eighth one. Drawing each mark
// among the flows that have a packet at the port (markedFlow) once lost a mark whenever all of
// them had been marked within their packet gap, one in eleven without PFC; a mark now goes to
// the flow whose next packet is the most due. With a 6 MB buffer PFC pauses the senders while
// the queue drains above KMAX: a port with nothing arriving marked nothing, and 13% of the
// marks were lost; what it sends now is marked and drawn as before.
func TestEveryMarkIsAFlows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		buffer float64
		pauses bool
	}{
		{"no PFC", 1 << 40, false},
		{"senders paused", 6 * MB, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := repoConfig()
			cfg.BufferBytes = tc.buffer
			cfg.MarkDepartures = true // simd's default, as ns-3 marks what a port dequeues
			g := star(t, 9, G400, 500*engine.Nanosecond)
			s, n, rec, _ := setup(t, g, cfg)
			for i := range 8 {
				n.Start([]int32{int32(2 * i), 17}, nil, 4*MB, int64(i))
			}
			s.Run()
			st := n.Stats()
			if len(rec.arrived) != 8 || st.Marks < 100 || (st.Pauses > 0) != tc.pauses {
				t.Fatalf("%d flows arrived, %d marks, %d pauses", len(rec.arrived), st.Marks, st.Pauses)
			}
			// A mark on a packet still queued after its sender has sent its last byte changes
			// nothing (the CNP finds the flow done): 26 of 1,960 without PFC, 13 of 368 with it.
			if float64(st.CNPs) < 0.95*float64(st.Marks) {
				t.Errorf("%d marks but %d CNPs", st.Marks, st.CNPs)
			}
			t.Logf("%d marks, %d CNPs, %d pauses", st.Marks, st.CNPs, st.Pauses)
		})
	}
}

// TestPoissonMarkNeeds checks where a port's next mark falls, in expected marked packets since
// its last: with Config.PoissonMarks an Exp(1) draw, kept until the mark falls (the link is
// armed again and again in between) and drawn anew after it, so that the marks are a Poisson
// process of the marking rate (mean 1 and coefficient of variation 1 over many marks);
// without, always 1, evenly spaced marks.
func TestPoissonMarkNeeds(t *testing.T) {
	kinds := []topo.NodeKind{topo.GPU, topo.Switch}
	g := graphOf(t, kinds, []tlink{{0, 1, G400, engine.Microsecond}})
	for _, poisson := range []bool{false, true} {
		cfg := repoConfig()
		cfg.PoissonMarks = poisson
		_, n, _, _ := setup(t, g, cfg)
		const draws = 20000
		var sum, sq float64
		for range draws {
			x := n.markNeed(0)
			if again := n.markNeed(0); again != x {
				t.Fatalf("poisson %v: the need moved from %g to %g before a mark", poisson, x, again)
			}
			if poisson {
				n.needs[0] = 0 // as mark does
			}
			sum += x
			sq += x * x
		}
		mean := sum / draws
		cv := math.Sqrt(max(sq/draws-mean*mean, 0)) / mean
		switch {
		case !poisson && (mean != 1 || cv != 0):
			t.Errorf("regular marks: mean %g, variation %g; want 1 and 0", mean, cv)
		case poisson && (math.Abs(mean-1) > 0.03 || math.Abs(cv-1) > 0.03):
			t.Errorf("poisson marks: mean %.4f, variation %.4f; want 1 and 1 within 3%%", mean, cv)
		}
	}
}
