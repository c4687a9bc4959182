package process

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// The first SIGTERM cancels the context with the signal as its cause; release alone cancels it
// with no signal.
func TestSignalContext(t *testing.T) {
	ctx, release := SignalContext(context.Background())
	defer release()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	var s Signal
	if !errors.As(context.Cause(ctx), &s) || syscall.Signal(s) != syscall.SIGTERM || s.Error() != "SIGTERM" {
		t.Errorf("cause %v, want SIGTERM", context.Cause(ctx))
	}
	if got := Signal(syscall.SIGINT).Error(); got != "SIGINT" {
		t.Errorf("SIGINT is named %q", got)
	}

	ctx, release = SignalContext(context.Background())
	release()
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("released: cause %v, want context.Canceled", err)
	}
}
