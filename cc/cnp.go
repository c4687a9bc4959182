package cc

import "simd/engine"

// CNPGate is the notification point of one flow at its receiver: it turns marked packets into
// CNPs, at most one per Interval (Interval 0: one per marked packet).
//
// SimAI's ns-3 does not pace CNPs for CC_MODE 1. RdmaHw::ReceiveUdp sets the CNP flag on the
// ACK (or NACK) it generates for a data packet whose IP header carries ECN bits, and
// RdmaHw::ReceiveAck hands every flagged ACK to cnp_received_mlx. So there is one CNP per marked
// packet that generates an ACK: with L2_ACK_INTERVAL 1 (SimAI's file) every in-order packet
// does; a marked packet that generates no ACK (between ACK milestones, a duplicate, a
// suppressed NACK) produces no CNP, and that filter is the caller's. Interval 0 reproduces this.
//
// A positive Interval gives the per-flow CNP pacing of real NICs (the DCQCN paper's 50 µs): a
// CNP goes out for a marked packet if none went out in the last Interval, measured from the last
// CNP sent (now − last ≥ Interval sends).
//
// The zero value is a gate that has sent nothing.
type CNPGate struct {
	last engine.Time // when the last CNP was sent
	sent bool        // a CNP has been sent
}

// OnMarked records a marked packet arriving at now and reports whether a CNP must be sent now.
// interval ≤ 0 sends one CNP per marked packet, as SimAI's ns-3 does.
func (g *CNPGate) OnMarked(now engine.Time, interval engine.Time) bool {
	if interval > 0 && g.sent && now-g.last < interval {
		return false
	}
	g.last, g.sent = now, true
	return true
}
