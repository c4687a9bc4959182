package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simd/configs/atomicfile"
	"simd/workloads/moe"
	"simd/workloads/sim"
)

// simd moe run prices a token-routing workload (written by simd moe gen) under DeepEP or FAST
// with the reference closed forms (-model seed) or from the plans' own transfers (-model
// exact), prints the summary and, with -o, writes OUT/metrics.json. The plans, the estimates and
// the summary's text and JSON live in package workloads/moe, the event mode's run in
// sim.ExecuteMoE; this file is only their command line.

type moeRunOptions struct {
	plan, model, dir, out string
	stages                bool
	mode, topology, conf  string
	seed                  uint64
	completion            string
	pacing, ecnMarking    string
	firstWindow           string
	chunks                int
	threads               int
	trace                 string
	limits
}

func moeRunFlagSet(o *moeRunOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("simd moe run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.plan, "plan", "", "dispatch schedule `PLAN`: deepep or fast (required)")
	fs.StringVar(&o.model, "model", "seed", "estimate `MODEL`: seed (the reference closed forms of docs/moe-estimates.md) or exact (the plan's transfers, stage by stage)")
	fs.StringVar(&o.dir, "w", "", "workload folder `DIR` written by simd moe gen (required)")
	fs.StringVar(&o.out, "o", "", "also write OUT/metrics.json to the folder `OUT`, created if needed")
	fs.BoolVar(&o.stages, "stages", false, "with -plan fast: print each layer's Birkhoff stages")
	fs.StringVar(&o.mode, "mode", "estimate", "`MODE`: estimate (the closed forms of -model) or event (every plan as a flow DAG on the fabric of -n)")
	fs.StringVar(&o.topology, "n", "", "SimAI topology file `TOPO`: the estimates take the NVLink and network bandwidth per GPU from it (without it: the workload's config.json), the event mode runs on it (without it: a Spectrum-X fabric of the workload's GPUs, 8 per server, 400 Gb/s NICs)")
	fs.StringVar(&o.conf, "c", "", "event mode: `SimAI.conf` (congestion control, packet size; default: the shipped one)")
	fs.Uint64Var(&o.seed, "seed", 1, "event mode: seed `N` of the congestion-control model's random choices")
	fs.StringVar(&o.completion, "completion", "ack", "event mode: when a transfer is done, `RULE` ack (SimAI's: the sender has the ACK of its last packet) or arrival (its last byte reaches the receiver)")
	fs.StringVar(&o.firstWindow, "first-window", "burst", "event mode: how a windowed flow starts, `RULE` burst (SimAI's: its first window at its rate, then nothing until its first ACK) or cap (at most a window per round trip from the start)")
	fs.StringVar(&o.pacing, "pacing", "packet", "event mode: when a DCQCN rate change takes effect, `RULE` packet (SimAI's: after the gap of the packet sent at the old rate) or rate (at once)")
	fs.StringVar(&o.ecnMarking, "ecn-marking", "dequeue", "event mode: which packets a congested port marks, `RULE` dequeue (SimAI's: those it sends) or enqueue (those arriving)")
	fs.IntVar(&o.threads, "threads", 0, "event mode: `N` = 2 formats and writes fct.txt on a second core, 1 keeps everything on one (0: 2 when Go may use two cores)")
	fs.Uint64Var(&o.maxEvents, "max-events", 0, "event mode: stop after `N` engine events, writing the finished layers' metrics and fct.txt marked incomplete (exit 3; SIGINT or SIGTERM: 130 or 143)")
	fs.DurationVar(&o.maxWall, "max-wall", 0, "event mode: stop after this much wall-clock time (`DURATION`, e.g. 90s), as -max-events")
	fs.IntVar(&o.chunks, "chunks", 1, "event mode, -plan deepep: stream every transfer in `N` pieces, each forward piece waiting only for the matching copy piece (1: whole transfers)")
	fs.StringVar(&o.trace, "trace", "", "event mode: also write the run's timeline to `FILE`, a Chrome trace (JSON) for ui.perfetto.dev or chrome://tracing: each layer's dispatch and its flows by kind, and link utilisation counters")
	return fs
}

var moeRunForms = []string{
	"simd moe run -plan deepep|fast [-model seed|exact] -w DIR [-n TOPO] [-o OUT] [-stages]",
	"simd moe run -plan deepep|fast -mode event [-n TOPO] [-c SimAI.conf] -w DIR [-o OUT]",
}

const moeRunAbout = `simd moe run prices the dispatch of every MoE layer of a workload under DeepEP or FAST and
prints the summary: total latency, average layer latency, inter-node traffic and algorithmic
bandwidth (GB = KB / 1024 / 1024). docs/moe-estimates.md says how the two models differ. The
estimates take the NVLink and network bandwidths from the topology of -n when it is given, else
from the workload's config.json, and say which. With -mode event every layer's plan runs as a
flow DAG on the fabric, one layer after the other, and the layer times are the simulated ones;
-o OUT then also writes OUT/fct.txt.`

func runMoERun(args []string, stdout, stderr io.Writer) int {
	var o moeRunOptions
	fs := moeRunFlagSet(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(stdout, moeRunForms, moeRunAbout, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "simd moe run: %v (simd moe run -h lists the flags)\n", err)
		return exitBadInput
	}
	return exitStatus("simd moe run", o.run(fs, stdout), stderr)
}

func (o *moeRunOptions) run(fs *flag.FlagSet, w io.Writer) error {
	if fs.NArg() > 0 {
		return badInputf("unexpected argument %q: every value follows its flag", fs.Arg(0))
	}
	if o.plan == "" {
		return badInputf("-plan: required: deepep or fast")
	}
	kind, err := moe.ParseKind(o.plan)
	if err != nil {
		return badInputf("-plan %v", err)
	}
	model, err := moe.ParseModel(o.model)
	if err != nil {
		return badInputf("-model %v", err)
	}
	if o.stages && kind != moe.FAST {
		return badInputf("-stages: only -plan fast has stages")
	}
	if o.trace != "" && o.mode != "event" {
		return badInputf("-trace: only with -mode event (the estimates simulate no timeline)")
	}
	if strings.TrimSpace(o.dir) == "" {
		return badInputf("-w: required: the workload folder written by simd moe gen")
	}
	if o.out != "" {
		if info, err := os.Stat(o.out); err == nil && !info.IsDir() {
			return badInputf("-o %s: not a folder", o.out)
		}
	}
	cfg, iters, err := moe.ReadDir(o.dir)
	if err != nil {
		return badInputf("-w %s: %v", o.dir, err)
	}
	var m moe.Metrics
	var incomplete string // a stopped event run's note
	var stop error
	switch o.mode {
	case "estimate":
		in := sim.MoEInputs{Config: &cfg, Iterations: iters, Kind: kind, TopologyName: o.topology}
		if o.topology != "" {
			if in.Topology, err = sim.MoETopology(o.topology, &cfg); err != nil {
				return err
			}
		}
		if m, err = sim.EstimateMoE(w, in, o.dir, model, o.stages); err != nil {
			return err
		}
	case "event":
		if o.chunks < 1 {
			return badInputf("-chunks %d: want at least 1", o.chunks)
		}
		if o.maxWall < 0 {
			return badInputf("-max-wall %v: expected a duration of 0 (no limit) or more", o.maxWall)
		}
		if o.threads < 0 {
			return badInputf("-threads %d: want 1 or more (0: as many as Go may use, up to 2)", o.threads)
		}
		if o.stages {
			return badInputf("-stages: only with -mode estimate")
		}
		if err := sim.CheckTimeline(o.trace, false); err != nil {
			return err
		}
		ctx, release := signalContext(context.Background())
		st, err := sim.ExecuteMoE(ctx, sim.MoERequest{Config: &cfg, Iterations: iters, Kind: kind, Workload: o.dir, Topology: o.topology,
			Conf: o.conf, Completion: o.completion, Pacing: o.pacing, ECNMarking: o.ecnMarking, FirstWindow: o.firstWindow, Chunks: o.chunks, Threads: o.threads, Seed: o.seed,
			MaxEvents: o.maxEvents, MaxWall: o.maxWall, Out: o.out, Timeline: o.trace})
		release()
		if err != nil {
			return err
		}
		if err := st.WriteText(w, kind); err != nil {
			return err
		}
		m, incomplete = st.Metrics, st.Note
		stop = sim.Stopped(st.Stopped, st.At, "metrics.json and fct.txt hold the layers that finished and are marked incomplete")
	default:
		return badInputf("-mode %q: expected estimate or event", o.mode)
	}
	if o.out != "" {
		err := atomicfile.Write(filepath.Join(o.out, "metrics.json"), func(f *os.File) error { return m.WriteJSON(f, incomplete) })
		if err != nil {
			return err
		}
	}
	return stop
}
