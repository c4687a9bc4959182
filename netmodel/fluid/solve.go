package fluid

import (
	"math"
	"math/bits"
	"slices"

	"simd/engine"
)

// recompute brings the rates up to date after the changes of the current instant: it
// water-fills the region the changes can affect, widens it where the max-min conditions fail
// at its boundary, and applies the new rates. See the package documentation.
func (n *Network) recompute() {
	n.pending = false
	n.stats.Recomputes++
	n.nextEpoch()
	n.region = n.region[:0]
	n.solved = 0
	n.rl = n.rl[:0]
	n.lone, n.loneLinks = 0, 0
	for _, e := range n.fresh {
		n.addFresh(e)
	}
	n.fresh = n.fresh[:0]
	for _, l := range n.dirty {
		n.links[l].dirty = false
		n.addSeed(l)
	}
	n.dirty = n.dirty[:0]
	// The seeded flows will move first; the flows bottlenecked on their other links are the
	// likely next ones (the slice expression stops at the seeds: addNeighbours appends).
	for _, id := range n.region[:len(n.region):len(n.region)] {
		if bn := n.hot[id].bn; bn >= 0 {
			n.addNeighbours(id, bn)
		}
	}
	if n.fullSolve {
		for id := range n.hot {
			if st := n.hot[id].state; (st == stateActive || st == stateBundle) && n.hot[id].hops > 0 {
				n.addFlow(int32(id))
			}
		}
	}
	for {
		n.solve()
		if !n.widen() {
			break
		}
	}
	n.apply()
	n.stats.RegionFlows += uint64(len(n.region))
	n.stats.RegionLinks += uint64(len(n.rl) + n.loneLinks)
	n.stats.MaxRegion = max(n.stats.MaxRegion, len(n.region))
	k := min(bits.Len(uint(len(n.rl))), SizeClasses-1)
	n.stats.RecomputesByLinks[k]++
	n.stats.RegionFlowsByLinks[k] += uint64(len(n.region))
	if checkInvariants {
		if err := n.Check(); err != nil {
			panic(err)
		}
	}
	if n.afterRecompute != nil {
		n.afterRecompute()
	}
}

// nextEpoch starts a new region: every flow and link mark older than the epoch is outside.
func (n *Network) nextEpoch() {
	n.epoch++
	if n.epoch == 0 { // wrapped: clear the marks once every 2^32 recomputes
		for i := range n.hot {
			n.hot[i].mark = 0
		}
		for l := range n.links {
			n.links[l].mark = 0
		}
		n.epoch = 1
	}
}

// addSeed adds to the region the flows bottlenecked at link l, whose set of flows changed: with
// the new flows (seeded from Network.fresh) they are the ones the change affects first. The
// others are bottlenecked on links the change does not touch; if they must change too, widen
// finds out. The count of flows bottlenecked at l skips the scan when there are none and ends
// it when all are found.
func (n *Network) addSeed(l int32) {
	lk := &n.links[l]
	left := lk.bnCnt
	if left == 0 {
		return
	}
	for _, e := range lk.on {
		if n.hot[e.f].bn == l {
			n.addFlow(e.f)
			if left--; left == 0 {
				return
			}
		}
	}
}

// addFresh adds flow id, new or moved at this instant, to the region. A flow alone on every link
// of its path (nothing else transmits there) shares them with nobody: its rate is the smallest
// capacity of its path, the link of the lowest id among equals its bottleneck, as the
// water-filling would fix it (see solve: it would be a region flow alone on all its links,
// with no outside flow to leave less than the capacity), and no other flow can move because of
// it. It is fixed here and keeps its place in the region, which apply follows; its links stay
// out of the solver's records. In a synchronised collective step most new flows are such.
func (n *Network) addFresh(e freshFlow) {
	id := e.id
	f := &n.hot[id]
	if f.mark == n.epoch {
		return
	}
	if e.bn == regroupBn {
		// A bundle whose members changed (regroup), unless its last one has gone since and
		// the slot holds something else now.
		if f.state == stateBundle {
			n.addFlow(id)
		}
		return
	}
	if f.state == stateMember {
		return // started on its own, then bundled: its bundle is in the list too (regroup)
	}
	if !f.alone {
		n.addFlow(id)
		return
	}
	// Alone since it started (join), so alone now: a flow that joins one of its links clears
	// the mark, and no other flow leaves them.
	s, bn := e.rate, e.bn
	f.mark = n.epoch
	f.ridx = int32(len(n.region))
	n.region = append(n.region, id)
	n.rNew = append(n.rNew[:f.ridx], s)
	n.rBn = append(n.rBn[:f.ridx], bn)
	n.rLone = append(n.rLone[:f.ridx], true)
	n.lone++
	n.loneLinks += int(f.hops)
}

// addFlow adds flow id and the links of its path to the region.
func (n *Network) addFlow(id int32) {
	f := &n.hot[id]
	if f.mark == n.epoch {
		return
	}
	f.mark = n.epoch
	f.ridx = int32(len(n.region))
	n.region = append(n.region, id)
	n.rNew = append(n.rNew[:f.ridx], 0)
	n.rBn = append(n.rBn[:f.ridx], -1)
	n.rLone = append(n.rLone[:f.ridx], false)
	for _, l := range n.arena[f.off : f.off+f.hops] {
		lk := &n.links[l]
		if lk.mark != n.epoch {
			lk.mark = n.epoch
			i := len(n.rl)
			lk.idx = int32(i)
			if i < cap(n.rl) {
				n.rl = n.rl[:i+1] // no need to clear the record: see rlink
				n.rl[i].link = l
			} else {
				n.rl = append(n.rl, rlink{link: l})
			}
		}
	}
}

// markParts builds the parts of the region's links after a widening: it joins the links of
// every region flow and marks dirty the parts of the flows that joined since the last pass.
func (n *Network) markParts() {
	for i := range n.rl {
		n.rl[i].parent, n.rl[i].dirty = int32(i), false
	}
	for k, id := range n.region {
		if n.rLone[k] {
			continue // no link of its path is in rl
		}
		f := &n.hot[id]
		root := int32(-1)
		for _, l := range n.arena[f.off : f.off+f.hops] {
			r := n.find(n.links[l].idx)
			switch {
			case root < 0:
				root = r
			case r < root:
				n.rl[root].parent = r
				root = r
			case r > root:
				n.rl[r].parent = root
			}
		}
		if k >= n.solved {
			n.rl[root].dirty = true
		}
	}
}

// addNeighbours adds, for every link m ≠ l of flow id's path, the flows bottlenecked at m:
// the flows a change of id's rate is likely to move next.
func (n *Network) addNeighbours(id, l int32) {
	fh := &n.hot[id]
	for _, m := range n.arena[fh.off : fh.off+fh.hops] {
		if m != l {
			n.addSeed(m)
		}
	}
}

// find returns the root of link i's part (with path halving).
func (n *Network) find(i int32) int32 {
	rl := n.rl
	for rl[i].parent != i {
		p := rl[rl[i].parent].parent
		rl[i].parent = p
		i = p
	}
	return i
}

// solve water-fills the dirty parts of the region: outside flows keep their rates, region
// flows share what they leave (the residual capacities) max-min fairly. Progressive filling
// with a heap of links keyed on residual/unfixed, ties broken by link id: the link with the
// smallest fair share fixes its unfixed flows at that share, which comes off the residual of
// their links.
func (n *Network) solve() {
	n.stats.Solves++
	ep := n.epoch
	unfixed := 0
	if n.solved == 0 {
		// First pass: everything.
		for i := range n.rl {
			n.rl[i].solve = true
		}
		unfixed = len(n.region) - n.lone
	} else {
		n.markParts()
		for i := range n.rl {
			n.rl[i].solve = n.rl[n.find(int32(i))].dirty
		}
		for k, id := range n.region {
			if !n.rLone[k] && n.rl[n.links[n.arena[n.hot[id].off]].idx].solve {
				n.rNew[k], n.rBn[k] = 0, -1
				unfixed++
			}
		}
	}
	n.solved = len(n.region)
	n.heap = n.heap[:0]
	for i := range n.rl {
		r := &n.rl[i]
		if !r.solve {
			continue
		}
		var cnt, outCnt int32
		var hash uint64
		outLoad, outMax, outBnMin := 0.0, 0.0, math.Inf(1)
		for _, e := range n.links[r.link].on {
			f := &n.hot[e.f]
			if f.mark == ep {
				cnt += int32(f.w)
				hash += flowHash(e.f)
				continue
			}
			outCnt++
			outLoad += float64(f.rate * float64(f.w))
			if f.rate > outMax {
				outMax = f.rate
			}
			if f.bn == r.link && f.rate < outBnMin {
				outBnMin = f.rate
			}
		}
		resid := n.links[r.link].capa - outLoad
		if !(resid > 0) {
			resid = 0
		}
		r.cnt, r.outCnt, r.frozen = cnt, outCnt, false
		r.hash, r.shadow = hash, false
		r.resid, r.level = resid, 0
		r.outLoad, r.outMax, r.outBnMin = outLoad, outMax, outBnMin
		r.regLoad, r.regMax = 0, 0
	}
	// A flow (or bundle) that is the only unfixed region flow on every link of its path does
	// not interact with any other: progressive filling would fix it at the smallest share of
	// its path (ties to the lowest link id, as the heap orders them), whenever that link
	// reached the top. Fixing it here leaves its links out of the heap — in a synchronised
	// collective step thousands of flows start at once on disjoint paths, and the heap would
	// cost O(links·log links) for what is a minimum over each path.
	for k, id := range n.region {
		if n.rBn[k] >= 0 {
			continue
		}
		f := &n.hot[id]
		path := n.arena[f.off : f.off+f.hops]
		w := int32(f.w)
		alone, s, bn := true, math.Inf(1), int32(-1)
		for _, m := range path {
			q := &n.rl[n.links[m].idx]
			if !q.solve || q.cnt != w {
				alone = false
				break
			}
			// The share the heap would key the link on (resid/cnt), so that a bundle's
			// minimum and ties are the heap's.
			if share := q.resid / float64(q.cnt); share < s || (share == s && m < bn) {
				s, bn = share, m
			}
		}
		if !alone {
			continue
		}
		n.rNew[k], n.rBn[k] = s, bn
		unfixed--
		for _, m := range path {
			q := &n.rl[n.links[m].idx]
			if m == bn {
				q.frozen, q.level = true, s
			}
			q.take(s, w)
		}
	}
	queued := 0
	for i := range n.rl {
		if r := &n.rl[i]; r.solve && r.cnt > 0 {
			queued++
		}
	}
	if queued > shadowFill {
		n.markShadows(queued)
	}
	for i := range n.rl {
		r := &n.rl[i]
		if r.solve && r.cnt > 0 && !r.shadow {
			n.heap = append(n.heap, hent{r.resid / float64(r.cnt), r.link, int32(i)})
		}
	}
	n.stats.SolvedFlows += uint64(unfixed)
	n.stats.SolvedLinks += uint64(len(n.heap))
	if len(n.heap) <= sortedFill {
		n.fillSorted(unfixed, ep)
		return
	}
	for i := len(n.heap)/2 - 1; i >= 0; i-- {
		n.down(i)
	}
	for unfixed > 0 {
		top := &n.heap[0]
		r := &n.rl[top.i]
		if r.cnt == 0 { // every flow of the link was fixed by other links
			n.pop()
			continue
		}
		// Keys are updated lazily: fixing a flow at level s ≤ share(q) never lowers the share
		// of q, so a stored key is a lower bound of the true one, and the link at the top is
		// the one with the smallest true share once its key is fresh.
		s := r.resid / float64(r.cnt)
		if s > top.share {
			top.share = s
			n.down(0)
			continue
		}
		n.pop()
		unfixed -= n.fix(r, s, ep)
	}
}

// sortedFill is the largest number of links solve fills from a sorted slice rather than a
// heap (a variable for TestSortedFillIsTheHeap). A collective's contended parts are small (a
// server's NVLink ports: around a dozen links), and there a link whose flows were all fixed
// elsewhere (in the profiles, more of them than links that fix flows) costs a heap pop but
// only a step of the slice's head; a key refreshed at the head moves a few places.
var sortedFill = 32

// shadowFill is the number of links to fill above which solve looks for shadows first (a
// variable for TestShadowsLeaveTheFill). Below it the fill is the sorted slice's, where a link
// popped with its flows all fixed costs a step of the head, less than the look.
var shadowFill = sortedFill

// markShadows marks the links to fill (those of the parts being solved that have unfixed
// flows: queued of them) that are another's twin: the same unfixed region flows and the same
// residual as a link of a lower id. Progressive filling changes twins alike (the same flows
// fixed at the same levels come off both residuals in the same order), so they keep one share,
// the lower id reaches the top of the queue first — a stale key of the other is refreshed to
// that share before it could be popped — and fixes every flow of both, and the other is popped
// with none left. Leaving it out of the queue leaves the fixes, their order and every link's
// residual and loads (which widen reads) as they were. On the ring without send latency two
// thirds of the links popped with no flow left were such twins: a crossing's NIC uplink and the
// next server's downlink carry the same flows. Twins meet in an open-addressed table keyed on the
// hash of their region flows; a match is checked flow by flow (sameRegionFlows), so a
// collision of hashes costs a look and nothing else.
func (n *Network) markShadows(queued int) {
	size := 64
	for size < 2*queued {
		size *= 2
	}
	if cap(n.twins) < size {
		n.twins = make([]int32, size)
	}
	tab := n.twins[:size]
	for i := range tab {
		tab[i] = -1
	}
	mask := uint64(size - 1)
	for i := range n.rl {
		q := &n.rl[i]
		if !q.solve || q.cnt == 0 {
			continue
		}
		for h := q.hash & hashBits >> 7 & mask; ; h = (h + 1) & mask {
			j := tab[h]
			if j < 0 {
				tab[h] = int32(i)
				break
			}
			p := &n.rl[j]
			if p.hash&hashBits != q.hash&hashBits || p.cnt != q.cnt || p.resid != q.resid || !n.sameRegionFlows(q.link, p.link) {
				continue
			}
			// The slot holds the lowest id of the twins seen so far.
			if q.link > p.link {
				q.shadow = true
			} else {
				p.shadow = true
				tab[h] = int32(i)
			}
			n.stats.Shadows++
			break
		}
	}
}

// sameRegionFlows reports whether every region flow on link l crosses link m: with the same
// weighted count of region flows on both, their sets are then the same.
func (n *Network) sameRegionFlows(l, m int32) bool {
	ep := n.epoch
	for _, e := range n.links[l].on {
		f := &n.hot[e.f]
		if f.mark == ep && !slices.Contains(n.arena[f.off:f.off+f.hops], m) {
			return false
		}
	}
	return true
}

// hashBits are the bits of rlink.hash markShadows compares (a variable for
// TestShadowsLeaveTheFill, which makes every hash collide).
var hashBits = ^uint64(0)

// flowHash mixes flow id into rlink.hash, a sum over a link's region flows.
func flowHash(id int32) uint64 {
	z := uint64(uint32(id))*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	z ^= z >> 29
	return z * 0xBF58476D1CE4E5B9
}

// fillSorted is solve's progressive filling over n.heap kept sorted instead of as a heap: the
// head is the entry a heap's root would be (the smallest stored key, ties to the lowest link
// id, the keys refreshed only at the head), so both fix the same flows in the same order.
func (n *Network) fillSorted(unfixed int, ep uint32) {
	h := n.heap
	for i := 1; i < len(h); i++ { // insertion sort: a few entries
		x, j := h[i], i
		for ; j > 0 && x.less(h[j-1]); j-- {
			h[j] = h[j-1]
		}
		h[j] = x
	}
	for head := 0; unfixed > 0; {
		top := &h[head]
		r := &n.rl[top.i]
		if r.cnt == 0 {
			head++
			continue
		}
		s := r.resid / float64(r.cnt)
		if s > top.share { // refreshed: move it to its place further on
			x, j := *top, head
			x.share = s
			for ; j+1 < len(h) && h[j+1].less(x); j++ {
				h[j] = h[j+1]
			}
			h[j] = x
			continue
		}
		head++
		unfixed -= n.fix(r, s, ep)
	}
}

// fix freezes region link r at level s: its region flows not yet fixed take s as their rate
// and r's link as their bottleneck, and s comes off the residual of every link of their
// paths. It returns how many flows it fixed.
func (n *Network) fix(r *rlink, s float64, ep uint32) int {
	r.frozen, r.level = true, s
	fixed := 0
	for _, e := range n.links[r.link].on {
		f := &n.hot[e.f]
		if f.mark != ep || n.rBn[f.ridx] >= 0 {
			continue
		}
		n.rNew[f.ridx], n.rBn[f.ridx] = s, r.link
		fixed++
		w := int32(f.w)
		for _, m := range n.arena[f.off : f.off+f.hops] {
			n.rl[n.links[m].idx].take(s, w)
		}
	}
	return fixed
}

// take charges region link q with one of its region flows fixed at rate s, standing for w flows
// (a bundle: Options.Bundles): s·w comes off its residual and joins its region load, and the w
// flows are no longer unfixed there.
func (q *rlink) take(s float64, w int32) {
	sw := s
	if w != 1 {
		sw = float64(s * float64(w))
	}
	q.regLoad += sw
	if s > q.regMax {
		q.regMax = s
	}
	q.cnt -= w
	if q.resid -= sw; q.resid < 0 {
		q.resid = 0
	}
}

// widen checks the max-min conditions at the boundary of the parts just solved and adds the
// flows of every link where one fails. It reports whether the region grew.
//
// Inside the region every flow has a bottleneck by construction (the link that fixed it is
// saturated and no region flow on it is faster), and outside it the links the region does not
// touch are unchanged. What can fail is on the touched links that carry outside flows:
//   - a region flow fixed on the link is slower than an outside flow there;
//   - an outside flow whose bottleneck is the link finds it no longer saturated, or finds a
//     region flow there faster than itself.
func (n *Network) widen() bool {
	grew := false
	m := len(n.rl)
	for i := range m {
		r := &n.rl[i]
		if !r.solve || r.outCnt == 0 {
			continue
		}
		// Flows outside the region that break a condition on the link: faster than its
		// region flows' level (a), or bottlenecked here when it is no longer saturated (b) or
		// slower than a region flow (c).
		faster := math.Inf(1)
		if r.frozen && r.level < r.outMax*(1-Tol) {
			faster = r.level
		}
		slower, bnAll := -1.0, false
		if !math.IsInf(r.outBnMin, 1) {
			if r.outLoad+r.regLoad < n.links[r.link].capa*(1-Tol) {
				bnAll = true
			} else if r.outBnMin < r.regMax*(1-Tol) {
				slower = r.regMax
			}
		}
		if math.IsInf(faster, 1) && slower < 0 && !bnAll {
			continue
		}
		n.stats.Expansions++
		l := r.link
		ep := n.epoch
		for _, e := range n.links[l].on { // may grow n.rl: r is not used below
			f := &n.hot[e.f]
			if f.mark == ep {
				continue
			}
			if f.rate*(1-Tol) > faster || (f.bn == l && (bnAll || f.rate < slower*(1-Tol))) {
				n.addFlow(e.f)
				grew = true
				if f.bn == l {
					n.addNeighbours(e.f, l)
				}
			}
		}
	}
	return grew
}

// apply installs the rates of the final solve: every region flow whose rate changed has its
// remaining bytes brought up to date and its "sent" timer moved.
func (n *Network) apply() {
	now := n.s.Now()
	track := n.opt.TrackBottlenecks
	for k, id := range n.region {
		fh := &n.hot[id]
		nr, bn := n.rNew[k], n.rBn[k]
		if track && (nr != fh.rate || bn != fh.bn) {
			n.closeSegment(id, now)
		}
		if n.rLone[k] {
			// Fixed alone (addFresh): join counted it at its bottleneck already, and it
			// had none before (a new or moved flow).
			fh.alone = false
			fh.bn = bn
		} else if bn != fh.bn {
			if fh.bn >= 0 {
				n.links[fh.bn].bnCnt--
			}
			if bn >= 0 {
				n.links[bn].bnCnt++
			}
			fh.bn = bn
		}
		if fh.state == stateBundle {
			n.rateBundle(id, nr, now)
			continue
		}
		if nr == fh.rate {
			continue
		}
		f := &n.flows[id]
		if dt := now - f.at; dt > 0 {
			f.rem = max(f.rem-float64(fh.rate*float64(dt))/1e12, 0)
		}
		f.at, fh.rate = now, nr
		n.stats.Rerated++
		d := sendDelay(f.rem, nr)
		if d >= engine.Never-now { // cannot finish (rate 0) or not within the range of Time
			n.s.Cancel(f.timer)
			f.timer = engine.Timer{}
			continue
		}
		switch {
		case f.timer == engine.Timer{}:
			// The flow's first rate: flows of one size started together on idle paths
			// take the same time to send, a few distinct delays that the scheduler's
			// delay lines handle without its heap.
			f.timer = n.s.AfterFixedTimer(d, n.h, id, sentArg(fh.off, fh.hops))
		case n.s.Reschedule(f.timer, now+d):
		default:
			// On a delay line, which cannot move it: a new event, ordered as the
			// moved one would be. The rates that change after the first take any
			// value and go to the heap.
			n.s.Cancel(f.timer)
			f.timer = n.s.At(now+d, n.h, id, sentArg(fh.off, fh.hops))
		}
	}
}
