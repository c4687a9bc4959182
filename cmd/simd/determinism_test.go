package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A determinism scenario from testdata/determinism/scenarios: simd's arguments, with {out}
// still to be replaced by the output folder of a run.
type detScenario struct {
	name string
	args []string
}

func loadDetScenarios(t *testing.T) []detScenario {
	t.Helper()
	data := mustAbs(t, "testdata/determinism")
	root := mustAbs(t, "../..")
	f, err := os.Open(filepath.Join(data, "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []detScenario
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		s := detScenario{name: fields[0]}
		for _, a := range fields[1:] {
			a = strings.ReplaceAll(a, "{data}", data)
			s.args = append(s.args, strings.ReplaceAll(a, "{root}", root))
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (s detScenario) argsFor(out string) []string {
	args := make([]string, len(s.args))
	for i, a := range s.args {
		args[i] = strings.ReplaceAll(a, "{out}", out)
	}
	return args
}

// Wall-clock figures, the only parts of the outputs that may change between runs: summary.json's
// wall_clock_seconds (the wallClock pattern of event_test.go) and "E events in S s" on stdout.
var stdoutWallClock = regexp.MustCompile(` in [0-9.]+ s\b`)

// detHashes is the SHA-256 of every file under out and of stdout, by name, the wall-clock
// figures blanked and out written as {out}.
func detHashes(t *testing.T, out string, stdout []byte) map[string]string {
	t.Helper()
	sum := func(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
	stdout = bytes.ReplaceAll(stdout, []byte(out), []byte("{out}"))
	h := map[string]string{"(stdout)": sum(stdoutWallClock.ReplaceAll(stdout, []byte(" in - s")))}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() == "summary.json" {
			b = wallClock.ReplaceAll(b, nil)
		}
		rel, _ := filepath.Rel(out, p)
		h[filepath.ToSlash(rel)] = sum(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) < 2 {
		t.Fatalf("%s: no output file", out)
	}
	return h
}

func diffHashes(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, k+" only in the first")
		} else if v != w {
			d = append(d, k+" differs")
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k+" only in the second")
		}
	}
	slices.Sort(d)
	return d
}

// The same inputs and -seed give the same bytes: each scenario of testdata/determinism runs
// twice in this process and once in a subprocess with GOMAXPROCS=1 and with GOMAXPROCS=2 (this
// test binary run as simd), and every output file and stdout must hash alike, summary.json's
// wall-clock field and stdout's wall-clock seconds aside; -short leaves out the subprocesses.
// bench/crossarch runs the same scenarios on other platforms.
func TestDeterminism(t *testing.T) {
	scenarios := loadDetScenarios(t)
	if len(scenarios) < 10 {
		t.Fatalf("%d scenarios", len(scenarios))
	}
	dir := t.TempDir()
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			var runs []map[string]string
			var names []string
			for i := range 2 {
				out := filepath.Join(dir, fmt.Sprintf("%s-in%d", s.name, i))
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				if code := run(s.argsFor(out), &stdout, &stderr); code != 0 {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
				runs = append(runs, detHashes(t, out, stdout.Bytes()))
				names = append(names, fmt.Sprintf("in-process run %d", i+1))
			}
			procsRuns := []string{"1", "2"}
			if testing.Short() {
				procsRuns = nil // each subprocess costs a second or two under -race
			}
			for _, procs := range procsRuns {
				out := filepath.Join(dir, s.name+"-procs"+procs)
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(os.Args[0], s.argsFor(out)...)
				cmd.Env = append(os.Environ(), "SIMD_TEST_MAIN=1", "GOMAXPROCS="+procs)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("GOMAXPROCS=%s: %v: %s", procs, err, stderr.String())
				}
				runs = append(runs, detHashes(t, out, stdout.Bytes()))
				names = append(names, "subprocess with GOMAXPROCS="+procs)
			}
			for i := 1; i < len(runs); i++ {
				if d := diffHashes(runs[0], runs[i]); len(d) > 0 {
					t.Errorf("%s and %s differ: %s", names[0], names[i], strings.Join(d, ", "))
				}
			}
		})
	}
}
