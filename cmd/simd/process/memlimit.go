package process

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// MemoryLimit is the Go runtime's soft memory limit while a run is under it (LimitMemory).
//
// Without a limit the collector lets the heap grow to twice what was live after its last
// collection (GOGC 100), so a run whose flows are all in flight at once peaks well above what
// it holds: the all-to-all of 256 MiB over 1,024 GPUs under DCQCN holds about 1 GB and peaks at
// 1,437 MiB, at 1,232 MiB under a limit of 1,220 MiB in the same wall time (docs/performance.md,
// "The collector's room"). A limit below what a run holds cannot be kept: the collector then
// runs back to back, up to the half of the CPU the runtime allows it, and the run ends slower;
// HeldBack says so afterwards.
type MemoryLimit struct {
	before int64
	set    bool
	limit  int64
	// limiter is the collection cycle at which the runtime last held the collector back, as
	// LimitMemory found it.
	limiter uint64
}

// LimitMemory makes limit bytes the runtime's soft memory limit (runtime/debug.SetMemoryLimit)
// until Restore. A GOMEMLIMIT set in the environment is left alone, as is a limit of 0 or less
// (unknown).
func LimitMemory(limit int64) *MemoryLimit {
	m := &MemoryLimit{limiter: limiterCycle()}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && limit > 0 {
		m.before, m.set, m.limit = debug.SetMemoryLimit(limit), true, limit
	}
	return m
}

// Bytes is the limit LimitMemory set, 0 if it set none.
func (m *MemoryLimit) Bytes() int64 { return m.limit }

// Restore gives the runtime back the limit it had before LimitMemory.
func (m *MemoryLimit) Restore() {
	if m.set {
		debug.SetMemoryLimit(m.before)
		m.set = false
	}
}

// HeldBack tells whether the runtime has held the collector back since LimitMemory: the
// limiter of the collector's CPU share (at most half of it) was enabled, which only a memory
// limit that the live heap presses against brings about.
func (m *MemoryLimit) HeldBack() bool { return limiterCycle() != m.limiter }

const limiterMetric = "/gc/limiter/last-enabled:gc-cycle"

// limiterCycle is the collection cycle at which the runtime last enabled the limiter of the
// collector's CPU share, 0 if never.
func limiterCycle() uint64 {
	s := []metrics.Sample{{Name: limiterMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
