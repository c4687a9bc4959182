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
// only layer 0 (its wg collective ends at 1239) is not. Compute and exposed time are those up to
// the stop: at 230 ns 3 of the 5 ns of layer 0's ig compute (227–232) have run, for 38 ns of
// compute, and 100 + 51 + 41 ns of TP collectives were waited for; at 260 ns the compute is
// all done (47 ns) and the end of the pass has waited 21 ns for layer 0's wg (DP).
func TestRunnerPartial(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 7 ALLREDUCE 1000 0\n" +
		"l1 -1 20 ALLREDUCE 50 3 ALLREDUCE 40 2 ALLREDUCE 30 1\n"
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	for _, tc := range []struct {
		stopNs     int64
		finished   []bool
		rows       int
		compute    float64 // µs
		tpUs, dpUs float64
	}{
		{230, []bool{false, false}, 0, 0.038, 0.192, 0},
		{260, []bool{false, true}, 1, 0.047, 0.192, 0.021},
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
		sm := rep.Summary
		if got := sm.Compute + sm.Exposed; math.Abs(got-float64(tc.stopNs)/1000) > 1e-9 {
			t.Errorf("stop at %d ns: compute + exposed = %v us", tc.stopNs, got)
		}
		if math.Abs(sm.Compute-tc.compute) > 1e-9 || math.Abs(sm.TPComm-tc.tpUs) > 1e-9 || math.Abs(sm.DPComm-tc.dpUs) > 1e-9 ||
			sm.DPEPComm != 0 || sm.EPComm != 0 {
			t.Errorf("stop at %d ns: compute %v µs, exposed TP %v DP %v DP_EP %v EP %v; want %v, %v, %v, 0, 0",
				tc.stopNs, sm.Compute, sm.TPComm, sm.DPComm, sm.DPEPComm, sm.EPComm, tc.compute, tc.tpUs, tc.dpUs)
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
