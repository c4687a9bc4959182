//go:build amd64 || arm64

package engine

import "unsafe"

// Prefetch asks the processor to load the cache line that holds address p into its caches, and
// returns at once (amd64's PREFETCHT0, arm64's PRFM PLDL1KEEP, in prefetch_*.s: Go has no
// intrinsic for it). Any address will do: a prefetch never faults.
//
//go:noescape
func Prefetch(p unsafe.Pointer)

// PrefetchSpan is Prefetch for every cache line of the n bytes from p (a record of several
// lines, in one call).
//
//go:noescape
func PrefetchSpan(p unsafe.Pointer, n uintptr)

// PrefetchEach is Prefetch for element i of the table at base whose elements are size bytes,
// for each i in idx (a path's links), in one call.
//
//go:noescape
func PrefetchEach(base unsafe.Pointer, size uintptr, idx []int32)
