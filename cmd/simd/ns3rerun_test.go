package main

import (
	"math"
	"path/filepath"
	"testing"
)

// TestNS3Rerun checks how a case's rerun/ is read and scored: a rerun must name the case's
// inputs, and it is scored against the case's run as simd's run is (per-layer error, flows).
func TestNS3Rerun(t *testing.T) {
	const caseTxt = "workload w.txt\ntopology topo1\nenv AS_SEND_LAT=6\n"
	// One layer of 10 µs fwd comm in the case's report; the flows: two 1,000 ns flows.
	report := func(fwd string) string {
		return "h1\nh2\nh3\n" + "layer0,x,x,x,x,x,x,x," + fwd + ",x,x,0,x,x,0\n"
	}
	const fct = "0b000001 0b000101 10000 100 4096 0 1000 900\n0b000001 0b000101 10001 100 4096 0 1000 900\n"
	tests := []struct {
		name         string
		rerunCase    string // "" for no rerun/
		rerunFwd     string
		rerunFCT     string
		wantErr      string // in readNS3Case's error
		wantLayerErr float64
		wantMedian   float64
	}{
		{name: "no rerun", wantLayerErr: -1},
		{name: "the same run", rerunCase: caseTxt + "env AS_SEND_LAT=6 AS_SEND_LAT_NS=6002\n", rerunFwd: "10", rerunFCT: fct},
		{name: "a moved run", rerunCase: caseTxt, rerunFwd: "11",
			rerunFCT:     "0b000001 0b000101 10000 100 4096 0 1100 900\n0b000001 0b000101 10001 100 4096 0 1300 900\n",
			wantLayerErr: 0.1, wantMedian: 0.3},
		{name: "another workload", rerunCase: "workload v.txt\ntopology topo1\n", wantErr: "differ from the case's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			files := map[string]string{"case.txt": caseTxt, "ncclFlowModel_EndToEnd.csv": report("10"), "fct.txt": fct}
			if tc.rerunCase != "" {
				files["rerun/case.txt"] = tc.rerunCase
				files["rerun/ncclFlowModel_EndToEnd.csv"] = report(tc.rerunFwd)
				files["rerun/fct.txt"] = tc.rerunFCT
			}
			writeCaseFiles(t, dir, files)
			c, ok := readCaseWant(t, dir, tc.wantErr)
			if !ok {
				return
			}
			layers, flows := scoreNS3Rerun(c)
			if tc.wantLayerErr < 0 {
				if layers.problem == "" || flows.problem == "" {
					t.Fatalf("no rerun scored: %+v %+v", layers, flows)
				}
				if cell := (ns3Result{rerunLayers: layers, rerunFlows: flows}).rerunCell(); cell != "-" {
					t.Errorf("cell %q, want -", cell)
				}
				return
			}
			if layers.problem != "" || flows.problem != "" {
				t.Fatalf("problems: %q %q", layers.problem, flows.problem)
			}
			if math.Abs(layers.err-tc.wantLayerErr) > 1e-9 || math.Abs(flows.median-tc.wantMedian) > 1e-9 {
				t.Errorf("layer error %g, median %g; want %g, %g", layers.err, flows.median, tc.wantLayerErr, tc.wantMedian)
			}
		})
	}
}
