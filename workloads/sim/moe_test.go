package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"simd/configs"
	"simd/topo"
	"simd/workloads/moe"
)

// An event run's summary is the seed's, titled event mode, then a stopped run's note and the
// run's counts.
func TestMoEResultWriteText(t *testing.T) {
	m := moe.Metrics{TotalLatencyS: 0.5, AvgLayerLatencyMs: 250, InterNodeTrafficGB: 1.5, AlgoBWGBps: 3, LayerLatencyS: []float64{0.25, 0.25}}
	var metrics strings.Builder
	if err := m.WriteText(&metrics, moe.FAST, 0); err != nil || !strings.Contains(metrics.String(), "\nFAST Final Results (event mode)\n") {
		t.Fatalf("the metrics' own summary: %v\n%s", err, metrics.String())
	}
	for _, c := range []struct {
		r    MoEResult
		want string
	}{
		{MoEResult{Metrics: m, Flows: 12, Events: 345, Wall: 1500 * time.Millisecond}, "  simulated 12 flows, 345 events in 1.50 s\n"},
		{MoEResult{Metrics: m, Flows: 12, Events: 300, Wall: 20 * time.Millisecond, Stopped: EventLimitError{300}, Note: "1 of 2 layers finished"},
			"  incomplete: 1 of 2 layers finished\n  simulated 12 flows, 300 events in 0.02 s\n"},
	} {
		var b strings.Builder
		if err := c.r.WriteText(&b, moe.FAST); err != nil {
			t.Fatal(err)
		}
		if want := metrics.String() + c.want; b.String() != want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), want)
		}
	}
}

// An MoE run's fabric is -n's file or the default one, and must fit the workload's GPUs.
func TestMoETopology(t *testing.T) {
	dir := t.TempDir()
	fabric := func(gpus, gps int) string {
		tp, err := topo.DefaultFabric(gpus, gps)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tp.Write(&b); err != nil {
			t.Fatal(err)
		}
		return writeTestFile(t, dir, fmt.Sprintf("fabric-%d-%d", gpus, gps), b.String())
	}
	cfg := &moe.Config{Nodes: 2, GPUsPerNode: 4}
	missing, junk := filepath.Join(dir, "missing"), writeTestFile(t, dir, "junk", "junk\n")
	small, wide, big := fabric(4, 4), fabric(8, 8), fabric(16, 4)
	for _, c := range []struct {
		path string
		gpus int    // of the fabric, when it is accepted
		want string // the error
	}{
		{"", 8, ""},
		{big, 16, ""},
		{missing, 0, "-n: open " + missing + ": no such file or directory"},
		{junk, 0, junk + ":1: header node_num:"},
		{small, 0, "-n " + small + ": 4 GPUs, the workload has 8"},
		{wide, 0, "-n " + wide + ": 8 GPUs per server, the workload's plans assume 4"},
	} {
		tp, err := MoETopology(c.path, cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.path, err)
		case c.want == "" && (tp.NumGPUs() != c.gpus || tp.GPUsPerServer != 4):
			t.Errorf("%q: %d GPUs, %d per server", c.path, tp.NumGPUs(), tp.GPUsPerServer)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || !IsInputError(err)):
			t.Errorf("%q: error %v, want an input error starting %q", c.path, err, c.want)
		}
	}
}

// simd moe run -o writes fct.txt alone, whatever SimAI.conf switches on or off.
func TestNewFCTFiles(t *testing.T) {
	shipped, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	bare, _, err := configs.ParseSimAIConf(strings.NewReader("CC_MODE 0\n"), "SimAI.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, conf := range []configs.SimAIConf{shipped, bare} {
		fs := NewFCTFiles(t.TempDir(), &conf, "")
		for _, key := range streamedKeys {
			if fs.on[key] != (key == "FCT_OUTPUT_FILE") {
				t.Errorf("%s is %v", key, fs.on[key])
			}
		}
	}
}

func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The MoE estimates' bandwidths from a topology are a GPU's as the event mode's cluster sees
// them: NVLink 2880 Gb/s = 360 GB/s; network all of a NIC's ports, 2 × 200 Gb/s = 50 GB/s on
// the dual-ToR AlibabaHPN, 1 × 400 Gb/s = 50 GB/s on Spectrum-X, 1 × 100 Gb/s = 12.5 GB/s with
// -bw 100Gbps.
func TestMoEBandwidthsOf(t *testing.T) {
	for _, c := range []struct {
		topo        string
		set         func(o *topo.GeneratorOptions)
		nvl, netGBs float64
	}{
		{"AlibabaHPN", func(o *topo.GeneratorOptions) { o.GPUs, o.PSWs = 32, 4 }, 360, 50},
		{"Spectrum-X", func(o *topo.GeneratorOptions) { o.GPUs, o.PSWs = 16, 2 }, 360, 50},
		{"Spectrum-X", func(o *topo.GeneratorOptions) { o.GPUs, o.PSWs, o.NICRate, o.NVLinkRate = 16, 2, "100Gbps", "1600Gbps" }, 200, 12.5},
	} {
		o := topo.NewGeneratorOptions(c.topo, false, false, false)
		c.set(&o)
		g, err := o.Generate()
		if err != nil {
			t.Fatal(err)
		}
		b, err := MoEBandwidthsOf(g.Topology, g.FileName)
		if err != nil {
			t.Fatal(err)
		}
		want := MoEBandwidths{NVLinkGBps: c.nvl, NetworkGBps: c.netGBs, Source: "the topology " + g.FileName}
		if b != want {
			t.Errorf("%s: %+v, want %+v", g.FileName, b, want)
		}
	}
}

// ExecuteMoERun checks simd moe run's values in its order, each mistake an input error naming
// its flag; a good request prices the workload and writes metrics.json, in both modes.
func TestExecuteMoERun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	cfg := moe.Config{Nodes: 2, GPUsPerNode: 2, ExpertsPerGPU: 2, SeqLen: 4, Batch: 1, TopK: 2, Layers: 1, Iters: 1,
		Hidden: 64, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1, Seed: 1}
	if err := moe.GenerateDir(dir, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	ok := MoERunRequest{MoERequest: MoERequest{Workload: dir, ProtocolRules: ProtocolRules{Completion: "ack", Pacing: "packet", ECNMarking: "dequeue"}, Chunks: 1, Seed: 1},
		Plan: "deepep", Model: "seed", Mode: "estimate"}
	for _, c := range []struct {
		set  func(r *MoERunRequest)
		want string
	}{
		{func(r *MoERunRequest) { r.Plan = "" }, "-plan: required"},
		{func(r *MoERunRequest) { r.Plan = "tree" }, "-plan "},
		{func(r *MoERunRequest) { r.Model = "guess" }, "-model "},
		{func(r *MoERunRequest) { r.Stages = true }, "-stages: only -plan fast"},
		{func(r *MoERunRequest) { r.Timeline = "t.json" }, "-trace: only with -mode event"},
		{func(r *MoERunRequest) { r.Workload = " " }, "-w: required"},
		{func(r *MoERunRequest) { r.Workload = dir + "x" }, "-w " + dir + "x: "},
		{func(r *MoERunRequest) { r.Mode = "guess" }, `-mode "guess"`},
		{func(r *MoERunRequest) { r.Mode, r.Chunks = "event", 0 }, "-chunks 0"},
		{func(r *MoERunRequest) { r.Mode, r.MaxWall = "event", -time.Second }, "-max-wall -1s"},
		{func(r *MoERunRequest) { r.Mode, r.Threads = "event", -1 }, "-threads -1"},
		{func(r *MoERunRequest) { r.Mode, r.Plan, r.Stages = "event", "fast", true }, "-stages: only with -mode estimate"},
	} {
		r := ok
		c.set(&r)
		var b strings.Builder
		if err := ExecuteMoERun(&b, r); !IsInputError(err) || !strings.HasPrefix(err.Error(), c.want) || b.Len() != 0 {
			t.Errorf("%s: %v, want an input error starting %q", c.want, err, c.want)
		}
	}
	for _, mode := range []string{"estimate", "event"} {
		r := ok
		r.Mode, r.Out = mode, filepath.Join(t.TempDir(), "out")
		interrupted := false
		r.Interrupt = func() (context.Context, func()) { interrupted = true; return context.Background(), func() {} }
		var b strings.Builder
		if err := ExecuteMoERun(&b, r); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if _, err := os.Stat(filepath.Join(r.Out, "metrics.json")); err != nil || !strings.Contains(b.String(), "DeepEP Final Results") || interrupted != (mode == "event") {
			t.Errorf("%s: metrics.json %v, interrupted %v, summary:\n%s", mode, err, interrupted, b.String())
		}
	}
}
