package ccfluid

import (
	"math"
	"math/rand/v2"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// windowConfig is repoConfig with SimAI's packets and ACKs and a window of w bytes (no VAR_WIN).
func windowConfig(w float64) Config {
	cfg := repoConfig()
	cfg.Transport = fluid.SimAITransport(9000, 0)
	cfg.Window = w
	return cfg
}

// The backlog at which k window-bound flows balance a port: Σ 8·W/(a + 8q/C) = C, so with equal
// flows q = k·W − C·a/8 (bytes), W being the window in flight on the wire: ⌈w/payload⌉ full
// packets. k flows of a star into one 400 Gb/s port with 1 µs links and a window of 236,000
// bytes (27 packets, 244,404 bytes on the wire): the queue rises at (k−1)·C until it holds
// k·W − C·a/8 and stays there, below KMIN for k = 2 (no mark, no cut), above it for k = 8.
func TestWindowsHoldTheQueue(t *testing.T) {
	const w = 236000
	for _, tc := range []struct {
		k     int
		marks bool
	}{{2, false}, {8, true}} {
		g := star(t, tc.k+1, G400, engine.Microsecond)
		cfg := windowConfig(w)
		cfg.DCQCN.RPTimer = engine.Second // no recovery: the test reads the queue before marks act
		s, n, _, _ := setup(t, g, cfg)
		for i := range tc.k {
			n.Start([]int32{int32(2 * i), int32(2*tc.k + 1)}, []int32{int32(2*tc.k + 0), int32(2*i + 1)}, 1<<40, int64(i))
		}
		// The base round trip: 2 µs each way, a full packet on each of the two links, the
		// 60-byte ACK on each link back.
		a := 4e-6 + 2*9052*8/G400 + 2*60*8/G400
		inFlight := math.Ceil(w/9000.0) * 9052
		want := float64(tc.k)*inFlight - G400*a/8
		// ACKs of the k flows come back on the receiver's NIC link, ahead of nothing here.
		s.RunUntil(20 * engine.Microsecond)
		got := n.Queue(int32(2*tc.k + 1))
		if math.Abs(got-want) > 9052 {
			t.Errorf("k=%d: queue %.0f bytes, want %.0f (k windows less a round trip's worth)", tc.k, got, want)
		}
		if m := n.Stats().Marks; (m > 0) != tc.marks {
			t.Errorf("k=%d: %d marks (queue %.0f, KMIN 800 KB)", tc.k, m, got)
		}
	}
}

// An ACK waits behind the data packet its receiver's NIC (or a switch port) is sending while the
// port is busy. Two flows between hosts A and B across one switch at 200 Gb/s, 500 ns links, with
// a window of one round trip's worth: each flow's ACKs leave B's NIC while B sends its own flow,
// and cross the switch port to A while it carries B's data. Each round trip is a = 2 µs +
// 2·9052·8/C + 2·60·8/C plus the waits, T = 9052·8/C: T/2 at each link (the mean over random
// phases), or with AckWaitAligned T/2 at B's NIC and T − 60·8/C at the switch, where the ACK
// arrives just after the data packet it followed out of B's NIC has started; with
// AckWaitLocked, the flows having started together, T − (d mod T) at B's NIC (d = 1 µs, the
// path's propagation: the ACK is made d plus whole packet times after the packet left A, when
// B's own packets, started with A's, are d mod T into their slot) and T − 60·8/C at the
// switch (SimAI's ns-3 with 400 Gb/s: 86 + 180 ns, the flows 3.9% slower than alone). The flow sends ⌈w/9000⌉·9052 bytes
// per round trip. Alone, the same flow runs at C.
func TestACKsWaitBehindData(t *testing.T) {
	const c = 200e9
	g := star(t, 2, c, 500*engine.Nanosecond)
	pkt := 9052 * 8 / c
	base := 2e-6 + 2*pkt + 2*60*8/c
	w := math.Floor(2720e-9 * c / 8) // SimAI's maxBdp: 2·1 µs + 2·9000·8/C, at C
	tr := fluid.SimAITransport(9000, 0)
	const size = 32 << 20
	ab, ba := []int32{0, 3}, []int32{2, 1}
	for _, tc := range []struct {
		rule  AckWait
		both  bool
		waits float64 // the ACK's waits behind data, seconds
	}{
		{AckWaitMean, false, 0},
		{AckWaitMean, true, pkt/2 + pkt/2},
		{AckWaitAligned, false, 0},
		{AckWaitAligned, true, pkt/2 + pkt - 60*8/c},
		{AckWaitLocked, false, 0},
		{AckWaitLocked, true, pkt - math.Mod(1e-6, pkt) + pkt - 60*8/c},
	} {
		cfg := windowConfig(w)
		cfg.ECN = nil
		cfg.AckWait = tc.rule
		s, n, rec, _ := setup(t, g, cfg)
		n.Start(ab, ba, size, 1)
		if tc.both {
			n.Start(ba, ab, size, 2)
		}
		s.Run()
		inFlight := math.Ceil(w/9000.0) * 9052 * 8
		rate := math.Min(c, inFlight/(base+tc.waits))
		// Each port also carries the other flow's ACKs, sent ahead of data.
		if tc.both {
			rate = math.Min(rate, c*9052/(9052+60))
		}
		sent := float64(tr.Wire(size)*8) / rate
		got := rec.sentAt[1].Seconds()
		if math.Abs(got-sent) > 0.002*sent {
			t.Errorf("rule %d both=%v: sent after %.3f µs, want %.3f µs (%.1f Gb/s)", tc.rule, tc.both, got*1e6, sent*1e6, rate/1e9)
		}
	}
}

// The ACKs of B→A wait in step with A→B's data only if B→A started within its one-way time of
// A→B (AckWaitLocked): the same two flows as TestACKsWaitBehindData, A→B (32 MiB) from 0 and
// B→A (8 MiB) from an offset, B→A's ACKs leaving A's NIC behind A→B's packets and crossing the
// switch port to B behind them. B→A's one-way time is 1 µs + 2T (1.72 µs): started 1 µs after
// A→B its ACKs wait T − (1 µs mod T) + T − 60·8/C, as flows started together; 3 µs after,
// T/2 + T/2, the mean over random phases, as SimAI's ns-3 has it
// (flows_pairs4MB_apart__DCNS16).
// AckWaitAligned charges the whole packet at both offsets.
func TestACKsWaitInStepOnlyWhenStartedTogether(t *testing.T) {
	const c = 200e9
	g := star(t, 2, c, 500*engine.Nanosecond)
	pkt := 9052 * 8 / c
	base := 2e-6 + 2*pkt + 2*60*8/c
	w := math.Floor(2720e-9 * c / 8)
	tr := fluid.SimAITransport(9000, 0)
	const size = 8 << 20
	for _, tc := range []struct {
		rule   AckWait
		offset engine.Time
		waits  float64
	}{
		{AckWaitLocked, engine.Microsecond, pkt - math.Mod(1e-6, pkt) + pkt - 60*8/c},
		{AckWaitLocked, 3 * engine.Microsecond, pkt/2 + pkt/2},
		{AckWaitAligned, 3 * engine.Microsecond, pkt/2 + pkt - 60*8/c},
		{AckWaitMean, engine.Microsecond, pkt/2 + pkt/2},
	} {
		cfg := windowConfig(w)
		cfg.ECN = nil
		cfg.AckWait = tc.rule
		s, n, rec, _ := setup(t, g, cfg)
		n.Start([]int32{0, 3}, []int32{2, 1}, 4*size, 1)
		s.RunUntil(tc.offset)
		n.Start([]int32{2, 1}, []int32{0, 3}, size, 2)
		s.RunUntil(engine.Millisecond) // B→A is done, A→B is not
		inFlight := math.Ceil(w/9000.0) * 9052 * 8
		// A's port also carries B→A's ACKs, sent ahead of data (TestACKsTakeTheirShare).
		rate := math.Min(c*9052/(9052+60), inFlight/(base+tc.waits))
		want := tc.offset.Seconds() + float64(tr.Wire(size)*8)/rate
		if got := rec.sentAt[2].Seconds(); math.Abs(got-want) > 0.002*(want-tc.offset.Seconds()) {
			t.Errorf("rule %d, B→A %v after A→B: sent at %.3f µs, want %.3f µs (%.1f Gb/s)", tc.rule, tc.offset, got*1e6, want*1e6, rate/1e9)
		}
	}
}

// What the ACKs of a flow take from its receiver's NIC port: each data packet of 9,052 bytes
// brings back a 60-byte ACK, and a NIC sends ACKs first. Two long flows A→B and B→A without
// windows: each NIC port carries its own data and the other flow's ACKs, so each flow runs at
// C·9052/(9052+60). A lone flow A→B: A answers nothing and sends at C.
func TestACKsTakeTheirShare(t *testing.T) {
	for _, both := range []bool{false, true} {
		g := star(t, 2, G400, engine.Microsecond)
		cfg := repoConfig()
		cfg.Transport = fluid.SimAITransport(9000, 0)
		cfg.ECN = nil
		s, n, _, _ := setup(t, g, cfg)
		flows := []FlowID{n.Start([]int32{0, 3}, []int32{2, 1}, 1<<40, 1)}
		want := G400
		if both {
			flows = append(flows, n.Start([]int32{2, 1}, []int32{0, 3}, 1<<40, 2))
			want = G400 * 9052 / (9052 + 60)
		}
		s.RunUntil(10 * engine.Microsecond)
		for _, f := range flows {
			if got := n.Injection(f); math.Abs(got-want) > 1e-6*want {
				t.Errorf("both=%v: flow %d injects %.4f Gb/s, want %.4f", both, f, got/1e9, want/1e9)
			}
		}
	}
}

// A port serving k flows in turn sends their last packets one after another: flows that share
// it equally finish, on average, (k−1)/2 last packets before the fluid's common instant. Four
// 128 KiB flows out of one host's 400 Gb/s link to four others. The packet before each last one
// is another flow's, which the switch sends out of another port, so the last one waits there
// for its own flow's packet only (Transport.Tail at the flow's share).
func TestTurnsOfAPort(t *testing.T) {
	const k = 4
	g := star(t, k+1, G400, engine.Microsecond)
	tr := fluid.SimAITransport(9000, 0)
	for _, turns := range []bool{false, true} {
		cfg := repoConfig()
		cfg.Transport = tr
		cfg.ECN = nil
		s, n, rec, _ := setup(t, g, cfg)
		flows := k
		if !turns {
			flows = 1
		}
		for i := range flows {
			n.Start([]int32{0, int32(2*(i+1) + 1)}, []int32{int32(2 * (i + 1)), 1}, 128<<10, int64(i))
		}
		s.Run()
		sent := float64(int64(flows)*tr.Wire(128<<10)*8) / G400
		last := float64(tr.Last(128<<10) * 8)
		for i := range int64(flows) {
			got := rec.arrived[i].Seconds()
			// Alone: the tail at C, 2 µs there, 2 µs and two ACKs back.
			rate := G400 / float64(flows)
			want := sent + float64(tr.Tail(128<<10, rate, []float64{G400, G400}))/1e12 + 4e-6 + 2*60*8/G400
			want -= float64(flows-1) * last / G400 / 2
			if math.Abs(got-want) > 2e-12 {
				t.Errorf("%d flows: flow %d done at %.6f µs, want %.6f µs", flows, i, got*1e6, want*1e6)
			}
		}
	}
}

// solveWindows against the closed form for k equal flows at line rate, q = k·W − C·a/8 (one alone
// cannot queue: it sends at most C), and with a flow that no window holds back.
func TestSolveWindows(t *testing.T) {
	const c = 400e9
	w := 244404.0 * 8
	a := 4.5e-6
	for _, k := range []int{2, 3, 8} {
		ts := make([]wterm, k)
		for i := range ts {
			ts[i] = wterm{u: c, w: w, a: a}
		}
		q, ok := solveWindows(ts, c, 1, 0)
		want := math.Max(float64(k)*w/8-c*a/8, 0)
		if !ok || math.Abs(q-want) > 1 {
			t.Errorf("k=%d: q = %.1f (%v), want %.1f", k, q, ok, want)
		}
	}
	// A flow that cannot send faster than 50 Gb/s whatever its window, and two that can: the
	// two window-bound flows fill the rest.
	ts := []wterm{{u: 50e9, w: w, a: a}, {u: c, w: w, a: a}, {u: c, w: w, a: a}}
	q, _ := solveWindows(ts, c, 1, 0)
	if got := 50e9 + 2*w/(a+q*8/c); math.Abs(got-c) > 1e-6*c {
		t.Errorf("mixed: at q = %.0f the flows send %.4f Gb/s, want %.0f", q, got/1e9, c/1e9)
	} // An incast of 300 flows capped at 300 different rates, 1% to 2% of C, so that the backlog
	// at which they send C lies beyond the breakpoints of most of them: it sends exactly C.
	ts = ts[:0]
	for i := range 300 {
		ts = append(ts, wterm{u: c / 100 * (1 + float64(i)/300), w: w, a: a})
	}
	q, ok := solveWindows(ts, c, 1e-3, 0)
	got := 0.0
	for _, t := range ts {
		got += math.Min(t.u, t.w/(t.a+q*8/c))
	}
	if !ok || math.Abs(got-c) > 1e-6*c {
		t.Errorf("incast: at q = %.0f (%v) the flows send %.4f Gb/s, want %.0f", q, ok, got/1e9, c/1e9)
	}
}

// A flow held back by its window speeds up again once the queues that lengthened its round trip
// are gone, whatever happened at those queues in between. Flow A (host 0 → host 1, 5 µs links,
// a window of 2 MB: alone it runs at its port's rate, its round trip being about 20.5 µs) has
// its ACKs come back through the switch's port to host 0, where two window-bound flows from
// hosts 2 and 3 hold a queue of about 3 MB: A's round trip grows by 60 µs and its window holds
// it to about 200 Gb/s. The two flows end and the queue drains; just before it empties, a small
// flow from host 4 joins the port, which re-arms it at a backlog under 20 KB. When
// the queue empties A must be back at its port's rate (less the room its NIC keeps for the
// ACKs it sends), not at the rate of the round trip it last looked at.
func TestWindowReleasedWhenQueueEmpties(t *testing.T) {
	g := star(t, 5, G400, 5*engine.Microsecond)
	cfg := windowConfig(2e6)
	cfg.ECN, cfg.PFC = nil, false // the windows alone hold the queue
	s, n, rec, _ := setup(t, g, cfg)
	a := n.Start([]int32{0, 3}, []int32{2, 1}, 1<<34, 100)
	n.Start([]int32{4, 1}, []int32{0, 5}, 20e6, 2)
	n.Start([]int32{6, 1}, []int32{0, 7}, 20e6, 3)
	held := false
	for step := engine.Time(1); ; step++ {
		s.RunUntil(step * 100 * engine.Nanosecond)
		if n.flows[a].slack <= 0 {
			held = true
		}
		_, sent2 := rec.sentAt[2]
		_, sent3 := rec.sentAt[3]
		if q := n.Queue(1); sent2 && sent3 && q > 0 && q < 20e3 {
			n.Start([]int32{8, 1}, []int32{0, 9}, 1000, 4)
			break
		}
		if step > 50000 {
			t.Fatal("the queue to host 0 never drained")
		}
	}
	if !held {
		t.Fatal("A's window never held it back: the scenario does not test the release")
	}
	s.RunUntil(s.Now() + 200*engine.Microsecond)
	if q := n.Queue(1); q != 0 {
		t.Fatalf("queue to host 0 still %.0f bytes", q)
	}
	full, ack := float64(cfg.Transport.Full()), float64(cfg.Transport.Ack)
	want := G400 * full / (full + ack)
	if got := n.Injection(a); math.Abs(got-want) > 1e-6*want {
		t.Errorf("A injects %.4g bits/s with the queue gone, want %.4g (its port's rate less the ACKs' room)", got, want)
	}
}

// When the level its windows hold a queue at falls below the backlog before the queue gets
// there, the flows that were not held back yet must look again. Two windowed flows A (host 0)
// and B (host 1) into host 2 on a star at 400 Gb/s with 1 µs links, no ECN and no PFC: the
// queue rises toward 2·W − C·a/8 (both window-bound). At 200 KB, host 0 starts two more flows
// to hosts 3 and 4, so A gets a third of its NIC, C/3, and the level falls to where B's window
// sends the rest, 8W/(a + 8q/C) = 2C/3: q = 1.5·W − C·a/8 = 148,382 bytes, below the backlog.
// B's cap dates from the empty queue (W/a > C); without a look it keeps sending at line rate and
// the queue grows without end.
func TestWindowLevelFallsBelowTheQueue(t *testing.T) {
	g := star(t, 5, G400, engine.Microsecond)
	cfg := windowConfig(236000)
	cfg.ECN, cfg.PFC = nil, false // the windows alone hold the queue
	s, n, _, _ := setup(t, g, cfg)
	n.Start([]int32{0, 5}, []int32{4, 1}, 1<<40, 0) // A: 0 → 2
	n.Start([]int32{2, 5}, []int32{4, 3}, 1<<40, 1) // B: 1 → 2
	for step := engine.Time(1); n.Queue(5) < 200e3; step++ {
		s.RunUntil(step * 10 * engine.Nanosecond)
		if step > 100000 {
			t.Fatal("the queue to host 2 never reached 200 KB")
		}
	}
	n.Start([]int32{0, 7}, []int32{6, 1}, 1<<40, 2) // 0 → 3
	n.Start([]int32{0, 9}, []int32{8, 1}, 1<<40, 3) // 0 → 4
	s.RunUntil(s.Now() + 100*engine.Microsecond)
	a := 4e-6 + 2*9052*8/G400 + 2*60*8/G400
	want := 1.5*27*9052 - G400*a/8
	if got := n.Queue(5); math.Abs(got-want) > 9052 {
		t.Errorf("queue to host 2 is %.0f bytes 100 µs later, want %.0f (B's window holding what A's third leaves)", got, want)
	}
}

// A NIC sends a packet whole at its line rate, and a fluid rate is a mean over packets: when a
// queue pair joins the port while a flow's last packet is leaving, the switches get that packet
// at the mean rate it left at, not at the port's new share. A flow of 4 packets (32 KiB) alone
// on a 400 Gb/s port, joined by a long one when 1,000 of its bytes are left: those leave at
// C/2, so its last packet (5,820 bytes) takes (5,820 − 1,000)·8/C + 1,000·8/(C/2) to leave, and
// its switch forwards it at that mean rate (Transport.Tail). A competing flow never makes a
// flow finish sooner than it would alone.
func TestLastPacketLeavesAtItsMeanRate(t *testing.T) {
	g := star(t, 3, G400, engine.Microsecond)
	tr := fluid.SimAITransport(9000, 0)
	const size = 32 << 10
	wire, last := float64(tr.Wire(size)), float64(tr.Last(size))
	join := engine.Time(math.Round((wire - 1000) * 8 / G400 * 1e12))
	var alone engine.Time
	for _, joined := range []bool{false, true} {
		cfg := repoConfig()
		cfg.Transport = tr
		cfg.ECN = nil
		s, n, rec, _ := setup(t, g, cfg)
		n.Start([]int32{0, 3}, []int32{2, 1}, size, 1)
		if joined {
			s.AtFunc(join, func() { n.Start([]int32{0, 5}, []int32{4, 1}, 1<<30, 2) })
		}
		s.RunUntil(20 * engine.Microsecond)
		got := rec.arrived[1]
		sent := join.Seconds() + 1000*8/(G400/2)
		rate := last * 8 / (sent - (wire-last)*8/G400)
		if !joined {
			sent, rate = wire*8/G400, G400
			alone = got
		}
		want := sent + float64(tr.Tail(size, rate, []float64{G400, G400}))/1e12 + 4e-6 + 2*60*8/G400
		if math.Abs(got.Seconds()-want) > 2e-12 {
			t.Errorf("joined=%v: done at %.6f µs, want %.6f µs", joined, got.Seconds()*1e6, want*1e6)
		}
		if joined && got < alone {
			t.Errorf("joined by a second flow, done at %v, sooner than alone (%v)", got, alone)
		}
	}
}

// The last ACK of a flow waits behind data like the others: at the links of its route that
// still carry data when it passes. A 1 MiB flow A→B across one 400 Gb/s switch (1 µs links,
// no window) against a 32 MiB flow B→A started with it: A's last ACK leaves B's NIC while B
// still sends, waits half a packet there (T/2, T = 9052·8/C; with locked waits, the flows
// having started together, T − (2 µs mod T), the grid's residual) and, with aligned or locked
// waits, T less its own 60·8/C at the switch's port to A, which B's data fills; with mean waits
// T/2 again. With
// B of 256 KiB, done before A's last ACK passes, the ACK waits nowhere.
func TestLastACKWaitsBehindData(t *testing.T) {
	g := star(t, 2, G400, engine.Microsecond)
	tr := fluid.SimAITransport(9000, 0)
	pkt := 9052 * 8 / G400
	const a = 1 << 20
	for _, tc := range []struct {
		rule  AckWait
		b     int64
		waits float64
	}{
		{AckWaitAligned, 32 << 20, pkt/2 + pkt - 60*8/G400},
		{AckWaitLocked, 32 << 20, pkt - math.Mod(2e-6, pkt) + pkt - 60*8/G400},
		{AckWaitMean, 32 << 20, pkt/2 + pkt/2},
		{AckWaitAligned, 256 << 10, 0},
	} {
		cfg := repoConfig()
		cfg.Transport = tr
		cfg.ECN = nil
		cfg.AckWait = tc.rule
		s, n, rec, _ := setup(t, g, cfg)
		n.Start([]int32{0, 3}, []int32{2, 1}, a, 1)
		n.Start([]int32{2, 1}, []int32{0, 3}, tc.b, 2)
		s.RunUntil(200 * engine.Microsecond)
		// Both NICs keep room for the other flow's ACKs while it sends (TestACKsTakeTheirShare).
		rate := G400 * 9052 / (9052 + 60)
		sent := rec.sentAt[1].Seconds()
		if want := float64(tr.Wire(a)*8) / rate; math.Abs(sent-want) > 1e-3*want {
			t.Fatalf("rule %d B=%d: A sent after %.4f µs, want %.4f", tc.rule, tc.b, sent*1e6, want*1e6)
		}
		want := sent + float64(tr.Tail(a, rate, []float64{G400, G400}))/1e12 + 4e-6 + 2*60*8/G400 + tc.waits
		if got := rec.arrived[1].Seconds(); math.Abs(got-want) > 2e-12 {
			t.Errorf("rule %d B=%d: A done at %.6f µs, want %.6f µs", tc.rule, tc.b, got*1e6, want*1e6)
		}
	}
}

// On ns-3's clock (Transport.NanosecondClock) a link sends a 9,052-byte packet in whole
// nanoseconds, rounded down — 25 ns at 2,880 Gb/s, 181 at 400 — and a 60-byte ACK in 0 and 1 ns;
// a NIC pacing at the line rate keeps up. A lone 1 MiB flow over two 2,880 Gb/s links (25 ns
// each) is sent after its wire bytes at C = 9052·8/25 ns, its last packet is stored at the
// switch (fluid.Transport.Tail at C), and its ACK comes back over 50 ns taking no time to send;
// without the clock, C = 2,880 Gb/s and the ACK 2·60·8/C. Two long flows both ways on 400 Gb/s
// links, whose NICs send each other's ACKs first: each gets C·181/(181 + 1) on the clock (an ACK's
// nanosecond per data packet's 181), C·9052/(9052 + 60) without it.
func TestNanosecondClock(t *testing.T) {
	const nv = 2880e9
	for _, clock := range []bool{true, false} {
		cfg := repoConfig()
		cfg.Transport = fluid.SimAITransport(9000, 0)
		cfg.Transport.NanosecondClock = clock
		cfg.ECN = nil
		g := star(t, 2, nv, 25*engine.Nanosecond)
		s, n, rec, _ := setup(t, g, cfg)
		const size = 1 << 20
		n.Start([]int32{0, 3}, []int32{2, 1}, size, 1)
		s.Run()
		c, ack := 9052*8/25e-9, 0.0
		if !clock {
			c, ack = nv, 2*60*8/nv
		}
		tr := cfg.Transport
		sent := float64(tr.Wire(size)*8) / c
		want := engine.Time(math.Ceil(sent*1e12)) + tr.Tail(size, c, []float64{c, c}) + 100*engine.Nanosecond +
			engine.Time(math.Ceil(ack*1e12))
		if got := rec.arrived[1]; got < want-2 || got > want+2 {
			t.Errorf("clock=%v: a lone flow on NVLink done at %d ps, want %d", clock, got, want)
		}

		g = star(t, 2, G400, engine.Microsecond)
		s, n, _, _ = setup(t, g, cfg)
		flows := []FlowID{n.Start([]int32{0, 3}, []int32{2, 1}, 1<<40, 1), n.Start([]int32{2, 1}, []int32{0, 3}, 1<<40, 2)}
		s.RunUntil(10 * engine.Microsecond)
		share := 9052 * 8 / 181e-9 * 181 / 182
		if !clock {
			share = G400 * 9052 / (9052 + 60)
		}
		for _, f := range flows {
			if got := n.Injection(f); math.Abs(got-share) > 1e-9*share {
				t.Errorf("clock=%v: flow %d injects %.4f Gb/s, want %.4f", clock, f, got/1e9, share/1e9)
			}
		}
	}
}

// A link's start range (lockedStarts) follows its flows as they join and leave in any order:
// random joins and leaves against the earliest and latest start of the flows it holds.
func TestStartRangeFollowsFlows(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const flows = 64
	n := &Network{links: make([]link, 1), starts: make([]startRange, 1), flows: make([]flow, flows), apos: make([]int32, flows)}
	on := map[int32]bool{}
	for id := range n.flows {
		n.flows[id].off = int32(id)
	}
	for step := range 5000 {
		id := int32(r.IntN(flows))
		if on[id] {
			n.leaveList(0, n.flows[id].off)
			delete(on, id)
		} else {
			n.flows[id].start = engine.Time(r.IntN(6)) // few values: many ties at the ends
			n.joinList(0, id, 0)
			on[id] = true
		}
		got := n.startsOf(0)
		if len(on) == 0 {
			if got != nil {
				t.Fatalf("step %d: a range for an empty link", step)
			}
			continue
		}
		lo, hi := engine.Never, engine.Time(-1)
		for id := range on {
			lo, hi = min(lo, n.flows[id].start), max(hi, n.flows[id].start)
		}
		if got == nil || got.lo != lo || got.hi != hi {
			t.Fatalf("step %d: range %+v, want [%d, %d]", step, got, lo, hi)
		}
	}
}

// An ACK whose receiver sends nothing waits at a later link of its route, where another flow's
// data runs on a grid locked to its flow's, where its own loop puts it (AckWaitLocked): each ACK
// reaches the link one base round trip rtt₀ after the one before left it at the end of a data
// packet, so it waits T − (rtt₀ mod T) there, not the mean T/2. Three hosts A, B, C on one
// 200 Gb/s switch, 500 ns links, a window of 7 packets (binding alone: 7·9052·8 bits per
// rtt₀ = 2 µs + 2T + 2·60·8/C is 186 Gb/s): A→B and B→C start together; B→C's ACKs leave C's
// idle NIC and cross the switch's port to B behind A→B's packets, which fill it. B's port also
// carries A→B's ACKs, sent ahead of data; A→B's ACKs wait at B's NIC (the first-link rule).
func TestACKsWaitWhereTheirLoopPutsThem(t *testing.T) {
	const c = 200e9
	g := star(t, 3, c, 500*engine.Nanosecond)
	pkt := 9052 * 8 / c
	base := 2e-6 + 2*pkt + 2*60*8/c
	const w = 60000 // 7 packets of 9,000 bytes
	inFlight := math.Ceil(w/9000.0) * 9052 * 8
	tr := fluid.SimAITransport(9000, 0)
	const size = 8 << 20
	for _, tc := range []struct {
		rule AckWait
		wait float64 // B→C's ACK at the switch's port to B
	}{
		{AckWaitLocked, pkt - math.Mod(base, pkt)},
		{AckWaitMean, pkt / 2},
	} {
		cfg := windowConfig(w)
		cfg.ECN = nil
		cfg.AckWait = tc.rule
		s, n, rec, _ := setup(t, g, cfg)
		n.Start([]int32{0, 3}, []int32{2, 1}, 4*size, 1) // A→B, long
		n.Start([]int32{2, 5}, []int32{4, 3}, size, 2)   // B→C
		s.RunUntil(engine.Millisecond)
		rate := math.Min(c*9052/(9052+60), inFlight/(base+tc.wait))
		want := float64(tr.Wire(size)*8) / rate
		if got := rec.sentAt[2].Seconds(); math.Abs(got-want) > 0.001*want {
			t.Errorf("rule %d: B→C sent at %.3f µs, want %.3f µs (%.2f Gb/s, its ACK waiting %.1f ns)", tc.rule, got*1e6, want*1e6, rate/1e9, tc.wait*1e9)
		}
	}
}

// TestLastPacketBehindAnotherFlowsPacket: a switch stores and forwards a packet whole and cannot
// send it before the one ahead of it, so a flow's last packet, short and right behind a full
// packet of another flow of its port, waits at the switch for that one. Seven flows of 256 KiB
// from one host to another over a 2,880 Gb/s switch (25 ns links, SimAI's 9,000-byte packets
// in whole nanoseconds: a full one 25 ns, the last, 1,196 bytes on the wire, 3.303 ns at the
// rate full ones make): the port sends 203 full packets by 5,075 ns, then the seven last
// packets. The full one before them reaches the switch at 5,100 and leaves it at 5,125; the
// first last packet, at the switch from 5,103.3, leaves behind it at 5,128.3, reaches the
// receiver at 5,153.3 and its ACK (no time on the wire) the sender at 5,203.3 ns; each next one
// 3.303 ns later. SimAI's ns-3 (flows_turn7_256KB__SpX8): 5,203, 5,206, … 5,221 ns. With
// sharing the seven end together at their mean, 5,213.2 ns. Before, the tail assumed the
// packet before the last was the flow's own, a share of the port earlier: 5,181 ns for the
// first with turns, 5,193 for all with sharing.
func TestLastPacketBehindAnotherFlowsPacket(t *testing.T) {
	const k, size = 7, 256 << 10
	last := 1196 * 25 / 9052.0 // ns
	for _, turns := range []bool{false, true} {
		cfg := repoConfig()
		cfg.Transport = fluid.SimAITransport(9000, 0)
		cfg.Transport.NanosecondClock = true
		cfg.ECN = nil
		cfg.Turns = turns
		g := star(t, 2, 2880e9, 25*engine.Nanosecond)
		s, n, rec, _ := setup(t, g, cfg)
		for i := range k {
			n.Start([]int32{0, 3}, []int32{2, 1}, size, int64(i))
		}
		s.Run()
		for i := range int64(k) {
			want := 5203.3 + float64(i)*last
			if !turns {
				want = 5203.3 + float64(k-1)/2*last
			}
			if got := float64(rec.arrived[i]) / 1e3; math.Abs(got-want) > 0.1 {
				t.Errorf("turns %v: flow %d done at %.2f ns, want %.2f", turns, i, got, want)
			}
		}
	}
}

// An ACK of a full packet made on a boundary of its receiver's packets goes first
// (AckWaitLocked): SimAI's ns-3 runs the data packet's arrival before the NIC's end of
// transmission (scheduled later), so the ACK is queued when the NIC picks its next packet. Two
// flows A→B and B→A over an NVSwitch started together, as in flows_ring8x1_512KB__SpX8: 25 ns
// links and 25 ns packets on ns-3's clock, so the path's propagation d is two packet times T
// and each ACK is made as B's NIC ends a packet. Its round trip is the base one plus T at the
// switch's port to A (behind B→A's packet that arrived with it; the ACK itself takes no time on
// the clock), where it was T more at B's NIC before (T − (d mod T)). Windows of a megabyte do
// not bind, so both links send all the time.
func TestACKOnAPacketBoundaryGoesFirst(t *testing.T) {
	cfg := windowConfig(1 << 20)
	cfg.Transport.NanosecondClock = true
	cfg.ECN = nil
	cfg.AckWait = AckWaitLocked
	g := star(t, 2, 2880e9, 25*engine.Nanosecond)
	s, n, _, _ := setup(t, g, cfg)
	ab := n.Start([]int32{0, 3}, []int32{2, 1}, 1<<20, 1)
	n.Start([]int32{2, 1}, []int32{0, 3}, 1<<20, 2)
	s.RunUntil(200 * engine.Nanosecond)
	const pkt = 25e-9
	want := 150e-9 + pkt // 2 × 50 ns of links, a full packet on each of the path's, the switch's wait
	if got := n.roundTripSecs(int32(ab), s.Now()); math.Abs(got-want) > 1e-12 {
		t.Errorf("A→B's round trip %.3f ns, want %.3f (base %.3f)", got*1e9, want*1e9, n.flows[ab].rtt0*1e9)
	}
}

// TestEventsByKind counts the events of a lone windowed flow done at its ACK, over an idle star:
// its last byte out (sent), its first ACK back, which ends its opening (open), its last packet at
// its receiver (ack), and the ends of the instants that changed its port (instant); nothing
// queues, so no other kind comes. Eight such flows into one port under DCQCN queue up past the
// ECN threshold: marks, CNPs and rate timers come too. The kinds add up to Events either way.
func TestEventsByKind(t *testing.T) {
	for k, name := range EventKindNames {
		if name == "" {
			t.Fatalf("event kind %d has no name in EventKindNames", k)
		}
	}
	count := func(st Stats) map[string]uint64 {
		by, sum := map[string]uint64{}, uint64(0)
		for k, name := range EventKindNames {
			by[name] = st.EventsByKind[k]
			sum += st.EventsByKind[k]
		}
		if sum != st.Events {
			t.Errorf("events by kind add up to %d, Events is %d (%v)", sum, st.Events, by)
		}
		return by
	}
	cfg := windowConfig(236000)
	cfg.FirstWindowBurst = true
	g := star(t, 9, G400, engine.Microsecond)
	s, n, _, _ := setup(t, g, cfg)
	n.Start([]int32{0, 3}, []int32{2, 1}, 1<<20, 1)
	s.Run()
	by := count(n.Stats())
	for name, want := range map[string]uint64{"sent": 1, "open": 1, "ack": 1, "cc": 0, "cnp": 0, "mark": 0, "empty": 0, "switch": 0, "pause": 0} {
		if by[name] != want {
			t.Errorf("lone flow: %d %s events, want %d (%v)", by[name], name, want, by)
		}
	}
	if by["instant"] == 0 {
		t.Errorf("lone flow: no instant ends (%v)", by)
	}

	s, n, _, _ = setup(t, g, cfg)
	for i := range int32(8) {
		n.Start([]int32{2 * i, 17}, []int32{16, 2*i + 1}, 8<<20, int64(i))
	}
	s.Run()
	by = count(n.Stats())
	if by["sent"] != 8 || by["mark"] == 0 || by["cnp"] == 0 || by["cc"] == 0 {
		t.Errorf("incast of 8: want 8 sent and some marks, CNPs and rate timers (%v)", by)
	}
}
