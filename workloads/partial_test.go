package workloads

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"simd/ccl"
	"simd/engine"
)

// A pass stopped part-way (TestRunnerTimeline's timeline) reports the layers it finished: at
// 230 ns layer 1's weight-gradient all-reduce (227–258) still runs, at 260 ns it is done and
// only layer 0 (its wg collective ends at 1239) is not.
func TestRunnerPartial(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 7 ALLREDUCE 1000 0\n" +
		"l1 -1 20 ALLREDUCE 50 3 ALLREDUCE 40 2 ALLREDUCE 30 1\n"
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	for _, tc := range []struct {
		stopNs   int64
		finished []bool
		rows     int
	}{
		{230, []bool{false, false}, 0},
		{260, []bool{false, true}, 1},
	} {
		w, _ := mustParse(t, "w", text)
		s := engine.NewScheduler()
		r := NewRunner(w, l, s, &fixedNetwork{s: s})
		s.AtFunc(engine.Time(tc.stopNs)*engine.Nanosecond, s.Stop)
		if _, err := r.Run(); err == nil {
			t.Fatalf("stop at %d ns: Run returned no error for an unfinished pass", tc.stopNs)
		}
		res := r.Partial()
		if ns(res.End) != tc.stopNs || !res.Stopped {
			t.Errorf("stop at %d ns: End %d ns, Stopped %v", tc.stopNs, ns(res.End), res.Stopped)
		}
		for i, want := range tc.finished {
			if res.Done(i) != want {
				t.Errorf("stop at %d ns: layer %d done = %v, want %v", tc.stopNs, i, res.Done(i), want)
			}
		}
		rep, err := EventEndToEnd(w, res, AnalyticalOptions{Layout: l, FileName: "w"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != tc.rows {
			t.Errorf("stop at %d ns: %d report rows, want %d", tc.stopNs, len(rep.Rows), tc.rows)
		}
		// Totals are up to the stop: compute executed so far, the rest exposed.
		if got := rep.Summary.Compute + rep.Summary.Exposed; math.Abs(got-float64(tc.stopNs)/1000) > 1e-9 {
			t.Errorf("stop at %d ns: compute + exposed = %v us", tc.stopNs, got)
		}
		rep.Incomplete = "stopped by a test"
		var b bytes.Buffer
		if err := rep.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(b.String(), "\n"); first != "# incomplete: stopped by a test" {
			t.Errorf("first line %q", first)
		}
	}
	// A complete pass is done everywhere and its report has no mark.
	res, _ := runWith(t, text, l, true)
	if res.Stopped || !res.Done(0) || !res.Done(1) {
		t.Errorf("complete pass: Stopped %v, done %v %v", res.Stopped, res.Done(0), res.Done(1))
	}
}
