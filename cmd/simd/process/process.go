// Package process is what the simd process arranges with the Go runtime and the operating
// system around its work: when the garbage collector first runs (DeferFirstCollection), how
// much memory it may let the heap take (LimitMemory), huge pages for the heap
// (AdviseHugePages), the CPU and heap profiles of a run (StartProfiles), and the signals that
// stop a run cleanly (SignalContext).
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

// Profiles are a run's CPU profile and heap profile (StartProfiles).
type Profiles struct {
	cpu      *os.File
	mem      string
	heapDone bool
}

// StartProfiles starts a CPU profile written to cpu, unless cpu is "", and returns the run's
// profiles, whose heap profile goes to mem, unless mem is "" (Heap, Stop). The error is the CPU
// profile's.
func StartProfiles(cpu, mem string) (*Profiles, error) {
	p := &Profiles{mem: mem}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		p.cpu = f
	}
	return p, nil
}

// Heap writes the heap profile now, after a collection, so that it shows what is live: called
// as a simulation ends, while its network is still held, it shows what the run's model holds.
// At the end of the process the model's tables have been let go, and the profile showed only
// what outlives them. Each call replaces the profile of the call before; without a file it
// does nothing.
func (p *Profiles) Heap() error {
	if p.mem == "" {
		return nil
	}
	p.heapDone = true
	h, err := os.Create(p.mem)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(h); err != nil {
		h.Close()
		return err
	}
	return h.Close()
}

// Stop ends the CPU profile and writes the heap profile if Heap has not: a command that runs no
// simulation still leaves one. The error is the heap profile's.
func (p *Profiles) Stop() error {
	if p.cpu != nil {
		pprof.StopCPUProfile()
		p.cpu.Close()
		p.cpu = nil
	}
	if p.heapDone {
		return nil
	}
	return p.Heap()
}
