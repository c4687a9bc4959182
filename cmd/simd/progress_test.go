package main

import (
	"bytes"
	"strings"
	"testing"

	"simd/engine"
)

// The progress report prints plain lines with the simulated time, the work done and an
// estimate of the time left when its writer is not a terminal; -quiet prints nothing.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	s := engine.NewScheduler()
	steps := 0
	p := newProgress(&buf, false, s, "steps", func() (int, int) { return steps, 4 })
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
		if !strings.HasPrefix(l, "simd: simulated ") || !strings.Contains(l, "/4 steps") || !strings.Contains(l, "left") {
			t.Errorf("line %q", l)
		}
	}
	if !strings.Contains(lines[0], "4.095 ms") {
		t.Errorf("first report at %q, want the clock after 4,096 events", lines[0])
	}
	if newProgress(&buf, true, s, "steps", nil) != nil {
		t.Error("-quiet still reports")
	}
}
