package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"simd/ccl/algo"
	"simd/engine"
	"simd/workloads/moe"
	"simd/workloads/sim"
)

// The event mode runs the iteration through workloads/sim; this file turns the flags into the
// run's options, attaches the output files and progress report, and prints.

// eventOptions are the event run's options from the flags and the environment.
func eventOptions(o *options) (sim.EventOptions, error) {
	opt := sim.EventOptions{Chunks: o.chunks, Seed: o.seed, MaxEvents: o.maxEvents, MaxMemory: o.maxMemory, DispatchModel: o.moeModel}
	force, err := algo.ParseForce(o.forceAlgo)
	if err != nil {
		return opt, badInputf("-force-algo: %v", err)
	}
	opt.Algorithms = algo.Options{Policy: algo.Policy(o.algoPolicy), NVLS: o.nvls, PXN: o.pxn, PXNVariant: o.pxnVariant, Force: force}
	opt.SendLatency, opt.QPsPerConnection = -1, o.qpsPerConn // -1: SimAI's table, unless AS_SEND_LAT
	if o.sendLatNs >= 0 {
		opt.SendLatency = engine.Time(o.sendLatNs) * engine.Nanosecond
	}
	if opt.AtArrival, err = completionAtArrival(o.completion); err != nil {
		return opt, err
	}
	if err := opt.SetFromEnv(os.LookupEnv); err != nil {
		return opt, err
	}
	switch o.epDispatch {
	case "nccl":
	case "deepep", "fast":
		opt.EPDispatch, _ = moe.ParseKind(o.epDispatch)
	default:
		return opt, badInputf("-ep-dispatch %q: expected nccl, deepep or fast", o.epDispatch)
	}
	return opt, nil
}

// completionAtArrival reads -completion: SimAI's "ack" (the default) or "arrival".
func completionAtArrival(c string) (bool, error) {
	switch c {
	case "ack", "":
		return false, nil
	case "arrival":
		return true, nil
	}
	return false, badInputf("-completion %q: expected ack or arrival", c)
}

// eventFiles places the event mode's files (see -o in simd -h): with -o every file goes into the
// output folder under its standard name and SimAI.conf's *_OUTPUT_FILE and *_MON_FILE keys only
// switch outputs on or off; without -o the paths a user's SimAI.conf gives are used as they
// are, and the rest goes to results/. With the shipped SimAI.conf, whose paths are SimAI's
// /etc/astra-sim ones, everything goes to the output folder.
func (s *session) eventFiles() *sim.Files {
	o := s.o
	prefix := ""
	if o.set["r"] {
		prefix = o.result
	}
	fs := sim.NewFiles(filepath.Join(o.outDir, o.resultFolder), prefix, !o.set["o"] && o.conf != "", &s.conf, o.conf)
	fs.Concurrent = secondCore(o.threads)
	fs.Log = s.log
	fs.Links = o.plot || o.report // the link plot and the report read links.csv and link_classes.csv
	return fs
}

// secondCore says whether the FCT log is formatted and written on a second core (-threads N;
// 0: when Go may use two).
func secondCore(threads int) bool {
	return threads >= 2 || threads == 0 && runtime.GOMAXPROCS(0) >= 2
}

// simulate runs the event mode (compare: the comparison) with the files and the progress report
// attached; it returns the files it committed. The run's own result is in r or c.
func (s *session) simulate(ctx context.Context, fs *sim.Files, compare bool) (r *sim.Result, c *sim.Comparison, files []string, err error) {
	opt, err := eventOptions(s.o)
	if err != nil {
		return nil, nil, nil, err
	}
	att := fs.Attachments()
	defer fs.Abort()
	mode := "event"
	if compare {
		mode = "compare"
	}
	tl := newTimeline(s.o.trace, s.o.traceAllRanks, "mode", mode, "workload", s.wname, "topology", s.cl.Fabric)
	if tl != nil {
		att = tl.Attach(att, []sim.Job{{Name: s.wname, Sim: s.sim}})
	}
	prog := newProgress(s.stderr, s.o.quiet, s.o.progressEvery, "steps")
	if prog != nil {
		// The analytical mode prices the same iteration in milliseconds; its total is the
		// progress report's yardstick for the time left when the flows are not counted.
		if rep, err := s.sim.Analytical(); err == nil && rep.Summary.Total > 0 {
			prog.eta.Expect = engine.Time(rep.Summary.Total * float64(engine.Microsecond))
		}
	}
	att.Watch = prog.watch()
	ctx, cancel := s.o.limits.runContext(ctx)
	defer cancel()
	if compare {
		c, err = s.sim.Compare(ctx, opt, att)
		if c != nil {
			r = c.Event
		}
	} else {
		r, err = s.sim.Event(ctx, opt, att)
	}
	prog.finish()
	if err != nil {
		return nil, nil, nil, err
	}
	if files, err = fs.Commit(); err != nil {
		return nil, nil, nil, err
	}
	if tl != nil {
		tl.Collectives(0, r.Collectives, r.End)
		if err := tl.Finish(s.o.trace, r.Note); err != nil {
			return nil, nil, nil, err
		}
		files = append(files, s.o.trace)
	}
	return r, c, files, nil
}

func runEvent(ctx context.Context, s *session) error {
	fs := s.eventFiles()
	if err := fs.Check(); err != nil {
		return err
	}
	r, _, files, err := s.simulate(ctx, fs, false)
	if err != nil {
		return err
	}
	rep := r.Report
	chart := ""
	if s.o.visual != 0 {
		chart = s.o.lang
	}
	written, err := fs.WriteEvent(r, s.summaryHeader("event"), chart)
	if err != nil {
		return err
	}
	files = append(files, written...)
	sm := rep.Summary
	f0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	fmt.Fprintf(s.stdout, "simd event: %s, %d layers, %s\n", s.wname, len(s.w.Layers), s.w.Header.Policy)
	fmt.Fprintf(s.stdout, "  cluster: %d GPUs, %d per server, TP %d PP %d EP %d DP %d on %s\n",
		s.layout.GPUs, s.layout.GPUsPerServer, s.layout.TP, s.layout.PP, s.layout.EP, s.layout.DP(), s.cl.Fabric)
	iteration := "iteration"
	if r.Stopped != nil {
		iteration = "iteration up to the stop"
	}
	fmt.Fprintf(s.stdout, "  %s: %s us = compute %s + exposed comm %s + bubble %s + PP comm %d\n",
		iteration, f0(sm.Total), f0(sm.Compute), f0(sm.Exposed), f0(sm.Bubble), sm.PPComm)
	g := sm.WholeGroupsUs() // DP, DP_EP, TP, EP, adding up to the exposed comm printed above
	fmt.Fprintf(s.stdout, "  exposed comm by group (us): TP %s, DP %s, DP_EP %s, EP %s\n", f0(g[2]), f0(g[0]), f0(g[1]), f0(g[3]))
	fmt.Fprintf(s.stdout, "  simulated %d flows, %d events in %.2f s\n", r.Sim.Flows(), r.Events, r.Wall.Seconds())
	for _, p := range files {
		fmt.Fprintf(s.stdout, "results: %s\n", p)
	}
	if r.Stopped != nil {
		fmt.Fprintf(s.stdout, "  incomplete: %s\n", rep.Incomplete)
	}
	sim.LogCounters(s.log, r.Sim, r.Events)
	if r.Stopped != nil {
		return stopped(r.Stopped, r.End, "the outputs hold what was computed and are marked incomplete")
	}
	return s.afterRun(fs.Dir(), fs.Prefix())
}

// summaryHeader is what summary.json says of the session's run in mode.
func (s *session) summaryHeader(mode string) sim.SummaryHeader {
	return sim.SummaryHeader{Mode: mode, Workload: s.wname, Topology: s.cl.Fabric, GPUs: s.layout.GPUs}
}
