package cc

import (
	"fmt"
	"math"
)

// DCTCPConfig holds the DCTCP parameters of SimAI.conf.
type DCTCPConfig struct {
	LineRate float64 // bit/s; the QP's m_max_rate, the rate of the NIC the flow leaves by; also the start rate
	MinRate  float64 // bit/s; MIN_RATE (100Mb/s in SimAI.conf)
	RateAI   float64 // bit/s; DCTCP_RATE_AI (1000Mb/s in SimAI.conf)
	// G is EWMA_GAIN, the α gain RdmaHw shares with DCQCN (m_g; 1/256 in SimAI.conf). SimAI's global
	// default is the integer expression 1/16, i.e. 0, which freezes α at 1 if the key is missing.
	G float64
}

// Validate reports the first problem with c, naming the field.
func (c *DCTCPConfig) Validate() error {
	switch {
	case !(c.LineRate > 0) || math.IsInf(c.LineRate, 0):
		return fmt.Errorf("dctcp: LineRate %v: want a positive rate in bit/s", c.LineRate)
	case !(c.MinRate >= 0) || c.MinRate > c.LineRate:
		return fmt.Errorf("dctcp: MinRate %v: want a rate in [0, LineRate %v]", c.MinRate, c.LineRate)
	case !(c.RateAI >= 0) || math.IsInf(c.RateAI, 0):
		return fmt.Errorf("dctcp: RateAI %v: want a non-negative rate in bit/s", c.RateAI)
	case !(c.G >= 0 && c.G <= 1):
		return fmt.Errorf("dctcp: G %v: want an EWMA gain in [0, 1]", c.G)
	}
	return nil
}

// DCTCP is the reaction point of one flow under SimAI.conf CC_MODE 8, the rate-based DCTCP of
// SimAI's ns-3 (rdma-hw.cc RdmaHw::HandleAckDctcp, state in rdma-queue-pair.h). Switches mark ECN
// exactly as for DCQCN; the receiver copies the mark of each data packet into the CNP flag of its
// ACK (one ACK per packet with L2_ACK_INTERVAL 1); the sender reacts per ACK:
//
//  1. ecnCnt counts marked ACKs. When an ACK passes m_lastUpdateSeq (a "new batch": everything that
//     was in flight at the previous batch start is acknowledged, about one RTT later), α ←
//     (1−g)·α + g·min(1, ecnCnt/batch), where batch = (snd_nxt − ack)/mtu + 1 at the previous batch
//     start is exactly the number of ACKs counted since; then ecnCnt = 0 and m_lastUpdateSeq =
//     snd_nxt. α starts at 1.
//  2. CWR ends when an ACK passes m_highSeq.
//  3. A marked ACK outside CWR cuts: rate ← max(MinRate, rate·(1 − α/2)), and enters CWR with
//     m_highSeq = snd_nxt, so CWR lasts one round: for a window-limited sender it ends at the ACK
//     at the cut's position in the next round.
//  4. On a new batch outside CWR: rate ← min(LineRate, rate + DCTCP_RATE_AI).
//
// The fluid caller cannot deliver one call per ACK, so DCTCP takes one call per round (the ACKs from
// one batch start to the next, one window of data) carrying the fraction of the round's ACKs that
// were marked and whether any was. OnRound reproduces what the per-ACK machine does over a round:
//
//   - the first marked ACK of the round cuts, with α as updated at the round's start;
//   - the round's end is the next batch start: α takes the round's fraction, and the rate gains
//     DCTCP_RATE_AI if the round did not cut (after a cut CWR still holds at the next batch start).
//
// For a window-limited sender this is exact (the tests replay a per-ACK machine) when no mark falls
// on a round's first ACK and a marked round that follows a cut has a mark at or after the previous
// cut's position. Otherwise:
//   - marks of a round that all precede the end of the previous round's CWR are ignored per ACK but
//     cut here;
//   - a cut on a round's first ACK ends CWR exactly at the next batch start, where the per-ACK
//     machine adds DCTCP_RATE_AI (or cuts again if that ACK is marked); here the AI is skipped;
//   - the mark of a batch's first ACK counts in the previous batch, and the first batch's count is
//     not reset (m_lastUpdateSeq starts at 0): one-ACK effects the fraction does not carry;
//   - the AI on the flow's very first ACK is a no-op because flows start at line rate.
//
// Rates stay whole numbers of bit/s as in ns-3's DataRate, whose product with a double truncates
// (DataRate::operator*); give integral LineRate, MinRate and RateAI. The window (HAS_WIN, VAR_WIN)
// is the caller's: ns-3 uses the same RdmaQueuePair::GetWin for every CC mode (see HPCC.Window).
//
// The zero value is not usable; build it with NewDCTCP.
type DCTCP struct {
	cfg   DCTCPConfig
	rate  float64
	alpha float64
}

// NewDCTCP starts a flow at line rate with α = 1 (RdmaHw::AddQueuePair, RdmaQueuePair constructor).
// cfg is copied; validate it first.
func NewDCTCP(cfg *DCTCPConfig) DCTCP {
	return DCTCP{cfg: *cfg, rate: cfg.LineRate, alpha: 1}
}

// Rate is the current sending rate in bit/s.
func (d *DCTCP) Rate() float64 { return d.rate }

// Alpha is the current congestion estimate α.
func (d *DCTCP) Alpha() float64 { return d.alpha }

// OnRound applies one round of ACKs: markedFraction is the fraction of the round's ACKs (packets)
// that carried an ECN mark, i.e. marked bytes / acknowledged bytes for equal packets (clamped to
// [0, 1]), and marked whether at least one did. It reports whether the rate changed.
func (d *DCTCP) OnRound(markedFraction float64, marked bool) (rateChanged bool) {
	before := d.rate
	if marked {
		// The first marked ACK of the round, outside CWR: one cut with the α of the round's start.
		d.rate = math.Max(d.cfg.MinRate, math.Trunc(d.rate*(1-float64(d.alpha/2))))
	}
	// The next batch start: α takes this round's fraction (std::min(1.0, ecnCnt/batch)).
	f := markedFraction
	if !(f > 0) {
		f = 0
	} else if f > 1 {
		f = 1
	}
	d.alpha = float64((1-d.cfg.G)*d.alpha) + float64(d.cfg.G*f)
	if !marked {
		// Outside CWR at the batch start: additive increase, capped at the line rate.
		d.rate = math.Min(d.cfg.LineRate, d.rate+d.cfg.RateAI)
	}
	return d.rate != before
}
