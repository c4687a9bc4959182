package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The ideal model bundles the flows of one path by default (-same-path bundled): a ring's
// channels are in flight together on each NVLink path, and the outputs are those of the flows
// apart. On a ring this small nothing rounds differently, so they are the same but for the
// order of fct.txt's lines of flows that end at one instant (a bundle reports its members that
// finish together at one event, in its own order) and the count of events
// (docs/performance.md, "Flows of one path", says where more differs).
func TestSamePathOutputs(t *testing.T) {
	dir := t.TempDir()
	ideal := idealConf(t, dir)
	ring := ringWorkload(t, dir)
	bundled := regexp.MustCompile(`"bundled": (\d+)`)
	var want map[string]string
	for _, v := range []string{"apart", "bundled"} {
		run := t.TempDir()
		code, _, errOut := runCLI(t, run, "-o", "out", "-quiet", "-log-level", "debug", "-same-path", v, "-w", ring, "-g", "32", "-c", ideal, "-send-lat", "0")
		if code != 0 {
			t.Fatalf("-same-path %s: %s", v, errOut)
		}
		m := bundled.FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("-same-path %s: no bundled count in the debug log:\n%s", v, errOut)
		}
		k, _ := strconv.Atoi(m[1])
		if (k > 0) != (v == "bundled") {
			t.Errorf("-same-path %s: %d flows bundled", v, k)
		}
		got := outputsOf(t, filepath.Join(run, "out"))
		for f := range got {
			got[f] = eventCount.ReplaceAllString(got[f], "")
		}
		lines := strings.Split(got["fct.txt"], "\n")
		slices.Sort(lines)
		got["fct.txt"] = strings.Join(lines, "\n")
		if strings.Count(got["fct.txt"], "\n") < 100 {
			t.Fatalf("-same-path %s: the FCT log has %d lines", v, strings.Count(got["fct.txt"], "\n"))
		}
		if want == nil {
			want = got
			continue
		}
		for f, w := range want {
			if got[f] != w {
				t.Errorf("-same-path %s: %s differs from -same-path apart", v, f)
			}
		}
	}
}

// eventCount is summary.json's count of engine events.
var eventCount = regexp.MustCompile(`"events": \d+`)

// -same-path takes bundled or apart.
func TestSamePathFlag(t *testing.T) {
	code, _, errOut := runCLI(t, t.TempDir(), "-same-path", "together", "-w", "example:microAllReduce.txt", "-g", "8")
	if code != 2 || !strings.Contains(errOut, "-same-path") {
		t.Errorf("exit %d, stderr %q; want 2 naming -same-path", code, errOut)
	}
}
