package moe

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestRunMetricsByHand(t *testing.T) {
	cfg := handCfg()
	cfg.Layers = 2
	iters := []Iteration{{Index: 0, Layers: []Layer{deepEPHandLayer(), deepEPHandLayer()}}}
	iters[0].Layers[1].Index = 1
	var seen []int
	m, err := Run(&cfg, iters, DeepEP, Seed, func(r LayerResult) error {
		seen = append(seen, r.Layer)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each layer takes 4 tokens' time (TestDeepEPEstimatesByHand) and moves 5 KB across.
	// Total 8/2²⁰ s; average 4/2²⁰ s = 4000/2²⁰ ms; 10 KB = 10/2²⁰ GB.
	// Payload 6 tokens · 1 KB · 2 layers · 1 iteration · top-2 = 24 KB over 8/2²⁰ s and 4 GPUs:
	// 24·2²⁰/32 KB/s = 0.75 GB/s.
	want := Metrics{
		TotalLatencyS:      8 * perTok,
		AvgLayerLatencyMs:  4 * perTok * 1000,
		InterNodeTrafficGB: 10 * perTok,
		AlgoBWGBps:         0.75,
		LayerLatencyS:      []float64{4 * perTok, 4 * perTok},
	}
	if m.TotalLatencyS != want.TotalLatencyS || m.AvgLayerLatencyMs != want.AvgLayerLatencyMs ||
		m.InterNodeTrafficGB != want.InterNodeTrafficGB || m.AlgoBWGBps != want.AlgoBWGBps ||
		len(m.LayerLatencyS) != 2 || m.LayerLatencyS[0] != want.LayerLatencyS[0] || m.LayerLatencyS[1] != want.LayerLatencyS[1] {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		t.Fatalf("callback saw layers %v", seen)
	}
}

func TestMetricsJSONKeys(t *testing.T) {
	b, err := json.Marshal(Metrics{LayerLatencyS: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"total_latency_s", "avg_layer_latency_ms", "inter_node_traffic_gb", "algo_bw_gbps", "layer_latency_s"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	if len(keys) != 5 {
		t.Errorf("keys %v", keys)
	}
}

// A layer with nothing to send takes no time; the bandwidth is then reported as 0, not a
// division by zero.
func TestRunEmpty(t *testing.T) {
	cfg := handCfg()
	l := Layer{Requests: []Request{{Token: 0, Src: 1, Experts: []int{2}, GPUs: []int{1}}}}
	for _, kind := range []Kind{DeepEP, FAST} {
		for _, model := range []Model{Seed, Exact} {
			m, err := Run(&cfg, []Iteration{{Layers: []Layer{l}}}, kind, model, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.TotalLatencyS != 0 || m.AlgoBWGBps != 0 || len(m.LayerLatencyS) != 1 || math.IsNaN(m.AvgLayerLatencyMs) {
				t.Errorf("%v %v: %+v", kind, model, m)
			}
		}
	}
}

func TestEstimateRejectsBadBandwidth(t *testing.T) {
	cfg, l := handCfg(), deepEPHandLayer()
	p, err := BuildDeepEP(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BWIntraGBps = 0
	if _, err := EstimateSeed(&cfg, p); err == nil || !strings.Contains(err.Error(), "bandwidth") {
		t.Errorf("zero bandwidth: %v", err)
	}
	if _, err := EstimateExact(&cfg, p); err == nil {
		t.Error("zero bandwidth accepted")
	}
}

func TestParse(t *testing.T) {
	if k, err := ParseKind("DeepEP"); err != nil || k != DeepEP {
		t.Error(k, err)
	}
	if k, err := ParseKind("fast"); err != nil || k != FAST {
		t.Error(k, err)
	}
	if _, err := ParseKind("ring"); err == nil {
		t.Error("ring accepted")
	}
	if m, err := ParseModel("exact"); err != nil || m != Exact {
		t.Error(m, err)
	}
	if _, err := ParseModel("event"); err == nil {
		t.Error("event accepted")
	}
}

// The generator's workload (seed 000's README shape, fewer tokens): both plans build, price
// and pass their invariants on every layer.
func TestGeneratedWorkload(t *testing.T) {
	cfg := seedDefaults()
	cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = 256, 2, 2, 1
	iters := mustGenerate(t, cfg)
	for _, kind := range []Kind{DeepEP, FAST} {
		for _, model := range []Model{Seed, Exact} {
			m, err := Run(&cfg, iters, kind, model, func(r LayerResult) error {
				if kind == FAST {
					checkFASTPlan(t, &cfg, &iters[r.Iteration].Layers[r.Layer], r.Plan)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !(m.TotalLatencyS > 0) || len(m.LayerLatencyS) != 2 || !(m.InterNodeTrafficGB > 0) {
				t.Errorf("%v %v: %+v", kind, model, m)
			}
		}
	}
}

// The numbers of docs/moe-estimates.md: seed 000's README example (4 nodes × 8 GPUs, 2 experts
// per GPU) with simd moe gen's defaults.
func TestDocExampleNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("prices 7.8 million requests four times")
	}
	cfg := Config{Nodes: 4, GPUsPerNode: 8, ExpertsPerGPU: 2, SeqLen: 2048, Batch: 32, TopK: 2, Zipf: 1.2,
		Layers: 12, Iters: 10, Hidden: 2048, DtypeBytes: 4, BWInterGBps: 50, BWIntraGBps: 900, Seed: 1}
	iters := mustGenerate(t, cfg)
	for _, tc := range []struct {
		kind                Kind
		model               Model
		total, avg, gb, bw  string
		interS, redistS, sn string
	}{
		{DeepEP, Seed, "0.078603", "0.6550", "79.0281", "47.7079", "0.078603", "0.000000", "0.030213"},
		{DeepEP, Exact, "0.078603", "0.6550", "79.0281", "47.7079", "0.078603", "0.000000", "0.030060"},
		{FAST, Seed, "0.093638", "0.7803", "90.0395", "40.0476", "0.093522", "0.000039", "0.000078"},
		{FAST, Exact, "0.099888", "0.8324", "90.0395", "37.5420", "0.093569", "0.006242", "0.000077"},
	} {
		var inter, redist, other float64
		m, err := Run(&cfg, iters, tc.kind, tc.model, func(r LayerResult) error {
			inter += r.Estimate.InterS
			redist += r.Estimate.RedistS
			other += r.Estimate.IntraS + r.Estimate.BalanceS
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{
			fmt.Sprintf("%.6f", m.TotalLatencyS), fmt.Sprintf("%.4f", m.AvgLayerLatencyMs), fmt.Sprintf("%.4f", m.InterNodeTrafficGB),
			fmt.Sprintf("%.4f", m.AlgoBWGBps), fmt.Sprintf("%.6f", inter), fmt.Sprintf("%.6f", redist), fmt.Sprintf("%.6f", other),
		}
		want := []string{tc.total, tc.avg, tc.gb, tc.bw, tc.interS, tc.redistS, tc.sn}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%v %v: got %v, want %v (update docs/moe-estimates.md too)", tc.kind, tc.model, got, want)
		}
	}
}
