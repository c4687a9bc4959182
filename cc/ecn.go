package cc

import (
	"errors"
	"fmt"
	"math"
)

// ECNMarker is RED marking at a switch egress queue (switch-mmu.cc ShouldSendCN): q > KMax ⇒
// mark; KMin < q ≤ KMax ⇒ mark with probability PMax·(q−KMin)/(KMax−KMin); else no mark. Bytes.
//
// Both comparisons are strict in ns-3 (egress_bytes > kmax, egress_bytes > kmin), so a queue of
// exactly KMin bytes is never marked and one of exactly KMax bytes is marked with probability
// PMax, not 1: the probability jumps from PMax to 1 just above KMax.
//
// How SimAI's ns-3 applies it, which is the caller's business:
//   - The decision is made at dequeue (SwitchNode::SwitchNotifyDequeue), for the departing
//     packet, after that packet's bytes have left the egress count: q excludes the packet
//     itself.
//   - Queue 0 (the ACK/CNP priority) is never marked, and only switches with ECN enabled
//     (ENABLE_QCN) mark; NVSwitches do not.
//   - KMIN_MAP and KMAX_MAP are in KB of 1000 bytes (SwitchMmu::ConfigEcn multiplies by 1000),
//     chosen per egress port by its rate; PMAX_MAP is the probability.
//   - ns-3 marks when a fresh uniform [0,1) draw is below the probability, drawing only when
//     KMin < q ≤ KMax; see Mark.
type ECNMarker struct{ KMin, KMax, PMax float64 }

// Probability is the chance that a packet leaving a queue of queueBytes bytes gets marked.
func (m ECNMarker) Probability(queueBytes float64) float64 {
	switch {
	case queueBytes > m.KMax:
		return 1
	case queueBytes > m.KMin:
		return m.PMax * (queueBytes - m.KMin) / (m.KMax - m.KMin)
	}
	return 0
}

// Mark decides one packet as ns-3 does, given u drawn uniformly from [0, 1) by the caller (cc
// has no random source): marked iff u < Probability(queueBytes). Above KMax every u marks and at
// or below KMin none does, so the caller may skip the draw there, as ns-3 does.
func (m ECNMarker) Mark(queueBytes, u float64) bool {
	return u < m.Probability(queueBytes)
}

// Validate checks 0 ≤ KMin ≤ KMax and 0 ≤ PMax ≤ 1, naming the SimAI.conf maps.
func (m ECNMarker) Validate() error {
	var errs []error
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !finite(m.KMin) || m.KMin < 0 {
		errs = append(errs, fmt.Errorf("cc: ECN: KMIN_MAP threshold must be finite and >= 0 bytes, got %v", m.KMin))
	}
	if !finite(m.KMax) || m.KMax < 0 {
		errs = append(errs, fmt.Errorf("cc: ECN: KMAX_MAP threshold must be finite and >= 0 bytes, got %v", m.KMax))
	}
	if finite(m.KMin) && finite(m.KMax) && m.KMin > m.KMax {
		errs = append(errs, fmt.Errorf("cc: ECN: KMIN_MAP threshold (%v bytes) must not exceed KMAX_MAP (%v bytes)", m.KMin, m.KMax))
	}
	if !(m.PMax >= 0 && m.PMax <= 1) { // also rejects NaN
		errs = append(errs, fmt.Errorf("cc: ECN: PMAX_MAP probability must be in [0, 1], got %v", m.PMax))
	}
	return errors.Join(errs...)
}
