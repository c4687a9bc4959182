package process

import "time"

// Huge pages for the heap. On Linux every 4 KiB page of memory a process writes for the first
// time costs a page fault, and on the virtual machines simd is measured on a fault costs
// 3–10 µs: a large all-to-all's million flow records, link lists and queues (1.3 GB) take
// 140 k–320 k of them, and a small reference run some 1,200–1,400 (bench/startup).
// Transparent huge pages map 2 MiB at a fault, but under the kernel's "madvise" setting (the
// default of Debian and Ubuntu) only where the program asked for them, and Go's runtime never
// asks for its heap. So the simd process asks, as its heap grows: a watcher on its own
// goroutine advises the heap's address range for huge pages (madvise MADV_HUGEPAGE) each
// time the runtime's mapped memory has grown, looking every millisecond while it grows and
// less often, up to every 50 ms, while it does not. Memory the runtime maps between two looks
// and writes at once keeps its small pages; what it writes later (a table reserved for a
// collective's flows, filled as they start) gets huge ones. It is advice: the outputs do not
// change, only the time and, by the huge pages' rounding, a few MiB of peak memory
// (docs/performance.md, "Huge pages for the heap").
//
// The watcher starts 10 ms into the process and advises nothing below 32 MiB of mapped memory:
// advising a small run's heap from the start cost it more than it saved (bench/startup, the
// build before against that one: `simd -version` 22–24 against 24–27 ms, the shared 8-GPU
// all-to-all 39–40 against 40–43 ms), and SimAI's reference cases never map that much.
//
// The watcher does nothing where advice has no effect (the setting "always" or "never", or a
// system without the setting), and GODEBUG=disablethp=1, the runtime's own switch against huge
// pages for its heap, turns it off too.

const (
	// hugeStart is when the watcher starts, from the call of AdviseHugePages.
	hugeStart = 10 * time.Millisecond
	// hugeFrom is the least mapped memory the watcher advises.
	hugeFrom = 32 << 20
	// hugeLookMin and hugeLookMax bound the time between two looks at the runtime's mapped
	// memory: the least while it grows, doubling up to the most while it does not.
	hugeLookMin = time.Millisecond
	hugeLookMax = 50 * time.Millisecond
)
