package main

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Under DCQCN a run of SimAI's ns-3 is one draw of its ECN marks: a switch port between KMIN and
// KMAX marks a packet when a uniform draw falls below RED's probability, and which flows are cut,
// and how often, follows the draws. Where a flow is cut several times and then waits out
// RP_TIMER the collective's time moves by tens of percent from one draw to the next, so one ns-3
// run is no target for one simd run there. A case's draws/<N>/ holds ns-3 run again on the same
// inputs with its random numbers' run number N (NS_GLOBAL_VALUE RngRun=N, with
// PartitionSchedulingMethod=BySimulationTime so that the run repeats): case.txt, fct.txt.gz and,
// for a workload case, its report. TestNS3Draws runs simd with -seed 1 … n (n: ns-3's runs, the
// case's and its draws) and compares the means of the spans of the flows (last finish − first
// start, the collective's time as the fabric sees it; rank 0's report can end well before the
// last flow): |mean simd / mean ns-3 − 1|, bounded by testdata/ns3ref/draws.txt, which
// go test ./cmd/simd -run NS3Draws -update rewrites (the measured value rounded up to 3
// decimals, plus 0.01). -v prints the table; bench/ns3draws prints it with the binary.
const ns3DrawsBounds = "testdata/ns3ref/draws.txt"

// ns3DrawsShortMaxFCT is the largest stored fct.txt(.gz) of a case whose draws run under -short:
// each runs n times (under the race detector too).
const ns3DrawsShortMaxFCT = 16 << 10

// ns3DrawsScore compares a case's spans over ns-3's draws with simd's over its seeds, µs.
type ns3DrawsScore struct {
	ns3, simd []float64
	err       float64 // |mean(simd) / mean(ns3) − 1|
}

func scoreNS3Draws(ns3, simd []float64) (ns3DrawsScore, error) {
	if len(ns3) == 0 || len(simd) == 0 {
		return ns3DrawsScore{}, fmt.Errorf("no spans to compare (ns-3 %d, simd %d)", len(ns3), len(simd))
	}
	m := mean(ns3)
	if !(m > 0) {
		return ns3DrawsScore{}, fmt.Errorf("ns-3's mean span %g is not positive", m)
	}
	return ns3DrawsScore{ns3: ns3, simd: simd, err: math.Abs(mean(simd)/m - 1)}, nil
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// ns3DrawSpans reads the spans of a case's ns-3 runs: its own, then its draws'.
func ns3DrawSpans(c ns3Case) ([]float64, error) {
	var out []float64
	for _, d := range append([]string{c.dir}, c.draws...) {
		span, ok, err := ns3FCTSpan(filepath.Join(d, "fct.txt"))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: no flows", d)
		}
		out = append(out, span)
	}
	return out, nil
}

func (s ns3DrawsScore) row(name string) string {
	rng := func(v []float64) string {
		return fmt.Sprintf("%.1f %.1f %.1f", slices.Min(v), mean(v), slices.Max(v))
	}
	return fmt.Sprintf("%-38s %3d %23s %23s %7.4f", name, len(s.ns3), rng(s.ns3), rng(s.simd), s.err)
}

const ns3DrawsHead = "case                                     n   ns3 min/mean/max (us)  simd min/mean/max (us)     err"

func readNS3DrawsBounds(path string) (map[string]float64, error) {
	return readNS3BoundLines(path, 1, "CASE MEAN_SPAN_ERROR_BOUND", func(f []string) (float64, bool) {
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	})
}

func writeNS3DrawsBounds(path string, bounds map[string]float64) error {
	const header = "# Bounds of TestNS3Draws (cmd/simd/ns3draws_test.go), one line per case of this folder with draws/:\n" +
		"# case, the largest |mean simd span / mean ns-3 span - 1| over simd's seeds 1..n and ns-3's n runs\n" +
		"# (the case's and its draws'), the measured value rounded up to 3 decimals plus 0.01; rewrite with\n" +
		"#   go test ./cmd/simd -run NS3Draws -update\n"
	return writeNS3BoundLines(path, header, bounds, func(v float64) string { return fmt.Sprintf("%.3f", v) })
}

// TestNS3Draws scores simd's spread over its seeds against ns-3's over its random numbers on
// the reference cases with draws/, and checks the error of the means against draws.txt.
func TestNS3Draws(t *testing.T) {
	var cases []ns3Case
	for _, c := range ns3Cases(t, ns3RefDir) {
		if len(c.draws) > 0 {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("no case of %s has draws/", ns3RefDir)
	}
	bounds := boundsOrUpdate(t, ns3DrawsBounds, "NS3Draws", readNS3DrawsBounds)
	var rows []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && ns3FCTSize(c) > ns3DrawsShortMaxFCT {
				t.Skipf("-short: the reference has %d bytes of FCTs, run %d times", ns3FCTSize(c), 1+len(c.draws))
			}
			ref, err := ns3DrawSpans(c)
			if err != nil {
				t.Fatal(err)
			}
			var spans []float64
			for seed := 1; seed <= len(ref); seed++ {
				r := runNS3Case(t, ns3RefDir, c, "-seed", strconv.Itoa(seed))
				if r.failed != "" {
					t.Fatalf("simd -seed %d failed: %s", seed, r.failed)
				}
				span, ok, err := ns3FCTSpan(filepath.Join(r.out, "fct.txt"))
				if err != nil || !ok {
					t.Fatalf("simd -seed %d: no flows' span: %v", seed, err)
				}
				spans = append(spans, span)
			}
			s, err := scoreNS3Draws(ref, spans)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, s.row(c.name))
			if *updateGolden {
				bounds[c.name] = ns3BoundOf(s.err)
				return
			}
			b, ok := bounds[c.name]
			switch {
			case !ok:
				t.Errorf("no line in %s (go test ./cmd/simd -run NS3Draws -update writes it)", ns3DrawsBounds)
			case s.err > b:
				t.Errorf("the mean span's error %.4f is above its bound %.3f:\n%s\n%s", s.err, b, ns3DrawsHead, s.row(c.name))
			}
		})
	}
	if *updateGolden {
		dropStaleBounds(bounds, cases)
		if err := writeNS3DrawsBounds(ns3DrawsBounds, bounds); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("SimAI's ns-3 over its draws against simd over its seeds (spans of the flows):\n%s\n%s", ns3DrawsHead, strings.Join(rows, "\n"))
}

// TestNS3DrawsRead checks how a case's draws are found and scored: every draws/<N>/ with a
// case.txt of the case's inputs, in name order; one of other inputs is an error; the score is
// the error of the means.
func TestNS3DrawsRead(t *testing.T) {
	const caseTxt = "flows f.txt\ntopology topo1\nenv AS_SEND_LAT=6\n"
	fct := func(end int) string {
		return fmt.Sprintf("0b000001 0b000101 10000 100 4096 1000 500 400\n0b000001 0b000101 10001 100 4096 2000 %d 400\n", end-2000)
	}
	tests := []struct {
		name    string
		draws   map[string][2]string // folder: case.txt, fct.txt
		wantErr string
		want    []float64 // the spans, µs: the case's (3 µs), then the draws'
	}{
		{name: "no draws", want: []float64{3}},
		{name: "two draws in name order",
			draws: map[string][2]string{"3": {caseTxt, fct(9000)}, "2": {caseTxt, fct(5000)}},
			want:  []float64{3, 4, 8}},
		{name: "a draw of other inputs",
			draws:   map[string][2]string{"2": {"flows g.txt\ntopology topo1\n", fct(5000)}},
			wantErr: "differ from the case's"},
		{name: "a folder without case.txt is no draw",
			draws: map[string][2]string{"2": {"", fct(5000)}},
			want:  []float64{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			files := map[string]string{"case.txt": caseTxt, "fct.txt": fct(4000)}
			for d, f := range tc.draws {
				if f[0] != "" {
					files[filepath.Join("draws", d, "case.txt")] = f[0]
				}
				files[filepath.Join("draws", d, "fct.txt")] = f[1]
			}
			writeCaseFiles(t, dir, files)
			c, ok := readCaseWant(t, dir, tc.wantErr)
			if !ok {
				return
			}
			got, err := ns3DrawSpans(c)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("spans %v, want %v", got, tc.want)
			}
		})
	}
	// The error of the means: ns-3 3, 4, 8 (mean 5); simd 4, 6.5 (mean 5.25) → 0.05.
	s, err := scoreNS3Draws([]float64{3, 4, 8}, []float64{4, 6.5})
	if err != nil || math.Abs(s.err-0.05) > 1e-12 {
		t.Errorf("scoreNS3Draws: %+v, %v; want error 0.05", s, err)
	}
	if _, err := scoreNS3Draws(nil, []float64{1}); err == nil {
		t.Error("scoreNS3Draws without ns-3 spans: no error")
	}
}

// TestNS3BoundFiles checks the two bounds files' readers: what the writers write reads back the
// same, and a malformed line is an error naming the file, the line and what was expected.
func TestNS3BoundFiles(t *testing.T) {
	dir := t.TempDir()
	ref := map[string]ns3Bound{"a": {0.011, -1, -1}, "b": {0.02, 0.05, 0.3}}
	draws := map[string]float64{"a": 0.016, "c": 0.129}
	refPath, drawsPath := filepath.Join(dir, "bounds.txt"), filepath.Join(dir, "draws.txt")
	if err := writeNS3Bounds(refPath, ref); err != nil {
		t.Fatal(err)
	}
	if err := writeNS3DrawsBounds(drawsPath, draws); err != nil {
		t.Fatal(err)
	}
	if got, err := readNS3Bounds(refPath); err != nil || !maps.Equal(got, ref) {
		t.Errorf("bounds.txt read back %v, %v; want %v", got, err, ref)
	}
	if got, err := readNS3DrawsBounds(drawsPath); err != nil || !maps.Equal(got, draws) {
		t.Errorf("draws.txt read back %v, %v; want %v", got, err, draws)
	}
	tests := []struct {
		name, body string
		read       func(string) error
		want       string
	}{
		{"bounds: a field short", "# c\n\na 0.01 0.02\n", func(p string) error { _, err := readNS3Bounds(p); return err },
			`:3: "a 0.01 0.02": expected CASE LAYER_BOUND`},
		{"bounds: not a number", "a 0.01 x -\n", func(p string) error { _, err := readNS3Bounds(p); return err },
			`:1: "a 0.01 x -": expected CASE LAYER_BOUND`},
		{"draws: a field more", "a 0.01 0.02\n", func(p string) error { _, err := readNS3DrawsBounds(p); return err },
			`:1: "a 0.01 0.02": expected CASE MEAN_SPAN_ERROR_BOUND`},
		{"draws: not a number", "a -\n", func(p string) error { _, err := readNS3DrawsBounds(p); return err },
			`:1: "a -": expected CASE MEAN_SPAN_ERROR_BOUND`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bounds.txt")
			writeCaseFiles(t, filepath.Dir(p), map[string]string{"bounds.txt": tc.body})
			err := tc.read(p)
			if err == nil || !strings.Contains(err.Error(), p+tc.want) {
				t.Errorf("error %v, want one with %q", err, p+tc.want)
			}
		})
	}
}
