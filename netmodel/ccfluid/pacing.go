package ccfluid

import "simd/engine"

// This file holds the pacing of SimAI's ns-3 NIC (RdmaHw::UpdateNextAvail): when a queue pair
// sends a packet, its next one may leave one packet time later at the rate it has then,
// size/m_rate. The Mellanox DCQCN reaction point (RdmaHw::CheckRateDecreaseMlx,
// FastRecoveryMlx, ActiveIncreaseMlx, HyperIncreaseMlx) changes m_rate without moving that time
// (only HPCC's ChangeRate does), so a new rate takes effect one packet after the last one sent.
// At line rate that is a packet time (181 ns at 400 Gb/s), below what the fluid resolves; at
// DCQCN's MIN_RATE it is 724 µs (9,052 bytes at 100 Mb/s): a flow cut to the floor by an
// incast keeps sending at the floor for up to that long after its rate has been raised again.
//
// The fluid keeps the rate the NIC paces a flow at (sendRate) apart from its reaction point's:
// a change of the reaction point's rate while the flow sends at its old rate (the NIC not
// holding it back for its port or its window, where ns-3's queue pair waits for its turn
// rather than for its next-available time) is applied when the flow has injected the rest of
// its current packet at the old rate — the bytes it has injected modulo a full packet stand
// for the time since its last packet left. Changes that come while one is held are taken
// together at its end, as ns-3 sends its next packet at the rate it has then.

// sendRate is the rate flow id's NIC paces it at: its reaction point's rate, or the rate before
// a change still held back — with Transport.NanosecondClock what the NIC's gaps of whole
// nanoseconds make of it (Transport.PacketRate). It is read for every flow of a link whenever
// the link's windows are checked (windowTarget: 1,023 flows a port in an all-to-all over 1,024
// GPUs), so it is kept with the flow (repace) rather than computed there.
func (n *Network) sendRate(id int32) float64 { return n.flows[id].pr }

// repace brings flow id's paced rate (sendRate) in line with its reaction point's rate and the
// change its NIC holds back: called whenever either moves.
func (n *Network) repace(id int32) {
	f := &n.flows[id]
	r := n.ccRate(id)
	if f.paceAt != 0 {
		r = f.pace
	}
	was := min(f.pr, f.lim)
	switch {
	case !n.cfg.Transport.NanosecondClock:
		f.pr = r
	case r == f.line:
		f.pr = n.links[n.arena[f.off]].capa // PacketRate of its first link's rate, computed once
	default:
		f.pr = n.cfg.Transport.PacketRate(r)
	}
	if n.wkeep && min(f.pr, f.lim) != was {
		n.termsMoved(id) // what it could send without its window (windowTarget)
	}
}

// rateChanged is called when flow id's reaction point has moved its rate from old: the flow's
// port shares again, now or, with PaceAtOldRate, when the packet under way at old is done.
func (n *Network) rateChanged(id int32, old float64, now engine.Time) {
	f := &n.flows[id]
	if f.paceAt != 0 {
		return // the change already held back takes this one with it
	}
	// Its paced rate is still old's (sendRate): the NIC sends at it until the change is taken.
	if p := f.pr; n.cfg.PaceAtOldRate && old > 0 && f.inj >= p {
		if at := now + ceilPs(n.packetLeft(id, now)*8/p); at > now {
			f.pace, f.paceAt = old, at
			return
		}
	}
	n.repace(id)
	n.flowStale(id)
}

// paceDue ends flow id's held change when its time has come: the port shares again if the rate
// the flow is paced at moves.
func (n *Network) paceDue(id int32, now engine.Time) {
	f := &n.flows[id]
	if f.paceAt == 0 || now < f.paceAt {
		return
	}
	f.paceAt = 0
	n.repace(id)
	if n.ccRate(id) != f.pace {
		n.flowStale(id)
	}
}

// packetLeft is the bytes on the wire flow id has still to inject of its current packet: a full
// packet less what it has injected beyond its last whole one.
func (n *Network) packetLeft(id int32, now engine.Time) float64 {
	full := float64(n.cfg.Transport.Full())
	if full <= 0 {
		return 0
	}
	b := n.injected(id, now)
	whole := float64(full * float64(int64(b/full))) // the bytes of its whole packets
	return full - (b - whole)
}
