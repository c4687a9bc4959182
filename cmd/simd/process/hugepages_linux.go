package process

import (
	"os"
	"runtime/metrics"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// thpSetting is the file that holds the kernel's transparent huge page setting, the chosen
// one in brackets: "always [madvise] never".
const thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// arenaBytes is the alignment of the Go heap's arenas on 64-bit Linux (the runtime's
// heapArenaBytes). The heap grows upwards from its first arena.
const arenaBytes = 64 << 20

// AdviseHugePages starts the heap's huge-page watcher hugeStart from now (see hugepages.go)
// and returns the function that stops it, or keeps it from starting.
func AdviseHugePages() (stop func()) {
	done := make(chan struct{})
	t := time.AfterFunc(hugeStart, func() {
		if !adviceHelps() {
			return
		}
		var h heapAdvice
		h.advise()
		h.watch(done)
	})
	return func() {
		t.Stop()
		close(done)
	}
}

// adviceHelps reports whether advice changes anything here: the kernel's setting is
// "madvise" and the runtime's disablethp is not set.
func adviceHelps() bool {
	if strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return false
	}
	b, err := os.ReadFile(thpSetting)
	return err == nil && strings.Contains(string(b), "[madvise]")
}

// heapProbe is an object on the heap, whose arena starts the advised range.
var heapProbe *[64]byte

// heapAdvice is the watcher's state: the lowest address of the heap's range and the runtime's
// mapped memory at the last advice.
type heapAdvice struct {
	lo     uintptr
	mapped uint64
	sample [1]metrics.Sample
}

// watch advises the heap whenever it has grown, until done is closed.
func (h *heapAdvice) watch(done <-chan struct{}) {
	wait := hugeLookMin
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if h.advise() {
			wait = hugeLookMin
		} else {
			wait = min(2*wait, hugeLookMax)
		}
		t.Reset(wait)
	}
}

// advise advises the heap's range for huge pages if the runtime's mapped memory has grown since
// the last call, and reports whether it had. The range runs from the start of the arena that
// holds an object the watcher made at its first call (early, when the heap is a few MiB in its
// first arena) up by all the memory the runtime has mapped and two arenas besides (for the
// heap's own offset into its first arena and the rounding of its growth): it holds the heap as
// it grows upwards, and the parts of it that are not mapped are skipped by the kernel
// (madvise's ENOMEM, ignored).
func (h *heapAdvice) advise() bool {
	if h.sample[0].Name == "" {
		h.sample[0].Name = "/memory/classes/total:bytes"
		heapProbe = new([64]byte) // kept in a global, so that it is on the heap, not the stack
		h.lo = uintptr(unsafe.Pointer(heapProbe)) &^ (arenaBytes - 1)
	}
	metrics.Read(h.sample[:])
	total := h.sample[0].Value.Uint64()
	if total <= h.mapped || total < hugeFrom {
		return false
	}
	h.mapped = total
	// The range is passed as numbers: a Go pointer to the heap's unallocated pages, on this
	// goroutine's stack when the collector scans it, would be taken for a bad pointer.
	syscall.Syscall(syscall.SYS_MADVISE, h.lo, uintptr(total)+2*arenaBytes, syscall.MADV_HUGEPAGE)
	return true
}
