package sim

import (
	"time"

	"simd/engine"
)

// ETA estimates the wall time a run still needs, from its Status at each look (Attachments.Watch):
// the yardstick of a progress report.
//
// The time left is the work still to go at the rate of work so far, measured in flows when the
// run's flow count is known: the event loop's cost follows the flows it moves, while the
// simulated time does not (a ring's send latencies take simulated time but no work, a DCQCN
// storm takes work but little simulated time). The rate of flows is the one of the recent half
// of the run since its first flow: a run's cost per flow drifts as its flows fall out of step
// (the data-parallel all-reduce of 1 GiB on 16,384 GPUs under DCQCN, with not one ECN mark, goes
// from 3 to 6 events a flow over its first 200 s as the rings' steps stop starting together,
// each start then its own instant), and the recent rate follows the drift where the whole run's
// average lags it. While the run is still in the simulated instant of its first flows there is
// no estimate: an all-to-all starts all its flows in one instant, each dearer than the one
// before as its ports' lists grow, and the rate of those starts tells nothing of its sending and
// ends (over 1,024 GPUs the estimates of that phase ranged from 0.36 to 2.0 of the truth over a
// few runs; the first one after it was 1.76 of it with ideal sharing, 1.03 under DCQCN).
// Without a flow count the yardstick is the simulated time still to go to Expect, else the plan
// steps, scaled by the wall time so far. bench/run records, for every scenario, the estimate
// printed after a tenth of the run against the truth.
type ETA struct {
	// Expect is the simulated time the run is expected to reach (the analytical mode's
	// iteration time), 0 when unknown.
	Expect engine.Time
	began  time.Time
	// The first look at which the run has started flows is the anchor (at, work) from which
	// the rate of work is measured, so that setting up (a million-flow all-to-all generates its
	// plan for a second before its first flow) does not count as slow progress.
	anchored  bool
	anchorAt  time.Time
	anchorW   float64
	anchorSim engine.Time // the simulated time at the anchor
	// samples are looks since the anchor, each at least a 32nd of the time since the anchor
	// after the one before, the oldest the last one at or before the recent half's start.
	samples []etaSample
}

// etaSample is the flows' worth of work done, w, at a look at at.
type etaSample struct {
	at time.Time
	w  float64
}

// NewETA starts estimating a run that began at began.
func NewETA(began time.Time) *ETA { return &ETA{began: began} }

// Look records a look at the run at now: the first one at which it has started counted flows
// is the anchor.
func (e *ETA) Look(now time.Time, st Status) {
	if !e.anchored {
		if st.Flows > 0 && st.Started {
			e.anchored, e.anchorAt, e.anchorW, e.anchorSim = true, now, st.FlowsDone, st.Now
			e.samples = append(e.samples[:0], etaSample{now, st.FlowsDone})
		}
		return
	}
	since := now.Sub(e.anchorAt)
	if last := e.samples[len(e.samples)-1]; now.Sub(last.at) >= since/32 && st.FlowsDone != last.w {
		e.samples = append(e.samples, etaSample{now, st.FlowsDone})
	}
	// The recent half's start only moves on: a sample whose successor is already at or before
	// it is never read again.
	half := e.anchorAt.Add(since / 2)
	drop := 0
	for drop+1 < len(e.samples) && !e.samples[drop+1].at.After(half) {
		drop++
	}
	if drop > 0 {
		e.samples = append(e.samples[:0], e.samples[drop:]...)
	}
}

// Left estimates the wall time still to go at now; ok is false when nothing measures it: the
// run has not started its first flow yet, or it is past every yardstick it has (more flows than
// counted, a simulated time past Expect).
func (e *ETA) Left(now time.Time, st Status) (left time.Duration, ok bool) {
	elapsed := now.Sub(e.began)
	scale := func(done, todo float64) (time.Duration, bool) {
		// Milliseconds: below them the ratio's rounding noise; the report rounds further.
		return time.Duration(float64(elapsed) * todo / done).Round(time.Millisecond), true
	}
	flowsDone, flows, steps, planSteps := st.FlowsDone, st.Flows, st.Done, st.Total
	switch at := st.Now; {
	case flows > 0 && !e.anchored:
		// No flow yet: the run is still setting up.
	case flows > 0 && st.Now <= e.anchorSim:
		// Still the simulated instant of the first flows: an all-to-all starting its flows,
		// each dearer than the one before (its ports' lists grow), whose rate tells nothing
		// of its sending and ends.
	case flows > 0 && flowsDone < float64(flows):
		// The rate of the recent half: from the last sample at or before its start (the
		// anchor itself early on); the whole run's since the anchor if nothing was done since.
		from := etaSample{e.anchorAt, e.anchorW}
		half := e.anchorAt.Add(now.Sub(e.anchorAt) / 2)
		for _, s := range e.samples {
			if s.at.After(half) {
				break
			}
			from = s
		}
		if w := flowsDone - from.w; w > 0 && now.After(from.at) {
			elapsed = now.Sub(from.at)
			return scale(w, float64(flows)-flowsDone)
		}
		if w := flowsDone - e.anchorW; w > 0 && now.After(e.anchorAt) {
			elapsed = now.Sub(e.anchorAt)
			return scale(w, float64(flows)-flowsDone)
		}
	case flows > 0:
		// More flows than counted (a dispatch plan the count does not know): unknown.
	case e.Expect > 0 && at > 0 && at < e.Expect:
		return scale(float64(at), float64(e.Expect-at))
	case e.Expect > 0:
		// Past the estimate (the fabric is slower than the closed forms): unknown.
	case steps > 0 && planSteps >= steps:
		return scale(float64(steps), float64(planSteps-steps))
	}
	return 0, false
}
