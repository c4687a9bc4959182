package ccfluid

import (
	"slices"
	"strconv"
)

// Reroute moves flow f, which must still be transmitting, onto path, its ACKs onto ack, at the
// current time (a link failed under it): it keeps its sender state and remaining bytes, leaves
// the arrivals, lists and feeds of its old links and joins the new ones, and its port
// re-shares. A flow already sent keeps its last byte where it is: queued bytes drain even from
// a failed link (the model does not drop them).
func (n *Network) Reroute(f FlowID, path, ack []int32) {
	id := int32(f)
	fl := &n.flows[id]
	if fl.state != stateSending {
		return
	}
	now := n.s.Now()
	n.checkPath(path)
	n.checkPath(ack)
	// Bring the sender's bytes up to now at its current injection, then withdraw it.
	fl.rem = max(fl.rem-float64(float64(fl.inj*secs(now-fl.at))/8), 0)
	fl.at = now
	oldFirst := n.arena[fl.off]
	if n.reshape() {
		n.withdrawHops(id, now)
	} else {
		fl.state = stateSent // applyFlow withdraws a flow that is not sending
		n.applyFlow(id, now)
		fl.state = stateSending
		n.leaveLinks(id)
	}
	if n.windowed() {
		n.leaveAckLinks(id)
	}
	src := n.links[oldFirst].src
	if i := slices.Index(src, id); i >= 0 {
		src[i] = src[len(src)-1]
		n.links[oldFirst].src = src[:len(src)-1]
	}
	n.nicMembers(oldFirst)
	n.nicDirty(oldFirst)

	h, ah := int32(len(path)), int32(len(ack))
	if h+ah > fl.room {
		fl.room = max(h+ah, 8)
		fl.off = int32(len(n.arena))
		n.growArena(fl.room)
	}
	fl.hops, fl.ack = h, ah
	copy(n.arena[fl.off:fl.off+h], path)
	copy(n.arena[fl.off+h:fl.off+h+ah], ack)
	for k, l := range path {
		n.joinList(l, id, int32(k))
	}
	if n.reshape() {
		n.joinHops(id)
	}
	n.times(fl)
	if n.windowed() {
		n.joinAckLinks(id)
	}
	if h == 0 {
		n.sent(id, now)
		return
	}
	first := path[0]
	n.links[first].src = append(n.links[first].src, id)
	n.nicMembers(first)
	if n.mode == ModeHPCC {
		n.hpccTx[id] = hpccPrev{} // the old path's counters mean nothing on the new one
	}
	fl.extent, fl.cinj = 0, 0
	n.applyFlow(id, now)
	fl.stale = true
	n.nicDirty(first)
}

// leaveLinks takes flow id off the flow lists of its path's links.
func (n *Network) leaveLinks(id int32) {
	f := &n.flows[id]
	for k := range f.hops {
		n.leaveList(n.arena[f.off+k], f.off+k)
	}
}

// LinkFlows appends to buf the flows that are still transmitting over directed link l.
func (n *Network) LinkFlows(l int32, buf []FlowID) []FlowID {
	for _, e := range n.links[l].on {
		if n.flows[e.f].state == stateSending {
			buf = append(buf, FlowID(e.f))
		}
	}
	return buf
}

// growArena adds k positions to the arena of paths and to apos.
func (n *Network) growArena(k int32) {
	n.arena = slices.Grow(n.arena, int(k))
	n.arena = n.arena[:len(n.arena)+int(k)]
	n.apos = slices.Grow(n.apos, int(k))
	n.apos = n.apos[:len(n.apos)+int(k)]
}

// checkPath panics unless every link of path is a directed link of the graph and none repeats.
func (n *Network) checkPath(path []int32) {
	nl := int32(len(n.links))
	for i, l := range path {
		if l < 0 || l >= nl {
			panic("ccfluid: link " + strconv.Itoa(int(l)) + " out of range [0," + strconv.Itoa(int(nl)) + ")")
		}
		if slices.Contains(path[:i], l) {
			panic("ccfluid: link " + strconv.Itoa(int(l)) + " twice in the path")
		}
	}
}
