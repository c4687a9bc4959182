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

// A negative -progress-every is refused, naming the flag.
func TestProgressEveryNegative(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "-progress-every", "-1s", "-o", "neg"); code != exitBadInput || !strings.Contains(errOut, "-progress-every -1s: expected a positive duration") {
		t.Errorf("-progress-every -1s: exit %d: %s", code, errOut)
	}
}

// The time left is printed to the millisecond under a second and to a tenth of a second under
// a minute: a run with a quarter of a second to go says so, not 0s or 1s; past a minute, whole
// seconds.
func TestProgressLeftRounding(t *testing.T) {
	p := newProgress(&bytes.Buffer{}, false, 0, "steps")
	t0 := p.began
	for _, c := range []struct {
		name       string
		at         time.Duration // when asked, after the run began
		done, todo int           // plan steps
		want       string
	}{
		{"a quarter of a second", time.Second, 4, 1, "250ms"},
		{"a second and a quarter", 5 * time.Second, 4, 1, "1.3s"},
		{"under a minute", 10 * time.Second, 3, 5, "16.7s"},
		{"past a minute", 100 * time.Second, 3, 5, "2m47s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := p.left(t0.Add(c.at), sim.Status{Done: c.done, Total: c.done + c.todo}); got != c.want {
				t.Errorf("%d of %d steps after %v: %s left, want %s", c.done, c.done+c.todo, c.at, got, c.want)
			}
		})
	}
}
