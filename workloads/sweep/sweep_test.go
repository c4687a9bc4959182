package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/workloads/sim"
)

const issueSpec = `# the issue's spec
workloads: [a.txt, b.txt]
topologies: [{topo: Spectrum-X, g: 8}, {topo: DCN+, g: 8}, {file: my_topo}]
conf: SimAI.conf              # optional
overrides: [{CC_MODE: 0}, {CC_MODE: 1}]   # optional
modes: [analytical, event]
`

func TestParseIssueSpec(t *testing.T) {
	s, err := Parse([]byte(issueSpec), "dir/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Workloads, ","); got != "a.txt,b.txt" {
		t.Errorf("workloads %q", got)
	}
	var topos []string
	for _, tp := range s.Topologies {
		topos = append(topos, tp.String())
	}
	if got := strings.Join(topos, "|"); got != "topo=Spectrum-X g=8|topo=DCN+ g=8|file:my_topo" {
		t.Errorf("topologies %q", got)
	}
	if got := s.Topologies[1].GeneratorArgs(); strings.Join(got, " ") != "-topo=DCN+ -g=8" {
		t.Errorf("generator args %q", got)
	}
	if s.Topologies[2].Generated() || !s.Topologies[0].Generated() {
		t.Error("Generated wrong")
	}
	if s.Conf != "SimAI.conf" || s.Resolve(s.Conf) != filepath.Join("dir", "SimAI.conf") || s.Resolve("example:x.txt") != "example:x.txt" {
		t.Errorf("conf %q resolves to %q", s.Conf, s.Resolve(s.Conf))
	}
	if len(s.Overrides) != 2 || s.Overrides[1].String() != "CC_MODE=1" {
		t.Errorf("overrides %+v", s.Overrides)
	}
	if strings.Join(s.Modes, ",") != "analytical,event" {
		t.Errorf("modes %v", s.Modes)
	}
}

func TestParseBlockStyleAndDefaults(t *testing.T) {
	s, err := Parse([]byte("workloads:\n  - w.txt   # one\n  - x.txt\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workloads) != 2 || s.WorkLines[1] != 3 {
		t.Errorf("workloads %v lines %v", s.Workloads, s.WorkLines)
	}
	if len(s.Topologies) != 1 || s.Topologies[0].String() != "default" || len(s.Overrides) != 1 || s.Overrides[0].String() != "" ||
		strings.Join(s.Modes, ",") != "event" {
		t.Errorf("defaults: %+v", s)
	}
	if n := len(s.Expand()); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"", "s.yaml:1: empty spec"},
		{"modes: [event]\n", "s.yaml:1: workloads: missing"},
		{"workloads: [a]\nworkload: [b]\n", "s.yaml:2: workload: unknown key"},
		{"workloads: [a]\nworkloads: [b]\n", "s.yaml:2: workloads: given twice"},
		{"workloads: a.txt\n", "s.yaml:1: workloads: expected a list"},
		{"workloads: []\n", "s.yaml:1: workloads: expected at least one"},
		{"workloads: [a]\nmodes: [event, fast]\n", "s.yaml:2: modes[1]: \"fast\": expected analytical, event, compare"},
		{"workloads: [a]\ntopologies:\n  - {topo: DCN+}\n  - {file: t, g: 8}\n", "s.yaml:4: topologies[1].file: a topology file takes no generator flags"},
		{"workloads: [a]\ntopologies: [{o: x}]\n", "s.yaml:2: topologies[0].o: not a generator flag"},
		{"workloads: [a]\ntopologies: [{g: [1, 2]}]\n", "s.yaml:2: topologies[0].g: expected a single value"},
		{"workloads: [a]\ntopologies: [file]\n", "s.yaml:2: topologies[0]: expected a mapping"},
		{"workloads: [a]\n\noverrides: [{CC_MODE: 0}, {CC MODE: 1}]\n", "s.yaml:3: overrides[1].CC MODE: expected a SimAI.conf key"},
		{"workloads: [a]\noverrides: [{CC_MODE: 0, CC_MODE: 1}]\n", "s.yaml:2: overrides[0].CC_MODE: given twice"},
		{"workloads: [a]\nconf: [x]\n", "s.yaml:2: conf: expected the path"},
		{"workloads: [a\nmodes: [event]\n", "s.yaml:"},
		{"- a\n- b\n", "s.yaml:1: expected a mapping"},
	} {
		_, err := Parse([]byte(c.spec), "s.yaml")
		var se *Error
		if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q...", c.spec, err, c.want)
		}
	}
}

// A spec may not expand into more than MaxRuns runs; the count is multiplied without overflow.
func TestParseTooManyRuns(t *testing.T) {
	spec := func(workloads, topologies int) string {
		return "workloads: [" + strings.Repeat("a, ", workloads-1) + "a]\n" +
			"topologies: [" + strings.Repeat("{file: t}, ", topologies-1) + "{file: t}]\n"
	}
	if _, err := Parse([]byte(spec(1024, 1024)), "s.yaml"); err != nil {
		t.Errorf("exactly MaxRuns: %v", err)
	}
	want := "s.yaml:1: 1025 workloads × 1024 topologies × 1 overrides × 1 modes is more than the 1048576 runs a sweep may have"
	if _, err := Parse([]byte(spec(1025, 1024)), "s.yaml"); err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestExpandOrder(t *testing.T) {
	s, err := Parse([]byte(issueSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Expand()
	if len(runs) != 2*3*2*2 {
		t.Fatalf("%d runs, want 24", len(runs))
	}
	var got []string
	for k, r := range runs {
		if r.Index != k {
			t.Errorf("run %d has index %d", k, r.Index)
		}
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", r.Workload, r.Topology, r.Override, r.Mode))
	}
	want := []string{
		"a.txt|topo=Spectrum-X g=8|CC_MODE=0|analytical",
		"a.txt|topo=Spectrum-X g=8|CC_MODE=0|event",
		"a.txt|topo=Spectrum-X g=8|CC_MODE=1|analytical",
		"a.txt|topo=Spectrum-X g=8|CC_MODE=1|event",
		"a.txt|topo=DCN+ g=8|CC_MODE=0|analytical",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("run %d = %s, want %s", i, got[i], w)
		}
	}
	if got[23] != "b.txt|file:my_topo|CC_MODE=1|event" || got[12] != "b.txt|topo=Spectrum-X g=8|CC_MODE=0|analytical" {
		t.Errorf("runs 12, 23 = %s, %s", got[12], got[23])
	}
	if runs[5].Folder() != "run-0005" {
		t.Errorf("folder %s", runs[5].Folder())
	}
}

func TestShardsCoverEveryRunOnce(t *testing.T) {
	s, _ := Parse([]byte(issueSpec), "spec.yaml")
	runs := s.Expand()
	seen := make([]int, len(runs))
	for i := range 3 {
		sh, err := ParseShard(fmt.Sprintf("%d/3", i))
		if err != nil {
			t.Fatal(err)
		}
		sel := sh.Select(runs)
		if len(sel) != 8 {
			t.Errorf("shard %s has %d runs, want 8", sh, len(sel))
		}
		for _, r := range sel {
			if r.Index%3 != i {
				t.Errorf("run %d in shard %d/3", r.Index, i)
			}
			seen[r.Index]++
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("run %d in %d shards", k, n)
		}
	}
	for _, bad := range []string{"3/3", "-1/3", "0/0", "1", "a/b", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		env    func(string) string
		shards int
		want   Shard
		err    bool
	}{
		{env(), 0, All, false},
		{env(), 3, Shard{}, true},
		{env("JOB_COMPLETION_INDEX", "2"), 4, Shard{2, 4}, false},
		{env("JOB_COMPLETION_INDEX", "2"), 0, Shard{}, true},
		{env("JOB_COMPLETION_INDEX", "4"), 4, Shard{}, true},
		{env("JOB_COMPLETION_INDEX", "x"), 4, Shard{}, true},
		{env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"), 0, Shard{1, 3}, false},
		{env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"), 5, Shard{1, 5}, false},
		{env("JOB_COMPLETION_INDEX", "0", "SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"), 0, Shard{0, 3}, false},
	} {
		got, err := ShardFromEnv(c.env, c.shards)
		if (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("shards %d: got %v, %v; want %v (error %v)", c.shards, got, err, c.want, c.err)
		}
	}
}

func TestOverrideConf(t *testing.T) {
	base := "ENABLE_QCN 1\nCC_MODE 1\n\nRATE_AI 50Mb/s\n"
	got := string(OverrideConf([]byte(base), Override{Params: []Param{{"CC_MODE", "3"}, {"NEW_KEY", "7"}}}))
	want := "ENABLE_QCN 1\nCC_MODE 3\n\nRATE_AI 50Mb/s\nNEW_KEY 7\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseEndToEnd(t *testing.T) {
	csv := "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n" +
		"x-, 1 (0.1%), 2 (0.2%), 577 (34.17%), 3 (0%), 4 (0%), 5 (0%), 1112 (65.83%), 577 (34.17%), 1689\nlayer_name,...\n"
	r, err := ParseEndToEnd(strings.NewReader(csv), "EndToEnd.csv")
	if err != nil {
		t.Fatal(err)
	}
	if (r != Result{IterationUs: 1689, ComputeUs: 1112, ExposedCommUs: 577, TPUs: 577, DPUs: 1, DPEPUs: 2, EPUs: 3, PPUs: 4, BubbleUs: 5}) {
		t.Errorf("%+v", r)
	}
	if _, err := ParseEndToEnd(strings.NewReader("a,b\n1,2\n"), "x.csv"); err == nil {
		t.Error("accepted a CSV that is not EndToEnd.csv")
	}
}

func TestReadManifestsRejectsDuplicates(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir string, k int) {
		p := filepath.Join(dir, RunFolder(k), ManifestFile)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf(`{"run": %d, "workload": "w", "overrides": [{"key": "K", "value": "1"}]}`, k)), 0o644)
	}
	write(a, 2)
	write(b, 0)
	write(b, 1)
	ms, err := ReadManifests([]string{a, b})
	if err != nil || len(ms) != 3 || ms[0].Run != 0 || ms[2].Run != 2 {
		t.Fatalf("%v %+v", err, ms)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, ms); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 4 || lines[1] != "0,w,,,K=1,0,,,,,,,,,,,,,,,,,0.000" {
		t.Errorf("table:\n%s", buf.String())
	}
	write(b, 2)
	if _, err := ReadManifests([]string{a, b}); err == nil || !strings.Contains(err.Error(), "run 2 is in both") {
		t.Errorf("duplicate: %v", err)
	}
}

// The table's network columns: nearest-rank quantiles of the FCT slowdowns and the PFC pauses,
// empty when a run wrote no such log.
func TestNetworkColumns(t *testing.T) {
	sl := []float64{1, 1.5, 2, 8}
	if q := Quantile(sl, 0.5); q != 1.5 {
		t.Errorf("p50 = %v, want 1.5", q)
	}
	if q := Quantile(sl, 0.99); q != 8 {
		t.Errorf("p99 = %v, want 8", q)
	}
	if q := Quantile(nil, 0.5); q == q {
		t.Errorf("quantile of nothing = %v, want NaN", q)
	}
	p50, p99, pauses := 1.5, 8.0, 3
	ms := []Manifest{{Run: 0, Workload: "w", Network: &Network{FCTSlowdownP50: &p50, FCTSlowdownP99: &p99, PFCPauses: &pauses}}}
	var buf bytes.Buffer
	if err := WriteTable(&buf, ms); err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n")[1]; got != "0,w,,,,0,,,,,,,,,,1.5000,8.0000,3,,,,,0.000" {
		t.Errorf("row %q", got)
	}
}

// FuzzParse: a spec either parses or is refused with an *Error naming the file and a line; it
// never panics, and a spec that parses expands into at most MaxRuns runs, numbered in order.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./workloads/sweep
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"workloads: [a.txt, b.txt]\ntopologies: [{topo: Spectrum-X, g: 8}, {topo: DCN+, g: 8}, {file: my_topo}]\nconf: SimAI.conf\noverrides: [{CC_MODE: 0}, {CC_MODE: 1}]\nmodes: [analytical, event]\n",
		"workloads:\n  - example:microAllReduce.txt\nmodes: [event]\n",
		"workloads: []\n",
		"topologies: [{topo: X, g: }]\n",
		"- a\n- b\n",
		"workloads: [a]\nunknown: 1\n",
		"workloads: [a, b]\ntopologies: [{file: t}, {file: u}]\noverrides: [{CC_MODE: 0}, {CC_MODE: 1}]\nmodes: [analytical, event, compare]\n",
	} {
		f.Add([]byte(seed))
	}
	shipped, err := os.ReadFile("../../configs/sweep/spec.yaml") // the example spec simd ships
	if err != nil {
		f.Fatal(err)
	}
	f.Add(shipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := Parse(data, "spec.yaml")
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "spec.yaml" || se.Line < 1 {
				t.Fatalf("error %q is not an *Error naming the file and a line", err)
			}
			return
		}
		runs := spec.Expand()
		want := len(spec.Workloads) * max(len(spec.Topologies), 1) * max(len(spec.Overrides), 1) * max(len(spec.Modes), 1)
		if want > MaxRuns || len(runs) != want {
			t.Fatalf("%d runs for %+v, want %d", len(runs), spec, want)
		}
		for k, r := range runs {
			if r.Index != k {
				t.Fatalf("run %d has index %d", k, r.Index)
			}
		}
	})
}

// Merge writes the table of the folders' runs to a file, or to stdout without one; a run found
// twice or a folder without runs is an input error and writes nothing.
func TestMerge(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir string, k int) {
		p := filepath.Join(dir, RunFolder(k), ManifestFile)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf(`{"run": %d, "workload": "w"}`, k)), 0o644)
	}
	write(a, 1)
	write(b, 0)
	var stdout bytes.Buffer
	n, err := Merge([]string{a, b}, "", &stdout)
	want := strings.Join(TableHeader, ",") + "\n0,w,,,,0,,,,,,,,,,,,,,,,,0.000\n1,w,,,,0,,,,,,,,,,,,,,,,,0.000\n"
	if err != nil || n != 2 || stdout.String() != want {
		t.Fatalf("stdout: %d, %v\n%s", n, err, stdout.String())
	}
	out := filepath.Join(t.TempDir(), "table.csv")
	stdout.Reset()
	if n, err := Merge([]string{a, b}, out, &stdout); err != nil || n != 2 || stdout.Len() != 0 {
		t.Fatalf("file: %d, %v, stdout %q", n, err, stdout.String())
	}
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Errorf("table.csv:\n%s", got)
	}
	write(b, 1)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	for _, dirs := range [][]string{{a, b}, {t.TempDir()}} {
		if _, err := Merge(dirs, bad, &stdout); !sim.IsInputError(err) {
			t.Errorf("%v: %v, want an input error", dirs, err)
		}
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a failed merge wrote its table")
	}
}

// A spec may list jobs files (simd -jobs) beside or instead of workloads: each is a point of the
// grid, after the workloads; compare does not run them. A jobs run's manifest has a row per job
// in the merged table, with its jobs.csv figures.
func TestSpecJobs(t *testing.T) {
	s, err := Parse([]byte("workloads: [w.txt]\njobs: [a.yaml, b.yaml]\nmodes: [analytical, event]\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Expand()
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s/%v/%s", r.Workload, r.Jobs, r.Mode))
	}
	want := "w.txt/false/analytical w.txt/false/event a.yaml/true/analytical a.yaml/true/event b.yaml/true/analytical b.yaml/true/event"
	if strings.Join(got, " ") != want {
		t.Errorf("runs %v, want %s", got, want)
	}
	if s, err := Parse([]byte("jobs: [a.yaml]\n"), "s.yaml"); err != nil || len(s.Expand()) != 1 || !s.Expand()[0].Jobs {
		t.Errorf("jobs alone: %v", err)
	}
	for _, tc := range []struct{ text, want string }{
		{"jobs: [a.yaml]\nmodes: [compare]\n", "s.yaml:1: modes: compare does not run jobs files"},
		{"jobs: []\n", "s.yaml:1: jobs: expected at least one jobs file"},
		{"modes: [event]\n", "workloads: missing: expected a list of workload files (or jobs, a list of jobs files)"},
	} {
		if _, err := Parse([]byte(tc.text), "s.yaml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
	two, one := 2.5, 1.25
	ms := []Manifest{{Run: 0, Workload: "a.yaml", JobsFile: true, Jobs: []JobResult{
		{JobFigures: sim.JobFigures{Job: "x", TogetherUs: &two, AloneUs: &two, Slowdown: &one}, Result: &Result{IterationUs: 3}},
		{JobFigures: sim.JobFigures{Job: "y"}},
	}}}
	var buf bytes.Buffer
	if err := WriteTable(&buf, ms); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || lines[1] != "0,a.yaml,,,,0,3,0,0,0,0,0,0,0,0,,,,x,2.5,2.5,1.25,0.000" || lines[2] != "0,a.yaml,,,,0,,,,,,,,,,,,,y,,,,0.000" {
		t.Errorf("table:\n%s", buf.String())
	}
}
