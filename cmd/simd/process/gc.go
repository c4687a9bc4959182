package process

import (
	"os"
	"runtime"
	"runtime/debug"
)

// firstCollectionPercent is the GOGC in force until the first collection: the heap may grow to
// firstCollectionPercent/100 times the runtime's 4 MiB minimum (16 MiB) before it.
const firstCollectionPercent = 400

// DeferFirstCollection lets the heap reach 16 MiB before the first garbage collection, then
// gives the collector back its usual setting. A run's first megabytes are its inputs and the
// network's tables, kept to its end: the runtime's first collection at a 4 MiB heap frees
// nothing of them, and on a small run (most of SimAI's reference cases: 16 to 64 GPUs) it
// costs a tenth of the process's time, mostly in page faults of the collector's own
// structures and its stop-the-world. From the first collection on the heap is collected as
// before, so a large run's peak memory does not move; a small run's grows by at most 12 MiB.
// A GOGC set in the environment is left alone.
func DeferFirstCollection() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	usual := debug.SetGCPercent(firstCollectionPercent)
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) { debug.SetGCPercent(usual) })
}
