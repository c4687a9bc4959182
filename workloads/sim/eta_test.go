package sim

import (
	"testing"
	"time"

	"simd/engine"
)

// The time left is the wall time since the first flow scaled by the work still to go: set-up
// before the first flow does not count, and before it, and while the run is still in the
// simulated instant of its first flows, there is no estimate.
func TestETAFlows(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := NewETA(t0)
	// The simulated time moves on with the work (µs for a flow's worth).
	at := func(done float64) Status {
		return Status{Total: 1, FlowsDone: done, Flows: 110, Started: true, Now: engine.Time(done) * engine.Microsecond}
	}
	if got, ok := e.Left(t0.Add(3*time.Second), Status{Total: 1, Flows: 110}); ok {
		t.Errorf("before the first flow: %v left, want none", got)
	}
	// The first flows start 3 s in (set-up), with 10 flows' worth done at the first look.
	e.Look(t0.Add(3*time.Second), at(10))
	if !e.anchored {
		t.Fatal("no anchor at the first look with flows")
	}
	// Still in the simulated instant of the first flows (an all-to-all starting them): the
	// rate of its starts says nothing of the rest.
	first := at(15)
	first.Now = at(10).Now
	if got, ok := e.Left(t0.Add(4*time.Second), first); ok {
		t.Errorf("in the first flows' instant: %v left, want none yet", got)
	}
	// 5 s later 60 are done: 50 in 5 s, so the 50 to go take 5 s (not 6 s × 50/60).
	if got, ok := e.Left(t0.Add(8*time.Second), at(60)); !ok || got != 5*time.Second {
		t.Errorf("%v left (%v), want 5s", got, ok)
	}
	// More work than counted: unknown rather than negative.
	if got, ok := e.Left(t0.Add(9*time.Second), at(120)); ok {
		t.Errorf("past the count: %v left, want none", got)
	}
}

// Without a flow count the simulated time still to go to Expect measures, else the plan steps.
func TestETAWithoutFlows(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := NewETA(t0)
	e.Expect = 4 * engine.Millisecond
	if got, ok := e.Left(t0.Add(2*time.Second), Status{Now: engine.Millisecond}); !ok || got != 6*time.Second {
		t.Errorf("a quarter of Expect in 2 s: %v left (%v), want 6s", got, ok)
	}
	if got, ok := e.Left(t0.Add(2*time.Second), Status{Now: 5 * engine.Millisecond}); ok {
		t.Errorf("past Expect: %v left, want none", got)
	}
	e.Expect = 0
	if got, ok := e.Left(t0.Add(3*time.Second), Status{Done: 1, Total: 4}); !ok || got != 9*time.Second {
		t.Errorf("1 of 4 steps in 3 s: %v left (%v), want 9s", got, ok)
	}
}

// The time left is the mean of the work to go at the recent half's rate since the first flow and
// at the whole run's: a run whose cost per flow grows is judged partly by what it does now, a run
// that leaves a dear phase partly by its cheaper start; a run that did nothing in the recent half
// falls back to its whole rate.
func TestETAMeanOfRecentAndWhole(t *testing.T) {
	t0 := time.Unix(0, 0)
	for _, c := range []struct {
		name string
		rate func(s float64) float64 // flows done s seconds after the anchor
		at   float64                 // the look asked, s after the anchor
		want time.Duration
	}{
		// 10 flows/s for 10 s, then 5/s: at 20 s, 150 done, 150 to go: 30 s at the recent
		// 5/s, 20 s at the whole run's 7.5/s.
		{"slowing", func(s float64) float64 { return 10*min(s, 10) + 5*max(s-10, 0) }, 20, 25 * time.Second},
		// 5 flows/s, then 10/s: at 20 s, 150 done, 150 to go: 15 s at the recent 10/s, 20 s
		// at the whole run's 7.5/s.
		{"speeding up", func(s float64) float64 { return 5*min(s, 10) + 10*max(s-10, 0) }, 20, 17500 * time.Millisecond},
		// Steady 7.5 flows/s: the recent half is the whole run's rate.
		{"steady", func(s float64) float64 { return 7.5 * s }, 20, 20 * time.Second},
		// 15 flows/s for 10 s, then nothing: at 20 s the whole run's 7.5/s.
		{"stalled", func(s float64) float64 { return 15 * min(s, 10) }, 20, 20 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := NewETA(t0)
			anchor := t0.Add(3 * time.Second) // set-up before the first flow
			st := func(s float64) Status {
				return Status{Total: 1, FlowsDone: c.rate(s), Flows: 300, Started: true, Now: engine.Time(s*1e6) + 1}
			}
			for s := 0.0; s <= c.at; s += 0.25 {
				e.Look(anchor.Add(time.Duration(s*float64(time.Second))), st(s))
			}
			now := anchor.Add(time.Duration(c.at * float64(time.Second)))
			if got, ok := e.Left(now, st(c.at)); !ok || got != c.want {
				t.Errorf("%v left (%v), want %v", got, ok, c.want)
			}
			if n := len(e.samples); n > 40 {
				t.Errorf("%d samples kept, want a few dozen at most", n)
			}
		})
	}
}

// Between two changes of the work done the estimate made at the last change counts down: a run
// whose bytes are measured every 2 s (flowsDone) reads the same work done at every look in
// between, which is no reason to think it slowed down.
func TestETACountsDownBetweenChanges(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := NewETA(t0)
	// 10 flows/s of 300, the work done read in steps of 2 s.
	st := func(s float64) Status {
		done := 20 * float64(int(s/2))
		return Status{Total: 1, FlowsDone: done, Flows: 300, Started: true, Now: engine.Time(s*1e6) + 1}
	}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var prev time.Duration
	for i := 0; i <= 139; i++ {
		s := float64(i) / 10
		e.Look(at(s), st(s))
		if s < 12 {
			continue
		}
		got, ok := e.Left(at(s), st(s))
		// At 12 s, 120 done at 10/s: 18 s to go, then a second less every second.
		want := time.Duration((18 - (s - 12)) * float64(time.Second)).Round(time.Millisecond)
		if !ok || got != want {
			t.Fatalf("%.1f s: %v left (%v), want %v", s, got, ok, want)
		}
		if s > 12 && got >= prev {
			t.Fatalf("%.1f s: %v left after %v: not counting down", s, got, prev)
		}
		prev = got
	}
}
