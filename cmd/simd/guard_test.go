package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"simd/cmd/simd/process"
	"simd/configs"
	"simd/workloads/sim"
)

// stoppedSummary is the part of summary.json that says whether a run is complete.
type stoppedSummary struct {
	Collectives []struct {
		EndUs float64 `json:"end_us"`
	} `json:"collectives"`
	Run struct {
		Complete   bool   `json:"complete"`
		Incomplete string `json:"incomplete"`
		Events     uint64 `json:"events"`
	} `json:"run"`
}

func readSummary(t *testing.T, path string) stoppedSummary {
	t.Helper()
	var s stoppedSummary
	if err := json.Unmarshal([]byte(readFile(t, path)), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// noTemporaries fails if a temporary output (".NAME.tmp...") was left in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	for _, f := range listFiles(t, dir) {
		if strings.HasPrefix(filepath.Base(f), ".") {
			t.Errorf("left behind: %s", f)
		}
	}
}

// -max-events stops every event-mode run after exactly that many events: exit 3, every output
// written with what was computed (fct.txt is the complete run's first lines, byte for byte),
// EndToEnd.csv, compare.csv and summary.json marked incomplete; a limit the run does not
// reach changes nothing.
func TestMaxEventsStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	tp := mustAbs(t, "../../topo/testdata/DCN+SingleToR_16g_8gps_400Gbps_H100")
	var flows strings.Builder
	flows.WriteString("2000\n")
	for i := range 2000 { // (7i + 3) mod 16 ≠ i mod 16: no flow to itself
		fmt.Fprintf(&flows, "%d %d 3 100 1000000 %.6f\n", i%16, (i*7+3)%16, float64(i)*1e-6)
	}
	flowFile := writeFile(t, dir, "flow.txt", flows.String())
	for _, tc := range []struct {
		name    string
		args    []string
		csv     string // output whose first line must say incomplete
		summary bool
	}{
		{"event", []string{"-w", "example:microAllReduce.txt", "-g", "16"}, "EndToEnd.csv", true},
		{"compare", []string{"-mode", "compare", "-w", "example:microAllReduce.txt", "-g", "16"}, "compare.csv", true},
		{"flows", []string{"-flows", flowFile, "-n", tp}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := filepath.Join(dir, tc.name+"-full")
			if code, _, errOut := runCLI(t, dir, append(tc.args, "-o", full)...); code != exitOK {
				t.Fatalf("complete run: exit %d: %s", code, errOut)
			}
			if s := readSummary(t, filepath.Join(full, "summary.json")); !s.Run.Complete || s.Run.Incomplete != "" {
				t.Errorf("complete run marked incomplete: %+v", s.Run)
			}
			part := filepath.Join(dir, tc.name+"-part")
			code, out, errOut := runCLI(t, dir, append(tc.args, "-o", part, "-max-events", "2000")...)
			if code != exitStopped {
				t.Fatalf("exit %d, want %d: %s", code, exitStopped, errOut)
			}
			if !strings.Contains(errOut, "stopped by -max-events 2000") || !strings.Contains(out, "incomplete: stopped by -max-events 2000 after 2000 events") {
				t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
			}
			noTemporaries(t, part)
			fullFCT, partFCT := readFile(t, filepath.Join(full, "fct.txt")), readFile(t, filepath.Join(part, "fct.txt"))
			if len(partFCT) == 0 || len(partFCT) >= len(fullFCT) || !strings.HasPrefix(fullFCT, partFCT) {
				t.Errorf("fct.txt of the stopped run (%d bytes) is not a proper prefix of the complete run's (%d bytes)", len(partFCT), len(fullFCT))
			}
			s := readSummary(t, filepath.Join(part, "summary.json"))
			if s.Run.Complete || s.Run.Events != 2000 || !strings.HasPrefix(s.Run.Incomplete, "stopped by -max-events 2000 after 2000 events") {
				t.Errorf("summary.json run: %+v", s.Run)
			}
			for _, c := range s.Collectives {
				if c.EndUs == 0 {
					t.Errorf("summary.json lists an unfinished collective: %+v", c)
				}
			}
			if tc.csv != "" {
				first, _, _ := strings.Cut(readFile(t, filepath.Join(part, tc.csv)), "\n")
				if !strings.HasPrefix(first, "# incomplete: stopped by -max-events 2000") {
					t.Errorf("%s begins %q", tc.csv, first)
				}
			}
			// A limit above the run's events leaves it complete and its outputs unchanged.
			same := filepath.Join(dir, tc.name+"-same")
			if code, _, errOut := runCLI(t, dir, append(tc.args, "-o", same, "-max-events", "100000000", "-max-wall", "1h")...); code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if readFile(t, filepath.Join(same, "fct.txt")) != fullFCT {
				t.Error("a limit the run does not reach changed fct.txt")
			}
		})
	}
}

// simd moe run -mode event stops the same way: metrics.json of the layers that finished,
// marked incomplete, and fct.txt.
func TestMoERunMaxEvents(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w")
	if code, _, errOut := runCLI(t, dir, "moe", "gen", "-nodes", "2", "-gps", "4", "-batch", "2", "-layers", "4", "-iters", "1", "-o", w); code != exitOK {
		t.Fatal(errOut)
	}
	out := filepath.Join(dir, "out")
	code, stdout, errOut := runCLI(t, dir, "moe", "run", "-plan", "deepep", "-mode", "event", "-w", w, "-o", out, "-max-events", "300")
	if code != exitStopped {
		t.Fatalf("exit %d: %s\n%s", code, stdout, errOut)
	}
	var m struct {
		LayerLatencyS []float64 `json:"layer_latency_s"`
		Incomplete    string    `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "metrics.json"))), &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Incomplete, "stopped by -max-events 300 after 300 events") || len(m.LayerLatencyS) >= 4 {
		t.Errorf("metrics.json: %+v", m)
	}
	if readFile(t, filepath.Join(out, "fct.txt")) == "" {
		t.Error("empty fct.txt")
	}
	noTemporaries(t, out)
}

// -max-wall stops a run that takes longer (looked at every few thousand events); a negative
// one is refused.
func TestMaxWall(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "-max-wall", "-1s", "-o", "neg"); code != exitBadInput || !strings.Contains(errOut, "-max-wall -1s: expected a duration of 0") {
		t.Errorf("-max-wall -1s: exit %d: %s", code, errOut)
	}
	code, _, errOut := runCLI(t, dir, "-w", "example:microAllReduce.txt", "-g", "64", "-o", "out", "-max-wall", "1ns")
	if code != exitStopped || !strings.Contains(errOut, "stopped by -max-wall 1ns") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := readSummary(t, filepath.Join(dir, "out", "summary.json")); s.Run.Complete || s.Run.Events != sim.WatchEvents {
		t.Errorf("summary.json run: %+v", s.Run)
	}
}

// SIGINT and SIGTERM stop a run the same way, with 130 and 143 as exit statuses. The run (a
// 1 GiB ring all-reduce over 512 GPUs, several seconds) is this test binary run as simd; the
// signal is sent once its outputs are open.
func TestSignalStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simd as a separate process")
	}
	// The shipped SimAI.conf with congestion control off: fct.txt on, so the test sees when the
	// outputs are open.
	conf := writeFile(t, t.TempDir(), "SimAI.conf", regexp.MustCompile(`(?m)^CC_MODE .*$`).ReplaceAllString(string(configs.ShippedSimAIConfText()), "CC_MODE 0"))
	work := mustAbs(t, "../../bench/scenarios/allreduce-1GiB.txt")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		cmd := exec.Command(os.Args[0], "-w", work, "-g", "512", "-c", conf, "-o", out, "-quiet")
		cmd.Env = append(os.Environ(), "SIMD_TEST_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			if m, _ := filepath.Glob(filepath.Join(out, ".fct.txt.tmp*")); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the run never opened its outputs")
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if want := 128 + int(sig); code != want {
			t.Fatalf("%v: exit %d (%v), want %d: %s", sig, code, err, want, stderr.String())
		}
		s := readSummary(t, filepath.Join(out, "summary.json"))
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
		if s.Run.Complete || !strings.HasPrefix(s.Run.Incomplete, "stopped by "+name) {
			t.Errorf("%v: summary.json run: %+v", sig, s.Run)
		}
		first, _, _ := strings.Cut(readFile(t, filepath.Join(out, "EndToEnd.csv")), "\n")
		if !strings.HasPrefix(first, "# incomplete: stopped by "+name) {
			t.Errorf("%v: EndToEnd.csv begins %q", sig, first)
		}
		noTemporaries(t, out)
	}
}

// A sweep that receives a signal starts no more runs and exits with 128 + the signal's number
// (here the signal is recorded before the sweep starts, so no run starts at all).
func TestSweepStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	spec := mustAbs(t, "../../configs/sweep/spec.yaml")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(process.Signal(syscall.SIGINT))
	var stdout, stderr strings.Builder
	code := sweepContext(ctx, []string{spec, "-o", filepath.Join(dir, "out")}, &stdout, &stderr)
	if errOut := stderr.String(); code != 130 || !strings.Contains(errOut, "stopped by SIGINT") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "out", "*", "manifest.json")); len(m) != 0 {
		t.Errorf("runs started after the signal: %v", m)
	}
}
