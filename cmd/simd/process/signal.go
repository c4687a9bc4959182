package process

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signal is the cause a SignalContext is cancelled with: the signal received.
type Signal syscall.Signal

// Error is the signal's name, as a stopped run's outputs give the reason it stopped.
func (s Signal) Error() string {
	if syscall.Signal(s) == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM" // the only other signal listened to
}

// SignalContext returns a context that the first SIGINT or SIGTERM cancels with its Signal as
// the cause; the next signal takes the default action (a user pressing Ctrl-C twice wants out
// now). release stops listening.
func SignalContext(parent context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			s, _ := sig.(syscall.Signal)
			cancel(Signal(s))
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
