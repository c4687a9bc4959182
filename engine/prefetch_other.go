//go:build !amd64 && !arm64

package engine

import "unsafe"

// Prefetch asks the processor to load the cache line that holds address p; on this
// architecture it does nothing (the amd64 and arm64 builds have the instruction).
func Prefetch(p unsafe.Pointer) {}

// PrefetchSpan is Prefetch for every cache line of the n bytes from p.
func PrefetchSpan(p unsafe.Pointer, n uintptr) {}

// PrefetchEach is Prefetch for element i of the table at base whose elements are size bytes,
// for each i in idx.
func PrefetchEach(base unsafe.Pointer, size uintptr, idx []int32) {}
