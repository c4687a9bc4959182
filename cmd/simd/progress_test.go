package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"simd/engine"
	"simd/workloads/sim"
)

// The progress report prints plain lines with the simulated time, the work done and an
// estimate of the time left when its writer is not a terminal; -quiet prints nothing.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, 0, "steps")
	p.firstGap, p.every = 0, 0
	for look := 1; look <= 3; look++ {
		ev := uint64(look * sim.WatchEvents)
		p.tick(sim.Status{Events: ev, Now: engine.Time(ev-1) * engine.Microsecond, Done: look, Total: 4})
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
	if newProgress(&buf, true, 0, "steps") != nil {
		t.Error("-quiet still reports")
	}
}

// The time left is the wall time since the first flow scaled by the work still to go: set-up
// before the first flow does not count, and before it there is no estimate.
func TestProgressEstimate(t *testing.T) {
	p := newProgress(&bytes.Buffer{}, false, 0, "steps")
	t0 := p.began
	at := func(done float64) sim.Status { return sim.Status{Total: 1, FlowsDone: done, Flows: 110, Started: true} }
	if got := p.left(t0.Add(3*time.Second), sim.Status{Total: 1, Flows: 110}); got != "?" {
		t.Errorf("before the first flow: %q left, want ?", got)
	}
	// The first flows start 3 s in (set-up), with 10 flows' worth done at the first look.
	p.last = t0.Add(3 * time.Second)
	p.tick(at(10))
	if !p.anchored {
		t.Fatal("no anchor at the first look with flows")
	}
	p.anchorAt = t0.Add(3 * time.Second) // the look's own clock reading, made exact
	// 5 s later 60 are done: 50 in 5 s, so the 50 to go take 5 s (not 6 s × 50/60).
	if got := p.left(t0.Add(8*time.Second), at(60)); got != "5s" {
		t.Errorf("%q left, want 5s", got)
	}
	// More work than counted: unknown rather than negative.
	if got := p.left(t0.Add(9*time.Second), at(120)); got != "?" {
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
