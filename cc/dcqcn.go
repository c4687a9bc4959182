package cc

import (
	"errors"
	"fmt"
	"math"

	"simd/engine"
)

// DCQCNConfig holds the SimAI.conf values of a reaction point (CC_MODE 1, Mellanox variant).
// SimAI's ns-3 takes them as RdmaHw attributes; the key in SimAI.conf is given per field. The
// intervals are µs in SimAI.conf and ns-3 keeps time in whole ns, so to reproduce it they
// should be whole ns here too.
type DCQCNConfig struct {
	LineRate             float64     // bit/s, the NIC port rate (rates never exceed it)
	MinRate              float64     // MIN_RATE, bit/s
	RateAI, RateHAI      float64     // RATE_AI, RATE_HAI, bit/s
	G                    float64     // EWMA_GAIN
	AlphaResumeInterval  engine.Time // ALPHA_RESUME_INTERVAL
	RateDecreaseInterval engine.Time // RATE_DECREASE_INTERVAL
	RPTimer              engine.Time // RP_TIMER
	FastRecoveryTimes    int         // FAST_RECOVERY_TIMES
	ClampTargetRate      bool        // CLAMP_TARGET_RATE
	RateOnFirstCNP       float64     // ns-3's RateOnFirstCnp attribute (SimAI: 1.0)

	// IntegerRates truncates every computed rate to whole bit/s, as ns-3 does: its DataRate
	// holds a uint64 bit/s, so rate·(1−α/2), RateOnFirstCNP·rate and each half of
	// rate/2 + target/2 are truncated separately. The difference is at most a few bit/s; set it
	// when comparing against ns-3 output digit by digit.
	IntegerRates bool
}

// Validate reports every field that SimAI's ns-3 would not run with, or would run with
// nonsensically, naming the SimAI.conf key.
func (c *DCQCNConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("cc: DCQCN: "+format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

	if !finite(c.LineRate) || c.LineRate <= 0 {
		bad("line rate must be a finite rate > 0 bit/s, got %v", c.LineRate)
	}
	if !finite(c.MinRate) || c.MinRate <= 0 {
		bad("MIN_RATE must be a finite rate > 0 bit/s, got %v", c.MinRate)
	} else if c.MinRate > c.LineRate {
		bad("MIN_RATE (%v bit/s) must not exceed the line rate (%v bit/s)", c.MinRate, c.LineRate)
	}
	if !finite(c.RateAI) || c.RateAI < 0 {
		bad("RATE_AI must be a finite rate >= 0 bit/s, got %v", c.RateAI)
	}
	if !finite(c.RateHAI) || c.RateHAI < 0 {
		bad("RATE_HAI must be a finite rate >= 0 bit/s, got %v", c.RateHAI)
	}
	if !(c.G >= 0 && c.G <= 1) { // also rejects NaN
		bad("EWMA_GAIN must be in [0, 1], got %v", c.G)
	}
	if c.AlphaResumeInterval <= 0 || c.AlphaResumeInterval == engine.Never {
		bad("ALPHA_RESUME_INTERVAL must be > 0, got %v", c.AlphaResumeInterval)
	}
	if c.RateDecreaseInterval <= 0 || c.RateDecreaseInterval == engine.Never {
		bad("RATE_DECREASE_INTERVAL must be > 0, got %v", c.RateDecreaseInterval)
	}
	if c.RPTimer <= 0 || c.RPTimer == engine.Never {
		// SimAI's own default for RP_TIMER is 0, with which ns-3 re-arms the rate-increase
		// timer at the same instant forever.
		bad("RP_TIMER must be > 0, got %v", c.RPTimer)
	}
	if c.FastRecoveryTimes < 0 {
		bad("FAST_RECOVERY_TIMES must be >= 0, got %d", c.FastRecoveryTimes)
	}
	if !(c.RateOnFirstCNP > 0 && c.RateOnFirstCNP <= 1) {
		bad("RateOnFirstCnp must be in (0, 1], got %v", c.RateOnFirstCNP)
	}
	return errors.Join(errs...)
}

// firstDecreaseDelay is the extra delay of the first rate-decrease check: cnp_received_mlx
// schedules it RATE_DECREASE_INTERVAL + 1 ns after the first CNP "to make sure rate decrease is
// after alpha update" (ns-3 rdma-hw.cc, ScheduleDecreaseRateMlx(q, 1)). Later checks re-arm
// with no delta, so all checks sit on the grid firstCNP + 1 ns + j·RATE_DECREASE_INTERVAL.
const firstDecreaseDelay = engine.Nanosecond

// exactAlphaTicks is how many α updates in a row are folded by repeated multiplication: the
// same operations in the same order as UpdateAlphaMlx, so α stays bit-identical to ns-3's. A
// longer run takes one math.Pow instead (relative difference around 1e-15), which keeps the
// cost of a gap O(1) however many ALPHA_RESUME_INTERVALs it spans. A variable only so that
// tests can force the exact path everywhere.
var exactAlphaTicks int64 = 32

// maxIncreaseLookahead bounds the increase events Next inspects past ones that change the
// target but not the rate (which needs RATE_AI below half an ulp of the rate); past the bound
// Next answers conservatively with the event it reached.
const maxIncreaseLookahead = 8

// DCQCN is the reaction point of one flow (QP): Mellanox's DCQCN as SimAI's ns-3 runs it for
// CC_MODE 1 (rdma-hw.cc: cnp_received_mlx, UpdateAlphaMlx, CheckRateDecreaseMlx,
// RateIncEventTimerMlx, FastRecoveryMlx, ActiveIncreaseMlx, HyperIncreaseMlx).
//
// ns-3 keeps three self-re-arming timers per QP once the first CNP arrives, and never stops them
// until the QP completes:
//
//   - α update every ALPHA_RESUME_INTERVAL, on the grid firstCNP + k·A (k ≥ 1):
//     α ← (1−g)·α + g if a CNP arrived since the last update, else (1−g)·α.
//   - rate-decrease check every RATE_DECREASE_INTERVAL, on the grid firstCNP + 1 ns + j·D
//     (j ≥ 1): if a CNP arrived since the last check, target ← rate when CLAMP_TARGET_RATE is
//     set or at least one increase event ran since the last decrease (stage ≠ 0);
//     rate ← max(MIN_RATE, rate·(1−α/2)); stage ← 0; the rate-increase timer is cancelled and
//     re-armed RP_TIMER later. The first CNP leaves the decrease bit set, so the first check
//     always cuts the rate.
//   - rate-increase event every RP_TIMER, first armed by the first decrease that acts (not by
//     the CNP): stage < FAST_RECOVERY_TIMES is fast recovery, rate ← rate/2 + target/2;
//     stage == FAST_RECOVERY_TIMES is active increase, target ← min(target + RATE_AI, line),
//     then the same halving; beyond it hyper increase does the same with RATE_HAI. stage++
//     after every event, with no cap (ns-3's uint32 would wrap after 2^32 events, 45 days at
//     900 µs, which is not modelled).
//
// On the first CNP α ← 1 with the α bit cleared (so the first update decays), and
// target ← rate ← RateOnFirstCnp·rate. Before it no timer runs and the rate is the line rate.
//
// Equal times. ns-3 runs events due at the same instant in the order they were scheduled.
// Every timer re-arms itself, so when two are due at T the one armed earlier, T − period, goes
// first; the ties of that rule were resolved by hand from the handlers' code:
//
//   - α update vs the first decrease check (both armed at the first CNP, α first): α goes
//     first iff A ≥ D + 1 ns. Against a later check: α first iff A > D (A == D puts the check
//     first, since the first time the grids meet the check was armed earlier and then re-arms
//     first). With whole-µs intervals the 1 ns offset keeps the two grids apart anyway.
//   - increase event vs decrease check: the increase goes first iff RP_TIMER > D; otherwise
//     the check goes first, and if it acts it cancels the increase due at the same instant.
//   - α update vs increase event: they touch disjoint state, so their order is moot.
//   - a CNP at the same instant as a timer: the timer goes first (OnCNP calls Advance(now)
//     before recording the CNP). ns-3's order there depends on when the network scheduled
//     the ACK's arrival, which this package cannot see; this is our convention.
//
// Laziness. The caller does not step the timers. Advance(now) replays everything due up to now:
// runs of α updates fold to one multiplication by (1−g)^k, decrease checks with no CNP pending
// and increase events that change nothing are skipped by counting, and at most one decrease
// can act per call (the bit is only set by OnCNP). The cost of a call is O(1) plus one step per
// increase event that actually moves the rate or the target; Next tells the caller when the
// next such change can happen, so in practice each call runs O(1) steps.
//
// DCQCN is a value type; it holds no pointers except to its config, which must outlive it and
// not change.
type DCQCN struct {
	cfg *DCQCNConfig

	rate   float64 // current sending rate, bit/s (ns-3 m_rate)
	target float64 // target rate, bit/s (mlx.m_targetRate)
	alpha  float64 // mlx.m_alpha
	stage  int     // increase events since the last decrease (mlx.m_rpTimeStage)

	alphaCNP    bool // a CNP arrived since the last α update (mlx.m_alpha_cnp_arrived)
	decreaseCNP bool // a CNP arrived since the last decrease check (mlx.m_decrease_cnp_arrived)
	started     bool // the first CNP arrived (!mlx.m_first_cnp); the timers run

	now            engine.Time // time of the last Advance or OnCNP
	firstCNP       engine.Time // origin of the α and decrease grids
	alphaTicks     int64       // α updates done; the k-th is at firstCNP + k·A
	decreaseChecks int64       // decrease checks done; the j-th is at firstCNP + 1 ns + j·D
	increaseAt     engine.Time // next rate-increase event; Never while that timer is not armed
}

// NewDCQCN returns the reaction point of a flow created at now: at the line rate, target at the
// line rate, α = 1, no timers running (ns-3: the timers start at the first CNP).
func NewDCQCN(cfg *DCQCNConfig, now engine.Time) DCQCN {
	return DCQCN{
		cfg:        cfg,
		rate:       cfg.LineRate,
		target:     cfg.LineRate,
		alpha:      1,
		now:        now,
		increaseAt: engine.Never,
	}
}

// Rate is the current sending rate in bit/s.
func (d *DCQCN) Rate() float64 { return d.rate }

// TargetRate is the rate the increase stages converge to, in bit/s.
func (d *DCQCN) TargetRate() float64 { return d.target }

// Alpha is α as of the last Advance.
func (d *DCQCN) Alpha() float64 { return d.alpha }

// Stage is the number of rate-increase events since the last decrease (ns-3 m_rpTimeStage).
func (d *DCQCN) Stage() int { return d.stage }

// Advance runs, in ns-3's order, every timer of the reaction point due at or before now: α
// updates every AlphaResumeInterval, rate-decrease checks every RateDecreaseInterval,
// rate-increase events every RPTimer. It reports whether Rate() changed. now must not be
// earlier than the time of the previous call.
func (d *DCQCN) Advance(now engine.Time) bool {
	if now < d.now {
		panic(fmt.Sprintf("cc: DCQCN.Advance(%v) after a call at %v", now, d.now))
	}
	if !d.started {
		d.now = now
		return false
	}
	before := d.rate
	c := d.cfg

	// The one decrease that can act: the first check after the last CNP.
	if d.decreaseCNP {
		j := d.decreaseChecks + 1
		at := d.firstCNP + firstDecreaseDelay + engine.Time(j)*c.RateDecreaseInterval
		if at <= now {
			d.runIncreases(at, c.RPTimer > c.RateDecreaseInterval)
			alphaFirst := c.AlphaResumeInterval > c.RateDecreaseInterval
			if j == 1 {
				alphaFirst = c.AlphaResumeInterval >= c.RateDecreaseInterval+firstDecreaseDelay
			}
			d.runAlpha(at, alphaFirst)
			d.decrease(at)
			d.decreaseChecks = j
		}
	}
	// Later checks find no CNP and only re-arm.
	if n := gridCount(d.firstCNP+firstDecreaseDelay, c.RateDecreaseInterval, now, true); n > d.decreaseChecks {
		d.decreaseChecks = n
	}
	d.runAlpha(now, true)
	d.runIncreases(now, true)
	d.now = now
	return d.rate != before
}

// OnCNP records a CNP arriving at now (calls Advance(now) first). Reports whether Rate()
// changed (only on the first CNP when RateOnFirstCNP < 1, or if Advance changed it).
func (d *DCQCN) OnCNP(now engine.Time) bool {
	changed := d.Advance(now)
	// cnp_received_mlx
	d.alphaCNP = true
	d.decreaseCNP = true
	if !d.started {
		d.started = true
		d.firstCNP = now
		d.alpha = 1
		d.alphaCNP = false
		d.alphaTicks = 0
		d.decreaseChecks = 0
		old := d.rate
		d.rate = d.whole(d.cfg.RateOnFirstCNP * d.rate)
		d.target = d.rate
		changed = changed || d.rate != old
	}
	return changed
}

// Next returns the earliest time after the last Advance or OnCNP at which Advance may change
// Rate(): the next decrease check while a CNP is pending, or the next rate-increase event that
// would move the rate. engine.Never when no future timer can change the rate until the next CNP
// (before the first CNP, or once rate and target have settled, e.g. both at the line rate).
func (d *DCQCN) Next() engine.Time {
	if !d.started {
		return engine.Never
	}
	next := d.nextRateIncrease()
	if d.decreaseCNP {
		at := d.firstCNP + firstDecreaseDelay + engine.Time(d.decreaseChecks+1)*d.cfg.RateDecreaseInterval
		if at < next {
			next = at
		}
	}
	return next
}

// whole applies ns-3's truncation to whole bit/s when IntegerRates is set.
func (d *DCQCN) whole(rate float64) float64 {
	if d.cfg.IntegerRates {
		return math.Trunc(rate)
	}
	return rate
}

// runAlpha performs the α updates due before limit (at limit too when inclusive), as
// UpdateAlphaMlx would one by one.
func (d *DCQCN) runAlpha(limit engine.Time, inclusive bool) {
	k := gridCount(d.firstCNP, d.cfg.AlphaResumeInterval, limit, inclusive)
	n := k - d.alphaTicks
	if n <= 0 {
		return
	}
	keep := 1 - d.cfg.G
	if d.alphaCNP {
		// float64() rounds the product, so that Go does not fuse it with the addition
		// and α stays bit-identical to ns-3's.
		d.alpha = float64(keep*d.alpha) + d.cfg.G
	} else {
		d.alpha = keep * d.alpha
	}
	d.alphaCNP = false
	d.alpha = decay(d.alpha, keep, n-1)
	d.alphaTicks = k
}

// minNormalAlpha is the smallest normal float64. decay flushes α below it to 0: ns-3 lets α
// sink into subnormals, where repeated multiplication by 1−g gets stuck at a few units of
// 4.9e-324 and every multiplication runs about a hundred times slower, while α that small has
// no effect on anything (1 − α/2 rounds to 1 and (1−g)·α + g to g).
const minNormalAlpha = 0x1p-1022

// decay is alpha multiplied n times by keep, flushed to 0 below minNormalAlpha.
func decay(alpha, keep float64, n int64) float64 {
	if n <= exactAlphaTicks {
		for ; n > 0 && alpha >= minNormalAlpha; n-- {
			alpha *= keep
		}
	} else if alpha >= minNormalAlpha {
		alpha *= math.Pow(keep, float64(n))
	}
	if alpha < minNormalAlpha {
		return 0
	}
	return alpha
}

// decrease is CheckRateDecreaseMlx when a CNP arrived since the last check.
func (d *DCQCN) decrease(at engine.Time) {
	if d.cfg.ClampTargetRate || d.stage != 0 {
		d.target = d.rate
	}
	d.rate = math.Max(d.cfg.MinRate, d.whole(d.rate*(1-float64(d.alpha/2))))
	d.stage = 0
	d.decreaseCNP = false
	d.increaseAt = addPeriods(at, 1, d.cfg.RPTimer)
}

// increased is the rate and target after the increase event of the given stage
// (RateIncEventMlx: FastRecoveryMlx, ActiveIncreaseMlx or HyperIncreaseMlx).
func (d *DCQCN) increased(stage int, rate, target float64) (float64, float64) {
	c := d.cfg
	if stage >= c.FastRecoveryTimes {
		step := c.RateHAI
		if stage == c.FastRecoveryTimes {
			step = c.RateAI
		}
		target = d.whole(target + step)
		if target > c.LineRate {
			target = c.LineRate
		}
	}
	return d.whole(rate/2) + d.whole(target/2), target
}

// runIncreases performs the rate-increase events due before limit (at limit too when
// inclusive), as RateIncEventTimerMlx would one by one. Events that change neither rate nor
// target are skipped by counting: fast-recovery events once rate == target (up to the active
// increase), and every event once a hyper increase changes nothing (all later ones are the
// same computation on the same values).
func (d *DCQCN) runIncreases(limit engine.Time, inclusive bool) {
	c := d.cfg
	for d.increaseAt != engine.Never && (d.increaseAt < limit || inclusive && d.increaseAt == limit) {
		rate, target := d.increased(d.stage, d.rate, d.target)
		if rate == d.rate && target == d.target {
			due := 1 + gridCount(d.increaseAt, c.RPTimer, limit, inclusive)
			skip := due
			switch {
			case d.stage < c.FastRecoveryTimes:
				skip = min(due, int64(c.FastRecoveryTimes-d.stage))
			case d.stage == c.FastRecoveryTimes:
				skip = 1
			}
			d.stage += int(skip)
			d.increaseAt = addPeriods(d.increaseAt, skip, c.RPTimer)
			continue
		}
		d.rate, d.target = rate, target
		d.stage++
		d.increaseAt = addPeriods(d.increaseAt, 1, c.RPTimer)
	}
}

// nextRateIncrease is the time of the next increase event that changes the rate, or Never.
func (d *DCQCN) nextRateIncrease() engine.Time {
	c := d.cfg
	at := d.increaseAt
	stage, rate, target := d.stage, d.rate, d.target
	for range maxIncreaseLookahead {
		if at == engine.Never {
			return at
		}
		r, t := d.increased(stage, rate, target)
		if r != rate {
			return at
		}
		if t == target {
			if stage > c.FastRecoveryTimes {
				return engine.Never // settled: every later event repeats this one
			}
			if stage < c.FastRecoveryTimes {
				at = addPeriods(at, int64(c.FastRecoveryTimes-stage), c.RPTimer)
				stage = c.FastRecoveryTimes
				continue
			}
		}
		target = t
		stage++
		at = addPeriods(at, 1, c.RPTimer)
	}
	return at
}

// gridCount is the number of k ≥ 1 with origin + k·period ≤ limit (< limit unless inclusive).
func gridCount(origin, period, limit engine.Time, inclusive bool) int64 {
	span := limit - origin
	if !inclusive {
		span--
	}
	if span < period {
		return 0
	}
	return int64(span / period)
}

// addPeriods is t + n·period, saturating at engine.Never (so that no loop can wrap around).
func addPeriods(t engine.Time, n int64, period engine.Time) engine.Time {
	if n == 1 {
		if t > engine.Never-period {
			return engine.Never
		}
		return t + period
	}
	if n > int64((engine.Never-t)/period) {
		return engine.Never
	}
	return t + engine.Time(n)*period
}
