package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"simd/topo"
	"simd/workloads/moe"
)

// moeRunWorkload writes a two-token workload on 2 servers × 2 GPUs (2 experts per GPU, 1 KB
// tokens, 1 GB/s = 2²⁰ KB/s both ways):
//
//	t0 on GPU 0 → experts 4, 6 (GPUs 2, 3): copy 0→2, forward 2→3
//	t1 on GPU 3 → experts 0, 2 (GPUs 0, 1): copy 3→1, forward 1→0
func moeRunWorkload(t *testing.T) string {
	t.Helper()
	cfg := moe.Config{Nodes: 2, GPUsPerNode: 2, ExpertsPerGPU: 2, SeqLen: 2, Batch: 1, TopK: 2, Zipf: 1,
		Layers: 1, Iters: 1, Hidden: 512, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1}
	it := moe.Iteration{Layers: []moe.Layer{{Requests: []moe.Request{
		{Token: 0, Src: 0, Experts: []int{4, 6}, GPUs: []int{2, 3}},
		{Token: 1, Src: 3, Experts: []int{0, 2}, GPUs: []int{0, 1}},
	}}}}
	dir := filepath.Join(t.TempDir(), "w")
	if err := moe.WriteDir(dir, cfg, []moe.Iteration{it}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runMoERunArgs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMoERun(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMoERunDeepEPSeed(t *testing.T) {
	dir := moeRunWorkload(t)
	outDir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runMoERunArgs("-plan", "deepep", "-w", dir, "-o", outDir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Every NIC and NVLink port carries at most one token: the layer takes 2⁻²⁰ s. 2 KB cross
	// servers. Payload 2 tokens · 1 KB · top-2 over 2⁻²⁰ s and 4 GPUs: 2²⁰ KB/s = 1 GB/s.
	want := `==================================================
DeepEP Final Results
==================================================
Total Latency            : 0.000001 s
Avg Layer Latency        : 0.0010 ms
Total Inter-node Traffic : 0.0000 GB
Algorithmic Bandwidth    : 1.0000 GB/s
==================================================
Bandwidths per GPU: NVLink 1 GB/s, network 1 GB/s (from ` + filepath.Join(dir, "config.json") + `)
`
	if stdout != want {
		t.Fatalf("stdout\n%s\nwant\n%s", stdout, want)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m moe.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	const sec = 1.0 / (1 << 20)
	if m.TotalLatencyS != sec || m.AvgLayerLatencyMs != sec*1000 || m.InterNodeTrafficGB != 2*sec || m.AlgoBWGBps != 1 ||
		len(m.LayerLatencyS) != 1 || m.LayerLatencyS[0] != sec {
		t.Fatalf("metrics.json: %s", b)
	}
	for _, k := range []string{`"total_latency_s"`, `"avg_layer_latency_ms"`, `"inter_node_traffic_gb"`, `"algo_bw_gbps"`, `"layer_latency_s"`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("metrics.json lacks %s", k)
		}
	}
	ents, _ := os.ReadDir(outDir)
	if len(ents) != 1 {
		t.Errorf("output folder holds %d files, want metrics.json alone", len(ents))
	}
}

// With -n the estimates price the dispatch with the topology's bandwidths, as the event mode
// sees them, not the ones simd moe gen recorded: on a generated AlibabaHPN fabric of 32 GPUs a
// GPU has 360 GB/s of NVLink and two 200 Gb/s NIC ports, 50 GB/s.
func TestMoERunEstimateTopologyBandwidths(t *testing.T) {
	tmp := t.TempDir()
	o := topo.NewGeneratorOptions("AlibabaHPN", false, false, false)
	o.GPUs, o.PSWs = 32, 4
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	topoFile := filepath.Join(tmp, g.FileName)
	f, err := os.Create(topoFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Topology.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg := moe.DefaultConfig()
	cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters, cfg.BWInterGBps, cfg.BWIntraGBps = 256, 4, 2, 1, 5, 100
	dir := filepath.Join(tmp, "w")
	if err := moe.GenerateDir(dir, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, iters, err := moe.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []moe.Kind{moe.DeepEP, moe.FAST} {
		var want, recorded strings.Builder
		for _, bw := range []struct {
			nvl, net float64
			out      *strings.Builder
		}{{360, 50, &want}, {100, 5, &recorded}} {
			c := cfg
			c.BWIntraGBps, c.BWInterGBps = bw.nvl, bw.net
			m, err := moe.Run(&c, iters, plan, moe.Seed, nil)
			if err != nil {
				t.Fatal(err)
			}
			m.WriteText(bw.out, plan, moe.Seed)
		}
		want.WriteString("Bandwidths per GPU: NVLink 360 GB/s, network 50 GB/s (from the topology " + topoFile + ")\n")
		code, stdout, stderr := runMoERunArgs("-plan", plan.String(), "-w", dir, "-n", topoFile)
		if code != exitOK || stdout != want.String() {
			t.Errorf("%s: exit %d, %s\n%s\nwant\n%s", plan, code, stderr, stdout, want.String())
		}
		if strings.HasPrefix(stdout, recorded.String()) {
			t.Errorf("%s: the recorded bandwidths give the same estimate; the test proves nothing", plan)
		}
	}
}

func TestMoERunFASTStages(t *testing.T) {
	dir := moeRunWorkload(t)
	code, stdout, stderr := runMoERunArgs("-plan", "FAST", "-model", "exact", "-w", dir, "-stages")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// One copy each way between the servers, both on the wrong rail: server matrix
	// [[0 1] [1 0]], one stage, the swap, weight 1.
	for _, s := range []string{
		"iteration 0 layer 0: 1 stages (weight: tokens per GPU; s→t: server s sends to server t), last with real traffic: 0\n",
		"  stage 0  weight 1  0→1 1→0\n",
		"FAST Final Results (exact model)\n",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
}

func TestMoERunBadFlags(t *testing.T) {
	dir := moeRunWorkload(t)
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-w", dir}, "-plan"},
		{[]string{"-plan", "ring", "-w", dir}, "-plan"},
		{[]string{"-plan", "fast", "-model", "event", "-w", dir}, "-model"},
		{[]string{"-plan", "fast"}, "-w"},
		{[]string{"-plan", "fast", "-w", filepath.Join(dir, "missing")}, "-w"},
		{[]string{"-plan", "deepep", "-stages", "-w", dir}, "-stages"},
		{[]string{"-plan", "deepep", "-w", dir, "-o", file}, "-o"},
		{[]string{"-plan", "deepep", "-w", dir, "-bogus"}, "-bogus"},
		{[]string{"-plan", "deepep", "-w", dir, "extra"}, "extra"},
		{[]string{"-plan", "deepep", "-w", dir, "-log-level", "loud"}, "-log-level"},
	} {
		code, stdout, stderr := runMoERunArgs(tc.args...)
		if code != exitBadInput || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if code, stdout, _ := runMoERunArgs("-h"); code != exitOK || !strings.Contains(stdout, "-plan") {
		t.Errorf("-h: exit %d, %q", code, stdout)
	}
}

// -mode event runs each layer's plan on the fabric: DeepEP's NVLink forwards start when the RDMA
// copy that brought their token has arrived (fct.txt shows it), the layer lasts until the last
// forward arrives, and two runs write the same bytes.
func TestMoERunEvent(t *testing.T) {
	dir := moeRunWorkload(t)
	var first []byte
	for run := range 2 {
		outDir := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runMoERunArgs("-plan", "deepep", "-mode", "event", "-w", dir, "-o", outDir)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "DeepEP Final Results (event mode)") {
			t.Fatalf("stdout:\n%s", stdout)
		}
		fct, err := os.ReadFile(filepath.Join(outDir, "fct.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 {
			if !bytes.Equal(fct, first) {
				t.Fatal("two event runs wrote different fct.txt")
			}
			break
		}
		first = fct
		// Lines: sip dip sport dport size start_ns fct_ns standalone_ns. GPU n's IP is
		// 0b000001 + n·0x100.
		type rec struct{ start, end int64 }
		flows := map[[2]int]rec{}
		for _, line := range strings.Split(strings.TrimSpace(string(fct)), "\n") {
			var sip, dip, sport, dport, size, start, dur, ideal int64
			if _, err := fmt.Sscanf(line, "%x %x %d %d %d %d %d %d", &sip, &dip, &sport, &dport, &size, &start, &dur, &ideal); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			flows[[2]int{int(sip-0x0b000001) >> 8, int(dip-0x0b000001) >> 8}] = rec{start, start + dur}
		}
		for _, dep := range [][2][2]int{{{0, 2}, {2, 3}}, {{3, 1}, {1, 0}}} {
			copyF, fwd := flows[dep[0]], flows[dep[1]]
			if copyF.end == 0 || fwd.end == 0 {
				t.Fatalf("missing flows in fct.txt:\n%s", fct)
			}
			if fwd.start < copyF.end {
				t.Errorf("forward %v started at %d ns, before its copy %v arrived at %d ns", dep[1], fwd.start, dep[0], copyF.end)
			}
		}
		var m moe.Metrics
		b, _ := os.ReadFile(filepath.Join(outDir, "metrics.json"))
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		last := max(flows[[2]int{2, 3}].end, flows[[2]int{1, 0}].end)
		// fct.txt truncates start and duration to whole ns.
		if len(m.LayerLatencyS) != 1 || m.LayerLatencyS[0]*1e9 < float64(last) || m.LayerLatencyS[0]*1e9 > float64(last+2) {
			t.Errorf("layer times %v s, want the last arrival at %d ns (fct.txt's whole ns)", m.LayerLatencyS, last)
		}
	}
}

// The event mode logs what simd's other modes log on stderr: SimAI.conf's warnings (an unknown
// key, a BUFFER_SIZE no switch can pause at, each naming the file's line) and congestion control's
// counters, at -log-level's level. It logged nothing before: a conf's mistakes went unseen.
func TestMoERunEventLogs(t *testing.T) {
	dir := moeRunWorkload(t)
	conf := readFile(t, ns3RefDir+"/flows_incast8_4MB__DCNS16_nowin/SimAI.conf")
	small := regexp.MustCompile(`(?m)^BUFFER_SIZE .*$`).ReplaceAllString(conf, "BUFFER_SIZE 1") + "\nNO_SUCH_KEY 1\n"
	if !strings.Contains(small, "BUFFER_SIZE 1\n") {
		t.Fatal("no BUFFER_SIZE line in the case's SimAI.conf")
	}
	cdir := t.TempDir()
	writeFile(t, cdir, "small.conf", small)
	c := filepath.Join(cdir, "small.conf")
	code, _, stderr := runMoERunArgs("-plan", "deepep", "-mode", "event", "-w", dir, "-c", c)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"small.conf:55: BUFFER_SIZE is not larger than the ports' headroom and reserve",
		`NO_SUCH_KEY: unknown key "NO_SUCH_KEY" ignored`,
		"info congestion control",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code, _, stderr := runMoERunArgs("-plan", "deepep", "-mode", "event", "-w", dir, "-c", c, "-log-level", "error"); code != exitOK || stderr != "" {
		t.Errorf("-log-level error: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}

// simd moe run writes the CPU and heap profiles it is asked for, as the main run does (pprof's
// gzipped protocol buffers), and says which file it could not create.
func TestMoERunProfiles(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w")
	if code, _, errOut := runCLI(t, dir, "moe", "gen", "-nodes", "2", "-gps", "4", "-batch", "2", "-layers", "2", "-iters", "1", "-o", w); code != exitOK {
		t.Fatal(errOut)
	}
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	if code, _, errOut := runCLI(t, dir, "moe", "run", "-plan", "deepep", "-mode", "event", "-w", w, "-cpuprofile", cpu, "-memprofile", mem); code != exitOK {
		t.Fatal(errOut)
	}
	for _, p := range []string{cpu, mem} {
		if b := readFile(t, p); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a pprof profile (%d bytes)", filepath.Base(p), len(b))
		}
	}
	bad := filepath.Join(dir, "missing", "cpu.prof")
	code, _, errOut := runCLI(t, dir, "moe", "run", "-plan", "deepep", "-mode", "event", "-w", w, "-cpuprofile", bad)
	if code != exitFailure || !strings.Contains(errOut, "-cpuprofile: open "+bad) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
