package ccfluid

import (
	"math"
	"testing"

	"simd/cc"
	"simd/engine"
	"simd/netmodel/fluid"
)

// departureConfig is repoConfig with SimAI's packets and ACKs, ports that mark what they send,
// and NICs that pace rate changes as SimAI's (no windows: nothing holds the queues but DCQCN).
func departureConfig() Config {
	cfg := repoConfig()
	cfg.Transport = fluid.SimAITransport(9000, 0)
	cfg.MarkDepartures, cfg.PaceAtOldRate = true, true
	return cfg
}

// A port sends its bytes in the order they came. Flow A from host 0 into host 2 at 400 Gb/s
// from t = 0, flow B from host 1 from t = 5 µs: the port sends C, and takes C until 5 µs and 2C
// after, so the byte it sends at t arrived when C·t' + C·(t' − 5 µs) = C·t, at t' = (t + 5 µs)/2
// (7.5 µs at 10 µs, 10 µs at 15 µs). Until 5 µs nothing waits: the byte sent arrived then.
// What each flow injected at t' is its injection then: B's is 0 before it starts.
func TestDeparturesLeaveInArrivalOrder(t *testing.T) {
	g := star(t, 3, G400, engine.Microsecond)
	cfg := departureConfig()
	cfg.Reshape = false // the arrival curve and the injection histories are the unreshaped model's
	cfg.DCQCN.RPTimer = engine.Second
	cfg.ECN = func(float64) (cc.ECNMarker, bool) { // ports that keep their curves but never mark
		return cc.ECNMarker{KMin: 1 << 40, KMax: 1 << 41}, true
	}
	s, n, _, _ := setup(t, g, cfg)
	const port = int32(5) // switch → host 2
	a := n.Start([]int32{0, port}, []int32{4, 1}, 1<<40, 0)
	s.RunUntil(5 * engine.Microsecond)
	b := n.Start([]int32{2, port}, []int32{4, 3}, 1<<40, 1)
	for _, c := range []struct{ at, want engine.Time }{
		{5 * engine.Microsecond, 5 * engine.Microsecond},
		{10 * engine.Microsecond, 7500 * engine.Nanosecond},
		{15 * engine.Microsecond, 10 * engine.Microsecond},
	} {
		s.RunUntil(c.at)
		n.advanceLink(port, c.at)
		if got := n.arrivedAt(port, c.at); absTime(got-c.want) > engine.Picosecond {
			t.Errorf("at %v the port sends what arrived at %v, want %v", c.at, got, c.want)
		}
	}
	if r := n.injectionAt(int32(b), 4*engine.Microsecond); r != 0 {
		t.Errorf("B injected %.4g bits/s before it started", r)
	}
	if r := n.injectionAt(int32(a), 4*engine.Microsecond); r != G400 {
		t.Errorf("A injected %.4g bits/s at 4 µs, want 400 Gb/s", r)
	}
}

// absTime is |d|.
func absTime(d engine.Time) engine.Time { return max(d, -d) }

// incast8 starts eight 4 MB flows from hosts 0–7 of a star at 400 Gb/s with 1 µs links into
// host 8, under cfg without PFC (which the ports would reach without the cuts).
func incast8(t *testing.T, cfg Config) (*engine.Scheduler, *Network, []FlowID) {
	t.Helper()
	cfg.PFC = false
	s, n, _, _ := setup(t, star(t, 9, G400, engine.Microsecond), cfg)
	var ids []FlowID
	for i := range 8 {
		ids = append(ids, n.Start([]int32{int32(2 * i), 17}, []int32{16, int32(2*i + 1)}, 4e6, int64(i)))
	}
	return s, n, ids
}

// Eight 4 MB flows into one 400 Gb/s port without windows (SimAI's DCN+ incast): the queue
// holds megabytes of what the senders sent at line rate, and for its delay the port keeps
// sending, and marking, their packets. Marking what it sends, every sender is cut each
// RATE_DECREASE_INTERVAL down to MIN_RATE, 100 Mb/s, as in ns-3 (where all eight were cut every
// 4 µs from 15 µs to 119 µs and reached 100 Mb/s at 63 µs); marking what arrives, a sender cut
// to a few Gb/s has a packet there only every few microseconds and the cuts stop well above
// MIN_RATE.
func TestDequeueMarkingCutsEverySender(t *testing.T) {
	for _, dequeue := range []bool{true, false} {
		cfg := departureConfig()
		cfg.MarkDepartures = dequeue
		s, n, ids := incast8(t, cfg)
		floor := 0
		for range 200 {
			s.RunUntil(s.Now() + engine.Microsecond)
			floor = 0
			for _, id := range ids {
				if n.Rate(id) <= cfg.DCQCN.MinRate {
					floor++
				}
			}
			if floor == len(ids) {
				break
			}
		}
		if dequeue && floor != len(ids) {
			t.Errorf("marking what the port sends: %d of 8 senders at MIN_RATE after 200 µs, want all", floor)
		}
		if !dequeue && floor != 0 {
			t.Errorf("marking what arrives: %d of 8 senders at MIN_RATE after 200 µs, want none", floor)
		}
	}
}

// SimAI's NIC sends a queue pair's next packet one packet time after its last at the rate it
// had then; DCQCN's rate changes do not move that time (RdmaHw::UpdateNextAvail, and the
// Mellanox reaction point sets m_rate directly). A sender of the incast above, cut to MIN_RATE,
// is raised by its rate-increase timer: it goes on at 100 Mb/s until the packet under way has
// had its time, (P + H − b mod (P + H))·8/100 Mb/s after the raise, b being the bytes it has
// injected (up to 724 µs), and only then at the new rate. Without the pacing the new rate
// applies at once.
func TestRateChangeWaitsForThePacketGap(t *testing.T) {
	for _, paced := range []bool{true, false} {
		cfg := departureConfig()
		cfg.PaceAtOldRate = paced
		s, n, ids := incast8(t, cfg)
		f := ids[0]
		// Find the raise: the reaction point's rate leaves the floor.
		for n.Rate(f) > cfg.DCQCN.MinRate || s.Now() < 100*engine.Microsecond {
			s.RunUntil(s.Now() + 10*engine.Nanosecond)
			if s.Now() > 5*engine.Millisecond {
				t.Fatal("flow 0 never reached MIN_RATE")
			}
		}
		for n.Rate(f) <= cfg.DCQCN.MinRate {
			s.RunUntil(s.Now() + 10*engine.Nanosecond)
			if s.Now() > 5*engine.Millisecond {
				t.Fatal("flow 0 was never raised from MIN_RATE")
			}
		}
		raised := s.Now()
		if !paced {
			if got := n.Injection(f); got != n.Rate(f) {
				t.Errorf("unpaced: injection %.4g bits/s right after the raise, want the new rate %.4g", got, n.Rate(f))
			}
			continue
		}
		full := float64(cfg.Transport.Full())
		b := n.injected(int32(f), raised)
		left := full - math.Mod(b, full)
		due := raised + engine.Time(left*8/cfg.DCQCN.MinRate*1e12)
		s.RunUntil(due - 20*engine.Nanosecond)
		if got := n.Injection(f); got != cfg.DCQCN.MinRate {
			t.Errorf("paced: injection %.4g bits/s %v after the raise, want MIN_RATE until %v", got, s.Now()-raised, due-raised)
		}
		s.RunUntil(due + 20*engine.Nanosecond)
		if got := n.Injection(f); got <= cfg.DCQCN.MinRate {
			t.Errorf("paced: injection %.4g bits/s %v after the raise, want the new rate from %v on", got, s.Now()-raised, due-raised)
		}
	}
}
