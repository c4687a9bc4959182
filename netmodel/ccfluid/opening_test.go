package ccfluid

import (
	"math"
	"testing"

	"simd/engine"
)

// A flow that starts behind a standing queue sends its first window at once and then waits for
// its first ACK (FirstWindowBurst); with the window as a cap from the start it trickles in at
// W/RTT. Star of 400 Gb/s hosts with 1 µs links, window 236,000 bytes: 27 packets, 244,404 bytes
// on the wire. A (host 0) and B (host 1) send to host 2 and hold 2W − C·a/8 ≈ 270 KB in its
// port (TestWindowsHoldTheQueue), a being the base round trip, 4.36 µs. At 30 µs host 3 starts
// C to host 2, alone on its NIC: with the burst its first window leaves at line rate, in
// 244,404·8/C = 4.89 µs, and nothing more until one round trip through the queue as it stood,
// a + 8q/C ≈ 9.8 µs after it started; a flow of one window (236,000 bytes, 237,404 on the wire)
// is all burst and is sent 237,404·8/C = 4.75 µs after it starts. With the cap it sends W per
// round trip through a queue that its own bytes lengthen: the same flow takes over 8 µs.
func TestFirstWindowBurst(t *testing.T) {
	const w = 236000
	const start = 30 * engine.Microsecond
	a := 4e-6 + 2*9052*8/G400 + 2*60*8/G400
	inFlight := math.Ceil(w/9000.0) * 9052
	for _, tc := range []struct {
		name    string
		burst   bool
		size    int64
		sentMin engine.Time // bounds on C's sent time after its start
		sentMax engine.Time
	}{
		{"one window, burst", true, w, ceilPs(237404 * 8 / G400), ceilPs(237404*8/G400) + engine.Nanosecond},
		{"one window, cap", false, w, 8 * engine.Microsecond, 20 * engine.Microsecond},
		{"three windows, burst", true, 3 * w, 0, engine.Never},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := star(t, 4, G400, engine.Microsecond)
			cfg := windowConfig(w)
			cfg.ECN, cfg.PFC = nil, false // the windows alone hold the queue
			cfg.FirstWindowBurst = tc.burst
			s, n, rec, _ := setup(t, g, cfg)
			n.Start([]int32{0, 5}, []int32{4, 1}, 1<<40, 0) // A: 0 → 2
			n.Start([]int32{2, 5}, []int32{4, 3}, 1<<40, 1) // B: 1 → 2
			s.RunUntil(start)
			q := n.Queue(5)
			if want := 2*inFlight - G400*a/8; math.Abs(q-want) > 9052 {
				t.Fatalf("queue to host 2 is %.0f bytes at 30 µs, want %.0f", q, want)
			}
			c := n.Start([]int32{6, 5}, []int32{4, 7}, tc.size, 2) // C: 3 → 2
			if tc.size > w {
				// Its window is out after 244,404·8/C; its first ACK is back a + 8q/C after it
				// started (and the ACK's wait behind A's and B's packets at host 2's NIC and the
				// switch's port to host 3, at most two packet times).
				burst := ceilPs(inFlight * 8 / G400)
				ack := ceilPs(a + q*8/G400)
				s.RunUntil(start + burst + 10*engine.Nanosecond)
				if got := n.Injected(c); math.Abs(got-inFlight) > 1 {
					t.Errorf("C injected %.0f bytes by the end of its burst, want its window %.0f", got, inFlight)
				}
				s.RunUntil(start + ack - 10*engine.Nanosecond)
				if got := n.Injected(c); math.Abs(got-inFlight) > 1 {
					t.Errorf("C injected %.0f bytes before its first ACK, want its window %.0f", got, inFlight)
				}
				s.RunUntil(start + ack + ceilPs(2*9052*8/G400) + 100*engine.Nanosecond)
				if got := n.Injected(c); got <= inFlight+1 {
					t.Errorf("C injected %.0f bytes after its first ACK, want more than its window %.0f", got, inFlight)
				}
			}
			s.RunUntil(start + 200*engine.Microsecond)
			sent, ok := rec.sentAt[2]
			if !ok {
				t.Fatal("C was never sent")
			}
			if d := sent - start; d < tc.sentMin || d > tc.sentMax {
				t.Errorf("C was sent %v after it started, want within [%v, %v]", d, tc.sentMin, tc.sentMax)
			}
		})
	}
}
