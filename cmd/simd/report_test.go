package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -report writes PREFIXreport.html next to the run's outputs, and simd report DIR writes the
// same bytes from the folder afterwards.
func TestReportFlag(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		dir    string // the folder of the outputs
		prefix string
		holds  []string
	}{
		{"event", []string{"-o", "out", "-quiet"}, "out", "", []string{"<th>mode</th><td>event</td>", "FCT slowdown CDF"}},
		{"compare", []string{"-o", "out", "-mode", "compare", "-quiet"}, "out", "", []string{"Analytical vs event per collective"}},
		{"analytical with a prefix in a sub-folder", []string{"-mode", "analytical", "-r", "sub/run-"}, "results/sub", "run-",
			[]string{"<th>mode</th><td>analytical</td>", "<th>file name</th><td>run-</td>", "Time per layer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runCLI(t, dir, append(tc.args, "-report")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			path := filepath.Join(tc.dir, tc.prefix+"report.html")
			if !strings.Contains(stdout, "report: "+path) {
				t.Errorf("stdout does not name %s:\n%s", path, stdout)
			}
			page := readFile(t, filepath.Join(dir, path))
			for _, want := range tc.holds {
				if !strings.Contains(page, want) {
					t.Errorf("the report does not hold %q", want)
				}
			}
			code, _, stderr = runCLI(t, dir, "report", tc.dir, "-o", "again.html")
			if code != 0 {
				t.Fatalf("simd report: exit %d: %s", code, stderr)
			}
			if readFile(t, filepath.Join(dir, "again.html")) != page {
				t.Error("simd report DIR wrote other bytes than -report")
			}
		})
	}
}

func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "bad/EndToEnd.csv", "a,b\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "expected one output folder, got 0"},
		{[]string{"report", "nothere"}, "nothere: not an output folder"},
		{[]string{"report", "empty"}, "not the output folder of a run"},
		{[]string{"report", "bad"}, "EndToEnd.csv: expected a summary header"},
	} {
		code, _, stderr := runCLI(t, dir, tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad", "report.html")); err == nil {
		t.Error("a failed report left report.html")
	}
}
