package sim

import (
	"testing"
	"time"
)

// A look measures the flows' worth of work done again only once a hundred times the last
// measurement's cost has passed since it began, and repeats the last value, with the time it
// was measured, before that.
func TestFlowsDoneMeasuresAtBoundedCost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	measures := 0
	f := newFlowsDone(func() float64 {
		measures++
		now = now.Add(2 * time.Millisecond) // a measurement takes 2 ms of wall time
		return float64(measures)
	})
	f.clock = func() time.Time { return now }
	ms := time.Millisecond
	steps := []struct {
		at       time.Duration // when the look begins, after t0
		want     float64
		measured time.Duration // when the value was measured, after t0
		measures int
	}{
		{0, 1, 0, 1},       // the first look measures
		{50 * ms, 1, 0, 1}, // within 100 × 2 ms of the last start: repeated
		{199 * ms, 1, 0, 1},
		{200 * ms, 2, 200 * ms, 2}, // 100 × 2 ms after it began: measured again
		{250 * ms, 2, 200 * ms, 2},
		{400 * ms, 3, 400 * ms, 3},
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		if got, at := f.value(); got != s.want || measures != s.measures || at != t0.Add(s.measured) {
			t.Errorf("look at %v: %v measured at %v after %d measurements, want %v after %d", s.at, got, at.Sub(t0), measures, s.want, s.measures)
		}
	}
}
