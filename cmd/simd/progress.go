package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"simd/engine"
	"simd/workloads/sim"
)

// progress reports how far a long event-mode run has come on stderr: once a run has taken
// about two seconds, a line with the wall time so far, the simulated time, the work done (plan
// steps of the iteration and flows, or flows of a flow file), the events per second and an
// estimate of the time left — rewritten in place once a second on a terminal, a plain line
// every ten seconds otherwise (-progress-every sets the interval). It is driven by the run's
// run's Watch (workloads/sim) between events, with the run's Status, so it reads the run's
// state without locks and costs the event loop one comparison per event (engine's
// BenchmarkScheduler -watched variants).
//
// The time left is the wall time so far scaled by the work still to go, measured in flows
// when the run's flow count is known: the event loop's cost follows the flows it moves, while
// the simulated time does not (a ring's send latencies take simulated time but no work, a
// DCQCN storm takes work but little simulated time). Without a flow count the yardstick is the
// simulated time still to go to the analytical mode's iteration time, else the plan steps.
// bench/run records, for every scenario, the estimate printed after a tenth of the run against
// the truth.
type progress struct {
	w        io.Writer
	tty      bool
	unit     string // of Status.Done and Total
	began    time.Time
	last     time.Time
	lastEv   uint64
	printed  bool
	every    time.Duration
	firstGap time.Duration
	// expect is the simulated time the run is expected to reach (the analytical mode's
	// iteration time), 0 when unknown.
	expect engine.Time
	// The first look at which the run has started flows is the anchor (at, work) from which
	// the rate of work is measured, so that setting up (a million-flow all-to-all generates its
	// plan for a second before its first flow) does not count as slow progress.
	anchored bool
	anchorAt time.Time
	anchorW  float64
}

// newProgress starts reporting on w, unless quiet; every is the interval (-progress-every), 0
// for the default; unit names the run's Status.Done and Total.
func newProgress(w io.Writer, quiet bool, every time.Duration, unit string) *progress {
	if quiet || w == nil {
		return nil
	}
	p := &progress{w: w, unit: unit, began: time.Now(), every: 10 * time.Second, firstGap: 2 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, time.Second
		}
	}
	if every > 0 {
		p.every, p.firstGap = every, every
	}
	p.last = p.began
	return p
}

// watch is the run's Watch: it prints a line when one is due. Nil reports nothing.
func (p *progress) watch() func(sim.Status) {
	if p == nil {
		return nil
	}
	return p.tick
}

func (p *progress) tick(st sim.Status) {
	now := time.Now()
	if st.Flows <= 0 {
		st.FlowsDone = 0 // the flows are not counted: the other yardsticks measure
	}
	if !p.anchored && st.Flows > 0 && st.Started {
		p.anchored, p.anchorAt, p.anchorW = true, now, st.FlowsDone
	}
	if now.Sub(p.began) < p.firstGap || now.Sub(p.last) < p.every {
		return
	}
	rate := float64(st.Events-p.lastEv) / now.Sub(p.last).Seconds()
	p.last, p.lastEv = now, st.Events
	elapsed := now.Sub(p.began)
	work := fmt.Sprintf("%d/%d %s", st.Done, st.Total, p.unit)
	if st.Flows > 0 {
		work += fmt.Sprintf(", %s/%s flows", countString(int64(st.FlowsDone)), countString(st.Flows))
	}
	line := fmt.Sprintf("simd: %s in, simulated %.3f ms, %s, %.2f M events/s, about %s left",
		roundElapsed(elapsed), float64(st.Now)/1e9, work, rate/1e6, p.left(now, st))
	if p.tty {
		fmt.Fprintf(p.w, "\r%-120s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// left estimates the wall time still to go, as text: "?" when nothing measures it (the run is
// past every yardstick it has).
func (p *progress) left(now time.Time, st sim.Status) string {
	elapsed := now.Sub(p.began)
	scale := func(done, todo float64) string {
		return time.Duration(float64(elapsed) * todo / done).Round(time.Second).String()
	}
	flowsDone, flows, steps, planSteps := st.FlowsDone, st.Flows, st.Done, st.Total
	switch at := st.Now; {
	case flows > 0 && !p.anchored:
		// No flow yet: the run is still setting up.
	case flows > 0 && flowsDone < float64(flows):
		if w := flowsDone - p.anchorW; w > 0 {
			elapsed = now.Sub(p.anchorAt)
			return scale(w, float64(flows)-flowsDone)
		}
	case flows > 0:
		// More flows than counted (a dispatch plan the count does not know): unknown.
	case p.expect > 0 && at > 0 && at < p.expect:
		return scale(float64(at), float64(p.expect-at))
	case p.expect > 0:
		// Past the estimate (the fabric is slower than the closed forms): unknown.
	case steps > 0 && planSteps >= steps:
		return scale(float64(steps), float64(planSteps-steps))
	}
	return "?"
}

// roundElapsed rounds the wall time so far for the report: tenths of a second in the first
// minute, then seconds.
func roundElapsed(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// countString writes a count of flows briefly: 950, 12.3k, 16.76M.
func countString(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// finish ends the report: it clears the terminal line it wrote, if any.
func (p *progress) finish() {
	if p == nil {
		return
	}
	if p.tty && p.printed {
		fmt.Fprintf(p.w, "\r%-120s\r", "")
	}
}
