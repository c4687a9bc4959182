package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"simd/workloads/moe"
)

func runMoECLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"moe"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

var moeSmall = []string{"-nodes", "2", "-gps", "4", "-experts-per-gpu", "3", "-seq-len", "50", "-batch", "3",
	"-top-k", "4", "-zipf", "0.9", "-layers", "3", "-iters", "2", "-hidden", "7168", "-dtype-bytes", "2",
	"-bw-inter", "25", "-bw-intra", "450", "-seed", "42"}

// simd moe gen writes config.json with every flag and the iterations the package generates,
// and says what it wrote.
func TestMoEGen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, out, errOut := runMoECLI(append(append([]string{"gen"}, moeSmall...), "-o", dir)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := moe.Config{Nodes: 2, GPUsPerNode: 4, ExpertsPerGPU: 3, SeqLen: 50, Batch: 3, TopK: 4, Zipf: 0.9,
		Layers: 3, Iters: 2, Hidden: 7168, DtypeBytes: 2, BWInterGBps: 25, BWIntraGBps: 450, Seed: 42}
	cfg, iters, err := moe.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg != want {
		t.Errorf("config %+v, want %+v", cfg, want)
	}
	gen, err := moe.Generate(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(iters, gen) {
		t.Error("the files hold other requests than moe.Generate's")
	}
	if files := listFiles(t, dir); !reflect.DeepEqual(files, []string{"config.json", "iter_0_requests.csv", "iter_1_requests.csv"}) {
		t.Errorf("wrote %v", files)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "2 nodes × 4 GPUs, 24 experts (3 per GPU); 3 layers × 150 tokens (50 × 3) per iteration, top-4, Zipf 0.9 (hottest expert ") ||
		lines[1] != "wrote "+filepath.Join(dir, "config.json")+" and "+filepath.Join(dir, "iter_0_requests.csv")+" to iter_1_requests.csv (900 requests)" {
		t.Errorf("stdout:\n%s", out)
	}
	// Same flags, same bytes.
	dir2 := filepath.Join(t.TempDir(), "w")
	if code, _, errOut := runMoECLI(append(append([]string{"gen"}, moeSmall...), "-o", dir2)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range listFiles(t, dir) {
		if readFile(t, filepath.Join(dir, f)) != readFile(t, filepath.Join(dir2, f)) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// The defaults are seed 000's; -o defaults to ./workload.
func TestMoEGenDefaults(t *testing.T) {
	cfg, out, err := parseMoEGen(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := moe.Config{Nodes: 4, GPUsPerNode: 8, ExpertsPerGPU: 2, SeqLen: 2048, Batch: 32, TopK: 2, Zipf: 1.2,
		Layers: 12, Iters: 10, Hidden: 2048, DtypeBytes: 4, BWInterGBps: 50, BWIntraGBps: 900, Seed: 1}
	if cfg != want || out != "workload" {
		t.Errorf("defaults %+v -o %q", cfg, out)
	}
	// Without -o the folder is ./workload.
	dir := t.TempDir()
	code, _, errOut := runCLI(t, dir, "moe", "gen", "-seq-len", "8", "-batch", "1", "-iters", "1", "-layers", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if files := listFiles(t, dir); !reflect.DeepEqual(files, []string{"workload/config.json", "workload/iter_0_requests.csv"}) {
		t.Errorf("wrote %v", files)
	}
}

// Every flag is documented in simd moe -h and simd moe gen -h, with its default.
func TestMoEHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"gen", "-h"}, {"gen", "--help"}} {
		code, out, errOut := runMoECLI(args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		for _, f := range []string{"-nodes N", "-gps G", "-experts-per-gpu E", "-seq-len L", "-batch B", "-top-k K", "-zipf S",
			"-layers Y", "-iters I", "-hidden H", "-dtype-bytes D", "-bw-inter GBPS", "-bw-intra GBPS", "-seed X", "-o DIR",
			"(default: 4)", "(default: 2048)", "(default: 1.2)", "(default: workload)", "(default: 900)"} {
			if !strings.Contains(out, f) {
				t.Errorf("%v: help does not mention %q:\n%s", args, f, out)
			}
		}
	}
}

// Bad flags and values: one line on stderr naming the flag, exit 2, nothing written.
func TestMoEGenBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "0"}, "-nodes 0: expected 1 to"},
		{[]string{"-nodes", "x"}, `invalid value "x" for flag -nodes: expected an integer`},
		{[]string{"-gps", "010x"}, "flag -gps"},
		{[]string{"-experts-per-gpu", "-1"}, "-experts-per-gpu -1: expected 1 to"},
		{[]string{"-seq-len", "0"}, "-seq-len 0"},
		{[]string{"-batch", "0"}, "-batch 0"},
		{[]string{"-top-k", "65"}, "-top-k 65: expected 1 to 64 experts per token"},
		{[]string{"-top-k", "0"}, "-top-k 0"},
		{[]string{"-zipf", "-1"}, "-zipf -1: expected a finite exponent"},
		{[]string{"-zipf", "NaN"}, `invalid value "NaN" for flag -zipf: expected a finite number`},
		{[]string{"-layers", "0"}, "-layers 0"},
		{[]string{"-iters", "0"}, "-iters 0"},
		{[]string{"-hidden", "0"}, "-hidden 0"},
		{[]string{"-dtype-bytes", "0"}, "-dtype-bytes 0"},
		{[]string{"-bw-inter", "0"}, "-bw-inter 0: expected a bandwidth above 0"},
		{[]string{"-bw-intra", "-5"}, "-bw-intra -5"},
		{[]string{"-seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"-nodes"}, "flag needs an argument: -nodes"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-o", ""}, `-o "": expected a folder`},
	}
	for _, c := range cases {
		dir := t.TempDir()
		out := filepath.Join(dir, "w")
		args := append([]string{"gen", "-o", out, "-seq-len", "4", "-batch", "1", "-iters", "1", "-layers", "1"}, c.args...)
		code, stdout, stderr := runMoECLI(args...)
		if code != exitBadInput || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.HasPrefix(stderr, "simd moe gen: ") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, stdout, stderr, c.want)
		}
		if files := listFiles(t, dir); len(files) != 0 {
			t.Errorf("%v: wrote %v", c.args, files)
		}
	}
	// -o naming a file.
	dir := t.TempDir()
	f := writeFile(t, dir, "file", "x")
	if code, _, stderr := runMoECLI("gen", "-o", f, "-seq-len", "4", "-batch", "1"); code != exitBadInput || !strings.Contains(stderr, "not a folder") {
		t.Errorf("-o file: exit %d, %q", code, stderr)
	}
	if readFile(t, f) != "x" {
		t.Error("-o file: the file was changed")
	}
}

// simd moe without a command, or with an unknown one, is a usage error.
func TestMoEUsage(t *testing.T) {
	if code, out, errOut := runMoECLI(); code != exitBadInput || out != "" || !strings.Contains(errOut, "usage: simd moe") {
		t.Errorf("no command: exit %d, %q, %q", code, out, errOut)
	}
	if code, _, errOut := runMoECLI("frob"); code != exitBadInput || errOut != "simd moe: unknown command \"frob\": expected gen or run (simd moe -h lists them)\n" {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
}

// A folder that cannot be created is a failure (exit 1), not bad input.
func TestMoEGenUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write anywhere")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	code, _, errOut := runMoECLI("gen", "-o", filepath.Join(dir, "w"), "-seq-len", "4", "-batch", "1")
	if code != exitFailure || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
