package process

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// LimitMemory sets the runtime's soft limit until Restore, and leaves it alone under a
// GOMEMLIMIT of the environment or for an unknown (0) limit.
func TestLimitMemory(t *testing.T) {
	_, envSet := os.LookupEnv("GOMEMLIMIT")
	before := debug.SetMemoryLimit(-1)
	for _, tc := range []struct {
		name  string
		limit int64
		want  int64
	}{
		{"a budget", 3 << 30, 3 << 30},
		{"unknown", 0, before},
		{"negative", -1, before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := LimitMemory(tc.limit)
			want := tc.want
			if envSet {
				want = before
			}
			if got := debug.SetMemoryLimit(-1); got != want {
				t.Errorf("limit under LimitMemory(%d) = %d, want %d", tc.limit, got, want)
			}
			m.Restore()
			m.Restore() // twice is harmless
			if got := debug.SetMemoryLimit(-1); got != before {
				t.Errorf("limit after Restore = %d, want %d", got, before)
			}
		})
	}
}

// HeldBack reads the runtime's metric of the limiter's last cycle: a metric of another name or
// kind would read 0 for ever and HeldBack would never say anything. (The limiter itself takes
// seconds of collections back to back to engage, too long for a unit test.)
func TestLimiterMetric(t *testing.T) {
	for _, d := range metrics.All() {
		if d.Name == limiterMetric {
			if d.Kind != metrics.KindUint64 || d.Cumulative {
				t.Fatalf("%s: kind %v, cumulative %v; want a uint64 gauge", d.Name, d.Kind, d.Cumulative)
			}
			return
		}
	}
	t.Fatalf("the runtime has no metric %s", limiterMetric)
}
