package ccfluid

import (
	"math"

	"simd/engine"
)

// This file holds the bound that answers most PFC checks of a busy switch without looking at
// its ports (Config.BoundedPFCChecks; -pfc-checks bounded).
//
// A switch is checked at the end of every instant in which one of its queues that holds or
// gains bytes changed (linkDirty), and a full check walks every port some queue holds bytes
// from: in the all-to-alls of SimAI's MoE workload a 9,216-GPU AlibabaHPN ToR has some 160 of
// them, its queues change every few hundred nanoseconds, and the checks were half of the run
// (docs/performance.md, "MoE storms"), while nearly every one of them found what the one before
// had: no port near its pause level (cc.SwitchBuffer.CannotPauseGiven).
//
// The bound. With no port paused, no port pauses while the largest shared use times its
// port's 2^shift stays below the shared pool less the shared use of all (CannotPauseGiven). A
// port's occupancy is what the switch's queues hold of the bytes that came in through it
// (advanceFeeds), which moves only as those bytes arrive and leave. So it is at most the
// switch's total backlog (the line sw.tot, kept at every change of a queue's slope, plus
// totSlack for the picosecond a queue's line may run past empty), and at most mub: the largest
// occupancy the last full check found, plus what a port can have gained since — what the
// switch's backlogged queues receive (arrB, kept at every change of their arrivals), and with
// reshaping no more than its fastest ingress link sends (inB: a link passes on at most its
// rate) — plus any rise of a port's line to its holdings (feedMoved). The shared use of all is
// at most the total backlog. Both bounds are lines until the switch's next change, so when the
// bound would allow a pause is solved; the check is due then, or at the next change if that
// comes first, where the bound is evaluated again in O(1). Only when it cannot rule a pause out
// (a port near its level, or any port paused: a resume needs the exact test) does the check
// look at the ports, as the exact checks do.
//
// Why it is not the default. A pause is only ever found where the bound fails, and there the
// check is full, so the decisions are those of the full checks on the same state
// (TestPFCBoundNeverHidesAPause checks the bound against the queues' holdings at every check it
// answers). A change the bound answers still applies the due departure weights of the switch's
// backlogged queues and sets the slopes of the feeds that changed (keepFeeds), what the ports'
// counts move by. But a full check also brings the ports' lines, the total backlog and the
// active list to its time, and the storm's statistics move with when that happens: the MoE
// slice's iteration by about its seed spread (+0.11% on the mean over five seeds); on the
// 9,216-GPU AlibabaHPN run the pauses of the two agree to 3-5% for 57 ms and then, in a burst
// of switch ports pausing and resuming every few microseconds, the bound's are about half the
// exact checks' (before the PFC corrections of congestion-model.md, "PFC", it paused 1.3 times
// as often throughout). Which is nearer ns-3 is not known: the reference runs' storms are 64
// GPUs, where the two agree (docs/performance.md, "MoE storms"). TestPFCBoundKeepsThePauses
// compares the two checks.

// boundMargin is the relative margin the bound keeps below the pause level, and on the
// occupancies it bounds: far above the rounding of the lines and sums involved, so that the bound
// never rules out a pause the full check would find.
const boundMargin = 1e-6

// boundCheck, when set (by tests), is called at every check the bound answers, with the
// switch's total backlog and occupancy bound at now.
var boundCheck func(n *Network, w int32, now engine.Time)

// advanceBound brings switch sw's occupancy bound to now: any port may have gained, since, what
// its backlogged queues received, and where queues pass on what leaves them (Config.Reshape) at
// most what the fastest link into the switch can bring.
func (n *Network) advanceBound(sw *pfcSwitch, now engine.Time) {
	if now > sw.mubAt {
		sw.mub += float64(n.boundRate(sw) * secs(now-sw.mubAt))
		sw.mubAt = now
	}
}

// boundRate is how fast, in bytes/s, any port of sw may gain occupancy now: what its backlogged
// queues receive, and with reshaping no more than its fastest ingress link sends (a link passes
// on at most its rate, so what comes in through a port is at most the rate of its link).
func (n *Network) boundRate(sw *pfcSwitch) float64 {
	if n.reshape() {
		return min(sw.arrB, sw.inB)
	}
	return sw.arrB
}

// boundArrivals sets what egress link l adds to its switch's arrB, as its arrivals a (bits/s)
// while its queue holds or gains bytes, else 0, after bringing the bound to now on the old rate.
func (n *Network) boundArrivals(l int32, a float64) {
	old := n.pfcArr[l]
	if a == old {
		return
	}
	sw := &n.sw[n.links[l].outSw]
	n.advanceBound(sw, n.s.Now())
	sw.arrB = max(sw.arrB+float64((a-old)/8), 0)
	n.pfcArr[l] = a
}

// boundUntil is how long from now the bound rules out every pause at switch sw, whose total
// backlog and occupancy bound are at now; ok is false when it does not now. See the file's
// comment: with U an upper bound of every port's occupancy, growing at most at r, and the total
// backlog T growing at s, no port pauses while (U − res)⁺·2^shift < (P − T)·(1 − margin).
func (sw *pfcSwitch) boundUntil(rate float64) (d engine.Time, ok bool) {
	if sw.paused > 0 {
		return 0, false
	}
	g := 1 - boundMargin
	tot := sw.tot + sw.totSlack
	free := float64((sw.pool - tot) * g)
	if !(free > 0) {
		return 0, false
	}
	best := -1.0 // the longest any of the two bounds holds, seconds
	for _, b := range [2]struct{ u, r float64 }{{sw.mub, rate}, {tot, sw.totSlope}} {
		lhs := float64(max(float64(b.u*(1+boundMargin))+1-sw.res, 0) * sw.maxMul)
		if !(lhs < free) {
			continue
		}
		// lhs + r⁺·mul·τ reaches free − s·g·τ at τ (never when that side does not close).
		closing := float64(max(b.r, 0)*sw.maxMul) + float64(sw.totSlope*g)
		if !(closing > 0) {
			return engine.Never, true
		}
		best = max(best, (free-lhs)/closing)
	}
	if best < 0 {
		return 0, false
	}
	ps := math.Floor(best * 1e12) // no later than the bound fails
	if !(ps < 1<<62) {
		return engine.Never, true
	}
	return max(engine.Time(ps), 1), true
}

// switchChanged is switch w's check at the end of an instant in which one of its queues
// changed: the bound, or the full check where it does not rule out a pause.
func (n *Network) switchChanged(w int32, now engine.Time) {
	if n.pfcArr != nil {
		sw := &n.sw[w]
		n.keepFeeds(sw, now)
		sw.advanceTotal(now)
		n.advanceBound(sw, now)
		if d, ok := sw.boundUntil(n.boundRate(sw)); ok {
			n.stats.SwitchChecksBounded++
			if boundCheck != nil {
				boundCheck(n, w, now)
			}
			n.setTimer(&sw.checkT, d, w, evSwitch)
			return
		}
	}
	n.checkSwitch(w, now)
}

// keepFeeds is the first step of a full check of switch sw at now (checkSwitch), and of every
// change the bound answers, what the ports' counts move by: the departure weights its backlogged queues have queued and that are due are applied
// (reshape.go applies those of a link no flow goes on from only when asked), and the feeds whose
// arrivals or weights changed get their slopes again. Left to the next full check, they made the
// 9,216-GPU run's ports pause about 1.8 times as often as the exact checks; done at every change
// the bound answers, about 1.3 times (both measured before the PFC corrections of
// congestion-model.md, "PFC"; docs/performance.md, "MoE storms").
func (n *Network) keepFeeds(sw *pfcSwitch, now engine.Time) {
	if n.reshape() {
		for _, l := range sw.backlogged {
			if n.weights[l].pending() && n.weighted(l) {
				n.advanceLink(l, now)
				n.weightsOut(l)
			}
		}
	}
	for i := 0; i < len(sw.stale); i++ {
		l := sw.stale[i]
		n.advanceLink(l, now)
		n.refreshFeeds(l)
	}
	sw.stale = sw.stale[:0]
}

// boundFrom ends a full check of switch w at now, which found umax the largest occupancy of a
// port and next the time until the next crossing of a port's level or reserve: the bound starts
// again from umax (and from the arrivals of the backlogged queues, summed afresh), and the next
// check is due at next or, if the bound rules out every pause until later, then. Both are
// times before which no port can pause; the later one is taken, so that a bound that fails
// soon after every check (a port near its level, a fast link into the switch) costs no more
// checks than the crossings do.
func (n *Network) boundFrom(w int32, umax float64, now, next engine.Time) engine.Time {
	sw := &n.sw[w]
	sw.mub, sw.mubAt = umax, now
	a := 0.0
	for _, l := range sw.backlogged {
		a += n.pfcArr[l]
	}
	sw.arrB = a / 8
	if d, ok := sw.boundUntil(n.boundRate(sw)); ok && d > next {
		return d
	}
	return next
}
