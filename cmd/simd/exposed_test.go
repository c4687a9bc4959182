package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"simd/cmd/simd/plots"
	"simd/configs"
	"simd/workloads/sweep"
)

// moeSlice is a 16-GPU slice of the shipped MoE workload: its first 19 records (the gradient
// collectives of the DP and DP_EP groups, the embedding, an attention block and an MoE block
// with EP all-to-alls) with every size divided by 64, under TP 2, EP 4.
func moeSlice(t *testing.T) string {
	t.Helper()
	data, ok := configs.ExampleWorkload("workload_analytical.txt")
	if !ok {
		t.Fatal("no shipped workload_analytical.txt")
	}
	lines := strings.Split(string(data), "\n")
	var b strings.Builder
	b.WriteString("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 4 pp: 1 vpp: 1 ga: 1 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0\n19\n")
	for _, rec := range lines[2 : 2+19] {
		f := strings.Fields(rec)
		for _, i := range []int{4, 7, 10} {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			f[i] = strconv.FormatUint(n/64, 10)
		}
		b.WriteString(strings.Join(f, "\t") + "\n")
	}
	return b.String()
}

// runBreakdown is what summary.json says of a run: the breakdown and each (layer, phase)'s group.
type runBreakdown struct {
	Breakdown *struct {
		ExposedCommUs float64 `json:"exposed_comm_us"`
		TPUs          float64 `json:"exposed_tp_us"`
		DPUs          float64 `json:"exposed_dp_us"`
		DPEPUs        float64 `json:"exposed_dp_ep_us"`
		EPUs          float64 `json:"exposed_ep_us"`
	} `json:"breakdown"`
}

var (
	stdoutExposed = regexp.MustCompile(`exposed comm ([0-9]+) \+`)
	stdoutGroups  = regexp.MustCompile(`exposed comm by group \(us\): TP ([0-9]+), DP ([0-9]+), DP_EP ([0-9]+), EP ([0-9]+)\n`)
	csvExposed    = regexp.MustCompile(`(?m)^total exposed comm,([0-9.]+),`)
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// checkExposedAddsUp checks that every report of an event or compare run splits the exposed
// communication into groups that add up to it: stdout's line (event mode), EndToEnd.csv's
// summary line, summary.json's breakdown, and the layer rows that EndToEnd.csv and the
// layer_breakdown plot split by the groups of summary.json's collectives. complete says the run
// finished (a stopped run's rows hold only its finished layers).
func checkExposedAddsUp(t *testing.T, name, stdout, out string, complete bool) {
	t.Helper()
	var sj runBreakdown
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "summary.json"))), &sj); err != nil || sj.Breakdown == nil {
		t.Fatalf("%s: summary.json: no breakdown (%v)", name, err)
	}
	b := *sj.Breakdown
	groups := b.TPUs + b.DPUs + b.DPEPUs + b.EPUs
	if !near(groups, b.ExposedCommUs, 1e-9*b.ExposedCommUs) {
		t.Errorf("%s: summary.json: groups add up to %v µs, exposed_comm_us %v", name, groups, b.ExposedCommUs)
	}

	if stdout != "" {
		m, g := stdoutExposed.FindStringSubmatch(stdout), stdoutGroups.FindStringSubmatch(stdout)
		if m == nil || g == nil {
			t.Fatalf("%s: stdout has no exposed comm lines:\n%s", name, stdout)
		}
		sum := 0
		for _, v := range g[1:] {
			n, _ := strconv.Atoi(v)
			sum += n
		}
		if strconv.Itoa(sum) != m[1] {
			t.Errorf("%s: stdout: groups %v add up to %d, exposed comm %s", name, g[1:], sum, m[1])
		}
	}

	text := readFile(t, filepath.Join(out, "EndToEnd.csv"))
	res, err := sweep.ParseEndToEnd(strings.NewReader(strings.TrimPrefix(text, text[:strings.Index(text, "File name")])), name)
	if err != nil {
		t.Fatal(err)
	}
	if sum := res.TPUs + res.DPUs + res.DPEPUs + res.EPUs; sum != res.ExposedCommUs {
		t.Errorf("%s: EndToEnd.csv summary line: groups add up to %v µs, total exposed comm %v", name, sum, res.ExposedCommUs)
	}
	for _, c := range []struct {
		col        string
		csv, exact float64
	}{{"TP", res.TPUs, b.TPUs}, {"DP", res.DPUs, b.DPUs}, {"DP_EP", res.DPEPUs, b.DPEPUs}, {"EP", res.EPUs, b.EPUs}} {
		if !near(c.csv, c.exact, 1) {
			t.Errorf("%s: EndToEnd.csv: exposed %s %v µs, summary.json %v", name, c.col, c.csv, c.exact)
		}
	}
	m := csvExposed.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: EndToEnd.csv has no total exposed comm line", name)
	}
	if x, _ := strconv.ParseFloat(m[1], 64); !near(x, b.ExposedCommUs, 1e-6) {
		t.Errorf("%s: EndToEnd.csv: total exposed comm %v µs, summary.json %v", name, x, b.ExposedCommUs)
	}
	if !complete {
		return
	}

	// The layer rows, split as the plot splits them: each phase's column in its collective's group.
	seg, err := plots.LayerTotals(out, "")
	if err != nil {
		t.Fatal(err)
	}
	rows := float64(strings.Count(text, "\n")) // each row's columns are rounded to 1e-6 µs
	for _, c := range []struct {
		group string
		exact float64
	}{{"TP", b.TPUs}, {"DP", b.DPUs}, {"DP_EP", b.DPEPUs}, {"EP", b.EPUs}, {"PP", 0}} {
		if got := seg["exposed "+c.group+" comm"]; !near(got, c.exact, rows*1.5e-6) {
			t.Errorf("%s: layer rows: exposed %s %v µs, summary.json %v", name, c.group, got, c.exact)
		}
	}
	if x := seg["exposed comm (group unknown)"]; x != 0 {
		t.Errorf("%s: layer rows: %v µs exposed on phases without a collective", name, x)
	}
}

// The exposed communication by group adds up to the total, in every report, for AICB's
// workloads and a slice of the shipped MoE workload, in the event and compare modes of a sweep
// (whose table is checked too), with DeepEP dispatches, and for a stopped run.
func TestExposedGroupsAddUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 11 workloads twice in the event mode")
	}
	dir := t.TempDir()
	aicb := []string{
		"G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt", "G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt",
		"G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt", "L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt",
		"L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt", "all_gather.txt", "all_reduce.txt", "all_to_all.txt",
		"muti_all_reduce.txt",
	}
	for _, f := range append(aicb, "L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt") {
		writeFile(t, dir, f, readFile(t, filepath.Join("..", "..", "workloads", "testdata", "aicb", f)))
	}
	writeFile(t, dir, "moe16.txt", moeSlice(t))
	topo := "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"
	writeFile(t, dir, topo, readFile(t, filepath.Join("..", "..", "topo", "testdata", topo)))
	spec := fmt.Sprintf("workloads: [%s, moe16.txt]\ntopologies: [{file: %s}]\nmodes: [event, compare]\n", strings.Join(aicb, ", "), topo)
	writeFile(t, dir, "spec.yaml", spec)
	if code, stdout, stderr := runCLI(t, dir, "sweep", "spec.yaml", "-o", "s", "-j", "2"); code != exitOK {
		t.Fatalf("sweep: exit %d\n%s%s", code, stdout, stderr)
	}
	runs := 2 * (len(aicb) + 1)
	for k := range runs {
		run := filepath.Join(dir, "s", sweep.RunFolder(k))
		stdout := ""
		if k%2 == 0 { // the event mode's; compare prints no exposed time
			stdout = readFile(t, filepath.Join(run, "stdout.txt"))
		}
		checkExposedAddsUp(t, sweep.RunFolder(k), stdout, filepath.Join(run, "out"), true)
	}

	code, table, stderr := runCLI(t, dir, "sweep", "merge", "s")
	if code != exitOK {
		t.Fatalf("merge: exit %d %s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(table)).ReadAll()
	if err != nil || len(recs) != runs+1 {
		t.Fatalf("table: %d rows, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		v := func(h string) float64 { x, _ := strconv.ParseFloat(r[col[h]], 64); return x }
		if sum := v("exposed_tp_us") + v("exposed_dp_us") + v("exposed_dp_ep_us") + v("exposed_ep_us"); sum != v("exposed_comm_us") || sum == 0 {
			t.Errorf("table, run %s (%s %s): groups add up to %v µs, exposed_comm_us %v", r[0], r[1], r[3], sum, v("exposed_comm_us"))
		}
	}

	for _, c := range []struct {
		name     string
		args     []string
		complete bool
	}{
		{"L65B", []string{"-w", "L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt", "-allow-short-workload"}, true},
		{"moe16-deepep", []string{"-w", "moe16.txt", "-ep-dispatch", "deepep"}, true},
		{"G13B-stopped", []string{"-w", aicb[0], "-max-events", "200000"}, false},
	} {
		out := filepath.Join(dir, c.name)
		args := append(c.args, "-n", topo, "-o", out)
		code, stdout, stderr := runCLI(t, dir, args...)
		if want := map[bool]int{true: exitOK, false: exitStopped}[c.complete]; code != want {
			t.Fatalf("%s: exit %d, want %d\n%s", c.name, code, want, stderr)
		}
		checkExposedAddsUp(t, c.name, stdout, out, c.complete)
	}
	if _, err := os.Stat(filepath.Join(dir, "G13B-stopped", "EndToEnd.csv")); err != nil {
		t.Fatal(err)
	}
}
