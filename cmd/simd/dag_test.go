package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The example: a ring all-reduce of 64 MiB on 16 GPUs, 8 per server, is 8 channels ×
// 16 ranks × 30 steps of 512 KiB; its critical path is the 2(n−1) = 30 steps; over 400G NICs
// each step is bound by one 512 KiB network hop per GPU: 30 × 512 KiB / 50 GB/s = 314.573 µs.
func TestDAGRingExample(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, "dag", "-op", "allreduce", "-algo", "ring", "-n", "16", "-gps", "8", "-size", "64MiB", "-check", "-o", "flows.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"flows: 3840, bytes sent: 2013265920, critical path: 30 flows",
		"closed form: 314.573 us",
		"check: ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	csv := strings.Split(readFile(t, filepath.Join(dir, "flows.csv")), "\n")
	if csv[0] != "id,src,dst,bytes,parents,channel,chunk,kind" || len(csv) != 3840+2 {
		t.Fatalf("CSV header %q, %d lines", csv[0], len(csv))
	}
	if csv[1] != "0,0,1,524288,,0,0,RING" {
		t.Errorf("first flow %q", csv[1])
	}
	// A step-1 flow has exactly one parent.
	for _, line := range csv[1 : len(csv)-1] {
		f := strings.Split(line, ",")
		if f[6] == "1" && (f[4] == "" || strings.Contains(f[4], ";")) {
			t.Fatalf("step-1 flow %q should have one parent", line)
		}
	}
}

// On a full mesh of 8 GPUs (seed 004's MI300X case) Multi-Ring all-gather moves the same bytes
// as the ring over 7 links at once: 7× the ring's algbw in the closed form.
func TestDAGMultiRingOnAMesh(t *testing.T) {
	_, ring, _ := runCLI(t, t.TempDir(), "dag", "-op", "allgather", "-algo", "ring", "-n", "8", "-size", "1GiB", "-fabric", "mesh")
	_, mr, _ := runCLI(t, t.TempDir(), "dag", "-op", "allgather", "-algo", "multiring", "-n", "8", "-size", "1GiB", "-fabric", "mesh", "-check")
	if !strings.Contains(ring, "algbw 411.43 GB/s") || !strings.Contains(mr, "algbw 2880.00 GB/s") || !strings.Contains(mr, "check: ok") {
		t.Errorf("ring:\n%s\nmultiring:\n%s", ring, mr)
	}
}

// -algo pxn is SimCCL's PXN by default: the 64 MiB all-reduce on 16 GPUs, 8 per server, relays
// every step (8 channels × 30 steps × (16 + 2) flows, as SimAI's packet-level run has) and sends
// some finished chunks to ranks that hold them; -pxn-variant nccl does not, and has 272 flows
// fewer.
func TestDAGPXN(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, "dag", "-op", "allreduce", "-algo", "pxn", "-n", "16", "-gps", "8", "-size", "64MiB", "-check", "-o", "flows.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "flows: 4320,") || !strings.Contains(out, "check: ok") || !strings.Contains(out, "already hold them") {
		t.Errorf("SimCCL's PXN:\n%s", out)
	}
	// Channel 0, step 0: rank 7 (server 0's exit) sends to rank 0 (its entry) over NVLink, and
	// rank 0 sends that on to rank 8 waiting for it; the ids follow SimCCL's order.
	if want := "\n7,7,0,524288,,0,0,RING\n8,0,8,524288,7,0,0,PXN_INIT\n"; !strings.Contains(readFile(t, filepath.Join(dir, "flows.csv")), want) {
		t.Errorf("flows.csv lacks %q", want)
	}
	code, out, errOut = runCLI(t, t.TempDir(), "dag", "-op", "allreduce", "-algo", "pxn", "-pxn-variant", "nccl", "-n", "16", "-gps", "8", "-size", "64MiB", "-check")
	if code != 0 || !strings.Contains(out, "flows: 4048,") || !strings.Contains(out, "sent twice") {
		t.Errorf("NCCL-like PXN: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ = runCLI(t, t.TempDir(), "dag", "-op", "allgather", "-algo", "auto", "-pxn", "-group", "DP", "-n", "16")
	if !strings.Contains(out, "selected ring (SimCCL's ring: SimCCL v1.6 never runs PXN for all-gather)") {
		t.Errorf("all-gather with PXN:\n%s", out)
	}
}

// -algo auto: SimAI's rule gives NVLS for a TP all-reduce on 8 H100s only when NVLS is enabled.
func TestDAGAuto(t *testing.T) {
	_, out, _ := runCLI(t, t.TempDir(), "dag", "-algo", "auto", "-nvls", "-check")
	if !strings.Contains(out, "selected nvls") || !strings.Contains(out, "check: ok") {
		t.Errorf("with -nvls:\n%s", out)
	}
	_, out, _ = runCLI(t, t.TempDir(), "dag", "-algo", "auto", "-nvls=false")
	if !strings.Contains(out, "selected ring") {
		t.Errorf("without -nvls:\n%s", out)
	}
	_, out, _ = runCLI(t, t.TempDir(), "dag", "-algo", "auto", "-group", "DP", "-force", "DP=rhd", "-n", "12")
	if !strings.Contains(out, "selected rhd (forced for DP groups)") {
		t.Errorf("forced:\n%s", out)
	}
}

// -chunk-bytes: SimCCL's integer chunks by default (1000 B over 8 ranks × 8 channels: 64 × 15 B
// a step, 40 B never sent, said so under -check; 4 B: no flow at all), every byte with exact.
func TestDAGChunkBytes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-size", "1000"}, []string{"flows: 896, bytes sent: 13440,", "note: SimCCL's integer chunks leave 40 of the 1000 bytes unsent", "check: ok"}},
		{[]string{"-size", "1000", "-chunk-bytes", "exact"}, []string{"flows: 896, bytes sent: 14000,", "check: ok"}},
		{[]string{"-size", "4"}, []string{"flows: 0, bytes sent: 0,", "leave 4 of the 4 bytes unsent", "check: ok"}},
		{[]string{"-op", "alltoall", "-size", "1001", "-n", "4"}, []string{"leave 1 of the 1001 bytes each rank sends unsent"}},
	} {
		code, out, errOut := runCLI(t, t.TempDir(), append([]string{"dag", "-n", "8", "-check"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
		if c.args[len(c.args)-1] == "exact" && strings.Contains(out, "unsent") {
			t.Errorf("%v: a note of unsent bytes:\n%s", c.args, out)
		}
	}
}

func TestDAGErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-op", "broadcast"},
		{"-algo", "bruck"},
		{"-algo", "tree", "-op", "allgather"},
		{"-size", "lots"},
		{"-n", "0"},
		{"-algo", "nvls", "-n", "16"},
		{"-fabric", "torus"},
		{"-algo", "auto", "-group", "XP"},
		{"-algo", "auto", "-policy", "fastest"},
		{"-algo", "auto", "-force", "TP=bruck"},
		{"-algo", "pxn", "-pxn-variant", "msccl"},
		{"-chunk-bytes", "floor"},
		{"-bogus"},
		{"extra"},                // a positional argument: simd dag takes none
		{"-n", "4", "allgather"}, // the op without its flag
	} {
		code, _, errOut := runCLI(t, t.TempDir(), append([]string{"dag"}, args...)...)
		if code != 2 || !strings.HasPrefix(errOut, "simd dag: ") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}
