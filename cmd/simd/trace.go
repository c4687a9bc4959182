package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"go.uber.org/zap"

	"simd/engine"
	"simd/workloads/chakra"
	"simd/workloads/sim"
)

// Chakra execution traces: -w PREFIX.%d.et, or ASTRA-sim's bare prefix when PREFIX.0.et
// exists, runs the trace through workloads/sim (RunTrace, RunTraceAnalytical).

// isTrace says whether -w names a Chakra trace.
func isTrace(o *options) bool { return o.workload != "" && chakra.IsPattern(o.workload) }

// traceInputs reads the trace and settles the cluster: -g fixes the rank count (else the files
// found), and the default fabric is built for it when no topology is given.
func traceInputs(o *options, log *zap.Logger) (sim.TraceInputs, error) {
	var in sim.TraceInputs
	deps, err := chakra.ParseDeps(o.chakraDeps)
	if err != nil {
		return in, badInputf("-chakra-deps: %v", err)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"-roofline-tflops", o.rooflineTFLOPS}, {"-roofline-gbps", o.rooflineGBps}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return in, badInputf("%s %g: expected a finite number, 0 or more", f.name, f.v)
		}
	}
	copt := chakra.Options{CommGroups: o.commGroups, Deps: deps}
	if o.set["g"] {
		copt.Ranks = o.gpus.v
	}
	tr, err := chakra.Load(o.workload, copt)
	if err != nil {
		return in, badInputf("-w: %v", err)
	}
	if in.Conf, err = sim.ReadConf(o.conf, "-c", log); err != nil {
		return in, err
	}
	req := clusterRequest(o)
	if req.GPUs == nil && o.topology == "" {
		n := tr.Ranks()
		req.GPUs = &n
	}
	if in.Cluster, err = req.Resolve(nil, log); err != nil {
		return in, err
	}
	in.Trace, in.ConfPath, in.Log = tr, o.conf, log
	in.Exec = chakra.ExecOptions{PeakTFLOPS: o.rooflineTFLOPS, MemGBps: o.rooflineGBps}
	return in, nil
}

// runTrace runs a Chakra trace in the mode -mode asks for and writes summary.json and
// ranks.csv (and in the event mode the files SimAI.conf asks for, as a workload run does).
func runTrace(ctx context.Context, o *options, log *zap.Logger, stdout, stderr io.Writer) error {
	in, err := traceInputs(o, log)
	if err != nil {
		return err
	}
	s := &session{o: o, log: log, stdout: stdout, stderr: stderr, conf: in.Conf, cl: in.Cluster}
	fs := s.eventFiles()
	if o.mode == "analytical" {
		fs = sim.NewFiles(fs.Dir(), fs.Prefix(), false, &in.Conf, o.conf)
		fs.Log = log
	}
	if err := fs.Check(); err != nil {
		return err
	}
	defer fs.Abort()
	tl := newTimeline(o.trace, o.traceAllRanks, "mode", o.mode, "workload", o.workload, "topology", in.Cluster.Fabric)
	if tl != nil {
		in.Observer = tl.TraceRanks("trace", in.Trace.Ranks())
	}
	var res *sim.TraceResult
	var files []string
	switch o.mode {
	case "analytical":
		if res, err = sim.RunTraceAnalytical(in); err != nil {
			return err
		}
	case "event":
		if !o.set["algo-policy"] {
			// A trace records collectives that NCCL ran: NCCL's tuning picks their algorithm and
			// channels (SimCCL's rule is SimAI's, for SimAI's workloads).
			o.algoPolicy = "nccl"
		}
		opt, err := eventOptions(o)
		if err != nil {
			return err
		}
		att := fs.Attachments()
		if tl != nil {
			att = tl.AttachLinks(att)
		}
		prog := newProgress(stderr, o.quiet, o.progressEvery, "nodes")
		att.Watch = prog.watch()
		rctx, cancel := o.limits.runContext(ctx)
		defer cancel()
		res, err = sim.RunTrace(rctx, in, opt, att)
		prog.finish()
		if err != nil {
			return err
		}
		if files, err = fs.Commit(); err != nil {
			return err
		}
	default:
		return badInputf("-mode %q: a Chakra trace runs in the analytical or event mode", o.mode)
	}
	if tl != nil {
		if err := tl.Finish(o.trace, res.Note); err != nil {
			return err
		}
		files = append(files, o.trace)
	}
	written, err := fs.WriteTrace(res, sim.SummaryHeader{Mode: res.Mode, Workload: o.workload, Topology: in.Cluster.Fabric, GPUs: in.Trace.Ranks()})
	if err != nil {
		return err
	}
	files = append(files, written...)
	slow := res.Slowest()
	f3 := func(t engine.Time) string { return strconv.FormatFloat(t.Microseconds(), 'f', 3, 64) }
	fmt.Fprintf(stdout, "simd %s: Chakra trace %s, %d ranks, %d nodes\n", res.Mode, o.workload, in.Trace.Ranks(), in.Trace.Nodes())
	fmt.Fprintf(stdout, "  cluster: %d GPUs, %d per server on %s\n", in.Cluster.GPUs, in.Cluster.GPUsPerServer, in.Cluster.Fabric)
	end := "finished"
	if res.Stopped != nil {
		end = "up to the stop"
	}
	fmt.Fprintf(stdout, "  last rank %s: rank %d at %s us = compute %s + exposed comm %s\n", end, slow.Rank, f3(slow.Finish), f3(slow.Compute), f3(slow.Exposed))
	if res.Sim != nil {
		fmt.Fprintf(stdout, "  simulated %d collectives and sends, %d flows, %d events in %.2f s\n", len(res.Collectives), res.Sim.Flows(), res.Events, res.Wall.Seconds())
	} else {
		fmt.Fprintf(stdout, "  priced %d collectives and sends in %.2f s\n", len(res.Collectives), res.Wall.Seconds())
	}
	for _, p := range files {
		fmt.Fprintf(stdout, "results: %s\n", p)
	}
	if res.Stopped != nil {
		fmt.Fprintf(stdout, "  incomplete: %s\n", res.Note)
		return stopped(res.Stopped, res.End, "the outputs hold what was computed and are marked incomplete")
	}
	return nil
}
