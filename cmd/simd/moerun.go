package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"simd/cmd/simd/flagtable"
	"simd/cmd/simd/process"
	"simd/workloads/sim"
)

// simd moe run prices a token-routing workload (written by simd moe gen) under DeepEP or FAST
// with the reference closed forms (-model seed) or from the plans' own transfers (-model
// exact), prints the summary and, with -o, writes OUT/metrics.json. The plans, the estimates and
// the summary's text and JSON live in package workloads/moe, the run from the flags' values in
// sim.ExecuteMoERun; this file is only their command line.

type moeRunOptions struct {
	sim.MoERunRequest
	logLevel               string
	cpuProfile, memProfile string
}

func moeRunFlagSet(o *moeRunOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("simd moe run", flag.ContinueOnError)
	fs.StringVar(&o.Plan, "plan", "", "dispatch schedule `PLAN`: deepep or fast (required)")
	fs.StringVar(&o.Model, "model", "seed", "estimate `MODEL`: seed (the reference closed forms of docs/moe-estimates.md) or exact (the plan's transfers, stage by stage)")
	fs.StringVar(&o.Workload, "w", "", "workload folder `DIR` written by simd moe gen (required)")
	fs.StringVar(&o.Out, "o", "", "also write OUT/metrics.json to the folder `OUT`, created if needed")
	fs.BoolVar(&o.Stages, "stages", false, "with -plan fast: print each layer's Birkhoff stages")
	fs.StringVar(&o.Mode, "mode", "estimate", "`MODE`: estimate (the closed forms of -model) or event (every plan as a flow DAG on the fabric of -n)")
	fs.StringVar(&o.Topology, "n", "", "SimAI topology file `TOPO`: the estimates take the NVLink and network bandwidth per GPU from it (without it: the workload's config.json), the event mode runs on it (without it: a Spectrum-X fabric of the workload's GPUs, 8 per server, 400 Gb/s NICs)")
	fs.StringVar(&o.Conf, "c", "", "event mode: `SimAI.conf` (congestion control, packet size; default: the shipped one)")
	fs.Uint64Var(&o.Seed, "seed", 1, "event mode: seed `N` of the congestion-control model's random choices")
	for _, s := range protocolFlags(fs, &o.ProtocolRules) {
		s.Define(strings.TrimLeft(s.Names[0], "-"), "event mode, `"+s.Arg+"`: "+s.Usage)
	}
	fs.IntVar(&o.Threads, "threads", 0, "event mode: `N` = 2 formats and writes fct.txt on a second core, 1 keeps everything on one (0: 2 when Go may use two cores)")
	fs.Uint64Var(&o.MaxEvents, "max-events", 0, "event mode: stop after `N` engine events, writing the finished layers' metrics and fct.txt marked incomplete (exit 3; SIGINT or SIGTERM: 130 or 143)")
	fs.DurationVar(&o.MaxWall, "max-wall", 0, "event mode: stop after this much wall-clock time (`DURATION`, e.g. 90s), as -max-events")
	fs.IntVar(&o.Chunks, "chunks", 1, "event mode, -plan deepep: stream every transfer in `N` pieces, each forward piece waiting only for the matching copy piece (1: whole transfers)")
	fs.StringVar(&o.logLevel, "log-level", "info", "event mode: `LEVEL` of the log lines on stderr (SimAI.conf's warnings, congestion control's counters): debug, info, warn or error")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof reads it)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile at the end of the run to `FILE`")
	fs.StringVar(&o.Timeline, "trace", "", "event mode: also write the run's timeline to `FILE`, a Chrome trace (JSON) for ui.perfetto.dev or chrome://tracing: each layer's dispatch and its flows by kind, and link utilisation counters")
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
	err := parseArgs(fs, args, " (simd moe run -h lists the flags)", ": every value follows its flag")
	if err == nil {
		if o.Log, err = newLogger(o.logLevel, stderr); err != nil {
			err = sim.BadInputf("-log-level %v", err)
		}
	}
	if err == nil {
		var prof *process.Profiles
		if prof, err = process.StartProfiles(o.cpuProfile, o.memProfile); err != nil {
			err = fmt.Errorf("-cpuprofile: %w", err)
		} else {
			o.Interrupt = func() (context.Context, func()) { return process.SignalContext(context.Background()) }
			lim := limitMemory(0) // the memory available: moe run has no -max-memory
			err = sim.ExecuteMoERun(stdout, o.MoERunRequest)
			lim.Restore()
			if perr := prof.Stop(); perr != nil && err == nil {
				err = fmt.Errorf("-memprofile: %w", perr)
			}
		}
	}
	return commandStatus("simd moe run", err, func(w io.Writer) { flagtable.Help(w, moeRunForms, moeRunAbout, fs) }, stdout, stderr)
}
