package packets

import (
	"math/rand/v2"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// star is a server's NVLink: gpus GPUs, each with an uplink to the switch (link 2g, a NIC port)
// and the switch's port down to it (link 2g+1).
type star struct {
	t     testing.TB
	s     *engine.Scheduler
	n     *Network
	start map[int32]engine.Time
	sent  map[int32]engine.Time
	done  map[int32]engine.Time
}

func (st *star) PacketsSent(slot int32, now engine.Time) { st.sent[slot] = now }
func (st *star) PacketsDone(slot int32, now engine.Time) {
	if _, dup := st.done[slot]; dup {
		st.t.Fatalf("slot %d done twice", slot)
	}
	st.done[slot] = now
}

// nvlinkTransport is SimAI's transport on ns-3's clock: 9,000-byte payloads, 52 bytes of
// headers, 60-byte ACKs.
func nvlinkTransport() fluid.Transport {
	tr := fluid.SimAITransport(9000, 0)
	tr.NanosecondClock = true
	return tr
}

func newStar(t testing.TB, gpus int, rate float64, delay engine.Time, cfg Config) *star {
	t.Helper()
	links := make([]Link, 2*gpus)
	for g := range gpus {
		links[2*g] = Link{Role: NIC, Rate: rate, Delay: delay}
		links[2*g+1] = Link{Role: Egress, Rate: rate, Delay: delay}
	}
	st := &star{t: t, s: engine.NewScheduler(), start: map[int32]engine.Time{}, sent: map[int32]engine.Time{}, done: map[int32]engine.Time{}}
	n, err := New(st.s, links, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.n = n
	return st
}

// flow starts slot's flow of bytes from GPU a to GPU b at time at.
func (st *star) flow(slot, a, b int32, bytes int64, at engine.Time) {
	st.start[slot] = at
	st.s.AtFunc(at, func() {
		st.n.Start(slot, []int32{2 * a, 2*b + 1}, []int32{2 * b, 2*a + 1}, bytes)
	})
}

func (st *star) fct(slot int32) engine.Time {
	st.t.Helper()
	d, ok := st.done[slot]
	if !ok {
		st.t.Fatalf("slot %d never done", slot)
	}
	return d - st.start[slot]
}

const ns = engine.Nanosecond

// A flow alone: n packets leave back to back, each switch sends a packet once stored whole (a
// short last packet waits behind the full one before it), and the ACK of the last comes back.
// With n ≥ 2 packets of time T and a last of T_L, links of delay d and ACKs of T_A:
// FCT = n·T + T_L + 4d + 2T_A; with one packet 2T_L + 4d + 2T_A.
func TestOneFlowAlone(t *testing.T) {
	for _, c := range []struct {
		name  string
		rate  float64
		delay engine.Time
		bytes int64
		want  engine.Time
	}{
		// NVLink, 2,880 Gb/s, 25 ns: a 9,052-byte packet takes 25 ns, 8,244 bytes 22 ns,
		// an ACK 0 (whole nanoseconds, rounded down). SimAI's ns-3 has 144 and 489 ns for
		// these flows alone.
		{"8KiB NVLink", 2880e9, 25 * ns, 8192, (2*22 + 4*25) * ns},
		{"128KiB NVLink", 2880e9, 25 * ns, 131072, (15*25 + 14 + 4*25) * ns},
		{"1 byte", 2880e9, 25 * ns, 1, (2*0 + 4*25) * ns},       // 53 bytes: 0.147 ns → 0
		{"0 bytes as 1", 2880e9, 25 * ns, 0, (2*0 + 4*25) * ns}, // a packet carries a byte
		{"two full packets", 400e9, 500 * ns, 18000, (2*181 + 181 + 4*500 + 2*1) * ns},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStar(t, 2, c.rate, c.delay, Config{Transport: nvlinkTransport()})
			st.flow(0, 0, 1, c.bytes, 0)
			st.s.Run()
			if got := st.fct(0); got != c.want {
				t.Errorf("FCT %v, want %v", got, c.want)
			}
		})
	}
}

// Two queue pairs of one port, made at once, are served in turn, a packet each: A1 B1 A2 B2
// leave GPU 0 at 0, 25, 50 and 75 ns, reach GPU 1 100 ns after they begin, and each last ACK
// is back 50 ns after its packet arrives.
func TestQueuePairsTakeTurns(t *testing.T) {
	st := newStar(t, 2, 2880e9, 25*ns, Config{Transport: nvlinkTransport()})
	st.flow(0, 0, 1, 18000, 0)
	st.flow(1, 0, 1, 18000, 0)
	st.s.Run()
	if got, want := st.fct(0), 200*ns; got != want {
		t.Errorf("first queue pair: FCT %v, want %v", got, want)
	}
	if got, want := st.fct(1), 225*ns; got != want {
		t.Errorf("second queue pair: FCT %v, want %v", got, want)
	}
	// The last byte of A leaves at 75 ns, of B at 100.
	if st.sent[0] != 75*ns || st.sent[1] != 100*ns {
		t.Errorf("sent at %v and %v, want 75ns and 100ns", st.sent[0], st.sent[1])
	}
}

// An ACK goes ahead of the data queued at its NIC port but waits for the packet on the wire:
// GPU 1 sends to GPU 2 back to back from 0 (packets begin at 0, 25, 50, 75, 100 ns); GPU 0's
// one-packet flow reaches GPU 1 at 94 ns, its ACK leaves at 100 ns, ahead of GPU 1's next
// packet, and is back at 150 ns instead of 144.
func TestACKWaitsForThePacketOnTheWire(t *testing.T) {
	st := newStar(t, 3, 2880e9, 25*ns, Config{Transport: nvlinkTransport()})
	st.flow(0, 1, 2, 90000, 0)
	st.flow(1, 0, 1, 8192, 0)
	st.s.Run()
	if got, want := st.fct(1), 150*ns; got != want {
		t.Errorf("FCT %v, want %v", got, want)
	}
	// The ACK took a 0 ns turn: GPU 1's tenth packet is not delayed (ten full packets, the
	// last of them begun at 225 ns and done at 250; ACKs back 100 ns after it ends).
	if got, want := st.sent[0], 250*ns; got != want {
		t.Errorf("GPU 1's last byte left at %v, want %v", got, want)
	}
}

// A window of two packets: the third waits for the first one's ACK (at 150 ns) and the fourth
// for the second's (175 ns); without a window the flow takes 4·25 + 25 + 100 = 225 ns.
func TestWindowHoldsPackets(t *testing.T) {
	st := newStar(t, 2, 2880e9, 25*ns, Config{Transport: nvlinkTransport(), Window: 18000})
	st.flow(0, 0, 1, 36000, 0)
	st.s.Run()
	if got, want := st.fct(0), 325*ns; got != want {
		t.Errorf("windowed FCT %v, want %v", got, want)
	}
	st = newStar(t, 2, 2880e9, 25*ns, Config{Transport: nvlinkTransport()})
	st.flow(0, 0, 1, 36000, 0)
	st.s.Run()
	if got, want := st.fct(0), 225*ns; got != want {
		t.Errorf("FCT without window %v, want %v", got, want)
	}
}

// With completion at arrival a flow is done when its last packet reaches the receiver.
func TestCompletionAtArrival(t *testing.T) {
	tr := nvlinkTransport()
	tr.AtAck = false
	st := newStar(t, 2, 2880e9, 25*ns, Config{Transport: tr})
	st.flow(0, 0, 1, 131072, 0)
	st.flow(1, 0, 1, 8192, 1000*ns)
	st.s.Run()
	if got, want := st.fct(0), (15*25+14+2*25)*ns; got != want {
		t.Errorf("FCT %v, want %v", got, want)
	}
	if got, want := st.fct(1), (2*22+2*25)*ns; got != want {
		t.Errorf("FCT %v, want %v", got, want)
	}
}

// The turn's scan drops the queue pairs that are done from the lowest it passed onwards, and
// the one found moves down with them; those before it stay (RdmaEgressQueue::GetNextQindex).
func TestTurnDropsDoneQueuePairs(t *testing.T) {
	st := newStar(t, 2, 2880e9, 25*ns, Config{Transport: nvlinkTransport()})
	n := st.n
	mk := func(done bool) int32 {
		id := int32(len(n.qps))
		q := qp{slot: -1, size: 100, avail: 0}
		if done {
			q.nxt, q.una, q.done = 100, 100, true
		}
		n.qps = append(n.qps, q)
		return id
	}
	a, b, c, d, e := mk(true), mk(true), mk(true), mk(false), mk(true)
	lk := &n.links[0]
	lk.qps = []int32{a, b, c, d, e}
	lk.rrlast = 1 // the scan looks at c, d: finds d, having passed c
	got := n.nextQP(0, 0)
	if want := []int32{a, b, d}; !equal(lk.qps, want) || got != 2 {
		t.Errorf("list %v, found %d; want %v and 2", lk.qps, got, want)
	}
	if len(n.free) != 2 {
		t.Errorf("freed %v, want c and e", n.free)
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Every byte and ACK is accounted for: over a ring of one server's eight GPUs, seven queue pairs
// each, every flow is done once, every port is idle at the end and every data packet brought
// one ACK.
func TestRingConservesPackets(t *testing.T) {
	st := newStar(t, 8, 2880e9, 25*ns, Config{Transport: nvlinkTransport(), Window: 236000})
	slot := int32(0)
	var wire int64
	for g := range int32(8) {
		for range 7 {
			b := int64(1 + 37000*int(slot)%500000)
			st.flow(slot, g, (g+1)%8, b, engine.Time(slot%5)*10*ns)
			wire += nvlinkTransport().Wire(b)
			slot++
		}
	}
	st.s.Run()
	if len(st.done) != int(slot) || len(st.sent) != int(slot) {
		t.Fatalf("%d done, %d sent of %d", len(st.done), len(st.sent), slot)
	}
	stats := st.n.Stats()
	if stats.ACKs != stats.Packets {
		t.Errorf("%d ACKs for %d packets", stats.ACKs, stats.Packets)
	}
	var up int64
	for l := range st.n.links {
		lk := &st.n.links[l]
		if lk.busy || lk.queued != 0 || lk.q.len() != 0 || lk.acks.len() != 0 {
			t.Errorf("link %d not idle at the end", l)
		}
		if l%2 == 0 {
			up += lk.sent
		}
	}
	if acks := int64(stats.ACKs) * nvlinkTransport().Ack; up != wire+acks {
		t.Errorf("uplinks sent %d bytes, want %d of data and %d of ACKs", up, wire, acks)
	}
}

// Random flows between the GPUs of a server, windows on and off: every flow is done once and
// never sooner than it would be alone (TestOneFlowAlone's closed form), every data packet
// brought one ACK, and every port is idle and empty at the end.
func TestRandomFlowsProperties(t *testing.T) {
	const gpus, d = 6, 25 * ns
	tr := nvlinkTransport()
	alone := func(bytes int64) engine.Time {
		full := engine.Time(25) * ns // 9,052 bytes at 2,880 Gb/s, whole nanoseconds
		last := engine.Time(float64(tr.Last(bytes))*8/2880) * ns
		if n := tr.Packets(bytes); n > 1 {
			return engine.Time(n)*full + last + 4*d
		}
		return 2*last + 4*d
	}
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		win := int64(0)
		if seed%2 == 1 {
			win = int64(1+rng.IntN(4)) * 9000
		}
		st := newStar(t, gpus, 2880e9, d, Config{Transport: tr, Window: win})
		size := map[int32]int64{}
		for slot := range int32(60) {
			a := int32(rng.IntN(gpus))
			b := (a + 1 + int32(rng.IntN(gpus-1))) % gpus
			bytes := int64(rng.IntN(80000))
			size[slot] = bytes
			st.flow(slot, a, b, bytes, engine.Time(rng.IntN(3000))*ns)
		}
		st.s.Run()
		for slot, bytes := range size {
			if got, lo := st.fct(slot), alone(max(bytes, 1)); got < lo {
				t.Errorf("seed %d: flow %d of %d bytes took %v, less than %v alone", seed, slot, bytes, got, lo)
			}
		}
		if s := st.n.Stats(); s.ACKs != s.Packets || s.Flows != uint64(len(size)) {
			t.Errorf("seed %d: %+v for %d flows", seed, s, len(size))
		}
		for l := range st.n.links {
			lk := &st.n.links[l]
			if lk.busy || lk.queued != 0 || lk.q.len() != 0 || lk.acks.len() != 0 {
				t.Errorf("seed %d: link %d not idle at the end", seed, l)
			}
		}
	}
}
