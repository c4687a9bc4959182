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
// estimate of the time left (sim.ETA) — rewritten in place once a second on a terminal, a plain
// line every ten seconds otherwise (-progress-every sets the interval). It is driven by the
// run's Watch (workloads/sim) between events, with the run's Status, so it reads the run's
// state without locks and costs the event loop one comparison per event (engine's
// BenchmarkScheduler -watched variants).
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
	eta      *sim.ETA // its Expect is set from the run's expected simulated time
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
	p.last, p.eta = p.began, sim.NewETA(p.began)
	return p
}

// progressHook is sim.Hooks.Progress: a report on w for each simulation, unless quiet.
func progressHook(w io.Writer, quiet bool, every time.Duration) progressFunc {
	return func(unit string, expect func() engine.Time) (func(sim.Status), func()) {
		p := newProgress(w, quiet, every, unit)
		if p != nil && expect != nil {
			p.eta.Expect = expect()
		}
		return p.watch(), p.finish
	}
}

// progressFunc is a run's progress hook (sim.Hooks.Progress).
type progressFunc = func(unit string, expect func() engine.Time) (watch func(sim.Status), finish func())

// heapAtEnd is the progress hook p whose report's end also calls heap: the simulation has ended
// and its model is still held.
func heapAtEnd(p progressFunc, heap func()) progressFunc {
	return func(unit string, expect func() engine.Time) (func(sim.Status), func()) {
		watch, finish := p(unit, expect)
		return watch, func() {
			finish()
			heap()
		}
	}
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
	p.eta.Look(now, st)
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
		roundWallTime(elapsed), float64(st.Now)/1e9, work, rate/1e6, p.left(now, st))
	if p.tty {
		fmt.Fprintf(p.w, "\r%-120s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// left is the time left as the report prints it: "?" when nothing measures it.
func (p *progress) left(now time.Time, st sim.Status) string {
	if d, ok := p.eta.Left(now, st); ok {
		return roundWallTime(d).String()
	}
	return "?"
}

// roundWallTime rounds a wall time for the report (the time so far and the time left): whole
// milliseconds under a second, tenths of a second under a minute, then seconds. Whole seconds
// alone would print a run with a quarter of a second to go as 0s or 1s; and tenths would print
// a report made 50 ms into a run as made at 100 ms, twice the time it had taken, so that the
// time left it printed could not be checked against the run's end (bench/run's honesty column
// reads both).
func roundWallTime(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
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
