package fluid

import (
	"math"
	mbits "math/bits"

	"simd/engine"
)

// Transport is how flows cross the network as packets and when a flow counts as done: the
// facts of SimAI's RDMA transport in ns-3 that a fluid model keeps. The zero value is a pure
// fluid: no packets, no headers, no ACKs, and a flow is done when its last byte reaches the
// receiver.
//
// SimAI's ns-3 (rdma-hw.cc RdmaHw::GetNxtPacket, ReceiveUdp, ReceiveAck, QpComplete) cuts a
// flow of B bytes into ⌈B/Payload⌉ packets (1 for B = 0), each of min(Payload, bytes left)
// payload plus Header bytes of headers; every switch stores a packet whole before forwarding
// it; the receiver answers every packet (L2_ACK_INTERVAL 1) with an ACK of Ack bytes, which
// goes back to the sender on its own route, queued behind data in the switches
// (ACK_HIGH_PRIO 0); the queue pair is complete when the ACK of its last packet reaches the
// sender, and SimAI tells the receiving rank only then (its qp_finish calls
// notify_receiver_receive_data). docs/models.md, "Fidelity", gives the resulting formulas.
type Transport struct {
	// Payload is the payload of a full packet (PACKET_PAYLOAD_SIZE), bytes; 0: no packets.
	Payload int64
	// Header is the bytes every data packet adds to its payload, Ack the size of an ACK.
	Header, Ack int64
	// AtAck: a flow is done when its sender has the ACK of its last packet (SimAI's rule);
	// false: when its last byte reaches the receiver (what the receiver could observe).
	AtAck bool
	// NanosecondClock: a link sends a packet in whole nanoseconds, rounded down, as SimAI's
	// ns-3 does (PacketSecs); false: in bits/rate.
	NanosecondClock bool
}

// PacketSecs is the time, seconds, a link of rate bits/s takes to send a packet of bytes wire
// bytes: bytes·8/rate, or with NanosecondClock ⌊bytes·8·10⁹/rate⌋ ns. ns-3's
// DataRate::CalculateBytesTxTime divides Seconds(bytes·8), an integer count of nanoseconds
// (the default resolution), by the integer rate, and the integer division rounds down; the
// NIC's pacing gap (RdmaHw::UpdateNextAvail) is computed the same way. A 9,052-byte packet takes
// 25 ns on a 2,880 Gb/s NVLink (not 25.14), 181 ns at 400 Gb/s (not 181.04), and a 60-byte ACK
// takes 0 ns on the NVLink, 1 at 400 Gb/s.
func (t Transport) PacketSecs(bytes int64, rate float64) float64 {
	if ns, _, ok := t.packetNs(bytes, rate); ok {
		return float64(ns) / 1e9
	}
	return float64(bytes) * 8 / rate
}

// packetNs is ns-3's whole nanoseconds for a packet of bytes at rate bits/s, and whether the
// division was exact; ok is false without NanosecondClock or for sizes and rates it cannot
// take. It is on the hot path (a NIC's demands, every time its flows share it): where the
// dividend and the rate are below 2^53 the quotient is taken in float64, whose operands and
// products are then exact integers, and put right by one where the division rounded across an
// integer; 128-bit integers otherwise.
func (t Transport) packetNs(bytes int64, rate float64) (ns uint64, exact, ok bool) {
	if !t.NanosecondClock || bytes < 0 || bytes > math.MaxInt64/8 || !(rate >= 1) || rate >= math.MaxUint64 {
		return 0, false, false
	}
	bps := math.Round(rate)
	if bytes < 1<<20 && bps < 1<<53 {
		x := float64(bytes*8) * 1e9 // < 2^53: exact
		q := math.Floor(x / bps)
		if q*bps > x {
			q--
		} else if (q+1)*bps <= x {
			q++
		}
		return uint64(q), q*bps == x, true
	}
	hi, lo := mbits.Mul64(uint64(bytes)*8, 1e9)
	if hi >= uint64(bps) {
		return 0, false, false // a packet of years: no whole-nanosecond count to take
	}
	q, rem := mbits.Div64(hi, lo, uint64(bps))
	return q, rem == 0, true
}

// PacketRate is the rate, bits/s, at which full packets leave a link of rate bits/s sent back
// to back (or a NIC pacing a queue pair at rate): Full·8/PacketSecs(Full, rate). It is rate
// itself without packets or without NanosecondClock, or when the packet takes whole
// nanoseconds at rate; otherwise a little more (2,896.6 Gb/s for a 2,880 Gb/s NVLink and
// 9,000-byte payloads), or rate when a packet would take no time.
func (t Transport) PacketRate(rate float64) float64 {
	if t.Payload <= 0 {
		return rate
	}
	ns, exact, ok := t.packetNs(t.Full(), rate)
	if !ok || exact || ns == 0 {
		return rate
	}
	return float64(t.Full()*8) / (float64(ns) / 1e9)
}

// Packets is the number of packets of a flow of bytes (at least 1), 1 without packets.
func (t Transport) Packets(bytes int64) int64 {
	if t.Payload <= 0 || bytes <= 0 {
		return 1
	}
	return (bytes + t.Payload - 1) / t.Payload
}

// Wire is the bytes a flow of bytes puts on a link: its payload and every packet's headers.
func (t Transport) Wire(bytes int64) int64 {
	if bytes <= 0 {
		bytes = 1
	}
	if t.Payload <= 0 {
		return bytes
	}
	return bytes + t.Packets(bytes)*t.Header
}

// Last is the wire size of a flow's last packet, which every switch on the path stores whole
// before sending it on; 0 without packets.
func (t Transport) Last(bytes int64) int64 {
	if t.Payload <= 0 {
		return 0
	}
	if bytes <= 0 {
		bytes = 1
	}
	return bytes - (t.Packets(bytes)-1)*t.Payload + t.Header
}

// Full is the wire size of a full packet, 0 without packets.
func (t Transport) Full() int64 {
	if t.Payload <= 0 {
		return 0
	}
	return t.Payload + t.Header
}

// SimAI's packet formats (ns-3-alibabacloud, SimAI's ns-3 build): every data packet carries a
// PPP header counted as 14 bytes (PppHeader::GetStaticSize), IPv4 20, UDP 8 and the sequence
// header (SimpleSeqTsHeader: a uint64 sequence number and a uint16 priority group, 10 bytes),
// plus the INT header of the congestion control (IntHeader::GetStaticSize). An ACK is the
// qbbHeader (ports, flags, priority group: 8 bytes; sequence number: 8; plus the INT header)
// padded to a 60-byte frame (ReceiveUdp: Create<Packet>(max(60 − 14 − 20 − qbbHeader, 0))),
// then IPv4 and PPP.
const (
	simaiDataHeader = 14 + 20 + 8 + 10
	simaiAckBase    = 8 + 8
	simaiMinFrame   = 60
)

// SimAITransport is the transport of SimAI's ns-3 with packets of payload bytes and an INT
// header of intBytes (0 unless HPCC: IntHeader NORMAL, 5 hops of 8 bytes and a 16-bit count),
// done at the ACK of the last packet.
func SimAITransport(payload, intBytes int64) Transport {
	ack := simaiAckBase + intBytes
	ack = max(ack, simaiMinFrame-14-20) + 14 + 20
	return Transport{Payload: payload, Header: simaiDataHeader + intBytes, Ack: ack, AtAck: true}
}

// HPCCIntBytes is the INT header HPCC (CC_MODE 3) adds to every data packet and ACK: five hops
// of 8 bytes and a 16-bit hop count (IntHeader mode NORMAL).
const HPCCIntBytes = 5*8 + 2

// Tail is the time from a flow's last byte leaving its sender, at rate bits/s, to the whole
// last packet reaching the receiver, beyond the path's propagation delay, when no queue holds
// it; rates are the rates of the path's links, the first is the sender's. Every switch stores a
// packet whole before sending it on, and a packet cannot overtake the one before it: the last
// packet of a flow of several, close behind a full one, waits at each switch for that one to
// be sent. Over links of one rate C with the flow at C that makes (links − 1)·full/C, not
// (links − 1)·last/C. The previous packet is assumed to be held up by nothing, as it is when
// the sender's rate fits every link. 0 without packets.
func (t Transport) Tail(bytes int64, rate float64, rates []float64) engine.Time {
	if t.Payload <= 0 || len(rates) < 2 {
		return 0
	}
	last := float64(t.Last(bytes) * 8)
	var prev, e float64 // the previous packet's bits, and when its last bit left the link so far
	if t.Packets(bytes) > 1 {
		prev = float64(t.Full() * 8)
		if !(rate > 0) || rate > rates[0] {
			rate = rates[0]
		}
		e = -last / rate
	}
	var l float64 // when the last packet's last bit left the link so far (seconds after the first)
	for _, c := range rates[1:] {
		if prev > 0 {
			e += prev / c
			l = max(l, e)
		}
		l += last / c
	}
	return engine.Time(math.Ceil(l * 1e12))
}
