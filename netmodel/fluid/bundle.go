package fluid

import (
	"math"
	"slices"

	"simd/engine"
)

// Bundles (Options.Bundles).
//
// A collective keeps several flows in flight on one path: the channels of a ring all send from
// a GPU to the next one over the same NVLink links, and without a send latency the chunks of
// successive steps overlap there too. Flows of one path cross the same links, so the max-min
// allocation gives them one rate: whatever bottleneck one has, the others have too. The
// solver need not tell them apart. A bundle stands for them on the links: one entry per link,
// of weight w (flowHot.w, its members), which the solver counts w times (solve, take). Its
// members share its rate, so they progress alike, as jobs of a processor-sharing queue do: the
// bundle keeps the bits each member has sent since the bundle began (its virtual clock, in the
// bundle's flow.rem, up to date at flow.at), and each member the value of that clock at which
// it will have sent everything (its finish, in the member's flow.rem). One timer, for the
// member whose finish comes first, is all the bundle needs: a change of rate moves one timer,
// not one per flow, and a start or a send of a member changes the weight of one entry of the
// solver instead of adding or removing one.
//
// A bundle is a flow slot of its own (stateBundle), never a caller's FlowID; its members
// (stateMember) are the callers' flows, off the links, their flow.bund naming the bundle's
// slot. A flow that starts on the path of a flow of its own in flight (the last few entries of
// its first link are looked at: bundleFor) makes that flow a member of a new bundle with it;
// one that starts on a bundle's path joins it. When a member is sent its bundle's weight falls
// by one, and a bundle whose last member is sent leaves its links.
//
// What changes against the flows apart is rounding: a member's bits left are its finish less
// the clock rather than its own count brought down at every rate change, so a member may be
// sent a picosecond from where it would have been.

// bundleLook is how many entries of a flow's first link, from the last, bundleFor compares
// with its path: a GPU's NVLink port carries the flows to one next GPU (one entry, once they
// are bundled), a NIC port a few paths (a ring's channels through the fabric), and an
// all-to-all's port a thousand paths, which a longer look would compare at every start.
const bundleLook = 4

// bundle is the list of a bundle's members: their finishes (the bundle's clock at which each
// has sent its bits), sorted by finish then slot, the next to finish at head.
type bundle struct {
	fin  []memberFin
	head int
}

type memberFin struct {
	fin float64
	id  int32
}

func (a memberFin) less(b memberFin) bool {
	return a.fin < b.fin || (a.fin == b.fin && a.id < b.id)
}

// add puts member m with finish fin in the list.
func (b *bundle) add(fin float64, m int32) {
	x := memberFin{fin, m}
	b.fin, b.head = DropTaken(b.fin, b.head)
	i := len(b.fin)
	b.fin = append(b.fin, x)
	for ; i > b.head && x.less(b.fin[i-1]); i-- {
		b.fin[i] = b.fin[i-1]
	}
	b.fin[i] = x
}

// next is the member that finishes first.
func (b *bundle) next() memberFin { return b.fin[b.head] }

// pop takes the member that finishes first off the list.
func (b *bundle) pop() memberFin {
	x := b.fin[b.head]
	b.head++
	return x
}

// remove takes member m off the list.
func (b *bundle) remove(m int32) {
	i := slices.IndexFunc(b.fin[b.head:], func(x memberFin) bool { return x.id == m })
	if i < 0 {
		panic("fluid: a member missing from its bundle")
	}
	b.fin = slices.Delete(b.fin, b.head+i, b.head+i+1)
}

// bundleFor returns the slot of a flow of its own or a bundle in flight on path, with room for
// another member, or -1.
func (n *Network) bundleFor(path []int32) int32 {
	on := n.links[path[0]].on
	for i := len(on) - 1; i >= max(len(on)-bundleLook, 0); i-- {
		c := on[i].f
		fh := &n.hot[c]
		if fh.w == math.MaxUint8 || int(fh.hops) != len(path) || (fh.state != stateActive && fh.state != stateBundle) {
			continue
		}
		if slices.Equal(n.arena[fh.off:fh.off+fh.hops], path) {
			return c
		}
	}
	return -1
}

// joinBundle starts flow id, of bytes, delay and tag, as a member of the bundle of c's path:
// c's own if c is a bundle, a new one that takes c's place on the links otherwise.
func (n *Network) joinBundle(c, id int32, bytes int64, delay engine.Time, tag int64) {
	now := n.s.Now()
	if n.hot[c].state == stateActive {
		c = n.newBundle(c, now)
	}
	cf, ch := &n.flows[c], &n.hot[c]
	n.advanceBundle(cf, ch, now)
	f, fh := &n.flows[id], &n.hot[id]
	f.rem, f.at, f.start = cf.rem+float64(float64(n.opt.Transport.Wire(bytes))*8), now, now
	f.bytes, f.tag, f.delay = bytes, tag, delay
	f.timer, f.bund = engine.Timer{}, c
	fh.rate, fh.bn, fh.state, fh.w, fh.alone = 0, -1, stateMember, 0, false
	n.bundles[cf.bund].add(f.rem, id)
	ch.w++
	n.active++
	n.inflight++
	n.stats.Started++
	n.stats.Bundled++
	n.regroup(c)
}

// newBundle makes flow f, transmitting on its own, the first member of a new bundle, which takes
// its place on the links of its path, and returns the bundle's slot.
func (n *Network) newBundle(f int32, now engine.Time) int32 {
	c := n.newSlot()
	fl, fh := &n.flows[f], &n.hot[f]
	cf, ch := &n.flows[c], &n.hot[c]
	if fh.alone {
		// Not alone any more; if it has not been rated yet it no longer counts at its lone
		// bottleneck either (as join does).
		fh.alone = false
		if b := fl.loneBn; b >= 0 {
			n.links[b].bnCnt--
		}
	}
	// The bundle takes the flow's path (its arena chunk: the links' entries keep their arena
	// positions), rate and bottleneck (and its count there); the flow takes the bundle's slot's
	// chunk for when it is on its own again.
	ch.off, fh.off = fh.off, ch.off
	ch.room, fh.room = fh.room, ch.room
	ch.hops, ch.rate, ch.bn, ch.alone, ch.mark = fh.hops, fh.rate, fh.bn, false, 0
	ch.state, ch.w = stateBundle, 1
	for k := range ch.hops {
		p := ch.off + k
		n.links[n.arena[p]].on[n.apos[p]].f = c
	}
	cf.rem, cf.at = 0, now
	cf.bytes, cf.tag, cf.delay, cf.start, cf.loneBn = 0, 0, 0, now, -1
	cf.timer = engine.Timer{}
	if k := len(n.bundleFree); k > 0 {
		cf.bund = n.bundleFree[k-1]
		n.bundleFree = n.bundleFree[:k-1]
	} else {
		cf.bund = int32(len(n.bundles))
		n.bundles = append(n.bundles, bundle{})
	}
	// The flow's bits left now are its finish on the new bundle's clock, which starts at 0.
	rem := fl.rem
	if dt := now - fl.at; dt > 0 {
		rem = max(rem-float64(fh.rate*float64(dt))/1e12, 0)
	}
	n.s.Cancel(fl.timer)
	fl.rem, fl.at, fl.timer, fl.bund = rem, now, engine.Timer{}, c
	fh.rate, fh.bn, fh.hops, fh.state, fh.w = 0, -1, 0, stateMember, 0
	n.bundles[cf.bund].add(rem, f)
	return c
}

// advanceBundle brings bundle cf's clock up to now.
func (n *Network) advanceBundle(cf *flow, ch *flowHot, now engine.Time) {
	if dt := now - cf.at; dt > 0 {
		cf.rem += float64(ch.rate*float64(dt)) / 1e12
	}
	cf.at = now
}

// regroup handles a change of bundle c's members: its timer goes (the recompute arms it again,
// for the member now first), and its rate and those of the flows that share its links are
// solved again at the end of the instant, as for a flow starting or sent there.
func (n *Network) regroup(c int32) {
	cf, ch := &n.flows[c], &n.hot[c]
	n.s.Cancel(cf.timer)
	cf.timer = engine.Timer{}
	for _, l := range n.arena[ch.off : ch.off+ch.hops] {
		n.markDirty(l)
	}
	n.fresh = append(n.fresh, freshFlow{id: c, bn: regroupBn})
	n.wake()
}

// regroupBn marks the entries regroup puts in Network.fresh: the slot may be free again by the
// recompute, or hold another flow.
const regroupBn = -2

// memberSent handles the "sent" timer of bundle c, whose path is arena[off : off+hops]: its
// member that finishes first is sent, and with it every member whose finish its clock has
// reached (their timers would have fired at this picosecond too, at the rate they had until
// now). tailed says whether n.rates holds the path's capacities for the last packet's tail.
// The observer hears of them once the bundle is settled: it may start flows, which may join
// the bundle.
func (n *Network) memberSent(c, off, hops int32, tailed bool) {
	now := n.s.Now()
	cf, ch := &n.flows[c], &n.hot[c]
	n.advanceBundle(cf, ch, now)
	cf.timer = engine.Timer{} // this event
	b := &n.bundles[cf.bund]
	due := n.due[:0]
	for first := true; ch.w > 0 && (first || b.next().fin <= cf.rem); first = false {
		id := b.pop().id
		f, fh := &n.flows[id], &n.hot[id]
		f.rem, f.at = 0, now
		done := now + f.delay
		if tailed {
			done += n.tail(f.bytes, ch.rate)
		}
		// The member keeps its path for the observer (Path), which may ask after the
		// bundle is gone.
		if ch.hops > int32(fh.room) {
			n.newChunk(fh, ch.hops)
		}
		copy(n.arena[fh.off:fh.off+ch.hops], n.arena[off:off+hops])
		fh.state, fh.hops = stateSent, hops
		due = append(due, sentMember{id, done})
		wire := float64(n.opt.Transport.Wire(f.bytes))
		n.active--
		n.stats.Sent++
		if ch.w--; ch.w == 0 {
			n.dropBundle(c, wire)
		} else {
			for _, l := range n.arena[off : off+hops] {
				n.links[l].sent += wire
			}
		}
	}
	if ch.w > 0 {
		n.regroup(c)
	}
	n.due = due
	for _, m := range due {
		n.reportSent(m.id, m.done, now)
	}
}

// sentMember is a member memberSent sent, and when it arrives.
type sentMember struct {
	id   int32
	done engine.Time
}

// dropBundle takes bundle c, whose last member has left it, off its links, the last member
// having put wire bytes on them, and frees its slot.
func (n *Network) dropBundle(c int32, wire float64) {
	cf, ch := &n.flows[c], &n.hot[c]
	if ch.bn >= 0 {
		n.links[ch.bn].bnCnt--
	}
	n.s.Cancel(cf.timer)
	cf.timer = engine.Timer{}
	n.leave(ch.off, ch.hops, wire)
	b := &n.bundles[cf.bund]
	b.fin, b.head = b.fin[:0], 0
	n.bundleFree = append(n.bundleFree, cf.bund)
	ch.rate, ch.bn, ch.state, ch.w = 0, -1, stateFree, 0
	n.free = append(n.free, c)
}

// rateBundle installs bundle c's new rate nr (apply): its clock is brought up to now at the
// old rate, and its timer goes to when its first member will have sent its bits.
func (n *Network) rateBundle(c int32, nr float64, now engine.Time) {
	cf, ch := &n.flows[c], &n.hot[c]
	if nr == ch.rate && cf.timer != (engine.Timer{}) {
		return
	}
	n.advanceBundle(cf, ch, now)
	ch.rate = nr
	n.stats.Rerated++
	d := sendDelay(n.bundles[cf.bund].next().fin-cf.rem, nr)
	if d >= engine.Never-now { // cannot finish (rate 0) or not within the range of Time
		n.s.Cancel(cf.timer)
		cf.timer = engine.Timer{}
		return
	}
	if cf.timer == (engine.Timer{}) || !n.s.Reschedule(cf.timer, now+d) {
		n.s.Cancel(cf.timer)
		cf.timer = n.s.At(now+d, n.h, c, sentArg(ch.off, ch.hops))
	}
}

// leaveBundle takes member id out of its bundle (it moves to a path of its own: Reroute) and
// returns the bits it had left to send. Its old path's links are charged with what it sent
// over them.
func (n *Network) leaveBundle(id int32, now engine.Time) float64 {
	f := &n.flows[id]
	c := f.bund
	cf, ch := &n.flows[c], &n.hot[c]
	n.advanceBundle(cf, ch, now)
	rem := max(f.rem-cf.rem, 0)
	n.bundles[cf.bund].remove(id)
	done := float64(n.opt.Transport.Wire(f.bytes)) - float64(rem/8)
	if ch.w--; ch.w == 0 {
		n.dropBundle(c, done)
	} else {
		for _, l := range n.arena[ch.off : ch.off+ch.hops] {
			n.links[l].sent += done
		}
		n.regroup(c)
	}
	return rem
}

// memberRem is member id's bits left to send at time t.
func (n *Network) memberRem(id int32, t engine.Time) float64 {
	f := &n.flows[id]
	cf, ch := &n.flows[f.bund], &n.hot[f.bund]
	clock := cf.rem + float64(ch.rate*float64(t-cf.at))/1e12
	return max(f.rem-clock, 0)
}

// carrier is the slot whose rate, bottleneck and path are flow id's: its bundle's for a member.
func (n *Network) carrier(id int32) int32 {
	if n.hot[id].state == stateMember {
		return n.flows[id].bund
	}
	return id
}
