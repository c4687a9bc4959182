package ccfluid

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"simd/engine"
)

// This file holds SimAI's window (HAS_WIN): a queue pair may have at most Window bytes sent and
// not yet acknowledged (scaled by its rate with VAR_WIN, ns-3 RdmaQueuePair::GetWin), so its
// injection is at most window/RTT, where its round trip grows with the queues its packets and
// its ACKs wait in. A window of one bandwidth-delay product (SimAI's maxBdp) is what keeps
// SimAI's queues short: k flows into one port hold about (k − 1) windows there, and the
// port's ECN marks (and so DCQCN's cuts) start only when that passes KMIN.
//
// The fluid model keeps the cap exact at the moments that decide it:
//
//   - Round trip. A flow's round trip is its base round trip (a full packet and its ACK
//     through empty queues: propagation, serialisation at every link), plus the backlog of
//     every queue on its path and on its ACKs' route, plus, at every link of the ACKs' route,
//     the part of a data packet the ACK finds in service there, times the share of the time
//     the link is sending data (an ACK leaves the receiver's NIC ahead of queued data, ns-3's
//     high-priority ACK queue, but it cannot interrupt the packet on the wire; in a switch it
//     waits behind the queue too). At the first such link that is on average half a full
//     packet's transmission. At the later ones it is, where the packet grids are locked
//     (AckWaitLocked, lockedStarts; always with AckWaitAligned), the whole packet less the
//     ACK's own transmission at the link before: the ACK left that link just after a data
//     packet, and in ns-3 the packets at the next link started just as that one arrived
//     there — the same packet when the data goes on the ACK's way (two flows in opposite
//     directions), or one of a sender that started at the same instant (the steps of a
//     collective) — so the ACK arrives 8A/C after a packet started there; where they are not
//     (flows started apart), half a packet again. An ACK that has not waited before (its
//     receiver sends nothing) and meets a grid locked to the flow's at a later link waits there
//     where its own loop puts it: a window-bound flow sends when an ACK comes back, so each ACK
//     reaches the link one base round trip after the one before left it, and that one left it
//     at the end of a data packet; it arrives rtt₀ mod T into a packet and waits the rest,
//     T − (rtt₀ mod T), a whole packet when the loop is a whole number of packets (the data
//     packet, whose arrival ns-3 scheduled first, goes first). SimAI's ns-3, 512 KiB over
//     2,880 Gb/s NVLink from GPU 0 to 1 and from 1 to 2 (flows_chain2_512KB__SpX8: 25 ns links,
//     25 ns packets, a round trip of six): 1→2's ACKs wait a whole packet behind 0→1's at the
//     NVSwitch, 1→2 takes 1,781 ns against 1,581 alone, also when it starts 10 or 40 ns after
//     0→1 (_dt10, _dt40); the mean over phases (T/2) gave simd 1,672, this gives 1,768
//     (1,823 at 40 ns, where 0→1's packets fill the NVSwitch's port more than in ns-3).
//     (0→1's ACKs, made at GPU 1 on a boundary of 1→2's packets, go first in ns-3, ahead of
//     the packet due then, as the first-link rule below has them: 1,606 ns against 1,600; 1,791
//     when it charged them the whole packet. docs/models.md, "ACKs that meet a packet
//     boundary".) Measured in
//     SimAI's ns-3 on two 4 MiB flows in opposite directions over one 400 Gb/s switch, whose
//     ACKs wait 86 ns at the receiver's NIC and 180 ns at the switch (T = 181 ns), and whose
//     window of one bandwidth-delay product leaves 170 ns to spare: both take 89.9 µs, 3.9%
//     more than alone; the mean (90 + 90 ns) would make it 0.7%. Started 10–180 ns apart
//     the flows still take 89.8–90.0 µs (at 90 ns apart, 87.2 µs: a phase at which the
//     waits fall short of the spare); a ring of four such flows started together takes 89.9
//     µs, started 37–150 ns apart 88.5 µs. Started microseconds apart, pairs and rings take
//     86.96–87.44 µs, as half-packet waits make them (lockedStarts).
//   - Queue targets. When a queue grows, the flows crossing it slow down as their round trips
//     grow, until what they send equals what the link sends: the backlog settles where
//     Σ min(u_i, 8·W_i/RTT_i(q)) = C, u_i being what flow i could send without the window.
//     The queue is followed linearly to that level (an event at the time it gets there, when
//     the ports of its flows share again with the new caps) instead of along the smooth curve
//     of the real loop, which gets there within a few round trips. A draining queue is
//     followed the same way down to the level at which the capped flows speed up enough to
//     hold it, or to empty.
//   - Empty queues. When a queue empties, every flow its window holds back, among those
//     sending over the link and those whose ACKs cross it, compares its round trip now with the
//     one its cap was set with, and its port shares again if that is shorter by more than
//     winMove: the cap may date from a longer backlog of this queue, or of others that have
//     emptied since without the flow looking (a queue the flow's ACKs cross is re-armed by
//     changes that do not concern it, at whatever backlog it then holds).
//   - ACK routes. A flow's ACKs cross other links than its data; when the share of the time
//     such a link sends moves to another quarter (what the ACK wait counts), or its queue
//     reaches a target or empties, the ports of the flows whose ACKs cross it share again.
//
// Within an instant the ports and links are brought to a fixed point in at most winRounds
// rounds (one port's new caps change what the links on other flows' ACK routes carry).

const (
	// winRounds bounds the rounds of port sharing and link re-arming within one instant.
	winRounds = 4
)

// windowed reports whether flows have windows.
func (n *Network) windowed() bool { return n.cfg.Window > 0 }

// window is the most flow id may have in flight now, bytes on the wire. Its window is Window
// bytes of payload, scaled by its congestion-control rate over its line rate with VarWin
// (RdmaQueuePair::GetWin); ns-3's NIC sends a packet whenever less than the window is in flight
// (IsWinBound: in flight ≥ window blocks), so with full packets a window of w lets
// ⌈w/payload⌉ packets be in flight: up to a packet more than w. In wire bytes, with every
// packet's headers.
//
// r is the flow's congestion-control rate (ccRate). The flow keeps its last window and the rate
// it was for: windowTarget asks for the windows of every flow on a link each time the link is
// re-armed, and between two steps of its congestion control a flow's window does not change.
func (n *Network) window(id int32, r float64) float64 {
	f := &n.flows[id]
	if r == f.winAt {
		return f.win
	}
	w := n.cfg.Window
	if n.cfg.VarWin {
		w *= r / f.line
	}
	if tr := &n.cfg.Transport; tr.Payload > 0 {
		p := float64(tr.Payload)
		w = math.Ceil(w/p) * float64(tr.Full())
	}
	f.win, f.winAt = w, r
	return w
}

// AckWait is what an ACK that has already waited behind a data packet waits for at each later
// link of its route that sends (Config.AckWait; see the file's comment).
type AckWait uint8

const (
	// AckWaitMean charges half a data packet at every such link: the mean over random phases.
	AckWaitMean AckWait = iota
	// AckWaitAligned charges the whole packet less the ACK's transmission at the link before.
	AckWaitAligned
	// AckWaitLocked charges the whole packet where the packet grids are locked
	// (lockedStarts) and half a packet elsewhere, and at the route's first link, where the
	// receiver's grid is locked to the flow's, the rest of the packet the ACK's arrival finds
	// (ackWaitOn): SimAI's ns-3.
	AckWaitLocked
)

// ackWaitAt is the expected wait of an ACK at link l, whose backlog is q, besides the backlog:
// the rest of the data packet in service while the link sends — half a full packet's
// transmission on average, or, when the ACK has waited behind a data packet before in step
// with the data at l (prev ≥ 0: the ACK's link before l; ackPrev), the whole packet less the
// ACK's transmission on that link (see the file's comment).
func (n *Network) ackWaitAt(l int32, q float64, prev int32) float64 {
	lk := &n.links[l]
	c := n.capOf(l)
	if c <= 0 || n.cfg.Transport.Payload <= 0 {
		return 0
	}
	pkt := n.fullSecs(c)
	if prev >= 0 {
		// The ACK's transmission on the link before (Transport.PacketSecs: 8A/C, or its whole
		// nanoseconds on ns-3's clock).
		return busyShare(q, lk.arr, c) * max(pkt-n.kin[prev].ackSecs, 0)
	}
	return busyShare(q, lk.arr, c) * pkt / 2
}

// ackWaitOn is the wait of flow id's ACK at link l, the k-th link of its arena chunk, whose
// backlog is q, behind the data packet in service there (waited: the last link of the route
// before l where the ACK waited, -1 for none). With AckWaitLocked, at the route's first link
// — the receiver's NIC, sending its own data on a grid locked to the flow's (lockedFirst) — the
// ACK, made as the flow's packet arrives, reaches the grid d mod T into one of its packets, d
// being the propagation of the flow's path (its packets' store-and-forward takes whole packet
// times T), and waits the rest: T − (d mod T) while the NIC sends (ρ of the time), not T/2.
// SimAI's ns-3, two 4 MiB flows in opposite directions over a DCN+ switch, 500 ns links: 86 ns
// at 400 Gb/s (T = 181 ns, measured), the pair 89.9 µs against 89.7 in simd; at 200 Gb/s (T =
// 362 ns; 86 ns again) 187.5 µs against 187.0 (192.5 with T/2); with 4,096-byte payloads (T
// = 82 ns, 66 ns) 90.17 µs against 89.7 (88.8 with T/2). An ACK of a full packet (full: the
// window's loop, roundTripSecs) made on a boundary of the NIC's packets (d mod T = 0: NVLink's
// 25 ns links and 25 ns packets) waits nothing: ns-3 runs the data packet's arrival, scheduled
// when the switch began sending it, before the NIC's end of transmission, scheduled later, so
// the ACK is in the NIC's high-priority queue when the NIC picks its next packet (SimAI's ns-3,
// the ring of eight 512 KiB NVLink flows, flows_ring8x1_512KB__SpX8: every ACK leaves GPU i+1 the
// nanosecond its packet arrives, and waits a whole packet at the NVSwitch behind GPU i−1's data;
// 1,806 ns, simd 1,906 with the whole packet at the NIC too, 1,787–1,816 without). The last ACK
// (lastAckWait) follows a short last packet, off the grid: in ns-3 it waited 12 ns at GPU 1's
// NIC (T = 50 ns) in the 16 MiB all-reduce over Spectrum-X 16 at 200 Gb/s, where the tie rule
// made that step's flow 40 ns short; it keeps T − (d mod T). Elsewhere ackWaitAt's rule.
func (n *Network) ackWaitOn(id, k, l int32, q float64, waited int32, full bool) float64 {
	f := &n.flows[id]
	if waited < 0 && k == f.hops && n.cfg.AckWait == AckWaitLocked && n.lockedFirst(id, l) {
		if c := n.capOf(l); c > 0 && n.cfg.Transport.Payload > 0 {
			pkt := n.fullSecs(c)
			ph := math.Mod(secs(f.delay), pkt)
			if full && (ph < tieSecs || pkt-ph < tieSecs) {
				return 0
			}
			return busyShare(q, n.links[l].arr, c) * (pkt - ph)
		}
	}
	if waited < 0 && k > f.hops && n.cfg.AckWait == AckWaitLocked && n.lockedFirst(id, l) {
		return n.loopWait(id, l, q)
	}
	return n.ackWaitAt(l, q, n.ackPrev(id, k, l, waited))
}

// loopWait is the wait of flow id's ACK at link l, a later link of its route than the first,
// when the ACK has not waited before and l's data is on a grid locked to the flow's
// (lockedFirst): the rest of the packet its loop brings it into, T − (rtt₀ mod T), a whole
// packet at a tie (see the file's comment), while the link sends.
func (n *Network) loopWait(id, l int32, q float64) float64 {
	c := n.capOf(l)
	if c <= 0 || n.cfg.Transport.Payload <= 0 {
		return 0
	}
	pkt := n.fullSecs(c)
	ph := math.Mod(n.flows[id].rtt0, pkt)
	if ph < tieSecs || pkt-ph < tieSecs {
		ph = 0 // a whole number of packets, to the picosecond the clock keeps
	}
	return busyShare(q, n.links[l].arr, c) * (pkt - ph)
}

// tieSecs is how close to a packet boundary an ACK's arrival counts as on it.
const tieSecs = 1e-12

// lockedFirst reports whether the data leaving over link l, the first of flow id's ACK route,
// is on a packet grid locked to the flow's: its flows and flow id all started within flow id's
// one-way time of each other (lockedStarts).
func (n *Network) lockedFirst(id, l int32) bool {
	r := n.startsOf(l)
	return n.startedWithin(id, r, r)
}

// ackPrev is the link ackWaitAt takes as the one before link l, the k-th link of flow id's
// arena chunk, where the ACK left a data packet it had waited behind: the link before l when
// the ACK has waited at a link before (waited ≥ 0, the last such) and the rule puts l's packets
// in step with those it waited behind there (always with AckWaitAligned; where their grids are
// locked with AckWaitLocked); else -1.
func (n *Network) ackPrev(id, k, l, waited int32) int32 {
	if waited < 0 || n.cfg.AckWait == AckWaitMean {
		return -1
	}
	if n.cfg.AckWait == AckWaitLocked && !n.lockedStarts(id, waited, l) {
		return -1
	}
	return n.arena[n.flows[id].off+k-1]
}

// lockedStarts reports whether the packet grids that flow id's ACK meets at links prev and l
// are locked, so that the ACK, having waited behind a data packet at prev, finds l's packet
// just begun. In ns-3 every NIC link has the same delay and every packet the same size, so
// flows that start together send on one grid of packet times, which their windows' ACK
// clocking then keeps; flows started apart do not, and an ACK finds a packet at a random point
// of its transmission. Measured in SimAI's ns-3 (two 4 MiB flows in opposite directions over
// one 400 Gb/s switch, and rings of four): started within the flow's one-way time of each
// other (1,362 ns there: its first packet's way to the receiver, whose first ACKs then meet
// the other's packets) they run 3.9% over a flow alone, as whole-packet waits make them;
// started 1.5–40 µs apart, 0.3–1.1% over, as half-packet waits make them (the pair: 89.8–90.3
// µs against 87.0–87.5; flows_pairs4MB_apart__DCNS16, flows_rings4MB_apart__DCNS32). The
// grids are locked when flow id and the flows sending data over prev and over l all started
// within flow id's one-way time of each other. (A ring whose four flows start 500 ns apart,
// 1.5 µs from first to last, runs as unlocked in ns-3, although two of its ACKs meet data
// started within their one-way time; the data's own starts, 1 µs apart, decide there. Taking
// a packet time as the bound for the data's starts gets that ring right, but the rings of
// collectives without send latency, whose steps start a few hundred nanoseconds apart, wrong.)
func (n *Network) lockedStarts(id, prev, l int32) bool {
	return n.startedWithin(id, n.startsOf(prev), n.startsOf(l))
}

// startedWithin reports whether flow id and the flows of the start ranges a and b (nil: a link
// no flow crosses) all started within flow id's one-way time of each other.
func (n *Network) startedWithin(id int32, a, b *startRange) bool {
	if a == nil || b == nil {
		return false
	}
	f := &n.flows[id]
	lo, hi := min(a.lo, b.lo, f.start), max(a.hi, b.hi, f.start)
	return secs(hi-lo) <= f.oneWay()
}

// oneWay is the time the flow's first packet takes to its receiver, seconds: its round trip
// through empty queues without the ACK's way back.
func (f *flow) oneWay() float64 { return f.rtt0 - secs(f.ackDelay) }

// startRange is the earliest and latest start of the flows crossing a link, and how many
// started then.
type startRange struct {
	lo, hi       engine.Time
	nLo, nHi     int32
	dirty        bool        // a flow at one of the ends has left: to be found again (startsOf)
	sigLo, sigHi engine.Time // lo and hi when the flows whose ACKs cross the link last looked (checkShare)
}

// join counts a flow started at s, the k-th flow of the link.
func (r *startRange) join(s engine.Time, k int) {
	switch {
	case k == 1:
		r.lo, r.hi, r.nLo, r.nHi, r.dirty = s, s, 1, 1, false
		return
	case r.dirty:
		return
	}
	if s < r.lo {
		r.lo, r.nLo = s, 1
	} else if s == r.lo {
		r.nLo++
	}
	if s > r.hi {
		r.hi, r.nHi = s, 1
	} else if s == r.hi {
		r.nHi++
	}
}

// leave takes out a flow started at s; left flows stay.
func (r *startRange) leave(s engine.Time, left int) {
	if left == 0 || r.dirty {
		r.dirty = left > 0
		return
	}
	if s == r.lo {
		r.nLo--
	}
	if s == r.hi {
		r.nHi--
	}
	r.dirty = r.nLo == 0 || r.nHi == 0
}

// startsOf is link l's start range, found again if a flow at one of its ends has left; nil
// when no flow crosses the link.
func (n *Network) startsOf(l int32) *startRange {
	lk, r := &n.links[l], &n.starts[l]
	if len(lk.on) == 0 {
		return nil
	}
	if r.dirty {
		r.dirty, r.lo, r.hi = false, engine.Never, -1
		for _, e := range lk.on {
			s := n.flows[e.f].start
			if s < r.lo {
				r.lo, r.nLo = s, 0
			}
			if s > r.hi {
				r.hi, r.nHi = s, 0
			}
			if s == r.lo {
				r.nLo++
			}
			if s == r.hi {
				r.nHi++
			}
		}
	}
	return r
}

// busyShare is the share of the time a link of capacity c with backlog q and arrivals arr
// sends, in quarters: rates that differ in the last bits would give every flow its own round
// trip, and flows that would finish together (a ring's steps) would no longer do, for
// differences far below what the ACK-wait estimate can resolve.
func busyShare(q, arr, c float64) float64 {
	out, _ := rates(q, arr, c)
	return math.Round(float64(out/c)*4) / 4
}

// queueAt is link l's backlog at now (not before its last advance), without advancing it: the
// line it follows between events, clamped at 0.
func (n *Network) queueAt(l int32, now engine.Time) float64 {
	lk := &n.links[l]
	if now <= lk.qs.at {
		return lk.qs.q
	}
	_, slope := rates(lk.qs.q, lk.arr, n.capOf(l))
	return max(lk.qs.q+float64(slope*secs(now-lk.qs.at)), 0)
}

// roundTripSecs is flow id's round trip now, seconds: its base round trip, the queues on its
// path and its ACKs' route, and the ACKs' waits behind packets in service.
func (n *Network) roundTripSecs(id int32, now engine.Time) float64 {
	f := &n.flows[id]
	rtt := f.rtt0
	waited := int32(-1) // the last link before where the ACK waited behind a data packet
	for k := range f.hops + f.ack {
		l := n.arena[f.off+k]
		lk := &n.links[l]
		if lk.arr == 0 && lk.qs.q == 0 || lk.paused {
			continue // idle (or paused: the pause, not the queue, holds the flow)
		}
		q := n.queueAt(l, now)
		rtt += q * 8 / lk.capa
		if k >= f.hops {
			rtt += n.ackWaitOn(id, k, l, q, waited, true)
			waited = l
		}
	}
	return rtt
}

// lastAckWait is the wait, seconds, of flow id's last ACK behind the data packets in service at
// the links of its route, as ackWaitAt counts it for every ACK (its backlogs are waited in the
// queues): at the links that still carry data when it passes there. Its last packet reaches the
// receiver at now + delay + sf (now is when its last byte left the last queue of its path, in
// the senders' frame); a flow g on a link of the route still sends there then if its last byte
// reaches the link later, g.sendAt plus the delays of g's path before the link. The flows of a
// collective's step end together, so their last ACKs find the ports their data shared idle;
// a flow whose receiver still sends, or behind which other flows still come, waits as its other
// ACKs did. Where a port serves its flows in turn (Config.Turns) the packet under way is known,
// and the ACK waits exactly its rest: at the receiver's port (turnWait), and at a later link
// that forwards one such port's packets (forwardedWait); the waits then add to when it reaches
// the next link. It returns the wait and, of it, the part at the receiver's port (first), which
// lastAckMade reads again when the ACK is made: the port may have started flows since now.
func (n *Network) lastAckWait(id int32, now engine.Time) (w, first float64) {
	f := &n.flows[id]
	waited := int32(-1)
	t := now + f.delay + f.sf
	for k := f.hops; k < f.hops+f.ack; k++ {
		l := n.arena[f.off+k]
		var tw float64
		tw, waited, t = n.ackWaitHop(id, k, l, waited, t, now)
		if k == f.hops {
			first = tw
		}
		w += tw
		t += n.kin[l].delay
	}
	return w, first
}

// ackWaitHop is what flow id's last ACK waits at link l, the k-th link of its arena chunk, which
// it reaches at t (lastAckWait; now is when the link is read), with the last link of its route
// where it waited before (-1: none); it returns the wait, the last link waited at and when the
// ACK leaves l.
func (n *Network) ackWaitHop(id, k, l, waited int32, t, now engine.Time) (float64, int32, engine.Time) {
	f := &n.flows[id]
	lk := &n.links[l]
	if !(lk.arr > 0 && !lk.paused && (n.sendsUntil(l, t) || k > f.hops && n.forwardsUntil(l, t))) {
		return 0, waited, t
	}
	// The receiver's port may serve its flows in turn (turnWait), a later link forward one such
	// port's packets (forwardedWait): the rest of the packet in service there then.
	tw, ok := 0.0, false
	if k == f.hops {
		tw, ok = n.turnWait(l, t)
	} else {
		tw, ok = n.forwardedWait(l, t)
	}
	if ok {
		if tw > 0 {
			return tw, l, t + ceilPs(tw)
		}
		return 0, waited, t
	}
	return n.ackWaitOn(id, k, l, n.queueAt(l, now), waited, false), l, t
}

// lastAckFirst is what flow id's last ACK, made now by its receiver, waits at the receiver's own
// port: read again now (lastAckMade), as the port's flows may have started since the flow's
// last byte left its sender.
func (n *Network) lastAckFirst(id int32, now engine.Time) float64 {
	f := &n.flows[id]
	w, _, _ := n.ackWaitHop(id, f.hops, n.arena[f.off+f.hops], -1, now, now)
	return w
}

// forwardedWait is how long an ACK that reaches link l at at waits there behind the data packet
// in service, when l forwards the packets of one NIC port that serves its flows in turn (ok):
// every flow on l came from that port, its second link, and every flow of the port goes on over
// l, at the port's rate, with no backlog at l. l then sends each packet a propagation delay and a
// full packet's time after the port began it: stored whole, then sent, and the short last
// packets that follow a full one queue behind it (portBusy) and keep that lag. So the packet in
// service at l at at is the port's at at − delay − full, and the ACK waits its rest (turnWait;
// a switch queues ACKs behind data, ACK_HIGH_PRIO 0), and then for each short packet after it
// that is stored at l by at. This is what bunches the last ACKs of a step on a server's
// NVSwitch: SimAI's ns-3 ends the eight 1 MiB flows of a step of the 8-GPU ring 0, 0, 0, 2, 14,
// 26, 38 and 50 ns apart, their ACKs held on the grids of the receiver's port and of the switch
// port to the sender, which forwards the sender's predecessor; on the 16 MiB ring of Spectrum-X
// 16 the switch port to GPU 0 sends GPU 7's last packets (14 ns each) 11 ns after they are
// stored, and the last ACKs of GPU 0's first three flows, there at 8,584, 8,589 and 8,603 ns,
// all leave at 8,609, behind the packet stored at 8,584.
func (n *Network) forwardedWait(l int32, at engine.Time) (float64, bool) {
	lk := &n.links[l]
	if !n.cfg.Turns || lk.qs.q > 0 || len(lk.on) == 0 {
		return 0, false
	}
	// The port is the first flow's first link; the port and l must carry as many flows before
	// the rest are read: on a link fed by several ports (an all-to-all's) that fails at once,
	// where reading every flow's record first cost a cache miss each.
	e0 := lk.on[0]
	g0 := &n.flows[e0.f]
	if e0.ap != g0.off+1 {
		return 0, false
	}
	u := n.arena[g0.off]
	if len(n.links[u].on) != len(lk.on) || n.capOf(u) != n.capOf(l) {
		return 0, false
	}
	for _, e := range lk.on[1:] {
		if g := &n.flows[e.f]; e.ap != g.off+1 || n.arena[g.off] != u {
			return 0, false
		}
	}
	lag := n.forwardLag(l)
	x := at - n.kin[u].delay - lag
	w, ok := n.turnWait(u, x)
	if !ok || w <= 0 {
		return w, ok
	}
	// The packets after the one in service that are shorter than the lag (a round's last
	// packets after its full ones) reach l before l can send them. One that the port ends by
	// x + lag is stored whole at l by at, queued ahead of the ACK (a data packet that arrives in
	// the same instant was scheduled first), and the ACK waits for it too.
	end, y := float64(x)+float64(w*1e12), float64(x+lag)
	for {
		from := math.Floor(end) + 1
		r, ok := n.turnWait(u, engine.Time(from))
		if !ok || r <= 0 {
			break
		}
		next := from + float64(r*1e12)
		if next > y {
			break
		}
		end = next
	}
	return (end - float64(x)) / 1e12, true
}

// forwardLag is how long after a NIC port begins a packet the switch port l it feeds begins
// sending it, beyond the propagation delay: the switch stores a packet whole, its own time at
// the port's rate, then sends it; back to back, a train keeps the lag of its largest packet, a
// full packet's when one of l's flows has one (the short last packets that follow a full one
// queue behind it). Where every flow on l is a single short packet (a collective's steps of
// less than a payload), the lag is that packet's own time: SimAI's ns-3 sends the 8,244-byte
// packets of 1 MiB ring steps on a 2,880 Gb/s NVSwitch port 22 ns after their sender began
// them, not a full packet's 25, and an ACK that reaches the port then waits behind one.
func (n *Network) forwardLag(l int32) engine.Time {
	big := int64(0)
	tr := &n.cfg.Transport
	for _, e := range n.links[l].on {
		b := n.flows[e.f].bytes
		if b >= tr.Payload {
			return n.fullTime(l)
		}
		big = max(big, tr.Last(b))
	}
	if big == 0 {
		return n.fullTime(l)
	}
	return engine.Time(math.Round(float64(big*8) / n.capOf(l) * 1e12))
}

// forwardsUntil reports whether link l, a switch port after the first link of its flows, is
// still sending at t although every flow's last byte has reached it: a switch sends a packet its
// forwarding lag after it began to arrive (forwardLag: a full packet's time, or a short one's
// where all its flows are one short packet), so the last ones are still queued there for up to
// that long (Config.Turns only, where forwardedWait follows that port's packets).
func (n *Network) forwardsUntil(l int32, t engine.Time) bool {
	return n.cfg.Turns && n.sendsUntil(l, t-n.forwardLag(l))
}

// fullTime is how long link l takes to send a full packet, at what its packets make of its rate
// (capOf: whole nanoseconds on ns-3's clock).
func (n *Network) fullTime(l int32) engine.Time {
	return engine.Time(math.Round(n.fullSecs(n.capOf(l)) * 1e12))
}

// fullSecs is how long a full packet (payload and headers) takes at c bits/s, seconds.
func (n *Network) fullSecs(c float64) float64 {
	return float64(n.cfg.Transport.Full()*8) / c
}

// sendsUntil reports whether a flow still sending over link l has its last byte reach l after
// t. It stops at the first such flow: on a busy link that is one of the first it looks at.
func (n *Network) sendsUntil(l int32, t engine.Time) bool {
	for _, e := range n.links[l].on {
		g := &n.flows[e.f]
		if g.state != stateSending {
			continue
		}
		if g.sendAt == engine.Never { // held at rate 0: it sends on past t
			return true
		}
		at := g.sendAt
		for _, m := range n.arena[g.off:e.ap] {
			at += n.kin[m].delay
		}
		if at > t {
			return true
		}
	}
	return false
}

// joinAckLinks puts flow id on the ACK lists of its ACKs' route (windowed networks only).
func (n *Network) joinAckLinks(id int32) {
	f := &n.flows[id]
	for k := f.hops; k < f.hops+f.ack; k++ {
		lk := &n.links[n.arena[f.off+k]]
		n.apos[f.off+k] = int32(len(lk.ackOn))
		lk.ackOn = appendDoubling(lk.ackOn, entry{f: id, ap: f.off + k})
	}
}

// leaveAckLinks takes flow id off the ACK lists of its ACKs' route.
func (n *Network) leaveAckLinks(id int32) {
	f := &n.flows[id]
	for k := f.hops; k < f.hops+f.ack; k++ {
		l := n.arena[f.off+k]
		n.links[l].ackOn = n.removeAt(n.links[l].ackOn, n.apos[f.off+k])
	}
}

// windowsDirty asks the ports of the flows whose windows link l's state enters — those sending
// over it and those whose ACKs cross it — to share again, when a change of d seconds in their
// round trips may matter (windowMoves).
func (n *Network) windowsDirty(l int32, d float64) {
	lk := &n.links[l]
	for _, e := range lk.on {
		if f := &n.flows[e.f]; f.state == stateSending && windowMoves(f, d) {
			n.flowStale(e.f)
		}
	}
	for _, e := range lk.ackOn {
		if f := &n.flows[e.f]; windowMoves(f, d) {
			n.flowStale(e.f)
		}
	}
}

// windowsShorter asks the ports of the flows whose windows hold them back, among those sending
// over link l and those whose ACKs cross it, to share again if their round trips are now
// shorter than the ones their caps were set with by more than winMove. Called when l's queue
// empties: each held flow is compared with its own last round trip, since its cap may date
// from any earlier level of this queue (or of the others it meets), not only from the level
// the link was last re-armed at.
func (n *Network) windowsShorter(l int32, now engine.Time) {
	lk := &n.links[l]
	for _, list := range [2][]entry{lk.on, lk.ackOn} {
		for _, e := range list {
			// A round trip is never shorter than its base: a flow that saw about that needs no look.
			f := &n.flows[e.f]
			if f.state == stateSending && f.slack <= 0 && f.rtt0 < f.rtt*(1-winMove) && n.roundTripSecs(e.f, now) < f.rtt*(1-winMove) {
				n.flowStale(e.f)
			}
		}
	}
}

// windowMoves reports whether a round trip longer by up to d seconds may move what flow f's
// window lets it send by more than winMove: its window holds it back or would within d. (A
// shorter round trip is looked at flow by flow, windowsShorter.)
func windowMoves(f *flow, d float64) bool {
	return f.slack < d && d > winMove*f.rtt
}

// winMove is the relative change of a window-bound rate below which a change on an ACK route
// does not make a port share again: a window of one bandwidth-delay product makes every flow at
// line rate window-bound, and the wait behind a packet in service moves its round trip by a
// few percent at most.
const winMove = 0.01

// checkShare is called when link l is re-armed: if the share of the time it sends (in the
// quarters ackWait counts) changed since the flows whose ACKs cross it last looked, those whose
// windows the change in their ACKs' waits may move look again; with AckWaitLocked also when the
// range of its flows' starts changed, which may lock or unlock the packet grids their ACKs meet
// here and at the link after (lockedStarts). Between such changes no round trip changes, so
// nothing is looked at.
func (n *Network) checkShare(l int32) {
	lk := &n.links[l]
	if len(lk.ackOn) == 0 {
		return
	}
	c := n.capOf(l)
	rho := 0.0
	if c > 0 {
		rho = busyShare(lk.qs.q, lk.arr, c)
	}
	pkt := n.fullSecs(lk.capa)
	d := 0.0
	if rho != lk.rho {
		// The wait moves by half a packet per unit of rho, or by up to a whole one where it
		// is not the ACK's first (ackWaitAt).
		d = math.Abs(rho-lk.rho) * pkt
		if n.cfg.AckWait == AckWaitMean {
			d /= 2
		}
		lk.rho = rho
	}
	if n.starts != nil {
		if r := n.startsOf(l); r != nil && (r.lo != r.sigLo || r.hi != r.sigHi) {
			// A lock won or lost moves a wait by half a packet, here or at the next link;
			// none is when the flows crossing the link started too far apart before and
			// after for any flow's one-way time.
			if min(secs(r.hi-r.lo), secs(r.sigHi-r.sigLo)) <= n.maxOneWay {
				d = max(d, pkt)
			}
			r.sigLo, r.sigHi = r.lo, r.hi
		}
	}
	if d > 0 {
		for _, e := range lk.ackOn {
			if f := &n.flows[e.f]; windowMoves(f, d) {
				n.flowStale(e.f)
			}
		}
	}
}

// armWindow schedules the event at which link l's queue reaches the level its windowed flows
// settle it at (see the file's comment), or cancels it. Only a growing queue, or a draining one
// that holds a flow back by its window, has such a level.
func (n *Network) armWindow(l int32, now engine.Time) {
	lk := &n.links[l]
	d := engine.Never
	if c := n.capOf(l); c > 0 && len(lk.on) > 0 {
		_, slope := rates(lk.qs.q, lk.arr, c)
		if slope < 0 {
			held := false
			for _, e := range lk.on {
				if f := &n.flows[e.f]; f.state == stateSending && f.slack <= 0 {
					held = true
					break
				}
			}
			if !held {
				slope = 0
			}
		}
		if slope != 0 {
			if q, ok := n.windowTarget(l, c); ok {
				// Within a packet of the target the queue counts as settled: no event, so a
				// queue that hovers there does not chatter.
				step := float64(max(n.cfg.Transport.Full(), 1))
				switch {
				case slope > 0 && q > lk.qs.q+step:
					d = ceilPs((q - lk.qs.q) / slope)
				case slope > 0 && q < lk.qs.q-step:
					// Past the level already: the target fell below the backlog (the flows'
					// rates moved) before the queue got there, and flows that had not been held
					// back look again once it has grown by another packet.
					d = ceilPs(step / slope)
				case slope < 0 && q < lk.qs.q-step && q > emptyEps:
					d = ceilPs((q - lk.qs.q) / slope)
				}
			}
		}
	}
	n.setTimer(&lk.winT, d, l, evWindow)
}

// windowTarget solves Σ_i min(u_i, 8·W_i/(a_i + 8q/c)) = c for link l's backlog q, over the
// flows injecting into it: u_i is what flow i could send without its window (its
// congestion-control rate, or its port's fair share when that is lower, or with reshaping what
// reaches the link past the queues before it), a_i its base round trip (the other queues it
// meets are left out: the target is where the port shares next, with every queue counted, and a
// target set too high is corrected then); with reshaping, the flows whose senders are done
// bring what still leaves the queues before the link, a term no window binds. ok is false when no
// flow's window can balance the link. The link remembers its last solution and reuses it while
// the flows still send c there.
func (n *Network) windowTarget(l int32, c float64) (q float64, ok bool) {
	if !n.wkeep {
		n.keepWhenLong(len(n.links[l].on))
	}
	wc := &n.wcache[l]
	if wc.valid && wc.seen == wc.ver && wc.c == c {
		n.stats.TargetsKept++
		if !windowCheck {
			return wc.q, wc.ok
		}
		defer func(q0 float64, ok0 bool) {
			if q != q0 || ok != ok0 {
				panic(fmt.Sprintf("ccfluid: link %d's window target %v, %v kept, %v, %v computed", l, q0, ok0, q, ok))
			}
		}(wc.q, wc.ok)
	}
	wc.valid = false
	lk := &n.links[l]
	n.wterms = n.wterms[:0]
	// Beside the terms, what they send at the last solution q0, and how fast that falls with q.
	q0, x0 := lk.wsol.q, float64(lk.wsol.q*8/c)
	var su, s0, ds0, tail float64
	for i, e := range lk.on {
		f := &n.flows[e.f]
		r := n.entryRate(l, i)
		if f.state != stateSending {
			// With reshaping, a flow whose sender is done still brings its queued bytes here
			// (reshape.go), whatever this queue: with the part of the others' arrivals above
			// what they could send now, a term no window binds.
			tail += r
			continue
		}
		if r <= 0 {
			continue
		}
		t := wterm{u: min(n.sendRate(e.f), f.lim), w: float64(n.window(e.f, n.ccRate(e.f)) * 8), a: f.rtt0}
		if r < f.cinj {
			// A queue before this link holds it back (reshape.go): it brings no more than it
			// arrives at now until its window holds it back more.
			t.u = min(t.u, r)
		} else if r > t.u {
			// It brings more than it could send now: bytes it sent before, still leaving the
			// queues before this link (reshape.go), which no window here holds back.
			tail += r - t.u
		}
		if f.opening {
			t.w = math.Inf(1) // its first round trip: no ACK to wait for yet (opening.go)
		}
		su += t.u
		if r := t.w / (t.a + x0); r < t.u {
			s0 += r
			ds0 -= float64(r / (t.a + x0) * 8 / c)
		} else {
			s0 += t.u
		}
		n.wterms = append(n.wterms, t)
	}
	if len(n.wterms) == 0 {
		return n.keepTarget(l, c, 0, false)
	}
	if tail > 0 {
		su, s0 = su+tail, s0+tail
		n.wterms = append(n.wterms, wterm{u: tail, w: math.Inf(1)})
	}
	if su <= c {
		return n.keepTarget(l, c, 0, true) // they cannot send more than the link: no backlog, whatever the windows
	}
	// The last solution stands while it is still one, within the tolerance: the flows' rates
	// move at every congestion-control step, but those their windows bind do not change it.
	tol := float64(max(n.cfg.Transport.Full()/10, 1))
	if lk.wsol.ok && lk.wsol.c == c && (q0 == 0 && s0 <= c || q0 > 0 && math.Abs(s0-c) <= float64(-ds0*tol)) {
		return n.keepTarget(l, c, q0, true)
	}
	from := 0.0
	if lk.wsol.ok && lk.wsol.c == c && s0 > c {
		from = q0 // below the root
	}
	q, ok = solveWindows(n.wterms, c, tol, from)
	lk.wsol = windowSolution{c: c, q: q, ok: ok}
	return q, ok
}

// windowCache is what link l's last windowTarget answered without solving (its last solution
// stood, or no window binds), and ver the count of changes to what the terms read there (a
// flow's rate, cap, window, injection, state or opening, or its arrival at the link, or the
// flows on the link): while seen is ver and the rate is c, a call would read the same terms
// and answer the same. An all-to-all's link into a GPU has a thousand flows, and is asked at
// every ECN mark it makes: of 187,041 asks (alltoall-1024-dcqcn) 186,941 found every term as
// before (a temporary hash of the terms); the count keeps 182,902 of them (the log's
// targets_kept).
type windowCache struct {
	ver, seen uint32
	valid, ok bool
	c, q      float64
}

// windowCheck makes windowTarget compute what it kept and panic if the two differ (for tests).
var windowCheck = false

// keepTarget records windowTarget's answer (q, ok) for link l at rate c, reached without a
// solve (so a second call on the same terms reaches it the same way), and returns it.
func (n *Network) keepTarget(l int32, c, q float64, ok bool) (float64, bool) {
	if n.wkeep {
		wc := &n.wcache[l]
		wc.valid, wc.seen, wc.c, wc.q, wc.ok = true, wc.ver, c, q, ok
	}
	return q, ok
}

// keepWhenLong counts windowTarget's calls and the flows they read (flows: this one's), and
// starts keeping targets once, after at least keepAfter calls, the calls so far have read
// keepFlows flows each on average.
// Keeping costs every change of a term a write per link of the flow's path (termsMoved), which
// pays where a link's flows are many (an all-to-all's link into a GPU: a thousand) and is lost
// where they are few (a ring's, a data-parallel all-reduce's: a flow or two, asked rarely). A
// target is kept only from then on, with every change since counted, so when it starts does
// not change what a call answers.
func (n *Network) keepWhenLong(flows int) {
	n.wcalls++
	n.wflows += int64(flows)
	if n.wcalls >= keepAfter && n.wflows >= keepFlows*n.wcalls {
		n.wkeep = true
	}
}

// keepAfter and keepFlows: windowTarget keeps its answers once at least keepAfter calls have
// read keepFlows flows each on average (keepWhenLong; variables for tests).
var (
	keepAfter int64 = 4096
	keepFlows int64 = 32
)

// termsMoved records that something windowTarget reads of flow id (its rate, window, cap,
// injection, state or opening) changed: every link of its path asks again.
func (n *Network) termsMoved(id int32) {
	if !n.wkeep {
		return
	}
	f := &n.flows[id]
	for _, l := range n.arena[f.off : f.off+f.hops] {
		n.wcache[l].ver++
	}
}

// linkTermsMoved records that the flows on link l, or one's arrival there, changed.
func (n *Network) linkTermsMoved(l int32) {
	if n.wkeep {
		n.wcache[l].ver++
	}
}

// setLim sets flow id's cap at its port (shareNIC): windowTarget reads min(rate, cap).
func (n *Network) setLim(id int32, lim float64) {
	f := &n.flows[id]
	if f.lim == lim {
		return
	}
	was := min(f.pr, f.lim)
	f.lim = lim
	if n.wkeep && min(f.pr, lim) != was {
		n.termsMoved(id)
	}
}

// windowMoved records that flow id's congestion-control rate moved: with VAR_WIN its window
// moves with it.
func (n *Network) windowMoved(id int32) {
	if n.cfg.VarWin {
		n.termsMoved(id)
	}
}

// arrivalMoves reports whether flow id's term at a link moves when its arrival there goes from
// r0 to r1, its injection cinj: windowTarget skips a sending flow that brings nothing, caps
// what it could send at what it brings when a queue before holds it back (less than it
// injects), and counts what it brings above that as bytes no window binds; a flow done sending
// brings its arrival as such.
func (n *Network) arrivalMoves(id int32, r0, r1, cinj float64) bool {
	if r0 == r1 {
		return false
	}
	f := &n.flows[id]
	if f.state != stateSending {
		return true
	}
	u := min(f.pr, f.lim)
	type term struct {
		in      bool
		u, tail float64
	}
	at := func(r float64) term {
		if r <= 0 {
			return term{}
		}
		if r < cinj {
			return term{true, min(u, r), 0}
		}
		if r > u {
			return term{true, u, r - u}
		}
		return term{true, u, 0}
	}
	return at(r0) != at(r1)
}

// injectionMoved records that flow id's injection moved from was to f.cinj (with reshaping:
// its arrivals at its hops are set already): where a hop's term compares its arrival with the
// injection (arrivalMoves), and the comparison changes, the link asks again.
func (n *Network) injectionMoved(id int32, was float64) {
	if !n.wkeep {
		return
	}
	f := &n.flows[id]
	for k := range f.hops {
		p := f.off + k
		l := n.arena[p]
		r := n.weights[l].rt[n.apos[p]].arr
		if (r < was) != (r < f.cinj) {
			n.linkTermsMoved(l)
		}
	}
}

// windowSolution is a link's last windowTarget: the link's rate it was solved for, and the
// answer.
type windowSolution struct {
	c, q float64
	ok   bool
}

// solveWindows finds the backlog q (bytes, within tol) at which the terms send c:
// Σ min(u, w/(a + 8q/c)) = c. A term is bound by its window from its breakpoint on, the backlog
// b = (w/u − a)·c/8 at which w/(a + 8b/c) = u; the sum falls with q. The terms are sorted by
// breakpoint and the breakpoints bisected for the segment in which the sum crosses c: an incast
// of hundreds of flows has as many breakpoints, and walking them one by one would cost the
// square of its size. Within the segment the bound set is fixed and the sum convex, so Newton's
// method from the segment's start (below the root) converges to it from below. ts is reordered.
// from is a backlog known to be at most the root (0, or the last solution when the flows send
// more than c there): first, a few steps from it without sorting (climbWindows) settle most
// changes.
func solveWindows(ts []wterm, c, tol, from float64) (float64, bool) {
	k := 8 / c // seconds of round trip per byte of backlog
	for i := range ts {
		ts[i].b = (ts[i].w/ts[i].u - ts[i].a) / k
	}
	if q, done := climbWindows(ts, c, tol, from); done {
		return q, true
	}
	// Ties are broken on every field, so the order (and the sums' rounding) does not depend on
	// the sort's algorithm.
	slices.SortFunc(ts, func(x, y wterm) int {
		switch {
		case x.b != y.b:
			return cmp.Compare(x.b, y.b)
		case x.a != y.a:
			return cmp.Compare(x.a, y.a)
		case x.w != y.w:
			return cmp.Compare(x.w, y.w)
		}
		return cmp.Compare(x.u, y.u)
	})
	// sum is what the terms send at backlog q with the first nb of them bound (comparing q with
	// the breakpoints, not the two rates, keeps a term from staying unbound at its own
	// breakpoint by rounding), and its derivative.
	sum := func(q float64, nb int) (s, ds float64) {
		x := float64(q * k)
		for _, t := range ts[:nb] {
			r := t.w / (t.a + x)
			s += r
			ds -= float64(r / (t.a + x) * k)
		}
		for _, t := range ts[nb:] {
			s += t.u
		}
		return s, ds
	}
	bound := func(q float64) int {
		return sort.Search(len(ts), func(i int) bool { return ts[i].b > q })
	}
	if s, _ := sum(0, bound(0)); s <= c {
		return 0, true
	}
	// The first breakpoint at which the terms send c or less ends the segment; it starts at
	// the one before (or at 0).
	end := sort.Search(len(ts), func(i int) bool {
		if ts[i].b <= 0 || math.IsInf(ts[i].b, 1) {
			return math.IsInf(ts[i].b, 1)
		}
		s, _ := sum(ts[i].b, bound(ts[i].b))
		return s <= c
	})
	q := 0.0
	if end > 0 {
		q = max(ts[end-1].b, 0)
	}
	nb := bound(q)
	if nb == 0 {
		return 0, false // nothing binds, however long the queue: the link cannot balance
	}
	for range 64 {
		s, ds := sum(q, nb)
		if s <= c || ds >= 0 {
			return q, true
		}
		step := (s - c) / -ds
		q += step
		if end < len(ts) && q >= ts[end].b {
			return ts[end].b, true
		}
		if step <= tol {
			return q, true
		}
	}
	return q, true
}

// climbWindows is Newton's method from q, at most the root, that goes to the next breakpoint
// when no window binds enough to move the sum: done when it converges within climbSteps steps.
func climbWindows(ts []wterm, c, tol, q float64) (float64, bool) {
	k := 8 / c
	for range climbSteps {
		var s, ds float64
		next := math.Inf(1)
		x := float64(q * k)
		for _, t := range ts {
			if q >= t.b {
				r := t.w / (t.a + x)
				s += r
				ds -= float64(r / (t.a + x) * k)
			} else {
				s += t.u
				next = min(next, t.b)
			}
		}
		if s <= c {
			return q, true
		}
		step := math.Inf(1)
		if ds < 0 {
			step = (s - c) / -ds
		}
		switch {
		case next < q+step:
			q = next // a window binds before the tangent reaches c: on from there
		case math.IsInf(step, 1):
			return 0, false // nothing binds: the sorted search says so
		case step <= tol:
			return q + step, true
		default:
			q += step
		}
	}
	return 0, false
}

// climbSteps bounds climbWindows: an incast with more breakpoints to cross is sorted instead.
const climbSteps = 8

// wterm is one flow's part in windowTarget: its rate without the window, its window in bits,
// its base round trip, seconds, and (solveWindows) its breakpoint, bytes of backlog.
type wterm struct{ u, w, a, b float64 }
