package ccfluid

import (
	"math"

	"simd/engine"
)

// This file holds the opening of a windowed flow (Config.FirstWindowBurst): its first round
// trip, before the ACK of its first packet is back. SimAI's ns-3 NIC sends a queue pair's
// packets whenever less than its window is in flight (RdmaQueuePair::IsWinBound) and its turn
// and pacing allow; a new queue pair has nothing in flight, so it sends its first window at its
// rate (its reaction point's, shared with the NIC's other queue pairs in turn) at once,
// whatever the queues on its path hold, and then nothing more until the first ACK comes back,
// one round trip through those queues after it started. From then on the ACKs clock it out,
// which the window's cap W/RTT stands for (window.go).
//
// A cap from the start sends the first window spread over the first round trip instead: the
// same bytes by the first ACK, but a flow that starts behind a standing queue trickles into
// it at W/RTT where ns-3's lands its window in the queue within W/rate. A flow of one window
// or less is all opening: in ns-3 it is all in the queue at once, and the queue, and the ECN
// marks its senders get, peak accordingly.
//
// The fluid follows the opening exactly at the moments that decide it: the flow asks its port
// for its rate until it has injected its window (an event at that time, moved whenever its
// injection changes), then for nothing until its first ACK is back (an event then), at the
// start time plus its round trip with the queues of its path and of its ACKs' route as they
// stand when it starts; then the window's cap applies, with the round trip of that moment.
//
// A flow on an idle path has its first ACK back before its window is out (SimAI's window is
// the largest bandwidth-delay product of the fabric), so it never waits; but the queues it
// meets may grow within that first round trip (flows of a collective starting together and
// meeting 2:1), and it goes on at its rate through them where a cap from the start would hold
// it back as soon as they hold a few packets. What the cap does not follow is the rest of the
// transient: at the first ACK it counts the queue as it is then, which the bytes in flight did
// not all wait in, so a queue that grows from empty reaches its level over a few round trips
// where ns-3's senders, whose windows are not full yet, keep their rate until they are
// (docs/models.md, "The window's first round trip").

// openState is the opening of a flow slot: when its first ACK comes back, and the event that
// ends its burst or its wait.
type openState struct {
	ackAt engine.Time
	t     engine.Timer
}

// beginOpening starts flow id's opening at now, if windows open with a burst. Its path, ACK
// route, base round trip and reaction point are set.
func (n *Network) beginOpening(id int32, now engine.Time) {
	if !n.cfg.FirstWindowBurst || !n.windowed() {
		return
	}
	for int(id) >= len(n.open) {
		n.open = appendDoubling(n.open, openState{})
	}
	f := &n.flows[id]
	w := n.window(id, n.ccRate(id))
	rtt := n.roundTripSecs(id, now)
	// Its window cannot be out before its first ACK unless it takes less than the round trip
	// at its rate now, the most it will inject (with VAR_WIN the window shrinks with the rate).
	r := n.sendRate(id)
	f.opening, f.openShort = true, r > 0 && w*8/r < rtt
	d := ceilPs(rtt)
	n.open[id] = openState{ackAt: now + d}
	if f.openShort {
		n.setTimer(&n.open[id].t, d, id, evOpen|int64(f.gen)<<24)
		return
	}
	// The event stays at the first ACK, and the round trips of flows on idle paths take a few
	// values: the scheduler's delay lines hold it without a heap operation. It is not
	// cancelled when the flow is sent first; it then finds the opening over (openingDue).
	n.s.AfterFixed(d, n.h, id, evOpen|int64(f.gen)<<24)
}

// openingDemand is flow id's demand while it opens (ok), given its rate r and its window w in
// bits: r until its window is out, then 0 until its first ACK is back. ok is false once the
// opening is over: the window's cap applies from then on.
func (n *Network) openingDemand(id int32, r, w float64, now engine.Time) (d float64, ok bool) {
	f := &n.flows[id]
	if now >= n.open[id].ackAt {
		n.endOpening(id)
		return 0, false
	}
	f.slack, f.rtt, f.dem = math.Inf(1), 0, 0
	if n.injected(id, now)+openTol < w/8 {
		f.dem = r
	}
	return f.dem, true
}

// openTol is how close to its window a flow's injection counts as the whole window: the event
// at which it gets there is rounded to the picosecond.
const openTol = 1.0 // bytes

// armOpening moves flow id's opening event to when its window is out at its injection now, if
// that comes before its first ACK, else to its first ACK. Called whenever its injection
// changes.
func (n *Network) armOpening(id int32, now engine.Time) {
	f := &n.flows[id]
	if !f.openShort {
		return // its event stays at its first ACK
	}
	o := &n.open[id]
	next := o.ackAt
	if f.inj > 0 {
		wb := n.window(id, n.ccRate(id))
		if b := n.injected(id, now); b+openTol < wb {
			next = min(next, now+ceilPs((wb-b)*8/f.inj))
		}
	}
	n.setTimer(&o.t, max(next-now, 0), id, evOpen|int64(f.gen)<<24)
}

// openingDue: flow id's burst is out or its first ACK is back; its port shares again, unless
// the opening ends with the flow sending at its rate and the window's cap not holding it back
// (a flow whose queues stayed short): its demand would not move, so only what the cap's later
// checks read (its round trip and its slack, as demand sets them) is brought up to date.
func (n *Network) openingDue(id int32, now engine.Time) {
	n.open[id].t = engine.Timer{}
	f := &n.flows[id]
	if f.state != stateSending || !f.opening {
		return
	}
	if now >= n.open[id].ackAt {
		n.endOpening(id)
		if r := n.sendRate(id); f.dem == r && r > 0 && !f.stale {
			w := n.window(id, n.ccRate(id)) * 8
			if rtt := n.roundTripSecs(id, now); rtt > 0 && w/rtt >= r {
				f.slack, f.rtt = w/r-rtt, rtt
				return
			}
		}
	}
	n.flowStale(id)
}

// endOpening ends flow id's opening: it is sent, or its first ACK is back.
func (n *Network) endOpening(id int32) {
	f := &n.flows[id]
	if !f.opening {
		return
	}
	f.opening = false
	n.termsMoved(id)
	n.s.Cancel(n.open[id].t)
	n.open[id].t = engine.Timer{}
}
