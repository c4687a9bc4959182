package ccfluid

import (
	"math"
	"testing"

	"simd/cc"
	"simd/engine"
	"simd/topo"
)

// What an ingress port of a switch holds of an egress queue moves as its bytes arrive and leave,
// first in first out (advanceFeeds). Hosts 0 and 1 send 64 MiB and 1 MiB to host 2 at line rate
// C: they meet 2:1 at the switch's port to host 2, whose queue grows at C with half of each.
// When host 1's last byte has arrived the queue stays level (host 0 alone arrives at C), and
// host 1's half leaves it at C/2, its departure weight until then, while host 0's part grows as
// much: the parts move linearly, never faster than C, and host 1's part is gone when the bytes
// queued before its last byte are (a queue's delay later). Sharing the queue by the current
// departure weights instead kept both halves until that instant and then moved the whole half
// at once, and on a switch whose ports sat near their thresholds such jumps paused and resumed
// ports many times a nanosecond.
func TestIngressHoldingsAreFIFO(t *testing.T) {
	cfg := plainConfig(true)
	cfg.PFC, cfg.BufferBytes = true, 1<<40 // counted, never paused
	cfg.MarkDepartures = true
	cfg.ECN = func(float64) (cc.ECNMarker, bool) { // ports that mark what they send, never here
		return cc.ECNMarker{KMin: 1 << 40, KMax: 1 << 41}, true
	}
	s, n, _, pl := setup(t, star(t, 3, G400, engine.Microsecond), cfg)
	n.Start([]int32{0, 5}, []int32{4, 1}, 64*MB, 0)
	n.Start([]int32{2, 5}, []int32{4, 3}, 1*MB, 1)
	n.sw[0].bound = 0 // count the ports at every check, not only near the thresholds
	egress := int32(5)
	port0, port1 := n.links[0].inPort, n.links[2].inPort
	const step = 100 * engine.Nanosecond
	type sample struct {
		at        engine.Time
		u0, u1, q float64
	}
	var got []sample
	for at := step; at <= 60*engine.Microsecond; at += step {
		s.RunUntil(at)
		n.checkSwitch(0, at)
		n.advanceLink(egress, at)
		// The ports' lines, which the check has brought to now (the buffer is told them only
		// when it is asked whether a port pauses).
		ps := n.sw[0].ports
		got = append(got, sample{at, max(ps[port0].u, 0), max(ps[port1].u, 0), n.links[egress].qs.q})
	}
	if len(pl.frames) != 0 {
		t.Fatalf("%d PFC frames with a buffer no port can fill", len(pl.frames))
	}
	maxStep := G400 / 8 * step.Seconds() * (1 + 1e-9)
	peak := 0
	for i, x := range got {
		if d := math.Abs(x.u0 + x.u1 - x.q); d > 1e-6*x.q+1 {
			t.Fatalf("at %v the ports hold %.0f + %.0f bytes of a queue of %.0f", x.at, x.u0, x.u1, x.q)
		}
		if i > 0 {
			p := got[i-1]
			if math.Abs(x.u0-p.u0) > maxStep || math.Abs(x.u1-p.u1) > maxStep {
				t.Fatalf("between %v and %v the ports' holdings moved %.0f and %.0f bytes, more than the link's %.0f",
					p.at, x.at, x.u0-p.u0, x.u1-p.u1, maxStep)
			}
		}
		if x.u1 > got[peak].u1 {
			peak = i
		}
	}
	// Host 1's part peaks at half the queue when its last byte arrives, then leaves at C/2, so
	// that it is gone when the link has sent the whole queue.
	top := got[peak]
	if math.Abs(top.u1-top.q/2) > 0.01*top.q {
		t.Errorf("host 1 holds %.0f of %.0f bytes when its last byte arrives, want half", top.u1, top.q)
	}
	drain := engine.Time(top.q * 8 / G400 * 1e12)
	for _, x := range got {
		if x.at <= top.at || x.at > top.at+drain {
			continue
		}
		frac := float64(x.at-top.at) / float64(drain)
		if want := top.u1 * (1 - frac); math.Abs(x.u1-want) > 0.01*top.q {
			t.Fatalf("at %v host 1 holds %.0f bytes, want %.0f (leaving at C/2 since %v)", x.at, x.u1, want, top.at)
		}
	}
	if last := got[len(got)-1]; last.u1 != 0 || last.at < top.at+drain+step {
		t.Errorf("at %v host 1 still holds %.0f bytes", last.at, last.u1)
	}
	t.Logf("host 1's part peaks at %.0f of %.0f bytes at %v and is gone %v later", top.u1, top.q, top.at, drain)
}

// A switch keeps each port's occupancy as a line that its queues' feeds move (pfcPortState);
// after every check the line is what the queues hold from the port, summed afresh. The incast
// of victimScenario pauses and resumes ports, so the lines go through pauses, queues emptying
// and feeds leaving.
func TestPortLinesAreTheQueuesHoldings(t *testing.T) {
	cfg := repoConfig()
	cfg.BufferBytes = 4 * MB
	s, n, rec, pl := startVictim(t, cfg, 8*MB)
	checked := 0
	for at := engine.Microsecond; len(rec.arrived) < 9; at += engine.Microsecond {
		if at > 10*engine.Millisecond {
			t.Fatalf("%d of 9 flows arrived by %v", len(rec.arrived), at)
		}
		s.RunUntil(at)
		for w := range n.sw {
			sw := &n.sw[w]
			n.checkSwitch(int32(w), at)
			want := make([]float64, len(sw.ports))
			for l := range n.links {
				if lk := &n.links[l]; lk.outSw == int32(w) && len(lk.feeds) > 0 {
					n.advanceLink(int32(l), at)
					n.advanceFeeds(int32(l))
					for _, fd := range lk.feeds {
						want[fd.port] += fd.held
					}
				}
			}
			for p := range sw.ports {
				ps := &sw.ports[p]
				ps.advance(at)
				if math.Abs(ps.u-want[p]) > 1+1e-6*want[p] {
					t.Fatalf("at %v switch %d port %d: line %.1f bytes, its queues hold %.1f", at, w, p, ps.u, want[p])
				}
				if want[p] > 0 {
					checked++
				}
			}
		}
	}
	if len(pl.frames) == 0 || checked == 0 {
		t.Fatalf("%d PFC frames, %d occupied ports checked: the incast did not exercise the lines", len(pl.frames), checked)
	}
	t.Logf("%d PFC frames, %d occupied ports checked", len(pl.frames), checked)
}

// A port pauses where its shared use reaches its dynamic threshold, not later: the check that
// decides it is armed for the instant the port's line crosses the level, with every port's
// shared use counted as the buffer counts it. Eight 400 Gb/s hosts send 4 MB each into one
// port of a switch (500 ns links, as a DCN+ server's) whose 800 KB buffer leaves a shared pool
// P of 88 KB, their starts spread over a packet time: ports pause, drain their headroom and
// resume hundreds of times while the others hold bytes. The queue can hold at most the eight
// reserves, P, and the eight senders' line rate over a frame's lag (2d + a packet time) —
// 593 KB, below the ECN threshold (800 KB), so nothing is marked. When a paused port's headroom
// (what came in after it paused) was counted as shared use, the others' thresholds, and so the
// times their checks were armed for, were off: ports that had resumed ran on past their levels
// for microseconds, up to hundreds of KB, and the queue they built was marked.
func TestPFCPausesAtTheLevel(t *testing.T) {
	const k = 8
	for _, spread := range []engine.Time{0, 37 * engine.Nanosecond, 181 * engine.Nanosecond} {
		t.Run(spread.String(), func(t *testing.T) {
			cfg := repoConfig()
			cfg.BufferBytes = 800 * KB
			worst, pauses := 0.0, 0
			pauseCheck = func(n *Network, w, p int32, now engine.Time) {
				sw := &n.sw[w]
				own := max(sw.ports[p].u-sw.res, 0)
				worst = max(worst, own-sw.buf.Threshold(int(p), sw.buf.SharedUsed()))
				pauses++
			}
			defer func() { pauseCheck = nil }()
			g := star(t, k+1, G400, 500*engine.Nanosecond)
			s, n, rec, _ := setup(t, g, cfg)
			for i := range k {
				s.AtFunc(engine.Time(i*7%k)*spread/k, func() {
					n.Start([]int32{int32(2 * i), int32(2*k + 1)}, nil, 4*MB, int64(i))
				})
			}
			s.Run()
			st := n.Stats()
			if len(rec.arrived) != k || pauses < 100 {
				t.Fatalf("%d flows arrived, %d pauses: the incast does not exercise the buffer", len(rec.arrived), pauses)
			}
			if worst > 1 {
				t.Errorf("a port paused %.0f bytes past its level", worst)
			}
			if st.Marks != 0 {
				t.Errorf("%d ECN marks: the buffer keeps the queue below KMIN", st.Marks)
			}
			t.Logf("%d pauses, the latest %.3g bytes past its level; stats %+v", pauses, worst, st)
		})
	}
}

// One 400 Gb/s sender into a 100 Gb/s port, ECN off, so that only PFC holds it back: the
// switch's port pauses and resumes the sender on a fixed cycle, which follows from the buffer
// and the frame's lag L = 2d + one packet time at 400 Gb/s (frameLag): the port crosses its
// level y* = P/(D+1) (P the shared pool, D = 2^shift = 8), takes in (Cin − Cout)·L more as
// headroom before the sender stops, and resumes once that has drained and its shared use is
// D·off/(D+1) below y* (off the resume offset). At the sender a pause lasts
// L·Cin/Cout + D·off/((D+1)·Cout) and the run between two pauses L + (D·off/(D+1) +
// Cout·L)/(Cin − Cout). With L = d (the frame's way to the sender only) the pauses were less
// than half as long and the cycle more than twice as fast as ns-3's.
func TestPFCCycle(t *testing.T) {
	const d = engine.Microsecond
	g := graphOf(t, []topo.NodeKind{topo.GPU, topo.Switch, topo.GPU},
		[]tlink{{0, 1, G400, d}, {1, 2, 100e9, d}})
	cfg := repoConfig()
	cfg.BufferBytes = 1 * MB
	s, n, rec, pl := setup(t, g, cfg)
	n.Start([]int32{0, 2}, nil, 64*MB, 1)
	s.Run()
	if len(rec.arrived) != 1 || n.Stats().Marks != 0 {
		t.Fatalf("arrived %v, stats %+v", rec.arrived, n.Stats())
	}
	sw := &n.sw[0]
	const cin, cout = G400 / 8, 100e9 / 8 // bytes/s
	lag := secs(2*d + ceilPs(9000*8/G400))
	dd := sw.ports[0].mul
	if dd != 8 {
		t.Fatalf("the sender's port divides the pool by %v, want 8", dd)
	}
	back := dd * sw.off / (dd + 1)
	wantPaused := lag*cin/cout + back/cout
	wantRun := lag + (back+cout*lag)/(cin-cout)
	var paused, run []float64
	for i := 1; i < len(pl.frames); i++ {
		f, prev := pl.frames[i], pl.frames[i-1]
		if f.node != 0 || prev.node != 0 || f.pause == prev.pause {
			t.Fatalf("frames %d and %d: %+v, %+v: want the sender's port paused and resumed in turn", i-1, i, prev, f)
		}
		if i < 20 || i > len(pl.frames)-20 { // the first fill and the end
			continue
		}
		if dt := secs(f.at - prev.at); f.pause {
			run = append(run, dt)
		} else {
			paused = append(paused, dt)
		}
	}
	if len(paused) < 100 {
		t.Fatalf("%d pauses: the flow should be held back for the whole transfer", len(paused))
	}
	for _, c := range []struct {
		what string
		got  []float64
		want float64
	}{{"paused", paused, wantPaused}, {"running", run, wantRun}} {
		for _, x := range c.got {
			if math.Abs(x-c.want) > 1e-3*c.want {
				t.Fatalf("%s %.4f µs, want %.4f µs", c.what, x*1e6, c.want*1e6)
			}
		}
	}
	t.Logf("%d cycles: paused %.4f µs, running %.4f µs", len(paused), wantPaused*1e6, wantRun*1e6)
}

// A buffer no larger than its ports' headroom and reserve leaves no shared pool: SimAI's ns-3
// computes the threshold in uint32, which wraps around to hundreds of MB, and never pauses the
// switch. The same incast that pauses its senders hundreds of times in an 800 KB buffer
// (TestPFCPausesAtTheLevel) sends no PFC frame in a 600 KB one, which does not cover its nine
// ports' 675 KB of headroom and 36 KB of reserve, and runs exactly as with PFC off.
func TestNoSharedPoolNoPFC(t *testing.T) {
	run := func(cfg Config) (map[int64]engine.Time, []pfcFrame, *Network) {
		g := star(t, 9, G400, 500*engine.Nanosecond)
		s, n, rec, pl := setup(t, g, cfg)
		for i := range 8 {
			n.Start([]int32{int32(2 * i), 17}, nil, 4*MB, int64(i))
		}
		s.Run()
		return rec.arrived, pl.frames, n
	}
	small := repoConfig()
	small.BufferBytes = 600 * KB
	arr, frames, n := run(small)
	if k := n.SwitchesWithoutPFC(); k != 1 || len(frames) != 0 || len(arr) != 8 {
		t.Fatalf("%d switches without PFC, %d frames, %d flows arrived: want 1, 0, 8", k, len(frames), len(arr))
	}
	off := repoConfig()
	off.PFC = false
	want, _, _ := run(off)
	for tag, at := range want {
		if arr[tag] != at {
			t.Errorf("flow %d arrives at %v, %v with PFC off", tag, arr[tag], at)
		}
	}
	if _, frames, n := run(repoConfig()); n.SwitchesWithoutPFC() != 0 || len(frames) != 0 {
		t.Errorf("32 MB: %d switches without PFC, %d frames: want 0, 0", n.SwitchesWithoutPFC(), len(frames))
	}
}
