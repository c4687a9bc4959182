package ccfluid

import (
	"math"
	"simd/cc"
	"simd/engine"
	"simd/topo"
)

// This file holds what depends on the reaction point: the rate a sender asks its NIC for
// (its congestion-control rate, capped by its window), and the per-round feedback of the
// window-paced modes, DCTCP and HPCC.

// ccRate is flow id's congestion-control rate, bits/s.
func (n *Network) ccRate(id int32) float64 {
	switch n.mode {
	case ModeDCTCP:
		return n.dctcpRP[id].Rate()
	case ModeHPCC:
		return n.hpccRP[id].Rate()
	}
	return n.flows[id].rp.Rate()
}

// demand is what flow id asks its NIC for now: its congestion-control rate, and with a window
// (HAS_WIN) at most a window per round trip (window.go: the round trip with the queues of its
// path and of its ACKs' route; with VAR_WIN the window scales with rate/line rate, ns-3
// RdmaHw::GetWin). The cap is evaluated whenever the port shares, which window.go arranges
// whenever a queue the flow depends on reaches the level that matters.
func (n *Network) demand(id int32, now engine.Time) float64 {
	r := n.sendRate(id)
	if !n.windowed() {
		// It stands until its rate moves (flowStale), as a windowed flow's does: its port's
		// next sharing takes it as it is, without the paced rate's arithmetic again.
		f := &n.flows[id]
		f.dem, f.stale = r, false
		return r
	}
	w := n.window(id, n.ccRate(id)) * 8
	f := &n.flows[id]
	f.stale = false
	if f.opening {
		if d, ok := n.openingDemand(id, r, w, now); ok {
			return d // its round trip does not matter until its first ACK is back
		}
	}
	rtt := n.roundTripSecs(id, now)
	if rtt <= 0 || r <= 0 {
		f.slack, f.dem = math.Inf(1), r
		return r
	}
	f.slack, f.rtt, f.dem = w/r-rtt, rtt, min(r, w/rtt)
	return f.dem
}

// roundTrip is flow id's round trip now: twice its path's delay plus the queueing delay on its
// path, at least 1 ns.
func (n *Network) roundTrip(id int32, now engine.Time) engine.Time {
	f := &n.flows[id]
	rtt := ceilPs(f.rtt0)
	for k := range f.hops + f.ack {
		l := n.arena[f.off+k]
		if c := n.capOf(l); c > 0 {
			n.advanceLink(l, now)
			rtt += ceilPs(n.links[l].qs.q * 8 / c)
		}
	}
	return max(rtt, engine.Nanosecond)
}

// armRound schedules the end of flow id's current round, one round trip from now.
func (n *Network) armRound(id int32) {
	f := &n.flows[id]
	now := n.s.Now()
	n.roundB[id] = n.injected(id, now)
	f.marks = 0
	n.setTimer(&f.roundT, n.roundTrip(id, now), id, evRound|int64(f.gen)<<24)
}

// injected is the bytes flow id has injected by now.
func (n *Network) injected(id int32, now engine.Time) float64 {
	f := &n.flows[id]
	rem := f.rem - float64(float64(f.inj*secs(now-f.at))/8)
	return float64(f.wire) - max(rem, 0)
}

// hpccPrev is what a flow's last HPCC round saw of each switch hop, to turn the ports' byte
// counters into transmit rates (ns-3 INT's txBytes and timestamps).
type hpccPrev struct {
	at     engine.Time
	served [cc.HPCCMaxHops]float64
	n      int
}

// round ends flow id's round: DCTCP gets the fraction of its packets that were marked, HPCC
// the INT of the switch ports on its path; then the next round starts.
func (n *Network) round(id int32, now engine.Time) {
	f := &n.flows[id]
	changed := false
	switch n.mode {
	case ModeDCTCP:
		pkts := (n.injected(id, now) - n.roundB[id]) / n.cfg.PacketBytes
		frac := 0.0
		if pkts > 0 {
			frac = min(float64(f.marks)/pkts, 1)
		} else if f.marks > 0 {
			frac = 1
		}
		changed = n.dctcpRP[id].OnRound(frac, f.marks > 0)
	case ModeHPCC:
		prev := &n.hpccTx[id]
		n.hops = n.hops[:0]
		k := 0
		for h := range f.hops {
			l := n.arena[f.off+h]
			if n.g.Kind(n.g.From(l)) != topo.Switch {
				continue // only switches add INT
			}
			if k == cc.HPCCMaxHops {
				n.hops = append(n.hops, cc.HopState{}) // too many hops: HPCC ignores the INT
				break
			}
			n.advanceLink(l, now)
			lk := &n.links[l]
			tx := 0.0
			if prev.n > k && now > prev.at {
				tx = (lk.qs.served - prev.served[k]) * 8 / secs(now-prev.at)
			}
			prev.served[k] = lk.qs.served
			// The INT carries the port's nominal rate (capa may be Transport.PacketRate's).
			n.hops = append(n.hops, cc.HopState{QueueBytes: lk.qs.q, TxRate: tx, LinkRate: n.g.Rate(l)})
			k++
		}
		prev.at, prev.n = now, k
		if len(n.hops) <= cc.HPCCMaxHops {
			changed = n.hpccRP[id].OnRound(now, n.hops)
		}
	}
	if changed {
		n.stats.RateChanges++
		n.windowMoved(id)
		n.repace(id)
		n.flowStale(id)
	}
	n.armRound(id)
}
