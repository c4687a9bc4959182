package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"simd/engine"
)

// progress reports how far a long event-mode run has come on stderr: once a run has taken
// about two seconds, a line with the simulated time, the work done (plan steps of the
// iteration, or flows of a flow file), the events per second and an estimate of the time left
// — rewritten in place once a second on a terminal, a plain line every ten seconds otherwise.
// It is driven by the run's guard (guard.go) from the scheduler's Watch between events, so it
// reads the run's state without locks and costs the event loop one comparison per event
// (engine's BenchmarkScheduler -watched variants).
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
	// expect is the simulated time the run is expected to reach (the analytical mode's
	// iteration time), 0 when unknown: the estimate of the time left is the elapsed time scaled
	// by the simulated time still to go, which tracks long collectives that plan steps do not.
	expect engine.Time
}

// watchEvents is how many events pass between two looks of a run's guard (progress, limits,
// signals): a millisecond or two of simulation, and a clock reading per look is nothing next to
// the events' own cost.
const watchEvents = 1 << 12

// newProgress starts reporting on w for the run on s, unless quiet.
func newProgress(w io.Writer, quiet bool, s *engine.Scheduler, unit string, done func() (int, int)) *progress {
	if quiet || w == nil {
		return nil
	}
	p := &progress{w: w, s: s, done: done, unit: unit, began: time.Now(), every: 10 * time.Second, firstGap: 2 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, time.Second
		}
	}
	p.last = p.began
	return p
}

func (p *progress) tick() {
	now := time.Now()
	if now.Sub(p.began) < p.firstGap || now.Sub(p.last) < p.every {
		return
	}
	ev := p.s.Processed()
	rate := float64(ev-p.lastEv) / now.Sub(p.last).Seconds()
	p.last, p.lastEv = now, ev
	d, total := p.done()
	eta := "?"
	elapsed := float64(now.Sub(p.began))
	switch sim := p.s.Now(); {
	case p.expect > 0 && sim > 0 && sim < p.expect:
		eta = time.Duration(elapsed * float64(p.expect-sim) / float64(sim)).Round(time.Second).String()
	case p.expect > 0:
		// Past the estimate (the fabric is slower than the closed forms): unknown.
	case d > 0 && total >= d:
		eta = time.Duration(elapsed * float64(total-d) / float64(d)).Round(time.Second).String()
	}
	line := fmt.Sprintf("simd: simulated %.3f ms, %d/%d %s, %.2f M events/s, about %s left",
		float64(p.s.Now())/1e9, d, total, p.unit, rate/1e6, eta)
	if p.tty {
		fmt.Fprintf(p.w, "\r%-100s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// finish ends the report: it clears the terminal line it wrote, if any.
func (p *progress) finish() {
	if p == nil {
		return
	}
	if p.tty && p.printed {
		fmt.Fprintf(p.w, "\r%-100s\r", "")
	}
}
