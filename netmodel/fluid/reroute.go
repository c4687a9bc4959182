package fluid

import (
	"strconv"

	"simd/engine"
)

// Reroute moves flow f, which is still transmitting, onto path at the current time: a link
// failure's rerouting. path is directed link ids as for Start (not empty, no link twice;
// copied), and delay is the new path's propagation delay, after which the flow's last byte
// arrives once it is sent.
//
// The bytes sent so far stay sent; the rest go over the new path. The flow leaves the links
// of its old path and joins those of the new one, both sets are marked changed, and the
// recompute of the current instant (queued as for Start) solves every rate the move affects:
// until it runs the flow reports rate 0, as a new flow does. LinkBytes charges the old links
// with the bytes sent while the flow crossed them and the new links with the rest; with
// TrackBottlenecks the segment on the old bottleneck is closed at the move.
//
// A flow that is already sent is not affected: its last byte is on its way and arrives when it
// was going to (Reroute returns without doing anything). The same holds for a flow started
// with an empty path, which is sent at once. Reroute panics for a slot that holds no flow, an
// empty or invalid path and a negative delay. It costs O(old + new path length) plus the
// recompute; nothing else in the network pays for its existence.
func (n *Network) Reroute(f FlowID, path []int32, delay engine.Time) {
	id := int32(f)
	if id < 0 || int(id) >= len(n.hot) || n.hot[id].state == stateFree {
		panic("fluid: Reroute of flow " + strconv.Itoa(int(id)) + ", which is not in flight")
	}
	fh := &n.hot[id]
	if (fh.state != stateActive && fh.state != stateMember) || (fh.state == stateActive && fh.hops == 0) {
		return
	}
	if len(path) == 0 {
		panic("fluid: Reroute of flow " + strconv.Itoa(int(id)) + " onto an empty path")
	}
	if delay < 0 {
		panic("fluid: Reroute with negative delay " + delay.String())
	}
	n.checkPath("Reroute", path)
	now := n.s.Now()
	fl := &n.flows[id]
	if fh.state == stateMember {
		// Out of its bundle (which charges its links with what the flow sent over them) and
		// on its own, off every link, as if its old path were empty.
		fl.rem, fl.at = n.leaveBundle(id, now), now
		fh.state, fh.w, fh.rate, fh.bn, fh.hops = stateActive, 1, 0, -1, 0
	}
	if n.opt.TrackBottlenecks {
		n.closeSegment(id, now)
	}
	// Bring the remaining bits up to date at the old rate, exactly as a re-rating does.
	if dt := now - fl.at; dt > 0 {
		fl.rem = max(fl.rem-float64(fh.rate*float64(dt))/1e12, 0)
	}
	fl.at = now
	done := float64(n.opt.Transport.Wire(fl.bytes)) - float64(fl.rem/8) // bytes the old path carried
	// The "sent" timer is set again by the recompute, which sees the rate change from 0.
	n.s.Cancel(fl.timer)
	fl.timer = engine.Timer{}
	// A flow without a bottleneck has not been rated since it started or last moved: it may be
	// in Network.fresh already (only flows on links of infinite capacity keep -1 once rated).
	unrated := fh.bn < 0
	if fh.bn >= 0 {
		n.links[fh.bn].bnCnt--
	}
	if fh.alone {
		// Moved before its first rate: it leaves the count of its lone bottleneck (join).
		fh.alone = false
		if b := fl.loneBn; b >= 0 {
			n.links[b].bnCnt--
		}
	}
	fh.rate, fh.bn = 0, -1

	off := fh.off
	for k := range fh.hops {
		l := n.arena[off+k]
		p := n.apos[off+k]
		lk := &n.links[l]
		last := len(lk.on) - 1
		if int(p) != last {
			e := lk.on[last]
			lk.on[p] = e
			n.apos[e.ai] = p
		}
		lk.on = lk.on[:last]
		lk.sent += done
		n.markDirty(l)
	}
	h := int32(len(path))
	if h > int32(fh.room) {
		n.newChunk(fh, h)
	}
	off = fh.off
	copy(n.arena[off:off+h], path)
	for _, l := range path {
		// The flow's bytes count on the links that carried them: when it is sent, each new
		// link adds its whole size, of which done went over the old path.
		n.links[l].sent -= done
		n.markDirty(l)
	}
	s, bn := n.join(id, off, path)
	fh.hops = h
	fl.delay = delay
	n.stats.Rerouted++
	if !unrated || !n.refresh(id, s, bn) {
		n.fresh = append(n.fresh, freshFlow{rate: s, id: id, bn: bn})
	}
	n.wake()
}

// refresh gives flow id's entry in Network.fresh, if it has one, the rate and bottleneck of its
// new path, and reports whether it had one. The entry keeps its place: the recompute adds the
// flows to the region in the order they first started or moved, as it did when the entry was
// appended again and the second one skipped.
func (n *Network) refresh(id int32, rate float64, bn int32) bool {
	for i := len(n.fresh) - 1; i >= 0; i-- {
		if e := &n.fresh[i]; e.id == id {
			e.rate, e.bn = rate, bn
			return true
		}
	}
	return false
}

// LinkFlowIDs appends to buf the flows transmitting on directed link l (in no particular order)
// and returns it: the flows a failure of the link must move. O(flows on l).
func (n *Network) LinkFlowIDs(l int32, buf []FlowID) []FlowID {
	for _, e := range n.links[l].on {
		if n.hot[e.f].state == stateBundle {
			b := &n.bundles[n.flows[e.f].bund]
			for _, m := range b.fin[b.head:] {
				buf = append(buf, FlowID(m.id))
			}
			continue
		}
		buf = append(buf, FlowID(e.f))
	}
	return buf
}
