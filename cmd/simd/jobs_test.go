package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dpJob is a TP 4 workload of 8 GPUs with a 64 MiB data-parallel all-reduce: on 8 GPUs of two
// servers, its DP rings cross the network.
const dpJob = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n" +
	"grad -1 100 ALLREDUCE 4194304 1 NONE 0 1 ALLREDUCE 67108864 1\n"

// jobsFolder writes a jobs file and its workload into a fresh folder.
func jobsFolder(t *testing.T, jobsYAML string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "dp.txt", dpJob)
	writeFile(t, dir, "pp3.txt", strings.Replace(dpJob, "pp: 1 ", "pp: 3 ", 1))
	writeFile(t, dir, "jobs.yaml", jobsYAML)
	writeFile(t, dir, "cc0.conf", "CC_MODE 0\n")
	return dir
}

func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		rows = append(rows, strings.Split(line, ","))
	}
	return rows
}

// Two jobs on the two halves of a 32-GPU fabric (each on GPU 0–3 of two servers, rail-aligned
// DP rings): alone and together are the same, slowdown 1. Every output is written, and a
// second run writes the same bytes. Spread, two jobs of 8 take two GPUs of each server in turn.
// (workloads/sim's TestJobsShareALink checks that jobs through one link share it.)
func TestJobsRun(t *testing.T) {
	dir := jobsFolder(t, `jobs:
  - {name: a, workload: dp.txt, gpus: "0-3,8-11"}
  - {name: b, workload: dp.txt, gpus: "16-19,24-27", start_us: 10}
`)
	args := []string{"-jobs", "jobs.yaml", "-g", "32", "-c", "cc0.conf", "-quiet", "-o", "out"}
	code, stdout, errOut := runCLI(t, dir, args...)
	if code != 0 {
		t.Fatal(errOut)
	}
	rows := csvRows(t, filepath.Join(dir, "out", "jobs.csv"))
	if strings.Join(rows[0], ",") != "job,workload,gpus,servers,placement,iterations,start_us,iteration_us_together,iteration_us_alone,slowdown" {
		t.Errorf("jobs.csv header %v", rows[0])
	}
	if len(rows) != 3 || rows[1][4] != "0-3 8-11" || rows[2][6] != "10.000" {
		t.Fatalf("jobs.csv %v", rows)
	}
	for _, r := range rows[1:] {
		if r[7] != r[8] || r[9] != "1.0000" {
			t.Errorf("job %s on its own servers: together %s, alone %s, slowdown %s; want equal", r[0], r[7], r[8], r[9])
		}
	}
	for _, f := range []string{"summary.json", "a/EndToEnd.csv", "a/summary.json", "b/EndToEnd.csv", "b/summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stdout, "slowdown") || !strings.Contains(stdout, "results: out/jobs.csv") {
		t.Errorf("stdout:\n%s", stdout)
	}
	first := readFile(t, filepath.Join(dir, "out", "jobs.csv")) + readFile(t, filepath.Join(dir, "out", "a", "summary.json"))
	if code, _, errOut := runCLI(t, dir, args...); code != 0 {
		t.Fatal(errOut)
	}
	if again := readFile(t, filepath.Join(dir, "out", "jobs.csv")) + readFile(t, filepath.Join(dir, "out", "a", "summary.json")); again != first {
		t.Error("a second run wrote other bytes")
	}

	writeFile(t, dir, "shared.yaml", `jobs:
  - {name: a, workload: dp.txt, count: 8, placement: spread}
  - {name: b, workload: dp.txt, count: 8, placement: spread}
`)
	if code, _, errOut := runCLI(t, dir, "-jobs", "shared.yaml", "-g", "32", "-c", "cc0.conf", "-quiet", "-o", "shared"); code != 0 {
		t.Fatal(errOut)
	}
	rows = csvRows(t, filepath.Join(dir, "shared", "jobs.csv"))
	if rows[1][4] != "0-1 8-9 16-17 24-25" || rows[2][4] != "2-3 10-11 18-19 26-27" {
		t.Errorf("spread placements %q and %q", rows[1][4], rows[2][4])
	}
	// -jobs-alone FILE reads the alone figures of the first run; none leaves them out.
	if code, _, errOut := runCLI(t, dir, append(args[:len(args)-1], "out2", "-jobs-alone", "out/jobs.csv")...); code != 0 {
		t.Fatal(errOut)
	}
	if got, want := csvRows(t, filepath.Join(dir, "out2", "jobs.csv")), csvRows(t, filepath.Join(dir, "out", "jobs.csv")); got[1][8] != want[1][8] {
		t.Errorf("-jobs-alone FILE: alone %s, want %s", got[1][8], want[1][8])
	}
	if code, _, errOut := runCLI(t, dir, append(args[:len(args)-1], "out3", "-jobs-alone", "none")...); code != 0 {
		t.Fatal(errOut)
	}
	if r := csvRows(t, filepath.Join(dir, "out3", "jobs.csv")); r[1][8] != "" || r[1][9] != "" {
		t.Errorf("-jobs-alone none: %v", r[1])
	}
}

// The analytical mode prices each job alone and says that jobs interfere only in the event mode.
func TestJobsAnalytical(t *testing.T) {
	dir := jobsFolder(t, "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n")
	code, stdout, errOut := runCLI(t, dir, "-jobs", "jobs.yaml", "-g", "16", "-mode", "analytical", "-o", "out")
	if code != 0 {
		t.Fatal(errOut)
	}
	rows := csvRows(t, filepath.Join(dir, "out", "jobs.csv"))
	if rows[1][7] == "" || rows[1][7] != rows[1][8] || rows[1][9] != "1.0000" {
		t.Errorf("analytical jobs.csv %v", rows[1])
	}
	if !strings.Contains(stdout, "jobs do not slow each other") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// Bad jobs are refused with exit 2, naming the file, line and field, and nothing is written.
func TestJobsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"unknown key", "jobs:\n  - {name: a, workload: dp.txt, count: 8, size: 3}\n", nil, "jobs.yaml:2: jobs[0].size: unknown key"},
		{"overlap", "jobs:\n  - {name: a, workload: dp.txt, gpus: \"0-7\"}\n  - {name: b, workload: dp.txt, gpus: \"7-14\"}\n", nil,
			"jobs.yaml:3: jobs[1].gpus: GPU 7 is also in job \"a\""},
		{"beyond the topology", "jobs:\n  - {name: a, workload: dp.txt, gpus: \"12-19\"}\n", nil, "jobs.yaml:2: jobs[0].gpus: GPU 16 is beyond the topology's 16 GPUs"},
		{"too many", "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n  - {name: b, workload: dp.txt, count: 16}\n", nil,
			"jobs.yaml:3: jobs[1].count: 16 GPUs asked for, but only 8"},
		{"workload's GPU count", "jobs:\n  - {name: a, workload: dp.txt, count: 4}\n", nil,
			"jobs.yaml:2: jobs[0].count: the job has 4 GPUs, but its workload dp.txt was made for 8 (all_gpus)"},
		{"missing workload", "jobs:\n  - {name: a, workload: nope.txt, count: 8}\n", nil, "jobs.yaml:2: jobs[0].workload: open"},
		{"pp does not divide", "jobs:\n  - {name: a, workload: pp3.txt, count: 8}\n", nil, "jobs.yaml:2: jobs[0].count: job a: pp3.txt:1: pp:"},
		{"compare", "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n", []string{"-mode", "compare"}, "-mode compare: not for -jobs"},
		{"with -w", "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n", []string{"-w", "dp.txt"}, "-w and -flows do not go with it"},
		{"no cluster", "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n", []string{"-g", ""}, ""},
		{"alone file", "jobs:\n  - {name: a, workload: dp.txt, count: 8}\n", []string{"-jobs-alone", "missing.csv"}, "-jobs-alone: open missing.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := jobsFolder(t, tc.yaml)
			args := []string{"-jobs", "jobs.yaml", "-c", "cc0.conf", "-quiet", "-o", "out"}
			if len(tc.args) == 2 && tc.args[0] == "-g" {
				// no -g and no -n: the GPU count is unknown
				tc.want = "the GPU count is unknown"
			} else {
				args = append(append(args, "-g", "16"), tc.args...)
			}
			code, _, errOut := runCLI(t, dir, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("a refused run wrote its output folder")
			}
		})
	}
}

// -plot and -report work with -jobs: the shared run's plots and a report with the jobs table in
// the output folder, each job's layer plot and report in its own.
func TestJobsPlotAndReport(t *testing.T) {
	dir := jobsFolder(t, "jobs:\n  - {name: a, workload: dp.txt, gpus: \"0-3,8-11\"}\n  - {name: b, workload: dp.txt, gpus: \"16-19,24-27\"}\n")
	code, stdout, errOut := runCLI(t, dir, "-jobs", "jobs.yaml", "-g", "32", "-quiet", "-o", "out", "-plot", "-report", "-jobs-alone", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, f := range []string{"links.csv", "link_utilisation.svg", "fct_slowdown_cdf.svg", "report.html", "a/layer_breakdown.svg", "a/report.html", "b/report.html"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	page := readFile(t, filepath.Join(dir, "out", "report.html"))
	if !strings.Contains(page, `<h2 id="jobs">Jobs</h2>`) || !strings.Contains(page, "16-19 24-27") {
		t.Errorf("the report has no jobs table")
	}
	if !strings.Contains(stdout, "report: out/report.html") {
		t.Errorf("stdout:\n%s", stdout)
	}
}
