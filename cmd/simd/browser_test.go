package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium is the path of a Chromium browser; it skips the test when none is installed or
// under -short.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	p, _ := exec.LookPath("chromium")
	if p == "" {
		t.Skip("no chromium installed")
	}
	return p
}

// browserErrors are the lines of Chromium's log that tell of a page's error: a console
// message of level error, an uncaught exception, a resource it could not load.
var browserErrors = regexp.MustCompile(`(?i)CONSOLE.*(error|uncaught)|Uncaught|Failed to load resource|net::ERR_`)

// The report of a small run opens in headless Chromium without network access and without an
// error, its DOM holds the plots and tables, and its screenshot is an image of more than one
// colour. Skipped when no Chromium is installed (.ci/run installs it).
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, dir, "-o", "out", "-mode", "compare", "-quiet", "-report"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, dir, "-o", "an", "-mode", "analytical", "-r", "x-", "-v", "1"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		page       string
		holds      []string
		screenshot bool // a second browser start: only for the report, to stay within seconds
	}{
		{"out/report.html", []string{"<svg class=\"plot\"", "Exposed communication by group", "Analytical vs event per collective", "Per layer"}, true},
		{"an/x-chart.html", []string{"<path ", "Total time:"}, false},
	} {
		t.Run(filepath.Base(tc.page), func(t *testing.T) {
			url := "file://" + filepath.Join(dir, tc.page)
			dom, log := runChromium(t, bin, "--dump-dom", url)
			for _, want := range tc.holds {
				if !strings.Contains(dom, want) {
					t.Errorf("the DOM does not hold %q", want)
				}
			}
			for _, line := range strings.Split(log, "\n") {
				if browserErrors.MatchString(line) {
					t.Errorf("browser: %s", line)
				}
			}
			if !tc.screenshot {
				return
			}
			shot := filepath.Join(t.TempDir(), "shot.png")
			runChromium(t, bin, "--screenshot="+shot, "--window-size=1024,1400", url)
			data, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if colours(img) < 2 {
				t.Error("the screenshot is of one colour")
			}
		})
	}
}

// runChromium runs headless Chromium, with no network access worth the name and a fresh
// profile, on args and returns its stdout and log (stderr).
func runChromium(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// colours counts the distinct colours of img, up to 2.
func colours(img image.Image) int {
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, a0 := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 || a != a0 {
				return 2
			}
		}
	}
	return 1
}
