package cc

import (
	"fmt"
	"math"

	"simd/engine"
	"simd/engine/detmath"
)

// HPCCMaxHops is the most INT hops a packet carries (IntHeader::maxHop, 5 in the HPCC group's
// ns-3). PushHop wraps around beyond it and UpdateRateHp then ignores the whole INT, so a longer
// path is not controlled.
const HPCCMaxHops = 5

// HPCCConfig holds the HPCC parameters of SimAI.conf and the flow's window and base RTT.
type HPCCConfig struct {
	LineRate float64 // bit/s; m_max_rate, the rate of the NIC the flow leaves by; also the start rate
	MinRate  float64 // bit/s; MIN_RATE (100Mb/s in SimAI.conf)
	RateAI   float64 // bit/s; RATE_AI, HPCC's W_AI in rate form (50Mb/s in SimAI.conf)
	UTarget  float64 // η, U_TARGET (0.95)
	MaxStage int     // MI_THRESH: additive steps before a multiplicative one (0 in SimAI.conf, 5 default)
	// BaseRTT is T, the QP's m_baseRtt (SimAI passes the global maxRtt to every QP).
	BaseRTT engine.Time
	// WindowBytes is the QP's m_win (maxBdp with HAS_WIN 1). It normalizes the queue term. 0 means no
	// window (HAS_WIN 0), where ns-3 would divide by zero; here the queue term then uses
	// LineRate·BaseRTT/8 instead.
	WindowBytes float64
	VarWin      bool // VAR_WIN: the window scales with rate/LineRate
	FastReact   bool // FAST_REACT
	MultiRate   bool // MULTI_RATE: per-hop rates
	// PacketBytes is the size of the packets whose ACKs drive the fast-react EWMA (PACKET_PAYLOAD_SIZE;
	// one ACK per packet with L2_ACK_INTERVAL 1). 0 takes the many-small-packets limit.
	PacketBytes float64
}

// Validate reports the first problem with c, naming the field.
func (c *HPCCConfig) Validate() error {
	switch {
	case !(c.LineRate > 0) || math.IsInf(c.LineRate, 0):
		return fmt.Errorf("hpcc: LineRate %v: want a positive rate in bit/s", c.LineRate)
	case !(c.MinRate >= 0) || c.MinRate > c.LineRate:
		return fmt.Errorf("hpcc: MinRate %v: want a rate in [0, LineRate %v]", c.MinRate, c.LineRate)
	case !(c.RateAI >= 0) || math.IsInf(c.RateAI, 0):
		return fmt.Errorf("hpcc: RateAI %v: want a non-negative rate in bit/s", c.RateAI)
	case !(c.UTarget > 0) || math.IsInf(c.UTarget, 0):
		return fmt.Errorf("hpcc: UTarget %v: want a positive target utilization", c.UTarget)
	case c.MaxStage < 0:
		return fmt.Errorf("hpcc: MaxStage %d: want a non-negative stage count", c.MaxStage)
	case c.BaseRTT <= 0:
		return fmt.Errorf("hpcc: BaseRTT %v: want a positive time", c.BaseRTT)
	case !(c.WindowBytes >= 0) || math.IsInf(c.WindowBytes, 0):
		return fmt.Errorf("hpcc: WindowBytes %v: want a non-negative size", c.WindowBytes)
	case !(c.PacketBytes >= 0) || math.IsInf(c.PacketBytes, 0):
		return fmt.Errorf("hpcc: PacketBytes %v: want a non-negative size", c.PacketBytes)
	}
	return nil
}

// HopState is what INT reports for one switch egress port on the flow's path, in fluid form (see
// HPCC for how each field maps to ns-3's per-ACK counters).
type HopState struct {
	QueueBytes float64 // egress queue now, bytes (all priorities)
	TxRate     float64 // egress transmit rate since the flow's previous call, bit/s (all flows)
	LinkRate   float64 // line rate of the port, bit/s; must be positive
}

// hpccHop is the per-hop state of MULTI_RATE (hp.hopState[i]).
type hpccHop struct {
	u        float64
	rate     float64 // Rc: the committed rate of this hop
	incStage int
}

// HPCC is the reaction point of one flow under HPCC (SimAI.conf CC_MODE 3), the INT-based control of SimAI's ns-3 (rdma-hw.cc
// RdmaHw::HandleAckHp, UpdateRateHp, FastReactHp; state in rdma-queue-pair.h).
//
// Every switch (SwitchNode::SwitchNotifyDequeue, not NICs and not NVSwitches) stamps each data packet
// it sends with one INT hop: time, the egress port's cumulative transmitted bytes, the egress queue
// length (all priorities) and the port's line rate. The receiver echoes the INT in its ACK. Per ACK,
// for each hop i, against the INT the flow stored from its previous ACK:
//
//	txRate_i = Δbytes·8 / Δt
//	u_i      = txRate_i / C_i + min(qlen_i, qlen_i,prev) · maxRate / C_i / win
//
// with maxRate the flow's NIC rate and win its window (maxBdp in SimAI). The queue term is the queue
// in units of a bandwidth-delay product at C_i.
//
// Single rate (MULTI_RATE 0, as in SimAI.conf): U = max_i u_i and τ = the Δt of that hop, capped at
// T = the base RTT (maxRtt in SimAI); u ← (u·(T − τ) + U·τ) / T (u starts at 1); k = u/η. If k ≥ 1
// or incStage ≥ maxStage (MI_THRESH): rate = curRate/k + RATE_AI, stage 0 (multiplicative); else
// rate = curRate + RATE_AI, stage + 1 (additive). The rate is clamped to [MinRate, maxRate].
// An ACK that passes m_lastUpdateSeq (one window of data, about one RTT, after the previous such
// ACK) commits the rate and stage into curRate/incStage; every other ACK is a fast reaction
// (FAST_REACT): the same computation from the committed curRate, changing only the sending rate.
// Both kinds of ACK update u and the stored INT. The very first ACK only stores the INT.
//
// Per-hop rates (MULTI_RATE 1, SimAI's code default): each hop keeps its own u, committed rate and
// stage, updated as above with its own τ, and the sending rate is the minimum over hops.
//
// The fluid mapping. The caller calls OnRound once per round (the ACK that passes
// m_lastUpdateSeq) and, optionally, OnFastReact in between, each with the time and the state of the
// switch egress ports on the flow's data path. For each hop:
//   - TxRate is the egress port's transmit rate (all flows, bit/s) averaged since the flow's
//     previous call: what Δbytes·8/Δt measures between the INT stamps of two packets of the flow.
//   - QueueBytes is the egress queue now; the min with the previous call's queue is kept here.
//   - LinkRate is the port's line rate.
//
// With FAST_REACT off ns-3 stores INT only on round ACKs, so τ is the whole round and u is replaced
// by a single sample capped at one base RTT: exactly what OnRound does. With FAST_REACT on, u is
// updated on every ACK with τ = the gap between the flow's packets; over a round of constant feedback
// that compounds to u ← U + (u − U)·(1 − τ/T)^(elapsed/τ), which OnRound applies in one step with
// τ = PacketBytes·8/rate (or its limit exp(−elapsed/T) when PacketBytes is 0). The rate after the
// round's last fast reaction equals the commit's, so OnRound alone gives the right per-round outcome;
// OnFastReact lets the caller also change the rate within a round.
//
// Not modelled: INT quantization (bytes in 128-byte units, queue in 80-byte units, both × INT_MULTI;
// 24-bit ns timestamps), SAMPLE_FEEDBACK (repo value 0), HPCC-PINT (CC_MODE 10). Rates stay whole
// bit/s as in ns-3's DataRate (curRate/k truncates); give integral rates. A path with more than
// HPCCMaxHops switch hops gets no update at all, as in ns-3.
//
// HPCC is a value type with no pointers; the zero value is not usable, build it with NewHPCC.
type HPCC struct {
	cfg HPCCConfig

	rate     float64 // m_rate: the sending rate
	curRate  float64 // hp.m_curRate: the rate committed at the last round
	incStage int     // hp.m_incStage
	u        float64 // hp.u: the EWMA of the bottleneck's normalized utilization

	started    bool        // the first ACK (INT stored) has been seen
	lastSample engine.Time // when the stored INT was taken
	nhop       int
	prevQueue  [HPCCMaxHops]float64 // the stored INT's queue lengths
	hops       [HPCCMaxHops]hpccHop
}

// NewHPCC starts a flow at line rate with u = 1 (RdmaHw::AddQueuePair, RdmaQueuePair constructor).
// cfg is copied; validate it first.
func NewHPCC(cfg *HPCCConfig) HPCC {
	h := HPCC{cfg: *cfg, rate: cfg.LineRate, curRate: cfg.LineRate, u: 1}
	for i := range h.hops {
		h.hops[i] = hpccHop{u: 1, rate: cfg.LineRate}
	}
	return h
}

// Rate is the current sending rate in bit/s (m_rate).
func (h *HPCC) Rate() float64 { return h.rate }

// CommittedRate is the rate committed at the last round (hp.m_curRate), the reference of the next
// round's and the fast reactions' computations. With MULTI_RATE it is the minimum of the hops'.
func (h *HPCC) CommittedRate() float64 { return h.curRate }

// Stage is the number of consecutive additive increases (hp.m_incStage; single rate).
func (h *HPCC) Stage() int { return h.incStage }

// Utilization is the EWMA u of the bottleneck's normalized utilization (hp.u; single rate).
func (h *HPCC) Utilization() float64 { return h.u }

// Window is the flow's window in bytes (RdmaQueuePair::GetWin): WindowBytes, or with VarWin
// ⌊WindowBytes·rate/LineRate⌋ and at least 1. It is 0 when the flow has no window.
func (h *HPCC) Window() float64 {
	w := h.cfg.WindowBytes
	if w == 0 || !h.cfg.VarWin {
		return w
	}
	w = math.Floor(w * h.rate / h.cfg.LineRate)
	if w < 1 {
		w = 1
	}
	return w
}

// OnRound applies the ACK that ends a round (one window of data after the previous one) at time now,
// with the INT of the switch egress ports on the data path (at most HPCCMaxHops). It commits the new
// rate and stage and reports whether the sending rate changed. The first call of either kind only
// stores the INT. A flow with no switch hop (an NVLink-only path) never changes rate.
func (h *HPCC) OnRound(now engine.Time, hops []HopState) (rateChanged bool) {
	return h.update(now, hops, false)
}

// OnFastReact applies an ACK within a round (FastReactHp): the rate reacts from the committed rate,
// which stays. It does nothing with FastReact off, where ns-3 ignores such ACKs.
func (h *HPCC) OnFastReact(now engine.Time, hops []HopState) (rateChanged bool) {
	if !h.cfg.FastReact {
		return false
	}
	return h.update(now, hops, true)
}

// update is UpdateRateHp in fluid form; fast marks a fast reaction.
func (h *HPCC) update(now engine.Time, hops []HopState, fast bool) bool {
	if len(hops) > HPCCMaxHops {
		return false // ns-3 skips an INT with nhop > maxHop entirely
	}
	if !h.started {
		h.started = true
		h.store(now, hops)
		return false
	}
	if len(hops) == 0 {
		h.lastSample = now
		h.nhop = 0
		return false
	}
	elapsed := now - h.lastSample
	if elapsed < 0 {
		elapsed = 0
	}
	keep := h.keepFraction(elapsed)

	win := h.cfg.WindowBytes
	if win == 0 {
		win = h.cfg.LineRate * h.cfg.BaseRTT.Seconds() / 8
	}
	// maxU is the largest per-hop u; the ns-3 loop replaces U only on a strictly larger u, so an
	// all-zero feedback leaves τ = 0 and u unchanged.
	var maxU float64
	var hopRate [HPCCMaxHops]float64
	var hopStage [HPCCMaxHops]int
	newRate, newStage := h.cfg.LineRate, 0
	for i := range hops {
		hop := &hops[i]
		q := hop.QueueBytes
		if i < h.nhop && h.prevQueue[i] < q {
			q = h.prevQueue[i]
		}
		u := hop.TxRate/hop.LinkRate + q*h.cfg.LineRate/hop.LinkRate/win
		if !h.cfg.MultiRate {
			maxU = math.Max(maxU, u)
			continue
		}
		// Per hop: own EWMA and own committed rate; the sending rate is the smallest.
		hs := &h.hops[i]
		hs.u = float64(hs.u*keep) + float64(u*(1-keep))
		hopRate[i], hopStage[i] = h.step(hs.rate, hs.u, hs.incStage)
		newRate = math.Min(newRate, hopRate[i])
	}
	if !h.cfg.MultiRate {
		if maxU > 0 {
			h.u = float64(h.u*keep) + float64(maxU*(1-keep))
		}
		newRate, newStage = h.step(h.curRate, h.u, h.incStage)
	}

	changed := newRate != h.rate
	h.rate = newRate // ChangeRate
	if !fast {
		h.curRate, h.incStage = newRate, newStage
		if h.cfg.MultiRate {
			for i := range hops {
				h.hops[i].rate, h.hops[i].incStage = hopRate[i], hopStage[i]
			}
		}
	}
	h.store(now, hops)
	return changed
}

// step is one HPCC rate computation from the committed rate ref, utilization u and stage.
func (h *HPCC) step(ref, u float64, stage int) (rate float64, newStage int) {
	k := u / h.cfg.UTarget
	if k >= 1 || stage >= h.cfg.MaxStage {
		rate, newStage = math.Trunc(ref/k)+h.cfg.RateAI, 0 // DataRate / double truncates
	} else {
		rate, newStage = ref+h.cfg.RateAI, stage+1
	}
	if rate < h.cfg.MinRate {
		rate = h.cfg.MinRate
	}
	if rate > h.cfg.LineRate || math.IsNaN(rate) {
		rate = h.cfg.LineRate
	}
	return rate, newStage
}

// keepFraction is how much of the old u survives elapsed time of feedback.
// detmath, not math: math.Exp and math.Pow differ in the last bits between platforms.
func (h *HPCC) keepFraction(elapsed engine.Time) float64 {
	T := float64(h.cfg.BaseRTT)
	d := float64(elapsed)
	if !h.cfg.FastReact {
		// One INT sample for the whole interval, τ capped at the base RTT.
		return 1 - math.Min(d, T)/T
	}
	if h.cfg.PacketBytes == 0 || h.rate <= 0 {
		return detmath.Exp(-d / T)
	}
	// One update per packet of the flow, each with τ = the packet gap at the current rate.
	gap := h.cfg.PacketBytes * 8 / h.rate * float64(engine.Second)
	if gap >= T {
		return 1 - math.Min(d, T)/T
	}
	return detmath.Pow(1-gap/T, d/gap)
}

// store keeps the INT of this call for the next one (qp->hp.hop[i] = ih.hop[i]).
func (h *HPCC) store(now engine.Time, hops []HopState) {
	h.lastSample = now
	h.nhop = len(hops)
	for i := range hops {
		h.prevQueue[i] = hops[i].QueueBytes
	}
}
