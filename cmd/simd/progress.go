package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"simd/engine"
)

// progress reports how far a long event-mode run has come on stderr: once a run has taken
// about two seconds, a line with the wall time so far, the simulated time, the work done (plan
// steps of the iteration and flows, or flows of a flow file), the events per second and an
// estimate of the time left — rewritten in place once a second on a terminal, a plain line
// every ten seconds otherwise (-progress-every sets the interval). It is driven by the run's
// guard (guard.go) from the scheduler's Watch between events, so it reads the run's state
// without locks and costs the event loop one comparison per event (engine's
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
	s        *engine.Scheduler
	done     func() (done, total int) // work done and to do, in units
	unit     string
	began    time.Time
	last     time.Time
	lastEv   uint64
	printed  bool
	every    time.Duration
	firstGap time.Duration
	// flows, when set, reports the flows' worth of work done (flows in flight count as the share
	// of their bytes sent) and the flows of the whole run (0: unknown).
	flows func() (done float64, total int64)
	// expect is the simulated time the run is expected to reach (the analytical mode's
	// iteration time), 0 when unknown.
	expect engine.Time
	// started reports whether the simulation has started flows; the first look at which it has
	// is the anchor (at, work) from which the rate of work is measured, so that setting up (a
	// million-flow all-to-all generates its plan for a second before its first flow) does not
	// count as slow progress.
	started  func() bool
	anchored bool
	anchorAt time.Time
	anchorW  float64
}

// watchEvents is how many events pass between two looks of a run's guard (progress, limits,
// signals): a millisecond or two of simulation, and a clock reading per look is nothing next to
// the events' own cost.
const watchEvents = 1 << 12

// newProgress starts reporting on w for the run on s, unless quiet; every is the interval
// (-progress-every), 0 for the default.
func newProgress(w io.Writer, quiet bool, every time.Duration, s *engine.Scheduler, unit string, done func() (int, int)) *progress {
	if quiet || w == nil {
		return nil
	}
	p := &progress{w: w, s: s, done: done, unit: unit, began: time.Now(), every: 10 * time.Second, firstGap: 2 * time.Second}
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

func (p *progress) tick() {
	now := time.Now()
	if !p.anchored && p.flows != nil && p.started() {
		p.anchored, p.anchorAt = true, now
		p.anchorW, _ = p.flows()
	}
	if now.Sub(p.began) < p.firstGap || now.Sub(p.last) < p.every {
		return
	}
	ev := p.s.Processed()
	rate := float64(ev-p.lastEv) / now.Sub(p.last).Seconds()
	p.last, p.lastEv = now, ev
	elapsed := now.Sub(p.began)
	d, total := p.done()
	work := fmt.Sprintf("%d/%d %s", d, total, p.unit)
	var fd float64
	var ft int64
	if p.flows != nil {
		fd, ft = p.flows()
		work += fmt.Sprintf(", %s/%s flows", countString(int64(fd)), countString(ft))
	}
	line := fmt.Sprintf("simd: %s in, simulated %.3f ms, %s, %.2f M events/s, about %s left",
		roundElapsed(elapsed), float64(p.s.Now())/1e9, work, rate/1e6, p.left(now, fd, ft, d, total))
	if p.tty {
		fmt.Fprintf(p.w, "\r%-120s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// left estimates the wall time still to go, as text: "?" when nothing measures it (the run is
// past every yardstick it has).
func (p *progress) left(now time.Time, flowsDone float64, flows int64, steps, planSteps int) string {
	elapsed := now.Sub(p.began)
	scale := func(done, todo float64) string {
		return time.Duration(float64(elapsed) * todo / done).Round(time.Second).String()
	}
	switch sim := p.s.Now(); {
	case flows > 0 && !p.anchored:
		// No flow yet: the run is still setting up.
	case flows > 0 && flowsDone < float64(flows):
		if w := flowsDone - p.anchorW; w > 0 {
			elapsed = now.Sub(p.anchorAt)
			return scale(w, float64(flows)-flowsDone)
		}
	case flows > 0:
		// More flows than counted (a dispatch plan the count does not know): unknown.
	case p.expect > 0 && sim > 0 && sim < p.expect:
		return scale(float64(sim), float64(p.expect-sim))
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
