package workloads

import (
	"bytes"
	"strings"
	"testing"

	"simd/engine"
)

// The event report of a hand-made run: layer 0's forward collective took 100 µs, all of it
// exposed; layer 1's weight-gradient collective took 250 µs of which 200 were waited for. The
// pass ended at 1000 µs after 700 µs of compute, so 300 µs are exposed in all: 100 TP, 200 DP.
func TestEventEndToEnd(t *testing.T) {
	w, _ := mustParse(t, "ev", "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n"+
		"embedding_layer -1 300000 ALLREDUCE 104857600 0 NONE 0 0 NONE 0 1\n"+
		"l1 -1 100000 NONE 0 200000 NONE 0 100000 ALLREDUCE 52428800 1\n")
	us := engine.Microsecond
	run := &RunResult{End: 1000 * us, Layers: [][3]PhaseStats{
		{{Compute: 300 * us, Comm: 100 * us, Exposed: 100 * us, Issued: 1}, {}, {}},
		{{Compute: 100 * us}, {Compute: 200 * us}, {Compute: 100 * us, Comm: 250 * us, Exposed: 200 * us, Issued: 1}},
	}}
	rep, err := EventEndToEnd(w, run, AnalyticalOptions{Layout: w.Layout(4, 4), FileName: "ev-", Overlap: Overlap{PP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Compute != 700 || s.Exposed != 300 || s.TPComm != 100 || s.DPComm != 200 || s.Total != 1000 {
		t.Errorf("summary %+v", s)
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	want := []string{
		"File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time",
		"ev-, 200 (20.00%), 0 (0.00%), 100 (10.00%), 0 (0.00%), 0 (0.00%), 0 (0.00%), 700 (70.00%), 300 (30.00%), 1000",
		"layer_name,test1,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw,workload finished at",
		// 100 MiB in 100 µs = 976.5625 GiB/s; all-reduce busbw ×2(n−1)/n with n = TP 2.
		"embedding_layer,test1,300.000000,0.000000,0.000000,100.000000,0.000000,0.000000,100.000000,976.562500,976.562500,0.000000,-nan,0.000000,0.000000,-nan,0.000000,1000.000000",
		// 50 MiB in 250 µs on the DP group of 2 ranks.
		"l1,test1,100.000000,100.000000,200.000000,0.000000,200.000000,0.000000,0.000000,-nan,0.000000,250.000000,195.312500,195.312500,0.000000,-nan,0.000000,1000.000000",
		"SUM,test1,400.000000,100.000000,200.000000,100.000000,200.000000,0.000000,100.000000,NONE,NONE,250.000000,NONE,NONE,0.000000,NONE,NONE",
		"total exposed comm,300.000000,total comp,700.000000,total time,1000.000000",
		"",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), buf.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
}
