package ccfluid

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
	"simd/topo/route"
)

// turnsRun starts flows of the given payload sizes from host 0 of a 400 Gb/s star to hosts
// 1.., flow i at starts[i], with packets of 9,000 bytes and 52 of headers sent in whole
// nanoseconds (SimAI's clock: 181 ns a full packet), and returns when each was sent (its last
// byte left host 0's port).
func turnsRun(t *testing.T, turns bool, sizes []int64, starts []engine.Time) []engine.Time {
	t.Helper()
	cfg := repoConfig()
	cfg.Transport = fluid.Transport{Payload: 9000, Header: 52, Ack: 60, NanosecondClock: true}
	cfg.Turns = turns
	g := star(t, len(sizes)+1, G400, engine.Microsecond)
	s, n, rec, _ := setup(t, g, cfg)
	for i, b := range sizes {
		s.AtFunc(starts[i], func() {
			dst := int32(i + 1)
			n.Start([]int32{0, 2*dst + 1}, []int32{2 * dst, 1}, b, int64(i))
		})
	}
	s.Run()
	out := make([]engine.Time, len(sizes))
	for i := range sizes {
		out[i] = rec.sentAt[int64(i)]
	}
	return out
}

// TestTurnsEqualFlows: k flows of n full packets that start together leave in turn: flow i's
// last packet is the ((n−1)·k + i + 1)-th the port sends.
func TestTurnsEqualFlows(t *testing.T) {
	const k, np = 4, 5
	const slot = 181e3 // ps: a full packet in whole nanoseconds
	sizes := make([]int64, k)
	starts := make([]engine.Time, k)
	for i := range sizes {
		sizes[i] = np * 9000
	}
	got := turnsRun(t, true, sizes, starts)
	for i := range k {
		want := float64((np-1)*k+i+1) * slot
		if math.Abs(float64(got[i])-want) > 2 {
			t.Errorf("flow %d sent at %d ps, want %.0f", i, got[i], want)
		}
	}
}

// roundRobin is a packet-level reference: a port of rate bits/s serves the flows (payload
// sizes, start times) in turn, a packet each, in the order they started, a full packet in whole
// nanoseconds rounded down (ns-3's clock), and returns when each flow's last packet has left.
func roundRobin(sizes []int64, starts []engine.Time, rate float64) []float64 {
	const payload, header = 9000, 52
	left := make([]int64, len(sizes))
	for i, b := range sizes {
		left[i] = b
	}
	done := make([]float64, len(sizes))
	now, last, finished := 0.0, -1, 0
	for finished < len(sizes) {
		pick := -1
		for s := 1; s <= len(sizes); s++ {
			j := (last + s) % len(sizes)
			if last < 0 {
				j = s - 1
			}
			if left[j] > 0 && float64(starts[j]) <= now {
				pick = j
				break
			}
		}
		if pick < 0 {
			next := math.Inf(1)
			for j := range sizes {
				if left[j] > 0 {
					next = min(next, float64(starts[j]))
				}
			}
			now = next
			continue
		}
		p := min(left[pick], payload)
		left[pick] -= p
		// A full packet in whole nanoseconds (⌊9,052·8/rate⌋), any other at the rate that makes
		// (Transport.PacketRate): the fluid's clock for a port of rate.
		full := math.Floor(float64((payload+header)*8)/rate*1e9) * 1e3
		now += float64(p+header) / (payload + header) * full
		last = pick
		if left[pick] == 0 {
			done[pick] = now
			finished++
		}
	}
	return done
}

// TestTurnsMatchRoundRobin: flows of random sizes that start at random times on one port
// leave when the packet-level round robin sends their last packets.
func TestTurnsMatchRoundRobin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 300 {
		k := 2 + rng.IntN(6)
		sizes := make([]int64, k)
		starts := make([]engine.Time, k)
		for i := range k {
			sizes[i] = 1 + rng.Int64N(60000)
			starts[i] = engine.Time(rng.Int64N(2000)) * engine.Nanosecond // ns-3 starts flows at whole ns
		}
		slices.Sort(starts)
		got := turnsRun(t, true, sizes, starts)
		want := roundRobin(sizes, starts, G400)
		tol := 10.0 // ps: each end is rounded up to the picosecond
		for i := range k {
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Fatalf("trial %d: sizes %v starts %v: flow %d sent at %d ps, round robin %.0f (all: %v vs %.0f)", trial, sizes, starts, i, got[i], want[i], got, want)
			}
		}
	}
}

// forwardedStar is the network of the forwarded-grid tests: a star of 3 hosts on 400 Gb/s links
// of 1 µs, packets of 9,000 bytes and 52 of headers on ns-3's whole-nanosecond clock (181 ns a
// full one), flows done at their last ACK (of no size), ACKs waiting the mean of a packet where
// no grid is known, and the NIC ports serving their flows in turn or not.
func forwardedStar(t *testing.T, turns bool) (Config, *route.Graph) {
	t.Helper()
	cfg := repoConfig()
	cfg.Transport = fluid.Transport{Payload: 9000, Header: 52, Ack: 0, NanosecondClock: true, AtAck: true}
	cfg.Turns = turns
	cfg.AckWait = AckWaitMean
	return cfg, star(t, 3, G400, engine.Microsecond)
}

// TestLastACKWaitsOnForwardedTurns: the last ACK of a flow waits at a switch port that forwards
// another host's round robin for the rest of the packet the port is sending, as ns-3's switch
// queues it (ACK_HIGH_PRIO 0). On a 400 Gb/s star with 1 µs links and ACKs of no size, host 0
// sends two long flows to host 1, in turn, packets of 181 ns on ns-3's clock from 0; host 1
// sends X, two full packets, to host 2 from start. X's last packet leaves host 1 at 362 ns, is
// stored at the switch at 1,362 and forwarded by 1,543, reaches host 2 at 2,543; its ACK
// leaves at once (host 2 sends nothing) and reaches the switch at 3,543. The switch port to
// host 1 sends host 0's k-th packet from 181(k+1) + 1,000 on: its packets end at 1,000 + 181m,
// the next at 3,715, so the ACK waits 172 ns and X is done at 3,715 + 1,000 = 4,715 ns after
// it started. Without turns the switch port's packets are not followed and the ACK waits half
// a packet while the port sends (locked rule aside), 90.5 ns: 4,633.5.
func TestLastACKWaitsOnForwardedTurns(t *testing.T) {
	for _, c := range []struct {
		turns bool
		start engine.Time
		want  float64 // ns after X's start
	}{
		{true, 0, 4715},
		// X starts 50 ns later: its ACK reaches the switch at 3,593, 122 ns before 3,715.
		{true, 50 * engine.Nanosecond, 4715 - 50},
		// 150 ns later: at 3,693, 22 ns before 3,715.
		{true, 150 * engine.Nanosecond, 4715 - 150},
		// 200 ns later: at 3,743, 153 ns before 3,896.
		{true, 200 * engine.Nanosecond, 3896 + 1000 - 200},
		{false, 0, 3543 + 90.5 + 1000},
	} {
		cfg, g := forwardedStar(t, c.turns)
		s, n, rec, _ := setup(t, g, cfg)
		for i := range 2 {
			s.AtFunc(0, func() { n.Start([]int32{0, 3}, []int32{2, 1}, 20*9000, int64(i)) })
		}
		s.AtFunc(c.start, func() { n.Start([]int32{2, 5}, []int32{4, 3}, 2*9000, 2) })
		s.Run()
		got := float64(rec.arrived[2]-c.start) / 1e3
		if math.Abs(got-c.want) > 1 {
			t.Errorf("turns %v, X started at %d ps: done %.1f ns after its start, want %.1f", c.turns, c.start, got, c.want)
		}
	}
}

// TestTurnsIdleWhenTheACKComes: a port that serves its flows in turn and has sent all it had by
// the time an ACK reaches it is idle, and the ACK waits for nothing there. A ring's first step
// on one server: each of 8 hosts of a 2,880 Gb/s star (25 ns links) sends seven 256 KiB flows to
// the next. Host 1's port ends its own last packets at 5,098 ns, and the ACKs of host 0's flows
// reach it from 5,153 ns on; the switch port to host 0, which forwards host 7's, is done by
// 5,148, before they reach it from 5,178. So host 0's flows end as alone on their receiver's
// and the switch's ports: 5,203.3 ns and 3.303 ns apart (TestLastPacketBehindAnotherFlowsPacket),
// as in SimAI's ns-3 (flows_ringturn8x7_256KB__SpX8: 5,203 to 5,221, 3 ns apart). The round
// robin's look ahead used to give up on a port with nothing left rather than call it idle, and
// the ACK then waited the share of a packet a busy port gives: 50 ns more for four of the seven.
func TestTurnsIdleWhenTheACKComes(t *testing.T) {
	const hosts, k, size = 8, 7, 256 << 10
	cfg := repoConfig()
	cfg.Transport = fluid.SimAITransport(9000, 0)
	cfg.Transport.NanosecondClock = true
	cfg.ECN = nil
	cfg.Turns = true
	g := star(t, hosts, 2880e9, 25*engine.Nanosecond)
	s, n, rec, _ := setup(t, g, cfg)
	for h := range int32(hosts) {
		d := (h + 1) % hosts
		for i := range k {
			n.Start([]int32{2 * h, 2*d + 1}, []int32{2 * d, 2*h + 1}, size, int64(h*k)+int64(i))
		}
	}
	s.Run()
	last := 1196 * 25 / 9052.0 // ns
	for i := range int64(k) {
		want := 5203.3 + float64(i)*last
		if got := float64(rec.arrived[i]) / 1e3; math.Abs(got-want) > 0.1 {
			t.Errorf("host 0's flow %d done at %.2f ns, want %.2f", i, got, want)
		}
	}
}

// TestForwardedGridLagsAFullPacket: a switch port forwarding a round robin sends each packet a
// propagation delay and a full packet after the port began it, also the short last packets,
// which queue behind the full one before them. The star of TestLastACKWaitsOnForwardedTurns,
// host 0's two flows now 20 full packets and a last one of 1,000 bytes (21 ns on the wire):
// host 0 sends full packets until 7,240 ns, then the two last ones; the switch port to host 1
// sends the last full one from 8,240 to 8,421 and the two last ones after it. X starts at 4,707
// ns; its ACK reaches that port at 8,250 (X's start + 3,543), waits the 171 ns left of that full
// packet and is back at 9,421: 4,714 ns after X started. Taking the port's packet under way one
// propagation delay earlier (at 7,250: the first last packet, 11 ns left) would give 4,554.
func TestForwardedGridLagsAFullPacket(t *testing.T) {
	cfg, g := forwardedStar(t, true)
	for _, c := range []struct {
		start engine.Time
		want  float64
	}{
		{4707 * engine.Nanosecond, 4714},
		// X 180 ns later: its ACK reaches the port at 8,430, when the last full packet is out
		// (8,421) and every last byte has reached the switch (8,282), but the port still sends
		// the first last packet, to 8,442, and the second is queued behind it, to 8,463
		// (TestForwardedShortPacketsQueueAheadOfTheACK): 33 ns of wait, 4,576 ns (4,543 if the
		// port were idle).
		{4887 * engine.Nanosecond, 4576},
	} {
		s, n, rec, _ := setup(t, g, cfg)
		for i := range 2 {
			s.AtFunc(0, func() { n.Start([]int32{0, 3}, []int32{2, 1}, 20*9000+1000, int64(i)) })
		}
		s.AtFunc(c.start, func() { n.Start([]int32{2, 5}, []int32{4, 3}, 2*9000, 2) })
		s.Run()
		if got := float64(rec.arrived[2]-c.start) / 1e3; math.Abs(got-c.want) > 1 {
			t.Errorf("X started at %v: done %.1f ns after its start, want %.0f", c.start, got, c.want)
		}
	}
}

// TestLastACKWaitsForTheReceiversNewFlows: the last ACK of a flow waits at its receiver's port
// for the rest of the packet that port sends when the ACK is made, also when the port began
// sending after the flow's last byte had left its sender. On a star of 400 Gb/s links of 1 µs,
// host 0 sends A (two full packets) to host 1; host 1 starts B and C (ten full packets each, to
// host 2) together after A's last byte left host 0 (at 362 ns) but before A's last packet
// reaches host 1 (at 2,543: two links and the store-and-forward of a full packet). Its port
// serves them in turn, a packet each of 181 ns (9,052 bytes on ns-3's whole-nanosecond clock)
// from their start on, so A's last ACK, made d ns after it, leaves host 1 181 − d ns later than
// with host 1 idle, and A ends that much later. SimAI's ns-3 makes such waits wherever a ring's
// steps follow each other without send latency, a cross-server flow's way back being longer
// than a step: on the 200 Gb/s Spectrum-X 16 ring of 4 MiB (tp16_allreduce_4MB__SpX16bw200__lat0,
// rebuilt with its packets logged) GPU 0's first flow to GPU 9 has its last packet at GPU 9 at
// 4,053 ns, and its ACK leaves at 4,313, behind a packet of the chunks GPU 9 started sending
// from 1,523 ns on. (Read when A's last byte left host 0, host 1's port was idle, and A's ACK
// waited for nothing.)
func TestLastACKWaitsForTheReceiversNewFlows(t *testing.T) {
	cfg := repoConfig()
	cfg.Transport = fluid.SimAITransport(9000, 0)
	cfg.Transport.NanosecondClock = true
	cfg.ECN = nil
	cfg.Turns = true
	g := star(t, 3, G400, engine.Microsecond)
	run := func(bStart engine.Time) (a engine.Time) {
		s, n, rec, _ := setup(t, g, cfg)
		n.Start([]int32{0, 3}, []int32{2, 1}, 2*9000, 0)
		if bStart > 0 {
			s.AtFunc(bStart, func() {
				for i := range 2 {
					n.Start([]int32{2, 5}, []int32{4, 3}, 10*9000, int64(1+i))
				}
			})
		}
		s.Run()
		return rec.arrived[0]
	}
	alone := run(0)
	made := 2*181*engine.Nanosecond + 2*engine.Microsecond + 181*engine.Nanosecond // sent, propagation, the last packet's store-and-forward
	for _, d := range []engine.Time{20, 100, 170, 181 + 60} {
		got := run(made-d*engine.Nanosecond) - alone
		// Up to 2 ns more: host 1's port, having answered A, keeps room for ACKs (60 bytes a
		// packet), so the fluid's packets of B and C take 182 ns where ns-3's take 181 and the
		// ACKs 1 ns between them.
		if want := (181 - d%181) * engine.Nanosecond; got < want || got > want+2*engine.Nanosecond {
			t.Errorf("B and C started %d ns before A's last ACK is made: A ends %v later than alone, want %v", d, got, want)
		}
	}
}

// TestForwardedGridLagsAShortPacket: where every flow a switch port forwards from a round robin
// is a single short packet, the port sends each a propagation delay and that packet's own time
// after the NIC port began it: nothing full is ahead of them. The star of
// TestForwardedGridLagsAFullPacket, host 0 now sending 30 flows of 8,192 bytes in turn: 8,244
// bytes on the wire, p = 8,244/9,052 of the 181 ns a full packet takes (164.84 ns); the switch
// port to host 1 sends host 0's i-th from 1,000 + (i+1)·p. X's ACK reaches that port at X's
// start + 3,543 ns; X is started so that this falls a quarter into host 0's k-th packet there,
// which it waits out (3p/4), and X's ACK is back at host 1 a link's microsecond later. Lagging a
// full packet's 181 ns instead would put the ACK 25 ns into a packet and 16 ns later back.
func TestForwardedGridLagsAShortPacket(t *testing.T) {
	cfg, g := forwardedStar(t, true)
	p := 8244 * 181 / 9052.0 // ns
	for _, k := range []int{20, 26} {
		at := 1000 + p*float64(k+1) + p/4 // ns: X's ACK at the switch port to host 1
		start := engine.Time(math.Round((at - 3543) * 1e3))
		s, n, rec, _ := setup(t, g, cfg)
		for i := range 30 {
			n.Start([]int32{0, 3}, []int32{2, 1}, 8192, int64(i))
		}
		s.AtFunc(start, func() { n.Start([]int32{2, 5}, []int32{4, 3}, 2*9000, 100) })
		s.Run()
		want := at + 3*p/4 + 1000 - float64(start)/1e3
		if got := float64(rec.arrived[100]-start) / 1e3; math.Abs(got-want) > 1 {
			t.Errorf("ACK in host 0's packet %d: X done %.1f ns after its start, want %.1f", k, got, want)
		}
	}
}

// TestForwardedShortPacketsQueueAheadOfTheACK: a switch port forwarding a round robin lags it by
// a full packet, so the short last packets of the round reach it before it can send them, and
// an ACK that reaches the port after such a packet is stored there waits for it too: ns-3's
// switch queues the ACK behind it (ACK_HIGH_PRIO 0; a data packet that arrives in the same
// nanosecond was scheduled first). The star of TestForwardedGridLagsAFullPacket, host 0's two
// flows now 20 full packets and a last one of 5,000 bytes (5,052 on the wire, 101 ns): host 0
// sends full packets until 7,240 ns, the first last packet to 7,341, the second to 7,442. The
// switch port to host 1 sends the last full one from 8,240 to 8,421, the first last packet to
// 8,522 and the second, stored whole at 8,442, to 8,623. X's ACK reaches the port at X's start
// + 3,543 ns: at 8,430 it waits for the first last packet alone (92 ns: X done 4,635 ns after
// its start); at 8,480 the second is queued ahead of it and it leaves at 8,623 (4,686; the
// first last packet alone would give 4,585).
func TestForwardedShortPacketsQueueAheadOfTheACK(t *testing.T) {
	last := 5052 * 181 / 9052.0 // ns
	cfg, g := forwardedStar(t, true)
	for _, c := range []struct {
		ack  float64 // ns: when X's ACK reaches the switch port to host 1
		want float64 // ns after X's start
	}{
		{8430, 7240 + last + 1181 + 1000 - (8430 - 3543)},
		{8480, 7240 + 2*last + 1181 + 1000 - (8480 - 3543)},
	} {
		start := engine.Time(math.Round((c.ack - 3543) * 1e3))
		s, n, rec, _ := setup(t, g, cfg)
		for i := range 2 {
			s.AtFunc(0, func() { n.Start([]int32{0, 3}, []int32{2, 1}, 20*9000+5000, int64(i)) })
		}
		s.AtFunc(start, func() { n.Start([]int32{2, 5}, []int32{4, 3}, 2*9000, 2) })
		s.Run()
		if got := float64(rec.arrived[2]-start) / 1e3; math.Abs(got-c.want) > 1 {
			t.Errorf("X's ACK at the switch port at %.0f ns: X done %.1f ns after its start, want %.1f", c.ack, got, c.want)
		}
	}
}

// TestLastFlowOfARoundSendsItsLastPacketAlone: when all but one of a round robin's flows have
// left a NIC port, the one left sends its last packet alone, and the last ACK its receiver port
// makes meanwhile waits for the rest of it, as for any packet of the round (SimAI's ns-3 on the
// 16 MiB ring of Spectrum-X 16: GPU 1's port sends its last flow's last packet from 8,545 to
// 8,559 ns, and the ACK of GPU 0's first flow, made at 8,550, leaves at 8,559). On the star of
// TestLastACKWaitsOnForwardedTurns host 1 sends P and Q to host 2, 20 full packets and a last
// one of 5,000 bytes each, in turn: full packets until 7,240 ns, P's last packet to 7,341, Q's
// alone to 7,442. Host 0 sends A, one full packet, to host 1, started so that it is there at
// 7,400 (two links and the switch's store and forward: 2,362 ns): its ACK leaves host 1 at
// 7,442 and A is done at 9,442 ns, 4,404 after its start. The port used to forget its round
// robin once one flow was left, and the ACK then waited the mean of a packet, 90.5 ns (4,452.5).
func TestLastFlowOfARoundSendsItsLastPacketAlone(t *testing.T) {
	last := 5052 * 181 / 9052.0 // ns
	cfg, g := forwardedStar(t, true)
	const made = 7400.0 // ns: A's last packet at host 1
	start := engine.Time(math.Round((made - 2362) * 1e3))
	s, n, rec, _ := setup(t, g, cfg)
	for i := range 2 {
		s.AtFunc(0, func() { n.Start([]int32{2, 5}, []int32{4, 3}, 20*9000+5000, int64(i)) })
	}
	s.AtFunc(start, func() { n.Start([]int32{0, 3}, []int32{2, 1}, 9000, 2) })
	s.Run()
	want := 7240 + 2*last + 2000 - float64(start)/1e3
	if got := float64(rec.arrived[2]-start) / 1e3; math.Abs(got-want) > 1 {
		t.Errorf("A done %.1f ns after its start, want %.1f", got, want)
	}
}

// TestLastACKWaitsAsAnywhereOnAMixedPort: a switch port that forwards one host's round robin
// and another host's flow as well does not send on that host's packet grid, and a last ACK
// waits there as at any busy port. On forwardedStar's links, a star of 4 hosts: host 0 serves
// two long flows in turn, one to host 1 and one to host 3; host 3 serves three, one to host 1
// and two to host 0. The switch port to host 1 then receives about 340 Gb/s from two ports, no
// backlog, and carries as many flows as host 0's port, whose flow comes first on it. X, two
// full packets from host 1 to host 2 at 0, has its last ACK at that port at 3,543 ns
// (TestLastACKWaitsOnForwardedTurns); it waits half a full packet for the share of the time
// the port sends, in quarters (ackWaitAt: 0.75 · 90.5 ns), and X is done at 4,610.9 ns. Taking
// the port for host 0's forwarder, as a check of its first flow alone would, gives the grid's
// wait: 4,715.
func TestLastACKWaitsAsAnywhereOnAMixedPort(t *testing.T) {
	cfg := repoConfig()
	cfg.Transport = fluid.Transport{Payload: 9000, Header: 52, Ack: 0, NanosecondClock: true, AtAck: true}
	cfg.Turns = true
	cfg.AckWait = AckWaitMean
	g := star(t, 4, G400, engine.Microsecond)
	s, n, rec, _ := setup(t, g, cfg)
	s.AtFunc(0, func() {
		n.Start([]int32{0, 3}, []int32{2, 1}, 20*9000, 0) // host 0 → host 1
		n.Start([]int32{0, 7}, []int32{6, 1}, 20*9000, 1) // host 0 → host 3
		n.Start([]int32{6, 3}, []int32{2, 7}, 20*9000, 3) // host 3 → host 1
		n.Start([]int32{6, 1}, []int32{0, 7}, 20*9000, 4) // host 3 → host 0
		n.Start([]int32{6, 1}, []int32{0, 7}, 20*9000, 5) // host 3 → host 0
		n.Start([]int32{2, 5}, []int32{4, 3}, 2*9000, 2)  // X: host 1 → host 2
	})
	q := -1.0
	s.AtFunc(3543*engine.Nanosecond, func() { q = n.Queue(3) })
	s.Run()
	if q != 0 {
		t.Fatalf("the switch port to host 1 holds %.0f bytes when X's ACK comes, want none", q)
	}
	if got, want := float64(rec.arrived[2])/1e3, 3543+0.75*90.5+1000; math.Abs(got-want) > 0.1 {
		t.Errorf("X done at %.2f ns, want %.2f", got, want)
	}
}
