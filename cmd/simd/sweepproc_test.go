package main

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets a test run this test binary as simd itself (SIMD_TEST_MAIN=1), so that shards
// can run as separate processes the way a job array runs them.
func TestMain(m *testing.M) {
	if os.Getenv("SIMD_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The shipped example sweep (configs/sweep/spec.yaml), run as two Indexed-Job shards in
// separate processes and as a Slurm array of two, then merged, gives the table of the
// unsharded sweep, wall-clock seconds aside.
func TestShippedSweepShardsAsProcesses(t *testing.T) {
	spec, err := filepath.Abs("../../configs/sweep/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	simd := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(append(os.Environ(), "SIMD_TEST_MAIN=1"), env...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("simd %v (%v): %v\n%s", args, env, err, out)
		}
	}
	simd(nil, "sweep", spec, "-o", "all")
	simd([]string{"JOB_COMPLETION_INDEX=0"}, "sweep", spec, "-o", "k8s-0", "-shards", "2")
	simd([]string{"JOB_COMPLETION_INDEX=1"}, "sweep", spec, "-o", "k8s-1", "-shards", "2")
	simd([]string{"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2"}, "sweep", spec, "-o", "slurm")
	simd([]string{"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=2"}, "sweep", spec, "-o", "slurm")
	simd(nil, "sweep", "merge", "all", "-o", "all.csv")
	simd(nil, "sweep", "merge", "k8s-0", "k8s-1", "-o", "k8s.csv")
	simd(nil, "sweep", "merge", "slurm", "-o", "slurm.csv")
	table := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			r[len(r)-1] = "" // wall_seconds
		}
		return rows
	}
	want := table("all.csv")
	if len(want) != 9 {
		t.Fatalf("the unsharded table has %d rows, want a header and 8 runs", len(want))
	}
	for _, name := range []string{"k8s.csv", "slurm.csv"} {
		got := table(name)
		if g, w := flat(got), flat(want); g != w {
			t.Errorf("%s differs from the unsharded table:\n%s\nwant\n%s", name, g, w)
		}
	}
}

func flat(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, ","))
		b.WriteByte('\n')
	}
	return b.String()
}
