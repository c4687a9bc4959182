package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"simd/cmd/simd/flagtable"
	"simd/workloads/moe"
)

// simd moe works on token-routing workloads: which experts, and so which GPUs, each token of
// each MoE layer goes to. simd moe gen writes one: config.json and a requests file per
// iteration. The defaults, the generator and the file formats are those of the MoE dispatch
// simulator whose estimates simd moe run reproduces (docs/moe-estimates.md); they live in
// package workloads/moe, and this file is only their command line.

// moeForms are simd moe's usage forms.
var moeForms = []string{"simd moe gen [flags]", "simd moe run -plan deepep|fast -w DIR [flags]"}

const moeAbout = `simd moe makes token-routing (MoE dispatch) workloads — which experts, and so which GPUs,
each token of each layer goes to — and prices their dispatch under DeepEP or FAST, with closed
forms or by simulating every transfer on a fabric.

Commands:
  gen   write a workload: DIR/config.json (every parameter) and DIR/iter_<i>_requests.csv per
        iteration, one line per token of each layer: layer,token,src_gpu,experts,gpus (the
        token's top-k experts and the GPU of each, separated by ';'; expert e is on GPU e / E)
  run   price every layer of a workload under a dispatch plan: -plan deepep|fast, -model seed
        (the reference closed forms of docs/moe-estimates.md) or exact (the plan's own
        transfers, stage by stage), or -mode event (a simulation on a fabric); prints the
        latency, traffic and bandwidth summary, -o OUT also writes OUT/metrics.json
        (simd moe run -h lists its flags)`

// moeGenFlagSet defines simd moe gen's flags on cfg and out, which hold the defaults.
func moeGenFlagSet(cfg *moe.Config, out *string) *flag.FlagSet {
	fs := flag.NewFlagSet("simd moe gen", flag.ContinueOnError)
	fs.Var(flagtable.Decimal(&cfg.Nodes), "nodes", "`N` nodes (servers)")
	fs.Var(flagtable.Decimal(&cfg.GPUsPerNode), "gps", "`G` GPUs per node; GPU g is on node g / G")
	fs.Var(flagtable.Decimal(&cfg.ExpertsPerGPU), "experts-per-gpu", "`E` experts per GPU; expert e is on GPU e / E")
	fs.Var(flagtable.Decimal(&cfg.SeqLen), "seq-len", "`L` tokens per sequence")
	fs.Var(flagtable.Decimal(&cfg.Batch), "batch", "`B` sequences per batch; each layer routes L × B tokens, spread evenly over the GPUs (the remainder one each to GPUs drawn at random)")
	fs.Var(flagtable.Decimal(&cfg.TopK), "top-k", "`K` distinct experts per token, at most the number of experts")
	fs.Var(flagtable.Finite(&cfg.Zipf), "zipf", "Zipf exponent `S` ≥ 0 of expert popularity: the expert of rank k is drawn with probability ∝ (k+1)^-S, experts ranked by a permutation drawn from -seed; 0 is uniform")
	fs.Var(flagtable.Decimal(&cfg.Layers), "layers", "`Y` MoE layers per iteration")
	fs.Var(flagtable.Decimal(&cfg.Iters), "iters", "`I` iterations, one requests file each")
	fs.Var(flagtable.Decimal(&cfg.Hidden), "hidden", "`H` elements per token (hidden size)")
	fs.Var(flagtable.Decimal(&cfg.DtypeBytes), "dtype-bytes", "`D` bytes per element: 1 FP8, 2 BF16/FP16, 4 FP32 (a token is H × D bytes)")
	fs.Var(flagtable.Finite(&cfg.BWInterGBps), "bw-inter", "network bandwidth per GPU, `GBPS` (GB/s), recorded for simd moe run's estimates (which take the topology's instead when given -n)")
	fs.Var(flagtable.Finite(&cfg.BWIntraGBps), "bw-intra", "NVLink bandwidth per GPU, `GBPS` (GB/s), recorded for simd moe run's estimates (which take the topology's instead when given -n)")
	fs.Var(flagtable.Unsigned(&cfg.Seed), "seed", "random seed `X`: same flags and seed, same files")
	fs.StringVar(out, "o", "workload", "output folder `DIR`, created if needed")
	return fs
}

// moeGenDefaults is a flag set of simd moe gen holding the defaults, for -h.
func moeGenDefaults() *flag.FlagSet {
	cfg, out := moe.DefaultConfig(), ""
	return moeGenFlagSet(&cfg, &out)
}

// runMoE is simd moe: it dispatches to the subcommand.
func runMoE(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		flagtable.WriteUsage(stderr, moeForms...)
		fmt.Fprintln(stderr, "simd moe: expected a command, gen or run (simd moe -h)")
		return exitBadInput
	}
	switch args[0] {
	case "gen":
		return runMoEGen(args[1:], stdout, stderr)
	case "run":
		return runMoERun(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		flagtable.WriteUsage(stdout, moeForms...)
		fmt.Fprintf(stdout, "\n%s\n\nFlags of simd moe gen:\n", moeAbout)
		flagtable.WriteFlags(stdout, moeGenDefaults())
		return exitOK
	}
	fmt.Fprintf(stderr, "simd moe: unknown command %q: expected gen or run (simd moe -h lists them)\n", args[0])
	return exitBadInput
}

// parseMoEGen reads simd moe gen's command line into a valid config and the output folder.
func parseMoEGen(args []string) (moe.Config, string, error) {
	cfg, out := moe.DefaultConfig(), ""
	if err := parseArgs(moeGenFlagSet(&cfg, &out), args, "", ": every value follows its flag"); err != nil {
		return cfg, out, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, out, badInput(err)
	}
	if strings.TrimSpace(out) == "" {
		return cfg, out, badInputf("-o %q: expected a folder", out)
	}
	if info, err := os.Stat(out); err == nil && !info.IsDir() {
		return cfg, out, badInputf("-o %s: not a folder", out)
	}
	return cfg, out, nil
}

func runMoEGen(args []string, stdout, stderr io.Writer) int {
	cfg, out, err := parseMoEGen(args)
	if err == nil {
		err = moe.GenerateDir(out, cfg, stdout)
	}
	return commandStatus("simd moe gen", err, func(w io.Writer) {
		flagtable.Help(w, moeForms[:1], `simd moe gen writes a token-routing workload: DIR/config.json and DIR/iter_<i>_requests.csv
with the header layer,token,src_gpu,experts,gpus. The defaults are those of the reference MoE
dispatch model of docs/moe-estimates.md: 4 nodes of 8 GPUs, 2 experts per GPU, 2048 × 32
tokens, top-2, Zipf 1.2.`, moeGenDefaults())
	}, stdout, stderr)
}
