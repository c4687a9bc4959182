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
// storm takes work but little simulated time). It is the mean of two estimates, the work to go
// at the rate of the recent half of the run since its first flow and at the whole run's rate
// since then. A run's cost per flow drifts as its flows fall out of step (the data-parallel
// all-reduce of 1 GiB on 16,384 GPUs under DCQCN, with not one ECN mark, goes from 3 to 6 events
// a flow over its first 200 s as the rings' steps stop starting together, each start then its
// own instant), which the recent rate follows and the whole run's lags (alone, it printed 0.48
// of the truth there after a tenth of the run); a run can also pass through a dear phase and
// leave it (the pipeline of SimAI's example on 384 GPUs: its warm-up's contending all-to-alls
// make its first 40% of flows cost 2.6 times the rest), which the recent rate takes for the
// run's pace while the whole run's remembers the cheaper start (alone, the recent rate printed
// 2.0 times the truth there after a tenth of the run; the mean, 1.6). While the run is still in
// the simulated instant of its first flows there is no estimate: an all-to-all starts all its
// flows in one instant, each dearer than the one before as its ports' lists grow, and the rate of
// those starts tells nothing of its sending and ends (over 1,024 GPUs the estimates of that phase
// ranged from 0.36 to 2.0 of the truth over a few runs; the first one after it was 1.76 of it
// with ideal sharing, 1.03 under DCQCN).
// Between two changes of the work done the estimate made at the last change is counted down:
// the bytes sent are measured only now and then (flowsDone), so while a run's flows send and
// none starts or ends the work done reads the same at every look, and a rate measured up to the
// look fell with every second of it (the all-to-all over 1,024 GPUs under DCQCN printed 1m3s,
// then 4m55s, with 16 and 14 s to go); the run did work all along, at the rate it had. Once the
// count-down runs out the rate up to the look estimates again.
// Without a flow count the yardstick is the simulated time still to go to Expect, else the plan
// steps, scaled by the wall time so far. bench/run records, for every scenario, the estimate
// printed after a tenth of the run against the truth, and the worst factor between the two
// from then on.
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
	// after the one before, the oldest the last one at or before the start of the recent half
	// up to the last change.
	samples []etaSample
	// changed is the last look at which the work done was not what the look before read.
	changed etaSample
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
			e.changed = etaSample{now, st.FlowsDone}
		}
		return
	}
	if st.FlowsDone != e.changed.w {
		e.changed = etaSample{now, st.FlowsDone}
	}
	since := now.Sub(e.anchorAt)
	if last := e.samples[len(e.samples)-1]; now.Sub(last.at) >= since/32 && st.FlowsDone != last.w {
		e.samples = append(e.samples, etaSample{now, st.FlowsDone})
	}
	// The start of the recent half up to the last change only moves on: a sample whose
	// successor is already at or before it is never read again.
	half := e.anchorAt.Add(e.changed.at.Sub(e.anchorAt) / 2)
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
		todo := float64(flows) - flowsDone
		if c := e.changed; flowsDone == c.w && now.After(c.at) {
			// Nothing changed since c: the estimate made then, counted down.
			if left, ok := e.leftAt(c.at, flowsDone, todo); ok && left > now.Sub(c.at) {
				return (left - now.Sub(c.at)).Round(time.Millisecond), true
			}
		}
		if left, ok := e.leftAt(now, flowsDone, todo); ok {
			return left.Round(time.Millisecond), true
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

// leftAt is the wall time todo flows' worth of work takes, when done was done at at: the
// mean of what it takes at the rate of the recent half of the run up to at (from the last sample
// at or before the half's start, the anchor itself early on) and at the whole run's rate since
// the anchor; the whole run's alone if nothing was done in the recent half; ok is false when
// neither measures any work.
func (e *ETA) leftAt(at time.Time, done, todo float64) (time.Duration, bool) {
	w := done - e.anchorW
	if !(w > 0 && at.After(e.anchorAt)) {
		return 0, false
	}
	whole := float64(at.Sub(e.anchorAt)) * todo / w
	from := etaSample{e.anchorAt, e.anchorW}
	half := e.anchorAt.Add(at.Sub(e.anchorAt) / 2)
	for _, s := range e.samples {
		if s.at.After(half) {
			break
		}
		from = s
	}
	if w := done - from.w; w > 0 && at.After(from.at) {
		recent := float64(at.Sub(from.at)) * todo / w
		return time.Duration((recent + whole) / 2), true
	}
	return time.Duration(whole), true
}
