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

// readGCUse reads the runtime's metrics by name: a name the runtime does not have, or of
// another kind, would read 0 for ever and Pressed would never say anything.
func TestGCMetrics(t *testing.T) {
	kinds := map[string]metrics.ValueKind{}
	for _, d := range metrics.All() {
		kinds[d.Name] = d.Kind
	}
	for _, m := range gcMetrics {
		if k, ok := kinds[m.name]; !ok || k != m.kind {
			t.Errorf("metric %s: kind %v (known %v), want %v", m.name, k, ok, m.kind)
		}
	}
	if u := readGCUse(); u.cpu <= 0 || u.goal == 0 {
		t.Errorf("readGCUse() = %+v: no CPU time or heap goal", u)
	}
}

// A run pressed against its limit when the runtime capped the collector, or when the
// collector took a fifth of the CPU time with the heap's goal near the limit; not for a busy
// collector far below the limit (a heap of pointers scanned under GOGC), nor for a goal at
// the limit that cost little (a heap with few pointers collects fast).
func TestPressed(t *testing.T) {
	const limit = 200 << 20
	at := gcUse{gcCPU: 1, cpu: 20, idle: 8, goal: 50 << 20, limiter: 3}
	for _, tc := range []struct {
		name string
		now  gcUse
		want bool
	}{
		{"capped", gcUse{gcCPU: 2, cpu: 40, idle: 18, goal: 60 << 20, limiter: 9}, true},
		{"a fifth, goal at the limit", gcUse{gcCPU: 3, cpu: 40, idle: 18, goal: 190 << 20, limiter: 3}, true},
		{"a fifth, goal far below", gcUse{gcCPU: 5, cpu: 40, idle: 18, goal: 100 << 20, limiter: 3}, false},
		{"goal at the limit, collector cheap", gcUse{gcCPU: 1.5, cpu: 40, idle: 18, goal: 199 << 20, limiter: 3}, false},
		{"no CPU used", at, false},
	} {
		if got := pressed(tc.now.limiter != at.limiter, tc.now.share(at), tc.now.goal, limit); got != tc.want {
			t.Errorf("%s: pressed = %v, want %v (share %.2f)", tc.name, got, tc.want, tc.now.share(at))
		}
	}
}
