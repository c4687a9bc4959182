package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Guards and interruptions of the event mode. -max-events and -max-wall stop a run cleanly, and
// so does SIGINT or SIGTERM: the run's context is cancelled with the cause (workloads/sim stops
// the run between two events), every output is written with what the run computed so far (the
// FCT lines of the flows that arrived, the layers that finished), EndToEnd.csv and summary.json
// say the run is incomplete and why, and simd exits with exitStopped, or 128 + the signal's
// number as shells expect. A second signal ends the process at once; files being written then
// keep their temporary names, never the real ones.

// Exit statuses of stopped runs.
const (
	exitStopped = 3 // a -max-events or -max-wall guard stopped the run; outputs are partial
)

// stopCause says why a run stopped before its end: the cause its context is cancelled with.
type stopCause struct {
	reason string // "SIGINT" or "SIGTERM"
	code   int    // exit status
}

func (c *stopCause) Error() string { return c.reason }

// stopCode is the exit status of a run stopped by cause.
func stopCode(cause error) int {
	var sc *stopCause
	if errors.As(cause, &sc) {
		return sc.code
	}
	return exitStopped // -max-events and -max-wall (sim.EventLimitError, sim.WallLimitError)
}

// signalCause is the stop cause of a signal.
func signalCause(s syscall.Signal) *stopCause {
	reason := "SIGTERM" // the only other signal listened to
	if s == syscall.SIGINT {
		reason = "SIGINT"
	}
	return &stopCause{reason: reason, code: 128 + int(s)}
}

// signalContext returns a context that the first SIGINT or SIGTERM cancels with the signal's
// stop cause; the next signal takes the default action (a user pressing Ctrl-C twice wants out
// now). release stops listening.
func signalContext(parent context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			s, _ := sig.(syscall.Signal)
			cancel(signalCause(s))
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(nil)
		})
	}
}
