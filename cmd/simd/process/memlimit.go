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
// collects back to back, on the second core where there is one, and the run goes on; Pressed
// says so afterwards.
type MemoryLimit struct {
	before int64
	set    bool
	limit  int64
	// The runtime's figures as LimitMemory found them (gcUse).
	at gcUse
}

// LimitMemory makes limit bytes the runtime's soft memory limit (runtime/debug.SetMemoryLimit)
// until Restore. A GOMEMLIMIT set in the environment is left alone, as is a limit of 0 or less
// (unknown).
func LimitMemory(limit int64) *MemoryLimit {
	m := &MemoryLimit{at: readGCUse()}
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

// Pressed tells whether the run pressed against the limit since LimitMemory, and the share of
// the CPU time it used that went to the collector then.
func (m *MemoryLimit) Pressed() (bool, float64) {
	if !m.set {
		return false, 0
	}
	now := readGCUse()
	share := now.share(m.at)
	return pressed(now.limiter != m.at.limiter, share, now.goal, m.limit), share
}

// gcUse is what the runtime says of its collector at one moment (runtime/metrics).
type gcUse struct {
	gcCPU, cpu, idle float64 // cumulative CPU seconds: the collector's, all, unused
	goal             uint64  // the heap's goal, bytes
	limiter          uint64  // the collection at which the collector's CPU was last capped
}

// The runtime's metrics gcUse reads, in its fields' order, with the kind each is read as.
var gcMetrics = [...]struct {
	name string
	kind metrics.ValueKind
}{
	{"/cpu/classes/gc/total:cpu-seconds", metrics.KindFloat64},
	{"/cpu/classes/total:cpu-seconds", metrics.KindFloat64},
	{"/cpu/classes/idle:cpu-seconds", metrics.KindFloat64},
	{"/gc/heap/goal:bytes", metrics.KindUint64},
	{"/gc/limiter/last-enabled:gc-cycle", metrics.KindUint64},
}

func readGCUse() gcUse {
	var s [len(gcMetrics)]metrics.Sample
	for i, m := range gcMetrics {
		s[i].Name = m.name
	}
	metrics.Read(s[:])
	f := func(i int) float64 {
		if s[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return s[i].Value.Float64()
	}
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return gcUse{gcCPU: f(0), cpu: f(1), idle: f(2), goal: u(3), limiter: u(4)}
}

// share is the collector's share of the CPU time used between u0 and u.
func (u gcUse) share(u0 gcUse) float64 {
	used := (u.cpu - u.idle) - (u0.cpu - u0.idle)
	if used <= 0 {
		return 0
	}
	return (u.gcCPU - u0.gcCPU) / used
}

// pressed: the run pressed against limit: the runtime capped its collector's CPU (capped; at
// half of it: on two cores a whole core collecting does not reach that), or the collector took
// a fifth or more of the CPU time used (share) while the heap's goal is within a tenth of the
// limit, where the limit, not GOGC, sets it: the 9,216-GPU example under DCQCN, holding about
// 190 MB under a limit of 192 MiB, collected 2,442 times in 240 s, 26% of its CPU time, at a
// goal of 196 MB.
func pressed(capped bool, share float64, goal uint64, limit int64) bool {
	return capped || share >= 0.2 && float64(goal) >= 0.9*float64(limit)
}
