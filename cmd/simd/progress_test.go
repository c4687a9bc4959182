package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"simd/engine"
)

// The progress report prints plain lines with the simulated time, the work done and an
// estimate of the time left when its writer is not a terminal; -quiet prints nothing.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	s := engine.NewScheduler()
	steps := 0
	p := newProgress(&buf, false, 0, s, "steps", func() (int, int) { return steps, 4 })
	p.firstGap, p.every = 0, 0
	g := guardRun(s, limits{}, p)
	for i := range 3 * watchEvents {
		s.AtFunc(engine.Time(i)*engine.Microsecond, func() {
			if i%watchEvents == 0 {
				steps++
			}
		})
	}
	s.Run()
	if g.finish() != nil {
		t.Error("a run without limits was stopped")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "simd: ") || !strings.Contains(l, " in, simulated ") || !strings.Contains(l, "/4 steps") || !strings.Contains(l, "left") {
			t.Errorf("line %q", l)
		}
	}
	if !strings.Contains(lines[0], "4.095 ms") {
		t.Errorf("first report at %q, want the clock after 4,096 events", lines[0])
	}
	if newProgress(&buf, true, 0, s, "steps", nil) != nil {
		t.Error("-quiet still reports")
	}
}

// The time left is the wall time since the first flow scaled by the work still to go: set-up
// before the first flow does not count, and before it there is no estimate.
func TestProgressEstimate(t *testing.T) {
	s := engine.NewScheduler()
	p := newProgress(&bytes.Buffer{}, false, 0, s, "steps", func() (int, int) { return 0, 1 })
	t0 := p.began
	var work float64
	started := false
	p.flows = func() (float64, int64) { return work, 110 }
	p.started = func() bool { return started }
	if got := p.left(t0.Add(3*time.Second), work, 110, 0, 1); got != "?" {
		t.Errorf("before the first flow: %q left, want ?", got)
	}
	// The first flows start 3 s in (set-up), with 10 flows' worth done at the first look.
	p.last = t0.Add(3 * time.Second)
	started, work = true, 10
	p.tick()
	if !p.anchored {
		t.Fatal("no anchor at the first look with flows")
	}
	p.anchorAt = t0.Add(3 * time.Second) // the look's own clock reading, made exact
	// 5 s later 60 are done: 50 in 5 s, so the 50 to go take 5 s (not 6 s × 50/60).
	if got := p.left(t0.Add(8*time.Second), 60, 110, 0, 1); got != "5s" {
		t.Errorf("%q left, want 5s", got)
	}
	// More work than counted: unknown rather than negative.
	if got := p.left(t0.Add(9*time.Second), 120, 110, 0, 1); got != "?" {
		t.Errorf("past the count: %q left, want ?", got)
	}
}

// A negative -progress-every is refused, naming the flag.
func TestProgressEveryNegative(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "-progress-every", "-1s", "-o", "neg"); code != exitBadInput || !strings.Contains(errOut, "-progress-every -1s: expected a positive duration") {
		t.Errorf("-progress-every -1s: exit %d: %s", code, errOut)
	}
}
