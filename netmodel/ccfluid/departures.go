package ccfluid

import "simd/engine"

// This file holds what a port sends, as opposed to what reaches it: ns-3's switches mark
// packets as they leave the egress queue (SwitchNode::SwitchNotifyDequeue), so under a standing
// queue the packets marked are those that arrived a queue's delay earlier. After an incast's
// first cuts the senders send little, but for the queue's delay (a hundred microseconds for
// a few megabytes at 400 Gb/s) the port still sends what they sent at line rate, and every
// one of them keeps getting marks — a CNP each RATE_DECREASE_INTERVAL, down to MIN_RATE (eight
// 4 MB flows into one port: every sender cut every 4 µs from 15 µs to 119 µs in ns-3). Drawn
// from what arrives now, a sender cut to a few Gb/s has a packet to mark only every few tens
// of microseconds and stops at about 1 Gb/s.
//
// Each flow keeps its last histLen injections with the time each ended; a port with a backlog
// finds when the bytes it sends now arrived (its arrival curve, below), draws the marked packet
// among its flows weighted by what each injected then, and a flow has a packet to mark when its
// part of what the port sends — C in that proportion — has carried a packet since its last
// mark. (The delay of the queues before the port is left out: the flow's injection stands for
// its arrivals.) A flow whose history does not reach that far back counts with its oldest
// known injection.

// histLen is the injections kept per flow. A flow's injection changes at every cut and at
// every change of the flows sharing its NIC; with sixteen, the flows that changed most often
// counted with an old, higher rate for most of a queue's delay and drew the most marks (up to
// 42 on one flow of the first layer of a 256-GPU DeepEP dispatch, against ns-3's most marked,
// 19; 17 flows cut to MIN_RATE, one in ns-3). With thirty-two a flow gets at most 14 CNPs there
// and the flows' span is within 0.1% of ns-3's; 512 bytes for each flow that meets a queue.
const histLen = 32

// injSeg is a past injection of a flow: rate bits/s, until the time it changed.
type injSeg struct {
	until engine.Time
	rate  float64
}

// histChunk is the blocks of histLen injections allocated at a time.
const histChunk = 256

// history is flow slot id's block of past injections, allocated on first use (a slot keeps its
// block when it is reused).
func (n *Network) history(id int32) []injSeg {
	for int(id) >= len(n.histAt) {
		n.histAt = append(n.histAt, 0)
	}
	b := n.histAt[id]
	if b == 0 {
		if int(n.histBlocks) == len(n.hist)*histChunk {
			n.hist = append(n.hist, make([]injSeg, histChunk*histLen))
		}
		n.histBlocks++
		b = n.histBlocks
		n.histAt[id] = b
	}
	c, k := (b-1)/histChunk, (b-1)%histChunk
	return n.hist[c][k*histLen : (k+1)*histLen]
}

// recordInjection notes that flow id injected old until now, when a queue of a marking port on
// its path holds bytes: a port looks a flow's injection up only for a time since which its queue
// has held bytes without a break (what it sends now arrived then), so a change while every such
// queue of the path is empty is never looked up, and a flow that meets none keeps no history.
func (n *Network) recordInjection(id int32, old float64, now engine.Time) {
	f := &n.flows[id]
	queued := false
	for _, l := range n.arena[f.off : f.off+f.hops] {
		// A queue that held bytes at its last change holds them still (its empty event would
		// have come), and one that does not grows if more arrives than it sends.
		if lk := &n.links[l]; lk.hasECN && (lk.qs.q > 0 || lk.arr > n.capOf(l)) {
			queued = true
			break
		}
	}
	if !queued {
		return
	}
	h := n.history(id)
	if f.hlen > 0 {
		f.hhead = (f.hhead + 1) % histLen
	}
	f.hlen = min(f.hlen+1, histLen)
	h[f.hhead] = injSeg{until: now, rate: old}
}

// injectionAt is what flow id injected at t: 0 before it started, its current injection from
// its last recorded change on, its oldest recorded one before its history.
func (n *Network) injectionAt(id int32, t engine.Time) float64 {
	f := &n.flows[id]
	if t < f.start {
		return 0
	}
	if f.hlen == 0 {
		return f.cinj
	}
	h := n.history(id)
	i := int(f.hhead)
	if t >= h[i].until {
		return f.cinj
	}
	for range f.hlen - 1 {
		j := (i + histLen - 1) % histLen
		if t >= h[j].until {
			break
		}
		i = j
	}
	return h[i].rate
}

// markedDeparture is markedFlow for a port with backlog whose arrivals changed within its
// queue's delay: the flows weighted by what they injected at then, each sending its share of
// the port's rate c.
func (n *Network) markedDeparture(l int32, then engine.Time, c, pkt float64, now engine.Time) (pick, hop int32) {
	n.mw = n.mw[:0]
	var total float64
	for _, e := range n.links[l].on {
		w := n.injectionAt(e.f, then)
		n.mw = append(n.mw, w)
		total += w
	}
	if total <= 0 {
		return -1, 0
	}
	return n.drawMarked(l, total, c, pkt, now)
}

// A link's arrival curve is the bytes that have arrived at it by each time: what it has sent
// (queueState.served) plus its backlog. The queue is FIFO, so the byte the link sends now
// arrived when the curve passed what the link has sent. Each port that marks keeps the last
// curveLen points of its curve, taken when its arrivals change (between two, the curve is a
// line), but no closer together than an eighth of its queue's delay: a busy port changes its
// arrivals at every change of every flow through it, while the points need only reach a queue's
// delay back. Only the curve since the queue was last empty is ever looked at (a byte sent later
// arrived later), so a port whose queue is empty and stays so takes no point, and the first
// point after an empty queue starts the ring afresh.

// curveLen is the points kept of a link's arrival curve.
const curveLen = 16

// arrPoint is a point of a link's arrival curve: by time t, cum bytes had arrived.
type arrPoint struct {
	t   engine.Time
	cum float64
}

// curveRing is where a link's points stand in its block of Network.curve: the newest, and how
// many there are.
type curveRing struct{ head, n uint8 }

// noteArrivals adds a point of link l's arrival curve at now (the link advanced to now), before
// its arrivals change to arr or its rate to c (0: paused).
func (n *Network) noteArrivals(l int32, now engine.Time, arr, c float64) {
	lk := &n.links[l]
	if !lk.hasECN {
		return
	}
	r := &n.curveAt[l]
	if lk.qs.q == 0 {
		if arr <= c {
			return // and stays empty
		}
		r.n = 0
	}
	pts := n.curve[int(l)*curveLen : int(l+1)*curveLen]
	if r.n > 0 {
		p := &pts[r.head]
		gap := engine.Time(0)
		if c > 0 {
			gap = ceilPs(lk.qs.q / c) // an eighth of the queue's delay, q·8/c
		}
		if now-p.t < gap || now == p.t {
			return
		}
		r.head = (r.head + 1) % curveLen
	}
	r.n = min(r.n+1, curveLen)
	pts[r.head] = arrPoint{t: now, cum: lk.qs.served + lk.qs.q}
}

// arrivedAt is when the byte link l sends at now arrived (the link advanced to now): the time
// its arrival curve passed what it has sent, or its oldest point's.
func (n *Network) arrivedAt(l int32, now engine.Time) engine.Time {
	lk := &n.links[l]
	r := n.curveAt[l]
	pts := n.curve[int(l)*curveLen : int(l+1)*curveLen]
	sent := lk.qs.served
	b := arrPoint{t: now, cum: lk.qs.served + lk.qs.q}
	i := int(r.head)
	for range r.n {
		a := pts[i]
		if a.cum <= sent {
			if b.cum <= a.cum {
				return a.t
			}
			return a.t + engine.Time(float64(float64(sent-a.cum)/float64(b.cum-a.cum)*float64(b.t-a.t)))
		}
		b = a
		i = (i + curveLen - 1) % curveLen
	}
	return b.t
}
