package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"simd/engine"
)

// Guards and interruptions of the event mode. -max-events and -max-wall stop a run cleanly, and
// so does SIGINT or SIGTERM: the run stops between two events, every output is written with
// what the run computed so far (the FCT lines of the flows that arrived, the layers that
// finished), EndToEnd.csv and summary.json say the run is incomplete and why, and simd exits
// with exitStopped, or 128 + the signal's number as shells expect. A second signal ends the
// process at once; files being written then keep their temporary names, never the real ones.

// Exit statuses of stopped runs.
const (
	exitStopped = 3 // a -max-events or -max-wall guard stopped the run; outputs are partial
)

// stopCause says why a run stopped before its end.
type stopCause struct {
	reason string // "-max-events 1000", "-max-wall 1m0s", "SIGINT"
	code   int    // exit status
}

// stoppedError is returned by a mode whose run was stopped; its outputs are written.
type stoppedError struct {
	cause *stopCause
	at    engine.Time // simulated time reached
	note  string      // what the outputs hold
}

func (e stoppedError) Error() string {
	return fmt.Sprintf("stopped by %s at %.3f us simulated: %s", e.cause.reason, e.at.Microseconds(), e.note)
}

// interrupts listens to SIGINT and SIGTERM while at least one user (a run, a sweep) wants them
// turned into clean stops; got holds the first signal's number until the last user leaves.
var interrupts struct {
	mu    sync.Mutex
	users int
	stop  func()
	got   atomic.Int32
}

// listenInterrupts starts turning SIGINT and SIGTERM into clean stops (see interrupted) and
// returns the function that ends it. Calls nest: a sweep listens for its whole length and
// each of its runs listens for its own.
func listenInterrupts() (release func()) {
	in := &interrupts
	in.mu.Lock()
	defer in.mu.Unlock()
	in.users++
	if in.users == 1 {
		ch := make(chan os.Signal, 1)
		done := make(chan struct{})
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			select {
			case sig := <-ch:
				in.mu.Lock()
				if s, ok := sig.(syscall.Signal); ok {
					in.got.Store(int32(s))
				}
				// The next signal takes the default action: a user pressing Ctrl-C twice
				// wants out now.
				signal.Stop(ch)
				in.mu.Unlock()
			case <-done:
			}
		}()
		in.stop = func() {
			signal.Stop(ch)
			close(done)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			in.mu.Lock()
			defer in.mu.Unlock()
			if in.users--; in.users == 0 {
				in.stop()
				in.got.Store(0)
			}
		})
	}
}

// interrupted is the stop cause of a signal received since listening began, or nil.
func interrupted() *stopCause {
	s := syscall.Signal(interrupts.got.Load())
	if s == 0 {
		return nil
	}
	reason := "SIGTERM" // the only other signal listened to
	if s == syscall.SIGINT {
		reason = "SIGINT"
	}
	return &stopCause{reason: reason, code: 128 + int(s)}
}

// runGuard watches a run on its scheduler, between events: it drives the progress report and
// stops the run when -max-events or -max-wall is reached or a signal arrived. It looks every
// watchEvents events (every event near -max-events, so that the run stops after exactly that
// many), so a signal is noticed within milliseconds of simulation.
type runGuard struct {
	s         *engine.Scheduler
	prog      *progress
	maxEvents uint64 // 0: none
	deadline  time.Time
	maxWall   time.Duration
	release   func()
	cause     *stopCause
}

// limits are a run's -max-events and -max-wall (0: none).
type limits struct {
	maxEvents uint64
	maxWall   time.Duration
}

// guardRun starts watching a run on s with its limits; finish ends it.
func guardRun(s *engine.Scheduler, lim limits, prog *progress) *runGuard {
	g := &runGuard{s: s, prog: prog, maxEvents: lim.maxEvents, maxWall: lim.maxWall, release: listenInterrupts()}
	if lim.maxWall > 0 {
		g.deadline = time.Now().Add(lim.maxWall)
	}
	g.watchNext()
	return g
}

// watchNext asks the scheduler for the next look.
func (g *runGuard) watchNext() {
	every := uint64(watchEvents)
	if g.maxEvents > 0 {
		left := g.maxEvents - min(g.maxEvents, g.s.Processed())
		every = max(1, min(every, left))
	}
	g.s.Watch(every, g.tick)
}

func (g *runGuard) tick() {
	switch {
	case g.maxEvents > 0 && g.s.Processed() >= g.maxEvents:
		g.cause = &stopCause{reason: fmt.Sprintf("-max-events %d", g.maxEvents), code: exitStopped}
	case !g.deadline.IsZero() && !time.Now().Before(g.deadline):
		g.cause = &stopCause{reason: "-max-wall " + g.maxWall.String(), code: exitStopped}
	default:
		g.cause = interrupted()
	}
	if g.cause != nil {
		g.s.Stop()
		g.s.Watch(0, nil)
		return
	}
	if g.prog != nil {
		g.prog.tick()
	}
	g.watchNext()
}

// finish stops watching and ends the progress report; it returns the stop cause, nil if the
// run was not stopped. A signal after the last look does not count: the run is complete.
func (g *runGuard) finish() *stopCause {
	if g == nil {
		return nil
	}
	g.s.Watch(0, nil)
	g.prog.finish()
	g.release()
	return g.cause
}
