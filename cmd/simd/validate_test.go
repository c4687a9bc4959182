package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Structural validation before simulating: each refused input exits 2 with one error line
// naming the file, line and field where there is one, and leaves the output folder empty.
func TestStructuralValidation(t *testing.T) {
	dir := t.TempDir()
	const link = " 400Gbps 0.0005ms 0\n"
	// Four GPUs behind switch 4: the well-formed base of the topology cases.
	writeFile(t, dir, "good_topo", "5 4 0 1 4 H100\n4\n0 4"+link+"1 4"+link+"2 4"+link+"3 4"+link)
	writeFile(t, dir, "isolated_topo", "5 4 0 1 3 H100\n4\n0 4"+link+"1 4"+link+"2 4"+link)
	writeFile(t, dir, "dup_topo", "5 4 0 1 5 H100\n4\n0 4"+link+"1 4"+link+"2 4"+link+"3 4"+link+"4 1"+link)
	writeFile(t, dir, "self_topo", "5 4 0 1 4 H100\n4\n0 4"+link+"1 4"+link+"2 2"+link+"3 4"+link)
	writeFile(t, dir, "zero_topo", "5 4 0 1 4 H100\n4\n0 4"+link+"1 4 0Gbps 0.0005ms 0\n2 4"+link+"3 4"+link)
	const rec = "l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\n"
	writeFile(t, dir, "micro.txt", "MICRO\n1\n"+rec)
	writeFile(t, dir, "tp8.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n"+rec)
	writeFile(t, dir, "pp3.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 3 vpp: 1 ga: 1 all_gpus: 8\n1\n"+rec)
	writeFile(t, dir, "ep3.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 3 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n"+rec)
	const big = "4503599627370496" // 2^52 ns; three of them pass int64 picoseconds
	writeFile(t, dir, "long.txt", "HYBRID_TRANSFORMER\n3\n"+strings.Repeat("l -1 "+big+" NONE 0 1 NONE 0 1 NONE 0 1\n", 3))
	writeFile(t, dir, "neg.txt", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE -4096 1\n")
	writeFile(t, dir, "self_flow.txt", "2\n0 1 3 100 4096 0\n2 2 3 100 4096 0\n")
	writeFile(t, dir, "far_flow.txt", "1\n0 9 3 100 4096 0\n")
	writeFile(t, dir, "switch_flow.txt", "1\n4 0 3 100 4096 0\n")
	writeFile(t, dir, "neg_flow.txt", "1\n0 1 3 100 -4096 0\n")

	cases := []struct {
		name string
		args []string
		want string // the whole error line
	}{
		{"GPU reaching no other GPU", []string{"-w", "micro.txt", "-n", "isolated_topo"},
			"simd: isolated_topo: GPU 3 reaches no other GPU: no link has it as an end"},
		{"duplicate link", []string{"-w", "micro.txt", "-n", "dup_topo"},
			"simd: dup_topo:7: link 5: joins nodes 4 and 1, as line 4 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{"link to itself", []string{"-w", "micro.txt", "-n", "self_topo"},
			"simd: self_topo:5: link 3 dst: the link goes from node 2 to itself"},
		{"link of 0 bandwidth", []string{"-w", "micro.txt", "-n", "zero_topo"},
			`simd: zero_topo:4: link 2 rate: "0Gbps" is not a positive rate`},
		{"flows on a topology with an isolated GPU", []string{"-flows", "far_flow.txt", "-n", "isolated_topo"},
			"simd: isolated_topo: GPU 3 reaches no other GPU: no link has it as an end"},
		{"TP not dividing the GPUs", []string{"-w", "tp8.txt", "-g", "12", "-g_p_s", "4"},
			"simd: tp8.txt:1: model_parallel_NPU_group: TP 8 does not divide the 12 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"TP·PP not dividing the topology's GPUs", []string{"-w", "pp3.txt", "-n", "good_topo"},
			"simd: pp3.txt:1: pp: TP 2 × PP 3 = 6 does not divide the 4 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"EP not dividing DP", []string{"-w", "ep3.txt", "-g", "8", "-mode", "analytical"},
			"simd: ep3.txt:1: ep: EP 3 does not divide DP 4 (= 8 GPUs / (TP 2 × PP 1)): every expert-parallel group is EP members of a data-parallel group"},
		{"workload on more GPUs than the topology", []string{"-w", "micro.txt", "-g", "8", "-n", "good_topo"},
			"simd: the workload runs on 8 GPUs but the topology (good_topo) has 4"},
		{"iteration times past the clock", []string{"-w", "long.txt", "-g", "8"},
			`simd: long.txt:5: fwd compute time: 4503599627370496 ns: the compute and update times of one iteration add up to more than 9223372036854775807 ps (about 106 days, simd's clock range) at layer "l"`},
		{"negative size", []string{"-w", "neg.txt", "-g", "8"},
			`simd: neg.txt:3: wg comm size: -4096 is negative (layer "l")`},
		{"flow to itself", []string{"-flows", "self_flow.txt", "-n", "good_topo"},
			"simd: self_flow.txt:3: dst: flow 2 goes from node 2 to itself"},
		{"flow beyond the topology", []string{"-flows", "far_flow.txt", "-n", "good_topo"},
			"simd: far_flow.txt:2: dst: node 9 is beyond the 5 nodes of good_topo (ids 0 to 4)"},
		{"flow from a switch", []string{"-flows", "switch_flow.txt", "-n", "good_topo"},
			"simd: switch_flow.txt:2: src: node 4 is a network switch of good_topo: a flow goes between GPUs or NVSwitches"},
		{"negative flow size", []string{"-flows", "neg_flow.txt", "-n", "good_topo"},
			`simd: neg_flow.txt:2: size: "-4096" is not a byte count from 1 to 4503599627370496`},
		{"unknown first-window rule", []string{"-w", "micro.txt", "-n", "good_topo", "-first-window", "slow"},
			`simd: -first-window "slow": expected burst or cap`},
		{"unknown pacing rule", []string{"-w", "micro.txt", "-n", "good_topo", "-pacing", "burst"},
			`simd: -pacing "burst": expected packet or rate`},
		{"unknown forwarding rule", []string{"-w", "micro.txt", "-n", "good_topo", "-forwarding", "enqueue"},
			`simd: -forwarding "enqueue": expected dequeue or injection`},
		{"unknown ACK wait rule", []string{"-w", "micro.txt", "-n", "good_topo", "-ack-wait", "random"},
			`simd: -ack-wait "random": expected locked, aligned or mean`},
		{"unknown NVLink model", []string{"-w", "micro.txt", "-n", "good_topo", "-nvlink-model", "cells"},
			`simd: -nvlink-model "cells": expected auto, packets or fluid`},
		{"unknown packet-time rule", []string{"-w", "micro.txt", "-n", "good_topo", "-packet-time", "ps"},
			`simd: -packet-time "ps": expected ns or exact`},
		{"unknown ranks rule", []string{"-w", "micro.txt", "-n", "good_topo", "-ranks", "sync"},
			`simd: -ranks "sync": expected own, own-stages or lockstep`},
		{"unknown chunk-order rule", []string{"-w", "micro.txt", "-n", "good_topo", "-chunk-order", "step"},
			`simd: -chunk-order "step": expected channel or arrival`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runCLI(t, dir, append(c.args, "-o", out)...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if last := lines[len(lines)-1]; last != c.want {
				t.Errorf("error line\n got %s\nwant %s", last, c.want)
			}
			if files := listFiles(t, out); len(files) != 0 {
				t.Errorf("files left behind: %v", files)
			}
		})
	}
	// The base topology and workloads are fine: the checks refuse only what they name.
	for _, args := range [][]string{
		{"-w", "micro.txt", "-n", "good_topo"},
		{"-w", "pp3.txt", "-g", "6", "-g_p_s", "6"},
		{"-flows", writeFile(t, dir, "flow.txt", "1\n0 3 3 100 4096 0\n"), "-n", "good_topo"},
	} {
		if code, _, errOut := runCLI(t, dir, append(args, "-o", t.TempDir())...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// The token-routing folder's config.json and sweep specs are refused with exit 2 when their
// products pass int64 or the run limit, before anything is written.
func TestStructuralValidationMoEAndSweep(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, w, "config.json", `{
  "nodes": 4, "gpus_per_node": 8, "experts_per_gpu": 2,
  "seq_len": 1073741824, "batch": 1, "top_k": 64,
  "zipf": 1.2, "layers": 1, "iters": 1,
  "hidden": 16777216, "dtype_bytes": 64,
  "bw_inter_gbps": 50, "bw_intra_gbps": 900, "seed": 1
}
`)
	out := filepath.Join(dir, "out")
	code, _, errOut := runCLI(t, dir, "moe", "run", "-plan", "deepep", "-w", "w", "-o", out)
	want := "simd moe run: -w w: w/config.json:5: hidden: 16777216: 1073741824 tokens × top-64 × 16777216 elements × 64 bytes: a layer's dispatch is more than 9223372036854775807 bytes\n"
	if code != exitBadInput || errOut != want {
		t.Errorf("moe run: exit %d, stderr\n%s\nwant\n%s", code, errOut, want)
	}
	spec := "workloads: [" + strings.Repeat("example:microAllReduce.txt, ", 1024) + "example:microAllReduce.txt]\n" +
		"topologies: [" + strings.Repeat("{file: t}, ", 1023) + "{file: t}]\n"
	writeFile(t, dir, "spec.yaml", spec)
	code, _, errOut = runCLI(t, dir, "sweep", "spec.yaml", "-o", out)
	if want := "spec.yaml:1: 1025 workloads × 1024 topologies × 1 overrides × 1 modes is more than the 1048576 runs a sweep may have"; code != exitBadInput || !strings.Contains(errOut, want) {
		t.Errorf("sweep: exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused input created the output folder")
	}
}
