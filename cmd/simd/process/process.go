// Package process is what the simd process arranges with the Go runtime and the operating
// system around its work: when the garbage collector first runs (DeferFirstCollection), huge
// pages for the heap (AdviseHugePages), the CPU and heap profiles of a run (StartProfiles), and
// the signals that stop a run cleanly (SignalContext).
//
// It is its own package because none of it is simd's command line: package main keeps the
// flags that ask for these, the messages and the exit statuses (a run stopped by a signal exits
// with 128 + its number), and calls on this package for the machinery.
package process

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// StartProfiles starts a CPU profile written to cpu, unless cpu is "", and returns the function
// that ends it and writes a heap profile to mem, unless mem is "". The error is the CPU
// profile's.
func StartProfiles(cpu, mem string) (stop func(), err error) {
	var f *os.File
	if cpu != "" {
		f, err = os.Create(cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if mem != "" {
			if h, err := os.Create(mem); err == nil {
				runtime.GC()
				pprof.WriteHeapProfile(h)
				h.Close()
			}
		}
	}, nil
}
