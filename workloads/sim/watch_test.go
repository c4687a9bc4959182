package sim

import (
	"testing"
	"time"
)

// A look measures the flows' worth of work done again only once a hundred times the last
// measurement's cost has passed since it began, and counts it (the starts and ends of now)
// before that; while the count has stood still since the last measurement (the flows only send,
// which a count does not see), once fifty times the cost has passed.
func TestFlowsDoneMeasuresAtBoundedCost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	measures := 0
	ends := 0.0 // the starts and ends counted since the last measurement
	f := newFlowsDone(func() float64 {
		measures++
		now = now.Add(2 * time.Millisecond) // a measurement takes 2 ms of wall time
		ends = 0
		return float64(10 * measures)
	}, func() float64 {
		return float64(10*measures) + ends
	})
	f.clock = func() time.Time { return now }
	ms := time.Millisecond
	steps := []struct {
		at       time.Duration // when the look begins, after t0
		ends     float64       // the count's starts and ends since the last measurement
		want     float64
		measures int
	}{
		{0, 0, 10, 1},        // the first look measures
		{30 * ms, 1, 11, 1},  // a flow started: counted
		{120 * ms, 2, 12, 1}, // flows end: counted until 100 × 2 ms
		{199 * ms, 3, 13, 1},
		{200 * ms, 3, 20, 2}, // 100 × 2 ms after it began: measured again
		{280 * ms, 0, 20, 2}, // the count stands still, but within 50 × 2 ms
		{300 * ms, 0, 30, 3}, // still, and 50 × 2 ms since the last began: measured
		{310 * ms, 1, 31, 3}, // a flow ended: counted
		{420 * ms, 1, 31, 3}, // still from the look before, not since the measurement: counted
		{500 * ms, 1, 40, 4}, // 100 × 2 ms after 300 ms: measured
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		ends = s.ends
		if got := f.value(); got != s.want || measures != s.measures {
			t.Errorf("look at %v: %v after %d measurements, want %v after %d", s.at, got, measures, s.want, s.measures)
		}
	}
}
