package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// -lookahead changes when the records of an event are asked for, never what is written: every
// output of an event run is the same byte for byte (summary.json's wall clock aside) with it
// on, off and chosen by the tables' size, under ideal sharing and under the shipped SimAI.conf
// (DCQCN, ECN, PFC and every monitor).
func TestLookAheadSameOutputs(t *testing.T) {
	dir := t.TempDir()
	ideal := idealConf(t, dir)
	ring := ringWorkload(t, dir)
	a2a := writeFile(t, dir, "a2a.txt", "MICRO\n1\na2a -1 0 NONE 0 0 NONE 0 0 ALLTOALL 16777216 0\n")
	for _, sc := range []struct {
		name string
		args []string
	}{
		{"ring-32", []string{"-w", ring, "-g", "32", "-c", ideal}},
		{"alltoall-32-shipped", []string{"-w", a2a, "-g", "32"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			var want map[string]string
			for _, v := range []string{"off", "on", "auto"} {
				run := t.TempDir()
				args := append([]string{"-o", "out", "-quiet", "-lookahead", v}, sc.args...)
				if code, _, errOut := runCLI(t, run, args...); code != 0 {
					t.Fatalf("-lookahead %s: %s", v, errOut)
				}
				got := outputsOf(t, filepath.Join(run, "out"))
				if strings.Count(got["fct.txt"], "\n") < 100 {
					t.Fatalf("-lookahead %s: the FCT log has %d lines", v, strings.Count(got["fct.txt"], "\n"))
				}
				if want == nil {
					want = got
					continue
				}
				if len(got) != len(want) {
					t.Errorf("-lookahead %s: files %v, want %v", v, keys(got), keys(want))
				}
				for f, w := range want {
					if got[f] != w {
						t.Errorf("-lookahead %s: %s differs from -lookahead off", v, f)
					}
				}
			}
		})
	}
}

// -lookahead takes auto, on or off.
func TestLookAheadFlag(t *testing.T) {
	for _, v := range []string{"yes", "1", "ON"} {
		code, _, errOut := runCLI(t, t.TempDir(), "-lookahead", v, "-w", "example:microAllReduce.txt", "-g", "16")
		if code != 2 || !strings.Contains(errOut, "-lookahead") {
			t.Errorf("-lookahead %s: exit %d, %s", v, code, errOut)
		}
	}
}
