package sim

import (
	"testing"
	"time"
)

// A look measures the flows' worth of work done again only once a hundred times the last
// measurement's cost has passed since it began, and counts it (the starts and ends of now)
// before that.
func TestFlowsDoneMeasuresAtBoundedCost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	measures, counts := 0, 0
	f := newFlowsDone(func() float64 {
		measures++
		now = now.Add(2 * time.Millisecond) // a measurement takes 2 ms of wall time
		return float64(10 * measures)
	}, func() float64 {
		counts++
		return float64(10*measures + counts)
	})
	f.clock = func() time.Time { return now }
	ms := time.Millisecond
	steps := []struct {
		at       time.Duration // when the look begins, after t0
		want     float64
		measures int
	}{
		{0, 10, 1},       // the first look measures
		{50 * ms, 11, 1}, // within 100 × 2 ms of the last start: counted
		{199 * ms, 12, 1},
		{200 * ms, 20, 2}, // 100 × 2 ms after it began: measured again
		{250 * ms, 23, 2},
		{400 * ms, 30, 3},
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		if got := f.value(); got != s.want || measures != s.measures {
			t.Errorf("look at %v: %v after %d measurements, want %v after %d", s.at, got, measures, s.want, s.measures)
		}
	}
}
