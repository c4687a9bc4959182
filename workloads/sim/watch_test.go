package sim

import (
	"testing"
	"time"
)

// A look measures the flows' worth of work done again only once a hundred times the last
// measurement's cost has passed since it began, and repeats the last value before that.
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
	steps := []struct {
		at       time.Duration // when the look begins, after t0
		want     float64
		measures int
	}{
		{0, 1, 1},                     // the first look measures
		{time.Millisecond * 50, 1, 1}, // within 100 × 2 ms of the last start: repeated
		{time.Millisecond * 199, 1, 1},
		{time.Millisecond * 200, 2, 2}, // 100 × 2 ms after it began: measured again
		{time.Millisecond * 250, 2, 2},
		{time.Millisecond * 400, 3, 3},
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		if got := f.value(); got != s.want || measures != s.measures {
			t.Errorf("look at %v: %v after %d measurements, want %v after %d", s.at, got, measures, s.want, s.measures)
		}
	}
}
