package sim

import (
	"time"

	"simd/engine"
)

// ETA estimates the wall time a run still needs, from its Status at each look (Attachments.Watch):
// the yardstick of a progress report.
//
// The time left is the wall time so far scaled by the work still to go, measured in flows when
// the run's flow count is known: the event loop's cost follows the flows it moves, while the
// simulated time does not (a ring's send latencies take simulated time but no work, a DCQCN
// storm takes work but little simulated time). Without a flow count the yardstick is the
// simulated time still to go to Expect, else the plan steps. bench/run records, for every
// scenario, the estimate printed after a tenth of the run against the truth.
type ETA struct {
	// Expect is the simulated time the run is expected to reach (the analytical mode's
	// iteration time), 0 when unknown.
	Expect engine.Time
	began  time.Time
	// The first look at which the run has started flows is the anchor (at, work) from which
	// the rate of work is measured, so that setting up (a million-flow all-to-all generates its
	// plan for a second before its first flow) does not count as slow progress.
	anchored bool
	anchorAt time.Time
	anchorW  float64
}

// NewETA starts estimating a run that began at began.
func NewETA(began time.Time) *ETA { return &ETA{began: began} }

// Look records a look at the run at now: the first one at which it has started counted flows
// is the anchor.
func (e *ETA) Look(now time.Time, st Status) {
	if !e.anchored && st.Flows > 0 && st.Started {
		e.anchored, e.anchorAt, e.anchorW = true, now, st.FlowsDone
	}
}

// Left estimates the wall time still to go at now; ok is false when nothing measures it: the
// run has not started its first flow yet, or it is past every yardstick it has (more flows than
// counted, a simulated time past Expect).
func (e *ETA) Left(now time.Time, st Status) (left time.Duration, ok bool) {
	elapsed := now.Sub(e.began)
	scale := func(done, todo float64) (time.Duration, bool) {
		return time.Duration(float64(elapsed) * todo / done).Round(time.Second), true
	}
	flowsDone, flows, steps, planSteps := st.FlowsDone, st.Flows, st.Done, st.Total
	switch at := st.Now; {
	case flows > 0 && !e.anchored:
		// No flow yet: the run is still setting up.
	case flows > 0 && flowsDone < float64(flows):
		if w := flowsDone - e.anchorW; w > 0 {
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
