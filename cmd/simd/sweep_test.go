package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"simd/configs"
	"simd/workloads/sweep"
)

// sweepSpec is 2 workloads × 2 topologies × 2 modes; the second workload is a copy of the first
// in the spec's folder, the second topology has slower NICs.
const sweepSpec = `workloads: [example:microAllReduce.txt, copy.txt]
topologies:
  - {topo: Spectrum-X, g: 16}
  - {topo: Spectrum-X, g: 16, bw: 200Gbps}
modes: [analytical, event]
`

func writeSweepSpec(t *testing.T, dir, spec string) {
	t.Helper()
	w, _ := configs.ExampleWorkload("microAllReduce.txt")
	if err := os.WriteFile(filepath.Join(dir, "copy.txt"), w, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "spec.yaml", spec)
}

// sweepOutputs reads every run's summary.json and EndToEnd.csv, without the wall-clock field
// and with the sweep's folder name replaced, keyed by path inside the sweep folder.
func sweepOutputs(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	wall := regexp.MustCompile(`"wall_clock_seconds": [0-9.e+-]+`)
	out := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(dir, name, "run-*", "out", "*"))
	for _, p := range paths {
		base := filepath.Base(p)
		if base != "summary.json" && !strings.HasSuffix(base, "EndToEnd.csv") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := wall.ReplaceAllString(string(data), `"wall_clock_seconds": 0`)
		rel, _ := filepath.Rel(filepath.Join(dir, name), p)
		out[rel] = strings.ReplaceAll(text, name+"/run-", "DIR/run-")
	}
	return out
}

func readManifest(t *testing.T, path string) sweep.Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m sweep.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSweepEndToEndAndMerge(t *testing.T) {
	dir := t.TempDir()
	writeSweepSpec(t, dir, sweepSpec)
	for _, c := range []struct{ out, j string }{{"j1", "1"}, {"j2", "2"}} {
		code, stdout, stderr := runCLI(t, dir, "sweep", "spec.yaml", "-o", c.out, "-j", c.j)
		if code != exitOK {
			t.Fatalf("-j %s: exit %d\n%s%s", c.j, code, stdout, stderr)
		}
		if !strings.Contains(stdout, "8 runs, shard 0/1 has 8") {
			t.Errorf("stdout:\n%s", stdout)
		}
	}
	a, b := sweepOutputs(t, dir, "j1"), sweepOutputs(t, dir, "j2")
	if len(a) != 4*2+4 { // event runs: summary.json and EndToEnd.csv; analytical: EndToEnd.csv
		t.Errorf("%d outputs, want 12: %v", len(a), a)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s differs between -j 1 and -j 2", k)
		}
	}
	if len(b) != len(a) {
		t.Errorf("-j 2 wrote %d outputs, -j 1 %d", len(b), len(a))
	}

	m := readManifest(t, filepath.Join(dir, "j1", "run-0007", "manifest.json"))
	wantArgs := "-w " + filepath.Join(".", "copy.txt") + " -n j1/run-0007/topo/Spectrum-X_16g_8gps_200Gbps_H100 -mode event -o j1/run-0007/out -quiet"
	if m.Run != 7 || m.Workload != "copy.txt" || m.Topology != "topo=Spectrum-X g=16 bw=200Gbps" || m.Mode != "event" ||
		m.ExitCode != 0 || strings.Join(m.Args, " ") != wantArgs || m.Result == nil || m.Result.IterationUs != 1690 {
		t.Errorf("manifest: %+v\nargs %q", m, strings.Join(m.Args, " "))
	}
	if !strings.Contains(strings.Join(m.Outputs, " "), "out/summary.json") {
		t.Errorf("outputs %v", m.Outputs)
	}

	code, stdout, stderr := runCLI(t, dir, "sweep", "merge", "j1", "-o", "table.csv")
	if code != exitOK {
		t.Fatalf("merge: exit %d %s%s", code, stdout, stderr)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "table.csv"))
	lines := strings.Split(strings.TrimSpace(string(table)), "\n")
	if len(lines) != 9 {
		t.Fatalf("table has %d lines:\n%s", len(lines), table)
	}
	wantRows := []string{
		"0,example:microAllReduce.txt,topo=Spectrum-X g=16,analytical,,0,1492,1112,380,380,0,0,0,0,0,",
		"1,example:microAllReduce.txt,topo=Spectrum-X g=16,event,,0,1690,1112,578,578,0,0,0,0,0,",
		"2,example:microAllReduce.txt,topo=Spectrum-X g=16 bw=200Gbps,analytical,,0,1492,1112,380,380,0,0,0,0,0,",
		"7,copy.txt,topo=Spectrum-X g=16 bw=200Gbps,event,,0,1690,1112,578,578,0,0,0,0,0,",
	}
	for _, w := range wantRows {
		found := false
		for _, l := range lines[1:] {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Errorf("no row %q in\n%s", w, table)
		}
	}
	if !strings.HasPrefix(lines[0], "run,workload,topology,mode,overrides,exit_code,iteration_us") || !strings.HasPrefix(lines[8], "7,") {
		t.Errorf("table:\n%s", table)
	}
	// The same runs in two folders are an error.
	if code, _, stderr := runCLI(t, dir, "sweep", "merge", "j1", "j2", "-o", "t2.csv"); code != exitBadInput || !strings.Contains(stderr, "is in both") {
		t.Errorf("duplicate runs: exit %d %s", code, stderr)
	}
}

func TestSweepShardsAndOverrides(t *testing.T) {
	dir := t.TempDir()
	writeSweepSpec(t, dir, `workloads: [example:microAllReduce.txt]
overrides: [{CC_MODE: 0}, {CC_MODE: 1, NEW_KEY: 5}]
modes: [analytical, event]
`)
	// Shards 0/3..2/3 into different folders, the last through the environment.
	for _, sh := range []string{"0/3", "1/3"} {
		if code, out, errOut := runCLI(t, dir, "sweep", "spec.yaml", "-o", "s"+sh[:1], "-shard", sh); code != exitOK {
			t.Fatalf("shard %s: exit %d %s%s", sh, code, out, errOut)
		}
	}
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	if code, out, errOut := runCLI(t, dir, "sweep", "spec.yaml", "-o", "s2", "-shards", "3"); code != exitOK || !strings.Contains(out, "shard 2/3 has 1") {
		t.Fatalf("env shard: exit %d %s%s", code, out, errOut)
	}
	for _, c := range []struct {
		dir  string
		runs []string
	}{{"s0", []string{"run-0000", "run-0003"}}, {"s1", []string{"run-0001"}}, {"s2", []string{"run-0002"}}} {
		got, _ := filepath.Glob(filepath.Join(dir, c.dir, "run-*"))
		for i := range got {
			got[i] = filepath.Base(got[i])
		}
		if strings.Join(got, ",") != strings.Join(c.runs, ",") {
			t.Errorf("%s holds %v, want %v", c.dir, got, c.runs)
		}
	}
	conf, err := os.ReadFile(filepath.Join(dir, "s1", "run-0001", "SimAI.conf"))
	if err != nil || !strings.Contains(string(conf), "\nCC_MODE 0\n") || strings.Contains(string(conf), "CC_MODE 1") {
		t.Errorf("run 1's SimAI.conf: %v", err)
	}
	conf, _ = os.ReadFile(filepath.Join(dir, "s0", "run-0003", "SimAI.conf"))
	if !strings.HasSuffix(string(conf), "NEW_KEY 5\n") {
		t.Errorf("run 3's SimAI.conf does not end with NEW_KEY 5")
	}
	code, out, errOut := runCLI(t, dir, "sweep", "merge", "s2", "s0", "s1")
	if code != exitOK || strings.Count(out, "\n") != 5 || !strings.Contains(out, "\n3,example:microAllReduce.txt,default,event,CC_MODE=1;NEW_KEY=5,") {
		t.Errorf("merge to stdout: exit %d\n%s%s", code, out, errOut)
	}
}

func TestSweepFailedRunAndBadSpec(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "broken_topo", "this is not a topology\n")
	writeSweepSpec(t, dir, "workloads: [example:microAllReduce.txt]\ntopologies: [{file: broken_topo}, {topo: Spectrum-X, g: 8}]\nmodes: [analytical]\n")
	code, out, errOut := runCLI(t, dir, "sweep", "spec.yaml", "-o", "out", "-j", "2")
	if code != exitFailure || !strings.Contains(errOut, "1 runs failed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	m := readManifest(t, filepath.Join(dir, "out", "run-0000", "manifest.json"))
	if m.ExitCode != exitBadInput || m.Error == "" || m.Result != nil {
		t.Errorf("failed run's manifest: %+v", m)
	}
	if m := readManifest(t, filepath.Join(dir, "out", "run-0001", "manifest.json")); m.ExitCode != 0 || m.Result == nil {
		t.Errorf("second run's manifest: %+v", m)
	}

	for _, c := range []struct{ spec, want string }{
		{"workloads: [example:microAllReduce.txt]\nbogus: 1\n", "spec.yaml:2: bogus: unknown key"},
		{"workloads:\n  - example:microAllReduce.txt\n  - missing.txt\n", "spec.yaml:3: workloads[1]:"},
		{"workloads: [example:nope.txt]\n", "spec.yaml:1: workloads[0]: \"example:nope.txt\": no such example"},
		{"workloads: [copy.txt]\ntopologies:\n  - {topo: Spectrum-X, gg: 8}\n", "spec.yaml:3: topologies[0]: flag provided but not defined: -gg"},
		{"workloads: [copy.txt]\ntopologies: [{file: nothere}]\n", "spec.yaml:2: topologies[0].file:"},
	} {
		writeFile(t, dir, "spec.yaml", c.spec)
		code, _, errOut := runCLI(t, dir, "sweep", "spec.yaml", "-o", "bad")
		if code != exitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.spec, code, errOut, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
		t.Error("a bad spec created the output folder")
	}
	for _, args := range [][]string{{"sweep"}, {"sweep", "spec.yaml"}, {"sweep", "a", "b", "-o", "x"}, {"sweep", "spec.yaml", "-o", "x", "-shard", "3/3"}, {"sweep", "merge"}, {"sweep", "merge", "nothere"}} {
		if code, _, _ := runCLI(t, dir, args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := runCLI(t, dir, "sweep", "-h"); code != exitOK || !strings.Contains(out, "JOB_COMPLETION_INDEX") {
		t.Errorf("sweep -h: exit %d", code)
	}
}

// A sweep over placements: two jobs files, each two jobs on a 32-GPU fabric, placed apart and
// spread over the same servers; every run writes jobs.csv, its manifest holds each job's
// figures, and the merged table has a row per job.
func TestSweepJobs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "dp.txt", dpJob)
	writeFile(t, dir, "apart.yaml", "jobs:\n  - {name: a, workload: dp.txt, gpus: \"0-3,8-11\"}\n  - {name: b, workload: dp.txt, gpus: \"16-19,24-27\"}\n")
	writeFile(t, dir, "spread.yaml", "jobs:\n  - {name: a, workload: dp.txt, count: 8, placement: spread}\n  - {name: b, workload: dp.txt, count: 8, placement: spread}\n")
	writeSweepSpec(t, dir, "jobs: [apart.yaml, spread.yaml]\ntopologies: [{topo: Spectrum-X, g: 32}]\noverrides: [{CC_MODE: 0}]\n")
	code, stdout, stderr := runCLI(t, dir, "sweep", "spec.yaml", "-o", "sw")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "run-0000: slowdown a 1.000×, b 1.000× (jobs apart.yaml") {
		t.Errorf("stdout:\n%s", stdout)
	}
	m := readManifest(t, filepath.Join(dir, "sw", "run-0001", "manifest.json"))
	if !m.JobsFile || len(m.Jobs) != 2 || m.Jobs[0].Job != "a" || m.Jobs[0].Slowdown == nil || m.Jobs[0].Result == nil || m.Result != nil ||
		m.Args[0] != "-jobs" {
		t.Errorf("manifest: %+v", m)
	}
	if code, _, stderr := runCLI(t, dir, "sweep", "merge", "sw", "-o", "table.csv"); code != exitOK {
		t.Fatal(stderr)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "table.csv"))), "\n")
	if len(lines) != 5 {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	for i, want := range []string{"0,apart.yaml,", "0,apart.yaml,", "1,spread.yaml,", "1,spread.yaml,"} {
		f := strings.Split(lines[i+1], ",")
		if !strings.HasPrefix(lines[i+1], want) || f[18] != []string{"a", "b"}[i%2] || f[21] == "" {
			t.Errorf("row %d: %s", i, lines[i+1])
		}
	}
}
