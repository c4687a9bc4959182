package ccfluid

import (
	"math"
	"slices"

	"simd/engine"
	"simd/netmodel/fluid"
)

// This file holds the reshaping of flows by the queues they cross (Config.Reshape): what a
// link sends on is what left its queue, not what its senders inject.
//
// Without it, every link of a flow's path receives the flow's injection at once (the classic
// fluid network model of the package doc): a queue delays the flow's last byte but not its
// rate further on. Two flows meeting 2:1 on a ToR's uplink then build the same queue on every
// link after it, although that link sends no more than its rate; and a flow whose sender has
// stopped brings nothing to the links after its queue, although the bytes it left in the queue
// still reach them for the queue's delay. ns-3's switches forward what they dequeue: in
// SimAI's 16-GPU Spectrum-X ring, two flows of a step meet 2:1 on an uplink with a window each
// queued there; their senders are done before the next step starts, and the next step's flows
// between the same GPUs, sent over other spine switches with their first windows at line rate,
// meet the first flows' remaining bytes, still coming out of the uplink at half the rate, on the
// ToR's ports to the receiving GPUs. Those ports queue 120 KB, the ACKs of the receivers' own
// flows wait behind it, and their windows hold them back (17.5 µs instead of 15.2).
//
// The model. Each flow has an arrival rate at every hop of its path (hopRates.arr, beside its
// entry on the hop's link's list); at its first link it is its injection. A link whose queue
// is empty and whose arrivals fit its rate passes them on: a flow's arrival at the next hop is
// its arrival here. A link with a backlog (or whose arrivals exceed its rate, or that is
// paused) sends at its rate c, shared among its flows in proportion to what each brought in
// when the bytes now leaving arrived — the queue is FIFO — so flow i leaves at c·w_i/Σw, w_i
// being its arrival rate then (hopRates.w). When a flow's arrival at a backlogged link changes, the change is queued behind the backlog as a weight marker, like a
// flow's last byte (network.go's markers), and reaches w_i when the link has sent what was
// queued before it; when the queue empties, the weights are the arrivals again. A flow whose
// sender is done keeps leaving a queue at its share until its last byte has (its weight marker
// to 0 and its last byte's marker are queued at the same point), and stays on the link's list
// until then. A paused link sends nothing, so the flows behind it bring nothing further on; the
// package's "extent" of a flow is not used.
//
// Downstream arrivals change within the instant: a change at one hop runs on through the links
// that pass it on (propagate) and stops at the first with a backlog; a link whose departure
// shares moved (a weight marker, an emptied queue, a pause) is put on a list, and its flows'
// next hops are brought in line before the instant's links are re-armed (settleShares). The
// weights are kept by links that some flow leaves towards another hop, and by ports that mark
// what they send (the marked packet is drawn by them) or whose switch counts by them what its
// ports hold (PFC); a port that is the last hop of all its flows applies its queued changes
// when it marks, when its switch counts, or as it queues the next, without events of its own.

// wmarker is a change of a flow's arrival at a link with a backlog, queued there: when the link
// has sent target bytes, the flow's departure weight becomes w.
type wmarker struct {
	f      int32
	hop    int32
	target float64
	w      float64
	rgen   uint32 // the flow's route generation when queued (Start and Reroute move its hops)
}

// linkWeights is what a link keeps of its flows' rates, apart from its state: each flow's
// arrival and weight (rt, in the order of the link's list), the changes queued behind its
// backlog, from whead on, and the weights' sum. One cache line.
type linkWeights struct {
	rt    []hopRates
	wm    []wmarker
	whead int32
	wsum  float64
}

// hopRates is a flow's arrival rate at a link and its departure weight there, bits/s.
type hopRates struct{ arr, w float64 }

// pending reports whether changes are queued.
func (w *linkWeights) pending() bool { return w.whead < int32(len(w.wm)) }

// reshape reports whether links pass on what leaves their queues (Config.Reshape).
func (n *Network) reshape() bool { return n.cfg.Reshape }

// weighted reports whether link l keeps its flows' departure weights: some flow goes on from
// it to another hop, or it marks what it sends (markFIFO: the marked packet is drawn by what
// the flows brought in when the bytes now leaving arrived, markedFlow).
func (n *Network) weighted(l int32) bool {
	return n.links[l].down > 0 || n.links[l].hasECN && n.markFIFO
}

// shaping reports whether link l shares what it sends among its flows by their weights: its
// queue holds bytes, or more arrives than it may send (0 while paused).
func (n *Network) shaping(l int32) bool {
	lk := &n.links[l]
	return lk.qs.q > emptyEps || lk.arr > n.capOf(l)
}

// propagate sets flow id's arrival at hop k to a (bits/s) at now, and runs the change on through
// the links that pass it on, up to the first with a backlog, where it is queued.
func (n *Network) propagate(id, k int32, a float64, now engine.Time) {
	f := &n.flows[id]
	for ; k < f.hops; k++ {
		p := f.off + k
		l := n.arena[p]
		e := &n.weights[l].rt[n.apos[p]]
		old := e.arr
		if a == old {
			return
		}
		e.arr = a
		if n.wkeep && n.arrivalMoves(id, old, a, f.cinj) {
			n.linkTermsMoved(l)
		}
		n.arrivalBy(p, k, a-old, now)
		if !n.weighted(l) {
			// No flow leaves this link for another hop and it marks no packets: its
			// departure shares matter to none.
			e.w = a
			return
		}
		if n.shaping(l) {
			n.reweigh(l, n.apos[p], id, k, a)
			return
		}
		if n.links[l].shaped {
			// The queue has just emptied and what arrives fits: departures are arrivals again.
			n.sharesDirty(l)
		}
		n.setWeight(l, id, k, e, a)
	}
}

// setWeight sets to w the departure weight e of flow id's hop k, link l, a link that keeps its
// weights: with the link's sum, and for the egress port of a PFC switch the weights by ingress
// port, by which the switch counts what its ports hold (pfc.go).
func (n *Network) setWeight(l, id, k int32, e *hopRates, w float64) {
	d := w - e.w
	if d == 0 {
		return
	}
	n.feedsChanging(l) // what the ports hold moved by the old weights until now
	n.weights[l].wsum += d
	e.w = w
	if k > 0 && n.links[l].outSw >= 0 {
		n.feedBy(l, n.links[n.arena[n.flows[id].off+k-1]].inPort, 0, d)
	}
}

// reweigh queues the change of the arrival of flow id's hop k, at position pos of link l with a
// backlog, to a: the flow's departure weight becomes a once l has sent what is queued now. With
// no backlog yet (its arrivals have just come to exceed its rate) the bytes leaving now are
// those arriving now.
func (n *Network) reweigh(l, pos, id, k int32, a float64) {
	lk, lw := &n.links[l], &n.weights[l]
	e := &lw.rt[pos]
	if !lk.shaped {
		n.sharesDirty(l)
	}
	if lk.qs.q <= emptyEps && !lw.pending() {
		n.setWeight(l, id, k, e, a)
		n.sharesDirty(l)
		return
	}
	if lk.down == 0 && lw.pending() {
		// A link no flow goes on from applies its changes only when it marks: the ones its
		// service has passed go now, so that it keeps no more than a queue's delay of them.
		n.weightsOut(l)
	}
	lw.wm, lw.whead = fluid.DropTaken(lw.wm, lw.whead) // as enter drops its markers
	lw.wm = append(lw.wm, wmarker{f: id, hop: k, target: lk.qs.served + lk.qs.q, w: a, rgen: n.flows[id].rgen})
	if lw.whead == int32(len(lw.wm))-1 {
		n.wdue[l] = lw.wm[lw.whead].target
		if lk.down > 0 {
			n.armMarker(l)
		}
	}
}

// weightsOut applies the changes queued at link l (advanced to now) that its service has
// reached, or all of them when its queue is empty.
func (n *Network) weightsOut(l int32) {
	lk := &n.links[l]
	empty := lk.qs.q <= emptyEps && !lk.paused
	if !empty && n.wdue[l] > lk.qs.served+emptyEps*8 {
		return // nothing due (or nothing queued): the first change's target, without its record
	}
	lw := &n.weights[l]
	moved := false
	for lw.pending() {
		m := lw.wm[lw.whead]
		if !empty && m.target > lk.qs.served+emptyEps*8 {
			break
		}
		lw.whead++
		f := &n.flows[m.f]
		if f.state == stateFree || f.rgen != m.rgen {
			continue // the flow has been rerouted or has ended since
		}
		p := f.off + m.hop
		pos := n.apos[p]
		if on := lk.on; int(pos) >= len(on) || on[pos].ap != p {
			// Its last byte has left the link since (leaveHop): a change queued behind a
			// backlog that was gone when the byte came (enter's empty queue) goes with it.
			continue
		}
		n.setWeight(l, m.f, m.hop, &lw.rt[pos], m.w)
		moved = true
	}
	n.wdue[l] = math.Inf(1)
	if lw.pending() {
		n.wdue[l] = lw.wm[lw.whead].target
	}
	if moved && lk.down > 0 {
		n.sharesDirty(l)
	}
}

// sharesDirty asks for link l's flows' next hops to be brought in line with its departure
// shares before the instant's links are re-armed.
func (n *Network) sharesDirty(l int32) {
	lk := &n.links[l]
	if !lk.shareDir {
		lk.shareDir = true
		n.dirtyShares = append(n.dirtyShares, l)
	}
	n.wake()
}

// settleShares brings the next hops of the flows of every link on the list in line with what
// the link sends them, and of the links those changes reach in turn.
func (n *Network) settleShares(now engine.Time) {
	for i := 0; i < len(n.dirtyShares); i++ {
		l := n.dirtyShares[i]
		n.links[l].shareDir = false
		n.settleLink(l, now)
	}
	n.dirtyShares = n.dirtyShares[:0]
}

// settleLink sets each flow's arrival at the hop after link l to what l sends it now.
func (n *Network) settleLink(l int32, now engine.Time) {
	n.advanceLink(l, now)
	n.weightsOut(l)
	lk, lw := &n.links[l], &n.weights[l]
	shaping := n.shaping(l)
	if !shaping {
		// Empty and passing on: the weights are the arrivals.
		lw.wm, lw.whead = lw.wm[:0], 0
		n.wdue[l] = math.Inf(1)
		n.weightsAreArrivals(l)
	}
	lk.shaped = shaping
	if lk.down == 0 {
		return
	}
	scale := 0.0
	if lw.wsum > 0 {
		scale = n.capOf(l) / lw.wsum
	}
	for i, e := range lk.on {
		f := &n.flows[e.f]
		hop := e.ap - f.off
		if hop+1 >= f.hops {
			continue
		}
		r := lw.rt[i]
		d := r.arr
		if shaping {
			d = r.w * scale
		}
		if d != n.hopArrival(e.f, hop+1) {
			n.propagate(e.f, hop+1, d, now)
		}
	}
}

// weightsAreArrivals makes every weight at link l its flow's arrival, with their sum and, for
// the egress port of a PFC switch, their parts by ingress port.
func (n *Network) weightsAreArrivals(l int32) {
	n.feedsChanging(l)
	lw := &n.weights[l]
	lw.wsum = 0
	for i := range lw.rt {
		lw.rt[i].w = lw.rt[i].arr
		lw.wsum += lw.rt[i].arr
	}
	for i := range n.links[l].feeds {
		fd := &n.links[l].feeds[i]
		fd.w = fd.arr
	}
}

// hopArrival is flow id's arrival rate at its hop k.
func (n *Network) hopArrival(id, k int32) float64 {
	p := n.flows[id].off + k
	return n.weights[n.arena[p]].rt[n.apos[p]].arr
}

// joinHops counts flow id, whose entries with no arrival are on its links' lists, among the
// flows that go on from each of its links but the last.
func (n *Network) joinHops(id int32) {
	f := &n.flows[id]
	for k := range f.hops - 1 {
		l := n.arena[f.off+k]
		if !n.weighted(l) {
			// Its weights were its arrivals, and neither summed nor fed while no flow went on
			// from it.
			n.weightsAreArrivals(l)
		}
		n.links[l].down++
	}
}

// leaveHop takes flow id off its hop k's link once its last byte has left it: whatever arrival
// and weight it still has there leave with it.
func (n *Network) leaveHop(id, k int32, now engine.Time) {
	n.dropHop(id, k, now)
	if k+1 < n.flows[id].hops && n.hopArrival(id, k+1) != 0 {
		n.propagate(id, k+1, 0, now)
	}
}

// withdrawHops takes flow id, still sending, off every link of its path at once (Reroute: the
// bytes it has queued are left to drain as bytes of no flow).
func (n *Network) withdrawHops(id int32, now engine.Time) {
	f := &n.flows[id]
	f.rgen++
	for k := range f.hops {
		n.dropHop(id, k, now)
	}
}

// dropHop takes flow id's hop k off its link: its arrival, its weight, its entry.
func (n *Network) dropHop(id, k int32, now engine.Time) {
	f := &n.flows[id]
	p := f.off + k
	l := n.arena[p]
	e := n.weights[l].rt[n.apos[p]]
	if e.arr != 0 {
		n.arrivalBy(p, k, -e.arr, now)
	}
	if e.w != 0 {
		if n.weighted(l) {
			n.setWeight(l, id, k, &n.weights[l].rt[n.apos[p]], 0)
		}
		if lk := &n.links[l]; lk.down > 0 && lk.shaped {
			n.sharesDirty(l) // the others' shares of what the link sends grow
		}
	}
	if k+1 < f.hops {
		n.links[l].down--
	}
	n.leaveList(l, p)
}

// joinList appends flow id's hop k to link l's flow list (with reshaping, with no arrival yet).
func (n *Network) joinList(l, id, k int32) {
	lk := &n.links[l]
	n.apos[n.flows[id].off+k] = int32(len(lk.on))
	lk.on = appendDoubling(lk.on, entry{id, n.flows[id].off + k, n.flows[id].markAt})
	n.linkTermsMoved(l)
	if n.starts != nil {
		n.starts[l].join(n.flows[id].start, len(lk.on))
	}
	if n.reshape() {
		n.weights[l].rt = appendDoubling(n.weights[l].rt, hopRates{})
	}
}

// appendDoubling is append that doubles a full slice: a link's lists grow to a thousand
// entries and more in an all-to-all, where append's quarter-size steps for large slices copy
// each list a dozen times on the way into fresh memory (growslice was a quarter of
// alltoall-1024-dcqcn's profile, mostly clearing and first-touching the new arrays).
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 4))
	}
	return append(s, v)
}

// leaveList removes the entry at arena position p from link l's flow list.
func (n *Network) leaveList(l, p int32) {
	pos := n.apos[p]
	lk := &n.links[l]
	if n.starts != nil {
		n.starts[l].leave(n.flows[lk.on[pos].f].start, len(lk.on)-1)
	}
	lk.on = n.removeAt(lk.on, pos)
	n.linkTermsMoved(l)
	if n.reshape() {
		rt := n.weights[l].rt
		last := len(rt) - 1
		rt[pos] = rt[last]
		n.weights[l].rt = rt[:last]
	}
}

// removeAt removes the entry at pos from list by moving the last one there (and its arena
// position's apos with it), and returns the shorter list.
func (n *Network) removeAt(list []entry, pos int32) []entry {
	last := int32(len(list) - 1)
	if pos != last {
		e := list[last]
		list[pos] = e
		n.apos[e.ap] = pos
	}
	return list[:last]
}

// entryRate is the arrival rate at link l of the flow at position i of its list: with
// reshaping its own, otherwise the flow's injection up to its extent.
func (n *Network) entryRate(l int32, i int) float64 {
	if n.reshape() {
		return n.weights[l].rt[i].arr
	}
	e := n.links[l].on[i]
	if f := &n.flows[e.f]; e.ap-f.off < f.extent {
		return f.cinj
	}
	return 0
}
