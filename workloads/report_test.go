package workloads

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/analytical"
	"simd/configs"
	"simd/engine"
)

var update = flag.Bool("update", false, "rewrite golden files")

func analyticalReport(t *testing.T, w *Workload, l ccl.Layout, cost CostModel, opt AnalyticalOptions) *AnalyticalReport {
	t.Helper()
	run, err := NewRunner(w, l, engine.NewScheduler(), nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	opt.Layout = l
	rep, err := AnalyticalEndToEnd(w, run, cost, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func simaiModel(t *testing.T, l ccl.Layout, nps int, nv, nic float32) *analytical.Model {
	t.Helper()
	nicT, nvT, ataT, err := configs.ShippedRatioTables()
	if err != nil {
		t.Fatal(err)
	}
	m, err := analytical.New(analytical.Params{Layout: l, NICsPerServer: nps, NVLinkGBps: nv, NICGBps: nic,
		Ratios: analytical.Ratios{NIC: nicT, NVLink: nvT, AllToAll: ataT}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// SimAI_analytical on microAllReduce.txt with -g 8 -nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8 reports
// per-layer fwd comm 76 and 304 µs, TP exposed 380 µs, compute 1112 µs and total 1492 µs.
func TestMicroAllReduceMatchesSimAI(t *testing.T) {
	data, _ := configs.ExampleWorkload("microAllReduce.txt")
	w, _ := mustParse(t, "microAllReduce.txt", string(data))
	l := w.Layout(8, 8)
	rep := analyticalReport(t, w, l, simaiModel(t, l, 8, 360, 48.5), AnalyticalOptions{Overlap: Overlap{PP: 1}, FileName: "example-"})
	s := rep.Summary
	checks := []struct {
		name string
		got  string
		want string
	}{
		{"layer 0 fwd comm", fmtTime(us(rep.Rows[0].FwdComm)), "76"},
		{"layer 1 fwd comm", fmtTime(us(rep.Rows[1].FwdComm)), "304"},
		{"TP exposed", fmtTime(s.TPComm), "380"},
		{"compute", fmtTime(s.Compute), "1112"},
		{"total", fmtTime(s.Total), "1492"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s µs, want %s", c.name, c.got, c.want)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "microAllReduce-EndToEnd.csv", buf.Bytes())
}

// The canonical SimAI example (9216 GPUs, -nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8): its DP
// all-gather layer is the §5.3 worked check (13444 µs), and the whole report is a golden file.
func TestCanonicalWorkload(t *testing.T) {
	data, _ := configs.ExampleWorkload("workload_analytical.txt")
	w, _ := mustParse(t, "workload_analytical.txt", string(data))
	l := w.Layout(9216, 8)
	rep := analyticalReport(t, w, l, simaiModel(t, l, 8, 360, 48.5), AnalyticalOptions{Overlap: Overlap{PP: 1}, FileName: "example-"})
	if got := fmtTime(us(rep.Rows[0].WGComm)); got != "13444" {
		t.Errorf("grad_gather wg comm = %s µs, want 13444", got)
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "workload_analytical-EndToEnd.csv", buf.Bytes())
}

// sizeCost prices every collective at one nanosecond per byte, so the aggregation can be
// checked by hand.
type sizeCost struct{}

func (sizeCost) CollectiveNs(op ccl.Op, _ ccl.GroupKind, _ int, bytes uint64) (uint64, error) {
	if op == ccl.OpNone {
		return 0, nil
	}
	return bytes, nil
}

// The aggregation rules of §5.4, worked by hand (µs):
//
//	embedding_layer: fwd TP 5000 ns ×(1−0.5) → TP 2.5; excluded from the bubble; compute 1.
//	a: fwd EP 5000 ns, ig EP 3000 ns, ×(1−0.25) → EP 6.0 (the ig column follows the fwd
//	   column's group); wg DP_EP 7000 ×0.5 → DP_EP 3.5; bubble += (5000+2000+500+1000+3000)/1000
//	   = 11.5; compute 3.5.
//	b: fwd 1 byte raised to 4096 → 4096 ns; ig TP 2000; ×0.5 → TP 3.048; wg DP 11000 ×0.5 → 5.5;
//	   bubble += (4096+2000)/1000 = 6.096.
//	bubble = 17.596 × (PP−1)/(GA·VPP) = 17.596 × 1/2 = 8.798.
//	PP = 2·VPP·GA·(1 GiB / 1 GB/s) = 4e9 ns = 4e6 µs, ×(1−0.5) = 2e6.
//	exposed = 2.5 + (3.75+3.5+2.25) + (2.048+5.5+1) = 20.548; total = 4.5 + 20.548 + 8.798 + 2e6.
func TestAggregationRules(t *testing.T) {
	text := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 2 vpp: 1 ga: 2 all_gpus: 16 pp_comm: 1073741824\n3\n" +
		"embedding_layer -1 1000 ALLREDUCE 5000 0 NONE 0 0 NONE 0 1\n" +
		"a -1 2000 ALLTOALL_EP 5000 1000 ALLTOALL_EP 3000 500 ALLGATHER_DP_EP 7000 1\n" +
		"b -1 0 ALLGATHER 1 0 REDUCESCATTER 2000 0 REDUCESCATTER 11000 1\n"
	w, _ := mustParse(t, "agg", text)
	l := w.Layout(16, 8)
	rep := analyticalReport(t, w, l, sizeCost{}, AnalyticalOptions{
		Overlap:      Overlap{TP: 0.5, EP: 0.25, DP: 0.5, PP: 0.5},
		PipelineGBps: 1,
	})
	s := rep.Summary
	want := EndToEndSummary{DPComm: 5.5, DPEPComm: 3.5, TPComm: 5.548, EPComm: 6, PPComm: 2000000,
		Bubble: 8.798, Compute: 4.5, Exposed: 20.548, Total: 4.5 + 20.548 + 8.798 + 2000000}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(s.DPComm, want.DPComm) || !near(s.DPEPComm, want.DPEPComm) || !near(s.TPComm, want.TPComm) ||
		!near(s.EPComm, want.EPComm) || s.PPComm != want.PPComm || !near(s.Bubble, want.Bubble) ||
		!near(s.Compute, want.Compute) || !near(s.Exposed, want.Exposed) || !near(s.Total, want.Total) {
		t.Errorf("summary = %+v\nwant      %+v", s, want)
	}
	b := rep.Rows[2]
	if b.FwdComm != 4096 || b.FwdExposed != 2048 || b.IGExposed != 1000 || b.WGExposed != 5500 {
		t.Errorf("row b = %+v", b)
	}
	// algbw of 4096 bytes in 4096 ns = 1e9 B/s = 0.93 GiB/s; all-gather busbw ×(n−1)/n with n = TP 2.
	if fmtBW(b.FwdAlgBW) != "0.93" || fmtBW(b.FwdBusBW) != "0.47" {
		t.Errorf("row b fwd bandwidths %s %s", fmtBW(b.FwdAlgBW), fmtBW(b.FwdBusBW))
	}
}

// Exposed times are scaled in single precision even at ratio 0 (§5.6 rule 2): above 2^24 ns the
// count rounds.
func TestScaleExposedSinglePrecision(t *testing.T) {
	cases := []struct {
		ns    uint64
		ratio float32
		want  uint64
	}{
		{16777217, 0, 16777216},
		{3, 0.5, 1},
		{1000, 0, 1000},
		{1000, 1, 0},
	}
	for _, c := range cases {
		if got := scaleExposed(c.ns, c.ratio); got != c.want {
			t.Errorf("scaleExposed(%d, %v) = %d, want %d", c.ns, c.ratio, got, c.want)
		}
	}
}

func TestFormatting(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct{ got, want string }{
		{fmtTime(2.5), "2"}, {fmtTime(3.5), "4"}, {fmtTime(math.Inf(1)), "NaN or Inf"},
		{fmtBW(nan), "-nan"}, {fmtBW(float32(math.Inf(1))), "inf"}, {fmtBW(0.125), "0.12"}, {fmtBW(0), "0.00"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// A collective of size 0 in 0 ns: SimAI prints -nan; a NONE collective's busbw is 0.
	alg, bus := bandwidths(ccl.OpNone, 8, 0, 0)
	if fmtBW(alg) != "-nan" || fmtBW(bus) != "0.00" {
		t.Errorf("empty collective: %s %s", fmtBW(alg), fmtBW(bus))
	}
	// A raised 4-byte all-reduce priced by the small-message table (2 ranks, 10 µs): algbw 0.38.
	alg, _ = bandwidths(ccl.OpAllReduce, 2, 4096, 10000)
	if fmtBW(alg) != "0.38" {
		t.Errorf("algbw = %s, want 0.38", fmtBW(alg))
	}
}

func TestPipelineNeedsBandwidth(t *testing.T) {
	w, _ := mustParse(t, "pp", "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 pp: 2 pp_comm: 1048576\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n")
	l := w.Layout(2, 1)
	run, _ := NewRunner(w, l, engine.NewScheduler(), nil).Run()
	_, err := AnalyticalEndToEnd(w, run, sizeCost{}, AnalyticalOptions{Layout: l, Overlap: Overlap{PP: 0}})
	if err == nil || !strings.Contains(err.Error(), "pipeline") {
		t.Errorf("err = %v", err)
	}
	// With the default PP overlap 1 it costs nothing, as in SimAI.
	if _, err := AnalyticalEndToEnd(w, run, sizeCost{}, AnalyticalOptions{Layout: l, Overlap: Overlap{PP: 1}}); err != nil {
		t.Error(err)
	}
}
