package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// -threads changes where the work runs, never what is written: every output of an event run
// is the same byte for byte (summary.json's wall clock aside) with the FCT log formatted on
// the simulation's goroutine (-threads 1) or on its own (-threads 2, and the default when Go
// may use two cores), whether Go runs them on one core or two (GOMAXPROCS).
func TestThreadsSameOutputs(t *testing.T) {
	dir := t.TempDir()
	shipped := readFile(t, "../../configs/data/SimAI.conf")
	ideal := idealConf(t, dir)
	// The shipped SimAI.conf (DCQCN, ECN, PFC, every output and monitor on), sampling often.
	var cc strings.Builder
	for _, line := range strings.Split(shipped, "\n") {
		if strings.HasPrefix(line, "QLEN_MON_INTERVAL") || strings.HasPrefix(line, "QP_MON_INTERVAL") || strings.HasPrefix(line, "BW_MON_INTERVAL") {
			line = strings.Fields(line)[0] + " 5"
		}
		cc.WriteString(line + "\n")
	}
	dcqcn := writeFile(t, dir, "dcqcn.conf", cc.String())
	ring := writeFile(t, dir, "ring.txt", "MICRO\n1\nring -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 67108864 0\n")
	a2a := writeFile(t, dir, "a2a.txt", "MICRO\n1\na2a -1 0 NONE 0 0 NONE 0 0 ALLTOALL 16777216 0\n")
	// Layers 4 to 13 of SimAI's MoE workload (TP 2, EP 16, PP 12: 384 GPUs at least).
	moeLines := strings.Split(readFile(t, "../../configs/examples/workload_analytical.txt"), "\n")
	moe := writeFile(t, dir, "moe.txt", moeLines[0]+"\n10\n"+strings.Join(moeLines[5:15], "\n")+"\n")
	scenarios := []struct {
		name  string
		args  []string
		lines int // the FCT log has at least this many
	}{
		// 64,512 flows: every batch of the FCT log's pipe is filled and reused.
		{"ring-64", []string{"-w", ring, "-g", "64", "-c", ideal}, 64512},
		{"example", []string{"-w", "example:microAllReduce.txt", "-g", "16", "-c", dcqcn}, 1},
		{"alltoall-32-dcqcn", []string{"-w", a2a, "-g", "32", "-c", dcqcn}, 1},
		{"moe-384", []string{"-w", moe, "-g", "384", "-c", ideal}, 1},
	}
	runs := []struct{ procs, threads int }{{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 0}}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var want map[string]string
			for _, r := range runs {
				runtime.GOMAXPROCS(r.procs)
				args := append([]string{"-o", "out", "-quiet"}, sc.args...)
				if r.threads > 0 {
					args = append(args, "-threads", fmt.Sprint(r.threads))
				}
				run := t.TempDir()
				if code, _, errOut := runCLI(t, run, args...); code != 0 {
					t.Fatalf("GOMAXPROCS %d, -threads %d: %s", r.procs, r.threads, errOut)
				}
				got := outputsOf(t, filepath.Join(run, "out"))
				if n := strings.Count(got["fct.txt"], "\n"); n < sc.lines {
					t.Fatalf("GOMAXPROCS %d, -threads %d: the FCT log has %d lines", r.procs, r.threads, n)
				}
				if want == nil {
					want = got
					continue
				}
				if len(got) != len(want) {
					t.Errorf("GOMAXPROCS %d, -threads %d: files %v, want %v", r.procs, r.threads, keys(got), keys(want))
				}
				for f, w := range want {
					if got[f] != w {
						t.Errorf("GOMAXPROCS %d, -threads %d: %s differs from GOMAXPROCS 1, -threads 1", r.procs, r.threads, f)
					}
				}
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// -threads takes a count of cores, 1 or more.
func TestThreadsFlag(t *testing.T) {
	for _, v := range []string{"0", "-1", "two"} {
		code, _, errOut := runCLI(t, t.TempDir(), "-threads", v)
		if code != 2 || !strings.Contains(errOut, "-threads") {
			t.Errorf("-threads %s: exit %d, %s", v, code, errOut)
		}
	}
}
