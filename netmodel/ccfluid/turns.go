package ccfluid

import (
	"math"
	"slices"

	"simd/engine"
)

// turns.go: a NIC port serves its queue pairs in turn, a packet each (Config.Turns).
//
// SimAI's ns-3 NIC (qbb-net-device.cc, RdmaEgressQueue::GetNextQindex) sends, whenever its
// port is free, one packet of the first queue pair after the last one served, in the order the
// queue pairs were made, that may send (not paused, within its window, its pacing gap over).
// Flows that all ask for more than their share of the port are each free at every turn, so the
// port is a round robin of packets: over a round every flow sends one packet, which is processor
// sharing on average, but not at the ends of flows. Of k flows with their last packets left,
// the first ends k−1 packets before the last (sharing ends them together), and a flow that joins
// the port is served within the round under way, ahead of its share. The differences are a
// packet time or a few per flow, but a ring's chunks pass them on from hop to hop: a 64 MiB ring
// all-reduce over 32 GPUs in four servers (DCN+, one ToR) is 5.2% from ns-3 with sharing and
// 2.0% with turns, and where a ring's steps come to overlap on its ports the round robin lets
// the overlaps grow into trains of chunks, as ns-3's does, where sharing damps them
// (docs/models.md, "Turns at a port" and "Trains of chunks", where also what turns make worse).
// Turns are the default (SimAI's NIC); Config.Turns false shares the port as a fluid.
//
// The fluid keeps its rates; the round robin only decides when each flow's last packet has
// left. For the flows that share a port at its level (shareNIC: every one asks for more than
// the port's equal share), the port keeps the state of its round robin — whose turn it is,
// when the packet under way ends, how many packets each flow has not begun — from which the
// next flow to end and when are exact: whole rounds of full packets, then the first flow of
// the round that begins its last packet. Each flow is then given the rate that brings its
// fluid bytes to what the round robin will have left of it then (so the one that ends has none
// left: its "sent" timer falls on its last packet's end), and the port is shared again when it
// ends or anything else changes. A sharing costs O(k), like the fair one; but where the fair
// sharing ends k equal flows at one instant, the round robin ends them at k, so a port shares
// in turn only up to maxTurns flows (an all-to-all's port of 1,023 would cost O(k²)); past it
// the port shares fairly and ends equal flows at their mean (turnOffset).
//
// Where the port had one flow alone (the round robin needs two), that flow's place in its packet
// is read from its fluid bytes; up to boundaryBytes past a boundary counts as on it, so a flow
// that joins that close after the lone flow began a packet takes the turn that packet had.

// maxTurns is the most flows a port serves in turn; with more it shares fairly.
const maxTurns = 64

// boundaryBytes is how far into a packet a flow's fluid bytes count as on the packet's
// boundary (packetsSent).
const boundaryBytes = 8

// turnState is a NIC port's round robin over the flows at its level, kept between sharings.
type turnState struct {
	qps  []int32  // the flows in turn, in the order their queue pairs were made (Network.qpSeq)
	gen  []uint32 // their generations when they joined (a reused slot is another flow)
	left []int32  // how many packets each has not begun
	cur  int32    // index in qps of the flow that began the last packet (-1: none yet)
	busy float64  // when that packet ends, ps
	c    float64  // the rate the port sends the flows in turn at, bits/s
	on   bool
	// lone: the round robin has ended with one of its flows left alone at the port (endTurns);
	// the state holds that flow, whose packets follow each other, for turnWait alone.
	lone bool
}

// fullPs is the time, ps, a full packet takes at the round robin's rate, packetPs the time of the
// packet flow i begins with left packets not begun.
func (n *Network) fullPs(t *turnState) float64 {
	return float64(n.fullSecs(t.c) * 1e12)
}

func (n *Network) packetPs(t *turnState, i int, left int32) float64 {
	if left == 1 {
		return float64(float64(n.cfg.Transport.Last(n.flows[t.qps[i]].bytes)*8) / t.c * 1e12)
	}
	return n.fullPs(t)
}

// fewest is how many flows in turn have packets left to begin, and the fewest any of them has.
func (t *turnState) fewest() (minLeft int32, k int) {
	minLeft = math.MaxInt32
	for _, l := range t.left {
		if l > 0 {
			k++
			minLeft = min(minLeft, l)
		}
	}
	return minLeft, k
}

// after is the index of the flow s turns after cur (s ≥ 1), counting from the first when no
// flow has had a turn yet.
func (t *turnState) after(s int) int {
	if t.cur < 0 {
		return (s - 1) % len(t.qps)
	}
	return (int(t.cur) + s) % len(t.qps)
}

// nextTurn is the index of the flow whose turn follows cur, -1 when none has packets left.
func (t *turnState) nextTurn() int {
	for s := 1; s <= len(t.qps); s++ {
		if j := t.after(s); t.left[j] > 0 {
			return j
		}
	}
	return -1
}

// advanceTurns runs port's round robin to now (ps): every packet that begins before then is
// begun. One that would begin at now is not: a flow that joins at now takes part in that turn.
func (n *Network) advanceTurns(t *turnState, now float64) {
	for t.busy < now {
		minLeft, k := t.fewest()
		if k == 0 {
			return
		}
		// Whole rounds in which every flow begins a full packet, in the same order.
		round := float64(k) * n.fullPs(t)
		if r := min(int64(minLeft-1), int64((now-t.busy)/round)); r > 0 {
			for i := range t.left {
				if t.left[i] > 0 {
					t.left[i] -= int32(r)
				}
			}
			t.busy += float64(float64(r) * round)
		}
		// Then packet by packet, at most a round.
		for s := 0; s < k && t.busy < now; s++ {
			j := t.nextTurn()
			if j < 0 {
				return
			}
			t.busy += n.packetPs(t, j, t.left[j])
			t.left[j]--
			t.cur = int32(j)
		}
	}
}

// nextEnd is when the next flow of the round robin has sent its last packet (ps) and its index:
// the flow whose last packet is under way, else after the whole rounds of full packets, the
// first in the round after them that begins its last. ok is false when none has packets left.
func (n *Network) nextEnd(t *turnState, now float64) (at float64, j int, ok bool) {
	if t.cur >= 0 && t.left[t.cur] == 0 && t.busy > now {
		return t.busy, int(t.cur), true
	}
	minLeft, k := t.fewest()
	if k == 0 {
		return 0, -1, false
	}
	at = max(t.busy, now) + float64(float64(minLeft-1)*float64(k)*n.fullPs(t))
	for s := 1; s <= len(t.qps); s++ {
		i := t.after(s)
		switch l := t.left[i]; {
		case l == 0:
		case l == minLeft:
			return at + n.packetPs(t, i, 1), i, true
		default:
			at += n.fullPs(t)
		}
	}
	return 0, -1, false // not reached: some flow has minLeft packets left
}

// leftAt is the wire bytes the round robin has not begun of flow i when flow j ends, its
// minLeft-th packet from now (nextEnd): whole rounds, then the round up to j.
func (n *Network) leftAt(t *turnState, i, j int, minLeft int32) float64 {
	l := t.left[i]
	if l == 0 {
		return 0
	}
	l -= minLeft - 1
	kk := len(t.qps)
	pos := func(x int) int { return ((x-int(t.cur)-1)%kk + kk) % kk } // its turn in the round: after(pos+1)
	if pos(i) <= pos(j) {
		l--
	}
	return n.bytesLeft(t, i, l)
}

// bytesLeft is the wire bytes of flow i's last l packets (0 for l ≤ 0).
func (n *Network) bytesLeft(t *turnState, i int, l int32) float64 {
	if l <= 0 {
		return 0
	}
	tr := &n.cfg.Transport
	return float64(int64(l-1)*tr.Full() + tr.Last(n.flows[t.qps[i]].bytes))
}

// remNow is flow id's fluid bytes left to inject at now.
func (n *Network) remNow(id int32, now engine.Time) float64 {
	f := &n.flows[id]
	return max(f.rem-float64(float64(f.inj*secs(now-f.at))/8), 0)
}

// packetsSent is how many of flow id's packets are wholly out when rem wire bytes are left,
// and the bytes still to go of the one partly out (0: none).
func (n *Network) packetsSent(id int32, rem float64) (whole int32, toGo float64) {
	f := &n.flows[id]
	tr := &n.cfg.Transport
	np := int32(tr.Packets(f.bytes))
	if rem <= emptyEps {
		return np, 0
	}
	sent := float64(f.wire) - rem
	if sent <= emptyEps {
		return 0, 0
	}
	full := float64(tr.Full())
	whole = min(int32(math.Floor(sent/full)), np-1)
	// A few bytes into a packet is on its boundary: a fluid rate on ns-3's whole-nanosecond
	// clock (Transport.PacketRate), with starts at whole picoseconds, is a byte or so off a
	// packet per packet time, and a flow that joins at a boundary gets the next turn.
	if part := sent - float64(float64(whole)*full); part > boundaryBytes {
		size := full
		if whole == np-1 {
			size = float64(tr.Last(f.bytes))
		}
		toGo = max(size-part, 0)
	}
	return whole, toGo
}

// shareInTurn gives port l's flows at its level, level[...] (each asking for more than the
// port's equal share), the rates of the port's round robin over capacity c (what the port has
// for them): see the file's comment. It reports false, and does nothing, when the round robin
// does not apply (fewer than 2 flows, more than maxTurns, no packets).
func (n *Network) shareInTurn(l int32, level []fillItem, c float64, now engine.Time) bool {
	if !n.cfg.Turns {
		return false
	}
	t := &n.nicOf(l).rr
	if n.cfg.Transport.Payload <= 0 || len(level) < 2 || len(level) > maxTurns || !(c > 0) {
		n.endTurns(l, now)
		return false
	}
	t.lone = false
	nowPs := float64(now)
	if n.rrEpoch += 2; n.rrEpoch < 2 {
		clear(n.rrMark) // the epochs wrapped: an old stamp must not pass for a new one
		n.rrEpoch = 2
	}
	for _, it := range level {
		n.markFlow(it.f, n.rrEpoch)
	}
	fresh := !t.on
	if !fresh {
		n.advanceTurns(t, nowPs)
		// Out: the flows no longer at the level or no longer sending (one that ended is gone
		// from the port's list). The packet under way goes on; the turn after it stays.
		w, cur := 0, t.cur
		for i, id := range t.qps {
			if n.rrMark[id] == n.rrEpoch && n.flows[id].gen == t.gen[i] && n.flows[id].state == stateSending {
				n.rrMark[id] = n.rrEpoch + 1 // in turn already
				t.qps[w], t.gen[w], t.left[w] = id, t.gen[i], t.left[i]
				w++
			} else if int32(i) <= t.cur {
				cur--
			}
		}
		t.qps, t.gen, t.left, t.cur = t.qps[:w], t.gen[:w], t.left[:w], cur
		if t.c != c && t.busy > nowPs {
			t.busy = nowPs + (t.busy-nowPs)*t.c/c
		}
		t.busy = max(t.busy, nowPs) // an idle port begins at once
	} else {
		t.qps, t.gen, t.left = t.qps[:0], t.gen[:0], t.left[:0]
		t.cur, t.busy = -1, nowPs
	}
	t.c = c
	// In: the flows at the level not in turn yet, at their places in the order of queue pairs,
	// with the packets they have not begun. A packet partly out counts as not begun, but when
	// the port starts its round robin, the one with the least to go is under way (a flow that
	// had the port alone is in the middle of a packet).
	under, toGoMin := int32(-1), math.Inf(1)
	served := int32(-1) // with no packet under way: the flow that sent last (most sent), whose turn it was
	servedBytes := 0.0
	for _, it := range level {
		id := it.f
		if n.rrMark[id] == n.rrEpoch+1 {
			continue
		}
		rem := n.remNow(id, now)
		whole, toGo := n.packetsSent(id, rem)
		if sent := float64(n.flows[id].wire) - rem; fresh && whole > 0 && sent > servedBytes {
			served, servedBytes = id, sent
		}
		p := len(t.qps)
		for p > 0 && n.qpSeq[t.qps[p-1]] > n.qpSeq[id] {
			p--
		}
		t.qps = append(t.qps, 0)
		t.gen = append(t.gen, 0)
		t.left = append(t.left, 0)
		copy(t.qps[p+1:], t.qps[p:])
		copy(t.gen[p+1:], t.gen[p:])
		copy(t.left[p+1:], t.left[p:])
		t.qps[p], t.gen[p] = id, n.flows[id].gen
		t.left[p] = int32(n.cfg.Transport.Packets(n.flows[id].bytes)) - whole
		if int32(p) <= t.cur {
			t.cur++
		}
		if int32(p) <= under {
			under++
		}
		if fresh && toGo > 0 && toGo < toGoMin {
			under, toGoMin = int32(p), toGo
		}
	}
	if under >= 0 {
		t.left[under]--
		t.cur, t.busy = under, nowPs+float64(toGoMin*8/c*1e12)
	} else if served >= 0 {
		t.cur = int32(slices.Index(t.qps, served)) // the next turn is after it
	}
	t.on = true
	at, j, ok := n.nextEnd(t, nowPs)

	if !ok || !(at > nowPs) {
		t.on = false
		return false
	}
	minLeft := t.left[j]
	span := (at - nowPs) / 1e12
	for i, id := range t.qps {
		var target float64
		switch {
		case i == j:
		case minLeft > 0:
			target = n.leftAt(t, i, j, minLeft)
		default:
			target = n.bytesLeft(t, i, t.left[i])
		}
		n.setInjection(id, max(n.remNow(id, now)-target, 0)*8/span, now)
	}
	return true
}

// markFlow stamps flow id with epoch e (shareInTurn's scratch).
func (n *Network) markFlow(id int32, e uint32) {
	for int(id) >= len(n.rrMark) {
		n.rrMark = append(n.rrMark, 0)
	}
	n.rrMark[id] = e
}

// turnEnd reports whether flow id, whose last byte has just left, was sent by its port's
// round robin, and the rate its packets left at there: one in a round of the port's flows
// (Transport.Tail's rate, whose gap before the last packet is its turn's).
func (n *Network) turnEnd(id int32) (rate float64, ok bool) {
	f := &n.flows[id]
	// Without turns no port keeps a round robin: reading the port's state would cost a cache
	// miss per flow for nothing (6.5% of a 4,096-GPU all-reduce under DCQCN).
	if !n.cfg.Turns || f.hops == 0 {
		return 0, false
	}
	l := n.arena[f.off]
	if int(l) >= len(n.nics) || !n.nics[l].rr.on {
		return 0, false
	}
	t := &n.nics[l].rr
	for i, q := range t.qps {
		if q == id && t.gen[i] == f.gen {
			tr := &n.cfg.Transport
			last := float64(tr.Last(f.bytes))
			return t.c * last / (float64(float64(len(t.qps)-1)*float64(tr.Full())) + last), true
		}
	}
	return 0, false
}

// endTurns ends NIC port l's round robin: its flows no longer ask for more than it sends, or
// fewer than two of them do. Where the round robin was on and one of its flows is left alone at
// the port, the state stays for that flow (lone): it sends the packets it has not begun after
// the one under way, back to back, so turnWait still finds where an ACK that reaches the port
// falls among them. The last flow of a round ends alone with its last packet under way, and
// the last ACK its receiver makes then waits for the rest of that packet (SimAI's ns-3, the
// 128 KiB flows of a 16 MiB ring's step over the NVSwitch of Spectrum-X 16: GPU 1's port sends
// its last flow's last packet from 8,545 to 8,559 ns, and the ACK of GPU 0's first flow, made
// at 8,550, leaves at 8,559).
func (n *Network) endTurns(l int32, now engine.Time) {
	if int(l) >= len(n.nics) {
		return
	}
	t := &n.nics[l].rr
	src := n.links[l].src
	switch {
	case len(src) != 1:
		t.lone = false
	case t.on:
		id := src[0]
		n.advanceTurns(t, float64(now))
		t.lone = false
		for i, q := range t.qps {
			// Only its last packet, under way (or out): the round robin's rate says when
			// that ends, not when a paced flow begins the next.
			if q == id && t.gen[i] == n.flows[id].gen && t.left[i] == 0 {
				g, left, cur := t.gen[i], t.left[i], int32(-1)
				if t.cur >= 0 {
					cur = 0
				}
				t.qps, t.gen, t.left, t.cur = append(t.qps[:0], id), append(t.gen[:0], g), append(t.left[:0], left), cur
				t.lone = true
				break
			}
		}
	case t.lone:
		// Still the same flow alone: its packets go on as they were.
		t.lone = t.qps[0] == src[0] && t.gen[0] == n.flows[src[0]].gen
	}
	t.on = false
}

// turnWait is how long an ACK that reaches NIC port l at at waits there when the port serves its
// flows in turn (ok): the rest of the data packet under way then (ns-3's NIC sends its ACKs
// first, but not in the middle of a packet). The port's packets are those of its round robin as
// it stands: whole rounds of full packets, then packet by packet. ok is false when the port has
// no round robin, or when its state reaches less than two rounds past at's packet.
func (n *Network) turnWait(l int32, at engine.Time) (float64, bool) {
	if int(l) >= len(n.nics) || !n.nics[l].rr.on && !n.nics[l].rr.lone {
		return 0, false
	}
	t := &n.nics[l].rr
	a := float64(at)
	if t.busy >= a {
		return (t.busy - a) / 1e12, true
	}
	minLeft, k := t.fewest()
	if k == 0 {
		return 0, true // the port is idle from busy on
	}
	round := float64(k) * n.fullPs(t)
	r := min(int64(minLeft-1), int64((a-t.busy)/round))
	b := t.busy + float64(float64(r)*round)
	kk := len(t.qps)
	for s := 1; s <= 2*kk; s++ {
		i := t.after(s)
		left := t.left[i] - int32(r)
		if s > kk {
			left--
		}
		if left <= 0 {
			continue
		}
		if b += n.packetPs(t, i, left); b >= a {
			return (b - a) / 1e12, true
		}
	}
	// Every packet the port has is out before at: it is idle then (until a flow joins).
	maxLeft := int32(0)
	for _, l := range t.left {
		maxLeft = max(maxLeft, l)
	}
	if maxLeft-int32(r) <= 2 {
		return 0, true
	}
	return 0, false
}
