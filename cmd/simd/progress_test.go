package main

import (
	"bytes"
	"strings"
	"testing"

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
