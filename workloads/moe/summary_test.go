package moe

import (
	"fmt"
	"strings"
	"testing"
)

// The summary is seed 000's, its title naming how the layers were timed.
func TestMetricsWriteText(t *testing.T) {
	const sec = 1.0 / (1 << 20)
	m := Metrics{TotalLatencyS: sec, AvgLayerLatencyMs: sec * 1000, InterNodeTrafficGB: 2 * sec, AlgoBWGBps: 1, LayerLatencyS: []float64{sec}}
	rule := strings.Repeat("=", 50) + "\n"
	body := "Total Latency            : 0.000001 s\n" +
		"Avg Layer Latency        : 0.0010 ms\n" +
		"Total Inter-node Traffic : 0.0000 GB\n" +
		"Algorithmic Bandwidth    : 1.0000 GB/s\n"
	for _, c := range []struct {
		kind  Kind
		model Model
		title string
	}{
		{DeepEP, Seed, "DeepEP Final Results"},
		{FAST, Seed, "FAST Final Results"},
		{FAST, Exact, "FAST Final Results (exact model)"},
		{DeepEP, 0, "DeepEP Final Results (event mode)"},
	} {
		var b strings.Builder
		if err := m.WriteText(&b, c.kind, c.model); err != nil {
			t.Fatal(err)
		}
		if want := rule + c.title + "\n" + rule + body + rule; b.String() != want {
			t.Errorf("%v %v:\n%s\nwant\n%s", c.kind, c.model, b.String(), want)
		}
	}
}

// metrics.json is the metrics indented, with the note of a stopped run last.
func TestMetricsWriteJSON(t *testing.T) {
	m := Metrics{TotalLatencyS: 0.5, AvgLayerLatencyMs: 250, InterNodeTrafficGB: 1.5, AlgoBWGBps: 3, LayerLatencyS: []float64{0.25, 0.25}}
	fields := "{\n" +
		"  \"total_latency_s\": 0.5,\n" +
		"  \"avg_layer_latency_ms\": 250,\n" +
		"  \"inter_node_traffic_gb\": 1.5,\n" +
		"  \"algo_bw_gbps\": 3,\n" +
		"  \"layer_latency_s\": [\n" +
		"    0.25,\n" +
		"    0.25\n" +
		"  ]"
	for _, c := range []struct {
		m          Metrics
		incomplete string
		want       string
	}{
		{m, "", fields + "\n}\n"},
		{m, "stopped after 1 layer", fields + ",\n  \"incomplete\": \"stopped after 1 layer\"\n}\n"},
		{Summarize(&Config{}, nil, 0), "", "{\n  \"total_latency_s\": 0,\n  \"avg_layer_latency_ms\": 0,\n  \"inter_node_traffic_gb\": 0,\n  \"algo_bw_gbps\": 0,\n  \"layer_latency_s\": []\n}\n"},
	} {
		var b strings.Builder
		if err := c.m.WriteJSON(&b, c.incomplete); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("incomplete %q:\n%s\nwant\n%s", c.incomplete, b.String(), c.want)
		}
	}
}

// A layer's stages: a header, then each stage's weight and server permutation.
func TestLayerResultWriteStages(t *testing.T) {
	header := func(stages int) string {
		return fmt.Sprintf("iteration 2 layer 3: %d stages (weight: tokens per GPU; s→t: server s sends to server t)", stages)
	}
	two := []Stage{{Perm: []int{1, 0}, Weight: 1.5}, {Perm: []int{0, 1}, Weight: 2}}
	for _, c := range []struct {
		e    LayerEstimate
		want string
	}{
		{LayerEstimate{Stages: two, LastStage: 0}, header(2) + ", last with real traffic: 0\n" +
			"  stage 0  weight 1.5  0→1 1→0\n" +
			"  stage 1  weight 2  0→0 1→1\n"},
		{LayerEstimate{Stages: two[1:], LastStage: -1}, header(1) + "\n" +
			"  stage 0  weight 2  0→0 1→1\n"},
		{LayerEstimate{LastStage: -1}, header(0) + "\n"},
	} {
		var b strings.Builder
		if err := (LayerResult{Iteration: 2, Layer: 3, Estimate: c.e}).WriteStages(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
		}
	}
}
