package packets

import (
	"fmt"
	"math"

	"simd/engine"
	"simd/netmodel/fluid"
)

// Role is what sends over a directed link in the packet model.
type Role uint8

const (
	// Off: the link is not the packet model's.
	Off Role = iota
	// NIC: the link leaves a host's NIC port, which serves ACKs first and then its queue
	// pairs in turn.
	NIC
	// Egress: the link leaves a switch, whose port sends its one FIFO queue.
	Egress
)

// Link is a directed link as the packet model sees it.
type Link struct {
	Role  Role
	Rate  float64     // bits/s
	Delay engine.Time // propagation delay
}

// Owner is told about the flows it started: when the last byte of flow slot has left its
// sender, and when the flow is done (after which the network never names slot again, and the
// owner may reuse it).
type Owner interface {
	PacketsSent(slot int32, now engine.Time)
	PacketsDone(slot int32, now engine.Time)
}

// Config is how packets are made and flows done.
type Config struct {
	// Transport gives the payload of a full packet (it must be positive), the headers, the
	// ACK's size, the completion rule (AtAck) and the packet clock (NanosecondClock).
	Transport fluid.Transport
	// Window is the bytes of payload a queue pair may have sent and not had acknowledged
	// (HAS_WIN: SimAI's maxBdp); 0 for none.
	Window int64
}

// Stats counts what the network did.
type Stats struct {
	Flows   uint64 // flows started
	Packets uint64 // data packets sent by their senders
	ACKs    uint64 // ACKs sent by receivers
	Events  uint64 // transmissions ended and packets arrived
}

// Event kinds (the low bits of Event.Arg).
const (
	evTxDone int64 = iota // Target: a link whose transmission has ended
	evArrive              // Target: the queue pair of a packet received whole (Arg: the packet)
	evKick                // Target: a NIC port whose paced queue pairs may send again
)

// Network is the packet model over a graph's directed links (those with a Role).
type Network struct {
	s     *engine.Scheduler
	h     engine.HandlerID
	owner Owner
	cfg   Config
	links []link
	// roles is every link's Role, one byte each: a flow's start asks it of every link of its
	// path and ACK route (CarriesFlow, Touches), and reading it from the 150-byte records of
	// links would cost a cache miss a link.
	roles  []Role
	qps    []qp
	free   []int32 // free queue pair records
	bySlot []int32 // the owner's slot → its queue pair record, -1 for none
	stats  Stats
}

// link is a directed link's sending side; what every packet reads first.
type link struct {
	busy   bool
	role   Role
	rrlast int32 // NIC: the position of the queue pair served last
	cur    pkt   // the packet on the wire
	// The times of a full data packet and of an ACK, which most packets are, and the delay.
	fullTime, ackTime, delay engine.Time
	// NIC: ACKs waiting and the queue pairs in the order they were made; Egress: its queue.
	acks fifo
	qps  []int32
	q    fifo
	// Read by the monitors and for other packet sizes.
	rate    float64
	queued  int64       // wire bytes in q
	sent    int64       // wire bytes whose transmission has ended
	curAt   engine.Time // when cur began
	curTime engine.Time // its transmission time
	kick    engine.Timer
}

// qp is a queue pair: a flow at its sender. One cache line.
type qp struct {
	slot     int32    // the owner's; -1 once done
	path     [2]int32 // the NIC port and the switch port to the receiver
	ack      [2]int32 // the receiver's NIC port and the switch port back
	sent     bool     // the owner has been told its last byte left
	done     bool
	size     int64 // bytes of payload
	nxt, una int64 // bytes sent (snd_nxt) and acknowledged (snd_una)
	rcv      int64 // bytes the receiver has in order (ReceiverNextExpectedSeq)
	avail    engine.Time
}

// pkt is a packet on its way, in one word: its queue pair (high 32 bits), its payload (data)
// or the payload it acknowledges (ACK) in bits 8–31, the link it is on (bit 2: the ACK
// route's, else the path's; bit 3: the second link of it), and whether it is its flow's last
// data packet (bit 4). Paths run in order and the switch
// ports are FIFO, so a flow's packets and ACKs arrive in the order they were sent, and the
// bytes in order at the receiver, or acknowledged at the sender, grow by a packet's payload.
type pkt int64

const (
	pktACK    pkt = 1 << 2
	pktSecond pkt = 1 << 3
	pktLast   pkt = 1 << 4 // a flow's last data packet
)

func mkPkt(q int32, payload int64, ack bool) pkt {
	p := pkt(q)<<32 | pkt(payload)<<8
	if ack {
		p |= pktACK
	}
	return p
}

func (p pkt) qp() int32      { return int32(p >> 32) }
func (p pkt) payload() int64 { return int64(p>>8) & (1<<24 - 1) }
func (p pkt) ack() bool      { return p&pktACK != 0 }
func (p pkt) second() bool   { return p&pktSecond != 0 }

// MaxPayload bounds the payload of a packet the model takes (a packet is one word, pkt).
const MaxPayload = 1<<24 - 1

// New makes the packet model over links (indexed by directed link id; Role Off for the links
// it does not carry), on scheduler s.
func New(s *engine.Scheduler, links []Link, owner Owner, cfg Config) (*Network, error) {
	if p := cfg.Transport.Payload; p <= 0 || p > MaxPayload {
		return nil, fmt.Errorf("packets: payload %d: packets need a payload of 1 to %d bytes", p, MaxPayload)
	}
	n := &Network{s: s, owner: owner, cfg: cfg, links: make([]link, len(links)), roles: make([]Role, len(links))}
	for i, l := range links {
		if l.Role == Off {
			continue
		}
		if !(l.Rate > 0) || l.Delay < 0 {
			return nil, fmt.Errorf("packets: link %d: rate %g b/s, delay %v: need a positive rate and a delay of 0 or more", i, l.Rate, l.Delay)
		}
		n.links[i] = link{role: l.Role, delay: l.Delay, rate: l.Rate}
		n.roles[i] = l.Role
		n.links[i].fullTime = n.timeAt(l.Rate, cfg.Transport.Full())
		n.links[i].ackTime = n.timeAt(l.Rate, cfg.Transport.Ack)
	}
	n.h = s.Register(n)
	return n, nil
}

// Carries reports whether link l is the packet model's.
func (n *Network) Carries(l int32) bool {
	return l >= 0 && int(l) < len(n.roles) && n.roles[l] != Off
}

// CarriesFlow reports whether the network can carry a flow with this path and ACK route: each
// a NIC port and then a switch port of the network's (a GPU, its NVSwitch, another GPU).
func (n *Network) CarriesFlow(path, ack []int32) bool {
	return n.carriesRoute(path) && n.carriesRoute(ack)
}

func (n *Network) carriesRoute(r []int32) bool {
	return len(r) == 2 && n.Carries(r[0]) && n.roles[r[0]] == NIC && n.Carries(r[1]) && n.roles[r[1]] == Egress
}

// Touches reports whether any link of route r is the packet model's.
func (n *Network) Touches(r []int32) bool {
	for _, l := range r {
		if n.Carries(l) {
			return true
		}
	}
	return false
}

// Start starts a flow of bytes (0 counts as 1, as a packet carries at least a byte) now, under
// the owner's slot, over path with ACKs on ack (CarriesFlow must hold). Its queue pair joins
// the end of its NIC port's and the port is asked for a packet (QbbNetDevice::NewQp).
func (n *Network) Start(slot int32, path, ack []int32, bytes int64) {
	if bytes < 0 {
		panic(fmt.Sprintf("packets: Start with negative size %d", bytes))
	}
	if !n.CarriesFlow(path, ack) {
		panic("packets: Start of a flow the network does not carry")
	}
	var id int32
	if k := len(n.free); k > 0 {
		id = n.free[k-1]
		n.free = n.free[:k-1]
	} else {
		id = int32(len(n.qps))
		n.qps = append(n.qps, qp{})
	}
	n.qps[id] = qp{slot: slot, path: [2]int32{path[0], path[1]}, ack: [2]int32{ack[0], ack[1]}, size: max(bytes, 1), avail: n.s.Now()}
	for int(slot) >= len(n.bySlot) {
		n.bySlot = append(n.bySlot, -1)
	}
	n.bySlot[slot] = id
	n.stats.Flows++
	l := path[0]
	n.links[l].qps = append(n.links[l].qps, id)
	n.send(l)
}

// Sent is the wire bytes the sender of the owner's flow slot has put on its first link so far;
// 0 for a slot the network does not hold.
func (n *Network) Sent(slot int32) float64 {
	if slot < 0 || int(slot) >= len(n.bySlot) || n.bySlot[slot] < 0 {
		return 0
	}
	q := &n.qps[n.bySlot[slot]]
	t := &n.cfg.Transport
	return float64(q.nxt + (q.nxt+t.Payload-1)/t.Payload*t.Header)
}

// LinkState is link l's queue (the wire bytes waiting at a switch port; 0 at a NIC port) and the
// wire bytes it has sent by now, a packet on the wire counting as its part sent.
func (n *Network) LinkState(l int32, now engine.Time) (queued, sent float64) {
	lk := &n.links[l]
	sent = float64(lk.sent)
	if lk.busy && lk.curTime > 0 {
		part := min(float64(now-lk.curAt)/float64(lk.curTime), 1)
		sent += float64(float64(n.wire(lk.cur)) * max(part, 0))
	}
	return float64(lk.queued), sent
}

// Stats returns the counters.
func (n *Network) Stats() Stats { return n.stats }

// HandleEvent implements engine.Handler.
func (n *Network) HandleEvent(_ *engine.Scheduler, ev engine.Event) {
	n.stats.Events++
	switch ev.Arg & 3 {
	case evTxDone:
		n.txDone(ev.Target)
	case evArrive:
		n.arrive(ev.Target, pkt(ev.Arg))
	case evKick:
		n.links[ev.Target].kick = engine.Timer{}
		n.send(ev.Target)
	}
}

// wire is packet p's size on the wire.
func (n *Network) wire(p pkt) int64 {
	if p.ack() {
		return n.cfg.Transport.Ack
	}
	return p.payload() + n.cfg.Transport.Header
}

// packetTime is how long link l takes to send a packet of wire bytes.
func (n *Network) packetTime(l int32, wire int64) engine.Time {
	lk := &n.links[l]
	switch wire {
	case n.cfg.Transport.Full():
		return lk.fullTime
	case n.cfg.Transport.Ack:
		return lk.ackTime
	}
	return n.timeAt(lk.rate, wire)
}

// timeAt is how long a link of rate bits/s takes to send wire bytes (fluid.Transport.PacketSecs),
// to the picosecond.
func (n *Network) timeAt(rate float64, wire int64) engine.Time {
	return engine.Time(math.Round(n.cfg.Transport.PacketSecs(wire, rate) * 1e12))
}

// transmit puts packet p on free link l: its end of transmission, then its arrival at the
// link's far end a propagation delay later (QbbNetDevice::TransmitStart, QbbChannel); it
// returns the packet's time on the link.
func (n *Network) transmit(l int32, p pkt) engine.Time {
	lk := &n.links[l]
	t := n.packetTime(l, n.wire(p))
	lk.busy, lk.cur, lk.curAt, lk.curTime = true, p, n.s.Now(), t
	n.s.AfterFixed(t, n.h, l, evTxDone)
	n.s.AfterFixed(t+lk.delay, n.h, p.qp(), int64(p&^3)|evArrive)
	return t
}

// txDone: link l has sent its packet; it sends the next (QbbNetDevice::TransmitComplete).
func (n *Network) txDone(l int32) {
	lk := &n.links[l]
	lk.busy = false
	p := lk.cur
	lk.sent += n.wire(p)
	if lk.role == Egress {
		n.forward(l)
		return
	}
	if p&pktLast != 0 {
		if q := &n.qps[p.qp()]; !q.sent {
			q.sent = true
			if q.slot >= 0 {
				n.owner.PacketsSent(q.slot, n.s.Now())
			}
		}
	}
	n.send(l)
}

// arrive: packet p of queue pair id has been received whole at the end of its link.
func (n *Network) arrive(id int32, p pkt) {
	q := &n.qps[id]
	if p.ack() {
		if !p.second() {
			n.enqueue(q.ack[1], p|pktSecond)
			return
		}
		q.una += p.payload()
		first := q.path[0]
		if n.finished(q) && !q.done {
			n.done(id) // the owner may start flows: q is not read after this
		}
		// The ACK may have opened the window (RdmaHw::ReceiveAck → TriggerTransmit).
		n.send(first)
		return
	}
	if !p.second() {
		n.enqueue(q.path[1], p|pktSecond)
		return
	}
	// At the receiver: the bytes in order, and their ACK, queued ahead of its data.
	q.rcv += p.payload()
	n.stats.ACKs++
	first := q.ack[0]
	n.links[first].acks.push(mkPkt(id, p.payload(), true))
	if !n.cfg.Transport.AtAck && q.rcv >= q.size && !q.done {
		n.done(id)
	}
	n.send(first)
}

// done reports queue pair id's flow done. Its record stays on its port's list until the port's
// turn drops it.
func (n *Network) done(id int32) {
	q := &n.qps[id]
	q.done = true
	slot := q.slot
	q.slot = -1
	if slot >= 0 {
		n.bySlot[slot] = -1
		n.owner.PacketsDone(slot, n.s.Now())
	}
}

// enqueue puts packet p in the queue of switch port l, which sends it if it is free
// (SwitchSend, DequeueAndTransmit).
func (n *Network) enqueue(l int32, p pkt) {
	lk := &n.links[l]
	lk.q.push(p)
	lk.queued += n.wire(p)
	n.forward(l)
}

// forward sends the head of switch port l's queue if the port is free.
func (n *Network) forward(l int32) {
	lk := &n.links[l]
	if lk.busy || lk.q.len() == 0 {
		return
	}
	p := lk.q.pop()
	lk.queued -= n.wire(p)
	n.transmit(l, p)
}

// send has NIC port l send, if it is free, its next ACK, else a packet of its next queue pair
// in turn (QbbNetDevice::DequeueAndTransmit).
func (n *Network) send(l int32) {
	lk := &n.links[l]
	if lk.busy {
		return
	}
	if lk.acks.len() > 0 {
		n.transmit(l, lk.acks.pop())
		return
	}
	now := n.s.Now()
	i := n.nextQP(l, now)
	if i < 0 {
		// Nothing may go now; a queue pair paced past now asks again then.
		t := engine.Never
		for _, id := range lk.qps {
			t = min(t, n.qps[id].avail)
		}
		if t != engine.Never && t > now && !n.s.Pending(lk.kick) {
			lk.kick = n.s.At(t, n.h, l, evKick)
		}
		return
	}
	id := lk.qps[i]
	q := &n.qps[id]
	pay := min(n.cfg.Transport.Payload, q.size-q.nxt)
	q.nxt += pay
	p := mkPkt(id, pay, false)
	if q.nxt == q.size {
		p |= pktLast
	}
	lk.rrlast = int32(i)
	n.stats.Packets++
	// It may send again a packet time at its rate, the link's, later (RdmaHw::UpdateNextAvail).
	q.avail = now + n.transmit(l, p)
}

// nextQP is the position in NIC port l's list of the queue pair to send next, -1 for none: the
// first after the last one served, in turn, with bytes left, not bound by its window and not
// paced past now. Queue pairs that are done, from the lowest position the scan passed, leave
// the list, and the position found moves with them; the last one served keeps its number
// (RdmaEgressQueue::GetNextQindex).
func (n *Network) nextQP(l int32, now engine.Time) int {
	lk := &n.links[l]
	count := len(lk.qps)
	res, lowDone := -1, -1
	for k := 1; k <= count; k++ {
		i := (k + int(lk.rrlast)) % count
		q := &n.qps[lk.qps[i]]
		if q.size > q.nxt && !n.windowBound(q) {
			if q.avail > now {
				continue
			}
			res = i
			break
		} else if n.finished(q) {
			if lowDone < 0 || i < lowDone {
				lowDone = i
			}
		}
	}
	if lowDone >= 0 {
		next := lowDone
		n.free = append(n.free, lk.qps[lowDone])
		for i := lowDone + 1; i < count; i++ {
			id := lk.qps[i]
			if n.finished(&n.qps[id]) {
				n.free = append(n.free, id)
				continue
			}
			if i == res {
				res = next
			}
			lk.qps[next] = id
			next++
		}
		lk.qps = lk.qps[:next]
	}
	return res
}

// finished reports whether every byte of q has been acknowledged (RdmaQueuePair::IsFinished):
// no packet of it is on its way any more.
func (n *Network) finished(q *qp) bool { return q.una >= q.size }

// windowBound reports whether q has a window's bytes sent and not acknowledged.
func (n *Network) windowBound(q *qp) bool {
	w := n.cfg.Window
	return w > 0 && q.nxt-q.una >= w
}

// fifo is a queue of packets in a ring buffer whose length is a power of two.
type fifo struct {
	buf  []pkt
	head int32
	n    int32
}

func (f *fifo) len() int32 { return f.n }

func (f *fifo) push(p pkt) {
	if int(f.n) == len(f.buf) {
		grown := make([]pkt, max(2*len(f.buf), 8))
		for i := range f.n {
			grown[i] = f.buf[int(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = grown, 0
	}
	f.buf[int(f.head+f.n)&(len(f.buf)-1)] = p
	f.n++
}

func (f *fifo) pop() pkt {
	p := f.buf[f.head]
	f.head = (f.head + 1) & int32(len(f.buf)-1)
	f.n--
	return p
}
