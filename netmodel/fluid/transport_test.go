package fluid

import (
	"math"
	"slices"
	"testing"

	"simd/engine"
)

// SimAI's packet formats: 52 bytes of headers per data packet and a 60-byte ACK (PPP counted as
// 14, IPv4 20, UDP 8, sequence header 10; the ACK's qbbHeader of 16 padded to a 60-byte frame);
// HPCC adds its 42-byte INT header to both.
func TestSimAITransportSizes(t *testing.T) {
	for _, tc := range []struct {
		intBytes, header, ack int64
	}{
		{0, 52, 60},
		{HPCCIntBytes, 94, 92},
	} {
		tr := SimAITransport(9000, tc.intBytes)
		if tr.Header != tc.header || tr.Ack != tc.ack || !tr.AtAck || tr.Payload != 9000 {
			t.Errorf("INT %d: %+v, want header %d, ack %d, done at the ACK", tc.intBytes, tr, tc.header, tc.ack)
		}
	}
}

func TestTransportPackets(t *testing.T) {
	tr := SimAITransport(9000, 0)
	for _, tc := range []struct {
		bytes, packets, wire, last int64
	}{
		{0, 1, 1 + 52, 1 + 52}, // an empty flow is one byte, as in SimAI
		{1, 1, 53, 53},
		{8192, 1, 8244, 8244},
		{9000, 1, 9052, 9052},
		{9001, 2, 9001 + 104, 1 + 52},
		{1 << 20, 117, 1<<20 + 117*52, 1<<20 - 116*9000 + 52},
	} {
		if got := tr.Packets(tc.bytes); got != tc.packets {
			t.Errorf("Packets(%d) = %d, want %d", tc.bytes, got, tc.packets)
		}
		if got := tr.Wire(tc.bytes); got != tc.wire {
			t.Errorf("Wire(%d) = %d, want %d", tc.bytes, got, tc.wire)
		}
		if got := tr.Last(tc.bytes); got != tc.last {
			t.Errorf("Last(%d) = %d, want %d", tc.bytes, got, tc.last)
		}
	}
	if got := tr.Full(); got != 9052 {
		t.Errorf("Full = %d", got)
	}
	var fluid Transport
	if fluid.Wire(100) != 100 || fluid.Last(100) != 0 || fluid.Packets(100) != 1 || fluid.Full() != 0 {
		t.Errorf("the zero Transport is not a pure fluid")
	}
}

// The last packet's way through empty store-and-forward switches, from the moment its last bit
// leaves the sender: closed forms for links of one rate C.
func TestTail(t *testing.T) {
	tr := SimAITransport(9000, 0)
	const c = 400e9
	ps := func(bits float64) engine.Time { return engine.Time(math.Ceil(bits / c * 1e12)) }
	four := []float64{c, c, c, c}
	for _, tc := range []struct {
		name  string
		bytes int64
		rate  float64
		rates []float64
		want  engine.Time
	}{
		// One packet: each of the three switches stores it and sends it on.
		{"one packet", 8192, c, four, ps(3 * 8244 * 8)},
		// Many packets at line rate: the last one waits at each switch for the full packet
		// before it, so the tail is three full packets, not three last ones.
		{"line rate", 1 << 20, c, four, ps(3 * 9052 * 8)},
		// At half the line rate the packet before the last ended 2τ earlier (τ: the last
		// packet's time at C, T: a full one's): at the first switch the last packet no longer
		// waits (T < 2τ here), but the full one gains T − τ on it at each switch, and from the
		// second on it waits: 3T − τ.
		{"half rate", 1 << 20, c / 2, four, ps(3*9052*8 - (1<<20-116*9000+52)*8)},
		{"one link", 1 << 20, c, []float64{c}, 0},
		{"no packets", 1 << 20, c, four, 0},
	} {
		tt := tr
		if tc.name == "no packets" {
			tt = Transport{}
		}
		if got := tt.Tail(tc.bytes, tc.rate, tc.rates); got < tc.want-1 || got > tc.want+1 {
			t.Errorf("%s: Tail = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A slower last link: the full packet before the last takes longer there.
	got := tr.Tail(1<<20, c, []float64{c, c, c / 2})
	// Leaving the sender: previous packet done −last/C before the last; at link 2 (rate C)
	// it is done at −τ+T, the last at max(0, −τ+T)+τ = T; at link 3 (C/2) it is done at
	// −τ+T+2T, the last at max(T, −τ+3T)+2τ = 3T+τ.
	tau, full := float64((1<<20-116*9000+52)*8)/c, float64(9052*8)/c
	if want := engine.Time(math.Ceil((3*full + tau) * 1e12)); got != want && got != want-1 && got != want+1 {
		t.Errorf("slower last link: Tail = %v, want %v", got, want)
	}
}

// One flow alone with packets: its links carry the headers, and it arrives its last packet's
// tail after its last byte leaves; N flows on a link still get rate/N each.
func TestNetworkTransport(t *testing.T) {
	g := lineGraph(t, G400, G400)
	tr := SimAITransport(9000, 0)
	start := func() (*engine.Scheduler, *Network, *recorder) {
		s := engine.NewScheduler()
		rec := newRecorder()
		n := NewWithOptions(s, g, rec, Options{Transport: tr})
		rec.n = n
		return s, n, rec
	}
	path := []int32{0, 2}
	const bytes = 1 << 20
	s, n, rec := start()
	n.Start(path, bytes, engine.Microsecond, 1)
	s.Run()
	sent := engine.Time(math.Ceil(psFor(tr.Wire(bytes), G400)))
	if got := rec.sentAt[1]; got < sent-1 || got > sent+1 {
		t.Errorf("sent at %v, want %v (wire bytes at line rate)", got, sent)
	}
	tail := tr.Tail(bytes, G400, []float64{G400, G400})
	if got, want := rec.arrived[1], rec.sentAt[1]+tail+engine.Microsecond; got != want {
		t.Errorf("arrived at %v, want %v (sent + tail + delay)", got, want)
	}
	if got, want := n.LinkBytes(0), float64(tr.Wire(bytes)); math.Abs(got-want) > 1e-6 {
		t.Errorf("link carried %v bytes, want %v with headers", got, want)
	}

	// Four flows on one link: each 100 Gb/s, sent together after 4·wire·8/C.
	s, n, rec = start()
	for i := range 4 {
		n.Start(path, bytes, 0, int64(i))
	}
	s.RunUntil(engine.Nanosecond)
	for i := range 4 {
		if r := n.Rate(FlowID(i)); math.Abs(r-G100) > 1e-3 {
			t.Errorf("flow %d at %v, want 100 Gb/s", i, r)
		}
	}
	s.Run()
	want := engine.Time(math.Ceil(psFor(4*tr.Wire(bytes), G400)))
	for i := range int64(4) {
		if at := rec.sentAt[i]; at < want-2 || at > want+2 {
			t.Errorf("flow %d sent at %v, want %v", i, at, want)
		}
	}
}

// The network keeps the last tail it computed (Network.tail): flows of alternating sizes over
// paths of alternating rates, each alone, still arrive their own Transport.Tail after they are
// sent.
func TestNetworkTailKept(t *testing.T) {
	g := lineGraph(t, G400, G100, G400, G400)
	tr := SimAITransport(9000, 0)
	s := engine.NewScheduler()
	rec := newRecorder()
	n := NewWithOptions(s, g, rec, Options{Transport: tr})
	rec.n = n
	paths := [][]int32{{0, 2}, {2, 4}, {4, 6}, {0, 2, 4, 6}, {4, 6}, {0, 2}}
	sizes := []int64{1, 9000, 9001, 1 << 20, 1 << 20, 9000}
	const delay = engine.Microsecond
	tag := int64(0)
	for _, p := range paths {
		for _, b := range sizes {
			n.Start(p, b, delay, tag)
			s.Run()
			rates := make([]float64, len(p))
			for i, l := range p {
				rates[i] = g.Rate(l)
			}
			want := rec.sentAt[tag] + tr.Tail(b, slices.Min(rates), rates) + delay
			if got := rec.arrived[tag]; got != want {
				t.Errorf("path %v, %d bytes: arrived at %v, want %v", p, b, got, want)
			}
			tag++
		}
	}
}

// ns-3's clock (NanosecondClock): a packet takes ⌊bytes·8·10⁹/rate⌋ whole nanoseconds
// (DataRate::CalculateBytesTxTime on the default nanosecond resolution), and full packets sent
// back to back leave at Full·8 over that. Without the clock, bytes·8/rate.
func TestNanosecondClock(t *testing.T) {
	ns := SimAITransport(9000, 0)
	ns.NanosecondClock = true
	exact := SimAITransport(9000, 0)
	for _, tc := range []struct {
		bytes int64
		rate  float64
		ns    float64 // seconds on ns-3's clock
	}{
		{9052, 2880e9, 25e-9},    // 25.144 ns
		{9052, 400e9, 181e-9},    // 181.04 ns
		{9052, 200e9, 362e-9},    // 362.08 ns
		{4148, 400e9, 82e-9},     // 82.96 ns: a 4,096-byte payload
		{60, 2880e9, 0},          // an ACK on NVLink: 0.17 ns
		{60, 400e9, 1e-9},        // 1.2 ns
		{60, 200e9, 2e-9},        // 2.4 ns
		{9052, 100e6, 724160e-9}, // exact: 724,160 ns at DCQCN's MIN_RATE
		{0, 400e9, 0},
	} {
		if got := ns.PacketSecs(tc.bytes, tc.rate); got != tc.ns {
			t.Errorf("%d bytes at %g b/s: %g s on ns-3's clock, want %g", tc.bytes, tc.rate, got, tc.ns)
		}
		if got, want := exact.PacketSecs(tc.bytes, tc.rate), float64(tc.bytes*8)/tc.rate; got != want {
			t.Errorf("%d bytes at %g b/s: %g s exactly, want %g", tc.bytes, tc.rate, got, want)
		}
	}
	for _, tc := range []struct {
		rate, want float64
	}{
		{2880e9, 9052 * 8 / 25e-9},
		{400e9, 9052 * 8 / 181e-9},
		{100e6, 100e6}, // a whole number of nanoseconds: the rate itself, exactly
	} {
		if got := ns.PacketRate(tc.rate); math.Abs(got-tc.want) > 1e-12*tc.want || tc.want == tc.rate && got != tc.rate {
			t.Errorf("PacketRate(%g) = %.6f, want %.6f", tc.rate, got, tc.want)
		}
		if got := exact.PacketRate(tc.rate); got != tc.rate {
			t.Errorf("without the clock PacketRate(%g) = %g", tc.rate, got)
		}
	}
	// A packet too large for a whole-nanosecond count in 128 bits, or a rate below 1 b/s, is
	// taken exactly.
	if got, want := ns.PacketSecs(1<<40, 1), float64(int64(1<<40)*8); got != want {
		t.Errorf("huge packet: %g s, want %g", got, want)
	}
	if got := ns.PacketRate(0.5); got != 0.5 {
		t.Errorf("PacketRate(0.5) = %g", got)
	}
}
