package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plotTitles are the title of each plot, which its SVG must hold.
var plotTitles = map[string]string{
	"fct_slowdown_cdf": "FCT slowdown CDF",
	"link_utilisation": "Link utilisation by tier",
	"busiest_links":    "busiest links of each tier",
	"layer_breakdown":  "Time per layer",
	"compare":          "Analytical vs event time per collective",
}

// checkPlots checks that dir holds valid PNG and SVG files of the named plots and returns their
// bytes by file name.
func checkPlots(t *testing.T, dir string, names ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range names {
		pngData, err := os.ReadFile(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil {
			t.Errorf("%s.png: %v", name, err)
		} else if b := img.Bounds(); b.Dx() != 768 || b.Dy() < 480 {
			// 8 inches wide at the PNG backend's 96 dpi; at least 5 inches tall.
			t.Errorf("%s.png is %d×%d pixels, want 768 wide and at least 480 tall", name, b.Dx(), b.Dy())
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte(plotTitles[name])) {
			t.Errorf("%s.svg: not an SVG with the title %q", name, plotTitles[name])
		}
		out[name+".png"], out[name+".svg"] = pngData, svg
	}
	return out
}

func TestPlotFlag(t *testing.T) {
	all := []string{"fct_slowdown_cdf", "link_utilisation", "busiest_links", "layer_breakdown", "compare"}
	for _, tc := range []struct {
		mode  string
		plots []string
	}{
		{"event", all[:4]},
		{"compare", all},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var runs []map[string][]byte
			for range 2 {
				dir := t.TempDir()
				code, stdout, stderr := runCLI(t, dir, "-o", "out", "-mode", tc.mode, "-plot", "-quiet")
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !strings.Contains(stdout, "plot: out/layer_breakdown.svg") {
					t.Errorf("stdout does not list the plots:\n%s", stdout)
				}
				if tc.mode == "event" && !strings.Contains(stderr, "skipped compare") {
					t.Errorf("stderr does not say the compare plot was skipped:\n%s", stderr)
				}
				runs = append(runs, checkPlots(t, filepath.Join(dir, "out"), tc.plots...))

				// simd plot DIR redraws the same files.
				code, _, stderr = runCLI(t, dir, "plot", "out", "-o", "again")
				if code != 0 {
					t.Fatalf("simd plot: exit %d: %s", code, stderr)
				}
				again := checkPlots(t, filepath.Join(dir, "again"), tc.plots...)
				for name, data := range runs[len(runs)-1] {
					if !bytes.Equal(data, again[name]) {
						t.Errorf("simd plot: %s differs from -plot's", name)
					}
				}
			}
			for name, data := range runs[0] {
				if !bytes.Equal(data, runs[1][name]) {
					t.Errorf("%s differs between two runs", name)
				}
			}
		})
	}
}

func TestPlotPartialFolder(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, dir, "-o", "out", "-quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(dir, "out", "fct.txt")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, dir, "plot", "out")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"skipped fct_slowdown_cdf: no fct.txt", "skipped compare: no compare.csv"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout, "fct_slowdown_cdf") {
		t.Errorf("drew the FCT plot without fct.txt:\n%s", stdout)
	}
	checkPlots(t, filepath.Join(dir, "out"), "layer_breakdown")
	// A run without -plot has no link_classes.csv: the link plot falls back to bw.txt and says
	// so, and busiest_links is skipped with a note.
	svg, err := os.ReadFile(filepath.Join(dir, "out", "link_utilisation.svg"))
	if err != nil || !bytes.Contains(svg, []byte("no link_classes.csv in this folder")) {
		t.Errorf("link_utilisation.svg does not say it fell back to bw.txt (%v)", err)
	}
	if !strings.Contains(stderr, "skipped busiest_links: no links.csv") {
		t.Errorf("stderr lacks the busiest_links note:\n%s", stderr)
	}
}

func TestPlotAnalyticalPrefix(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, dir, "-mode", "analytical", "-o", "out", "-plot"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first := checkPlots(t, filepath.Join(dir, "out"), "microAllReduce-layer_breakdown")
	// simd plot finds the prefix of the folder's one EndToEnd.csv.
	if code, _, stderr := runCLI(t, dir, "plot", "out", "-o", "again"); code != 0 {
		t.Fatalf("simd plot: exit %d: %s", code, stderr)
	}
	again := checkPlots(t, filepath.Join(dir, "again"), "microAllReduce-layer_breakdown")
	for name, data := range first {
		if !bytes.Equal(data, again[name]) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "file", "x")
	if err := os.Mkdir(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "bad/fct.txt", "0b000001 0b000101 10000 100 notanumber 0 1 1\n")
	for _, args := range [][]string{
		{"plot"},
		{"plot", "missing"},
		{"plot", "file"},
		{"plot", "a", "b"},
		{"plot", "-x", "."},
		{"plot", "bad"},
	} {
		code, _, stderr := runCLI(t, dir, args...)
		if code != 2 || !strings.HasPrefix(stderr, "simd plot: ") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}
