package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runCLI runs simd in dir with args and returns the exit status and outputs.
func runCLI(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listFiles lists every file under dir, so tests can check that nothing was left behind.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// With no flags simd runs the shipped example in the event mode. The event numbers follow from
// the model: the 16 MiB ring all-reduce on one server is 14 steps of 6 µs send latency (SimAI's
// default) and 10 ns of hand-over (astra-sim's memory-bus delay, netmodel.IssueGap) + a step as
// TestSendLatency derives it (the step's wire bytes over a 2880 Gbps NVLink
// port, which ns-3's clock makes 2,896.6 Gb/s and on which the ACKs of the flows coming in take
// no time, less the 7 last packets the port's turns send after the first channel's, and the
// store-and-forward behind the full packet before them, two 25 ns hops there and back), the last
// channel 7 last packets after the first, plus 1 ns of update time: 167.161204 µs, within half a
// nanosecond: the formula leaves out the flows' first round trip (opening.go), read as each
// flow starts (175 ns on these ports: the ACK leaves the receiver's NIC first, on a tie with
// the NIC's packets, and waits a packet at the NVSwitch), which moves one flow of each port of
// the first step by a nanosecond and the layer by 0.3 ns (167.160909 µs; with the whole packet
// charged at the NIC too, 200 ns, the layer fell on the formula). The 64 MiB one's
// 1 MiB flows end 12.8 ns apart, and the ACKs of the first channels' last packets meet the
// packets the ports on their way are sending ("Turns at a port" in docs/models.md), which moves
// the channels' order from step to step; its time lies between the turns' without those waits
// (every step's first channel 3.5 last packets ahead of the fair mean, the layer's last channel 7
// behind the first) and the fair sharing's, 410.959 and 411.496 µs. With 1112.004 µs of compute,
// 1690 µs.
func TestNoFlagsRunsTheExample(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"EndToEnd.csv", "summary.json", "fct.txt", "pfc.txt"} {
		if !strings.Contains(out, "results/"+f) {
			t.Errorf("stdout does not say where %s is:\n%s", f, out)
		}
	}
	csv := readFile(t, filepath.Join(dir, "results", "EndToEnd.csv"))
	var layers []float64 // the fwd total comm of each layer row
	for _, line := range strings.Split(csv, "\n") {
		if f := strings.Split(line, ","); len(f) > 8 && f[0] == "embedding_layer" {
			v, err := strconv.ParseFloat(f[8], 64)
			if err != nil {
				t.Fatal(err)
			}
			layers = append(layers, v)
		}
	}
	// The exposed TP comm is the two layers' sum, 578.1–578.7 µs of 1,690.1–1,690.7: 34.21% or
	// 34.22% of the iteration.
	if !strings.Contains(csv, "578 (34.21%)") && !strings.Contains(csv, "578 (34.22%)") || !strings.Contains(csv, ", 1690\n") || len(layers) != 2 ||
		math.Abs(layers[0]-167.161204) > 0.0005 || layers[1] < 410.959 || layers[1] > 411.496 {
		t.Errorf("report:\n%s", csv)
	}
	// 2 collectives of 8 channels × 8 ranks × 14 steps.
	if n := strings.Count(readFile(t, filepath.Join(dir, "results", "fct.txt")), "\n"); n != 2*8*8*14 {
		t.Errorf("fct.txt has %d lines", n)
	}
	// The analytical mode on the same example gives SimAI_analytical's numbers.
	code, _, errOut = runCLI(t, dir, "-mode", "analytical")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	csv = readFile(t, filepath.Join(dir, "results", "microAllReduce-EndToEnd.csv"))
	if !strings.Contains(csv, "380 (25.46%)") || !strings.Contains(csv, ", 1492\n") {
		t.Errorf("analytical report:\n%s", csv)
	}
}

// The example command: SimAI_analytical's canonical call, on the shipped copy of the
// canonical workload.
func TestCanonicalCommand(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, dir, "-mode", "analytical", "-w", "example:workload_analytical.txt",
		"-g", "9216", "-nv", "360", "-nic", "48.5", "-n_p_s", "8", "-g_p_s", "8", "-r", "example-", "-o", "out")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := readFile(t, filepath.Join(dir, "out", "example-EndToEnd.csv"))
	want := readFile(t, filepath.Join(mustAbs(t, "../../workloads/testdata"), "workload_analytical-EndToEnd.csv"))
	if got != want {
		t.Error("the CLI's report differs from the workloads package's golden report")
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const micro = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0\n2\n" +
	"embedding_layer -1 556000 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1\n" +
	"embedding_layer -1 556000 ALLREDUCE 67108864 1 NONE 0 1 NONE 0 1\n"

// SimAI_analytical's flags with long names, a repeated -g (the first wins), -r_f and -v.
func TestSimAIFlags(t *testing.T) {
	dir := t.TempDir()
	w := writeFile(t, dir, "micro.txt", micro)
	code, _, errOut := runCLI(t, dir, "-mode", "analytical", "--workload", w, "--gpus", "8", "-g", "16", "--gpus-per-server", "8",
		"--nvlink", "360", "--nic_busbw", "48.5", "--nic_per_server", "8", "-r", "run-", "-r_f", "sub", "-v", "1", "-l", "ja")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	csv := readFile(t, filepath.Join(dir, "results", "sub", "run-EndToEnd.csv"))
	if !strings.HasPrefix(strings.Split(csv, "\n")[1], "run-, 0 (0.00%), 0 (0.00%), 380 (25.46%)") {
		t.Errorf("report:\n%s", csv)
	}
	html := readFile(t, filepath.Join(dir, "results", "sub", "run-chart.html"))
	if !strings.Contains(html, "TP通信") || !strings.Contains(html, "Total time: 1492 us") {
		t.Errorf("chart:\n%s", html)
	}
}

// With -n, the GPU count, GPUs per server and bandwidths come from the topology: the Spectrum-X
// 8-GPU file has 2880Gbps NVLink (360 GB/s) and 400Gbps NICs (50 GB/s), eight per server.
func TestTopologySuppliesTheCluster(t *testing.T) {
	dir := t.TempDir()
	w := writeFile(t, dir, "micro.txt", strings.Replace(micro, "all_gpus: 8", "all_gpus: 16", 1))
	tp := mustAbs(t, "../../topo/testdata/Spectrum-X_8g_8gps_400Gbps_H100")
	code, out, errOut := runCLI(t, dir, "-mode", "analytical", "-w", w, "-n", tp, "-r", "t-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "8 GPUs, 8 per server") || !strings.Contains(out, "NVLink 360 GB/s, 8 NICs of 50 GB/s") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "different GPU count") {
		t.Errorf("no warning that all_gpus differs:\n%s", errOut)
	}
	// A flag overrides the topology.
	code, out, _ = runCLI(t, dir, "-mode", "analytical", "-w", w, "-n", tp, "-nv", "240", "-r", "t-")
	if code != 0 || !strings.Contains(out, "NVLink 240 GB/s") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, t.TempDir(), "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"-w, --workload", "-n FILE", "-c FILE", "-mode", "-o DIR", "-r, --result", "-r_f, --result_folder",
		"-g, --gpus", "-g_p_s, --gpus-per-server", "-nv, --nvlink", "-nic, --nic_busbw", "-n_p_s, --nic_per_server",
		"-nic_t, --nic_type", "-g_type, --gpu_type", "-dp_o, --dp_overlap", "-ep_o, --ep_overlap", "-tp_o, --tp_overlap",
		"-pp_o, --pp_overlap", "-v, --visual", "-busbw", "-log-level"} {
		if !strings.Contains(out, f) {
			t.Errorf("-h does not document %s", f)
		}
	}
}

// Bad input: one line on stderr naming the file, line and field; exit 2; no report left behind.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", micro)
	short := writeFile(t, dir, "short.txt", strings.Replace(micro, "\n2\n", "\n3\n", 1))
	huge := writeFile(t, dir, "huge.txt", strings.Replace(micro, "\n2\n", "\n1000000000000\n", 1))
	badType := writeFile(t, dir, "type.txt", strings.Replace(micro, "ALLREDUCE 16777216", "ALLREDUCE_XX 16777216", 1))
	negSize := writeFile(t, dir, "neg.txt", strings.Replace(micro, "16777216", "-16777216", 1))
	nanSize := writeFile(t, dir, "nan.txt", strings.Replace(micro, "16777216", "lots", 1))
	topoCount := writeFile(t, dir, "topo1", "3 2 1 0 3 H100\n2 \n0 2 400Gbps 0.001ms 0\n1 2 400Gbps 0.001ms 0\n")
	topoRange := writeFile(t, dir, "topo2", "3 2 1 0 2 H100\n2 \n0 2 400Gbps 0.001ms 0\n1 7 400Gbps 0.001ms 0\n")
	conf := writeFile(t, dir, "SimAI.conf", "CC_MODE 1\nRP_TIMER abc\n")
	cases := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"missing file", []string{"-w", filepath.Join(dir, "nope.txt")}, []string{"nope.txt"}},
		{"fewer records", []string{"-w", short}, []string{"short.txt:4", "layer name", "3"}},
		{"count of 10^12", []string{"-w", huge}, []string{"huge.txt:2", "layer count"}},
		{"unknown comm type", []string{"-w", badType}, []string{"type.txt:3", "fwd comm type", "ALLREDUCE_XX"}},
		{"negative size", []string{"-w", negSize}, []string{"neg.txt:3", "fwd comm size", "negative"}},
		{"non-numeric size", []string{"-w", nanSize}, []string{"nan.txt:3", "fwd comm size"}},
		{"link count", []string{"-w", good, "-n", topoCount}, []string{"topo1", "link"}},
		{"node out of range", []string{"-w", good, "-n", topoRange}, []string{"topo2:4", "7"}},
		{"conf value", []string{"-w", good, "-c", conf}, []string{"SimAI.conf:2", "RP_TIMER"}},
		{"overlap out of range", []string{"-w", good, "-dp_o", "1.5"}, []string{"-dp_o"}},
		{"unknown flag", []string{"-bogus"}, []string{"bogus"}},
		{"NaN bandwidth", []string{"-w", good, "-nv", "NaN"}, []string{"-nv"}},
		{"unknown mode", []string{"-mode", "packet"}, []string{"-mode"}},
		{"unknown gpu type", []string{"-w", good, "-g_type", "B200"}, []string{"-g_type"}},
		{"layout", []string{"-w", good, "-g", "12"}, []string{"not a multiple"}},
		{"zero NICs", []string{"-w", good, "-g", "16", "-n_p_s", "0"}, []string{"-n_p_s"}},
		{"absurd GPU count", []string{"-w", good, "-g", "100000000"}, []string{"GPU count 100000000"}},
		{"no GPU count", []string{"-w", writeFile(t, dir, "micro.txt", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\n")}, []string{"micro.txt", "-g N"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, errOut := runCLI(t, dir, append(c.args, "-o", out)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut)
			}
			last := strings.TrimSpace(errOut[strings.LastIndex(strings.TrimSpace(errOut), "\n")+1:])
			if !strings.HasPrefix(last, "simd: ") {
				t.Errorf("last stderr line %q is not simd's error", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q lacks %q", last, w)
				}
			}
			if files := listFiles(t, out); len(files) != 0 {
				t.Errorf("files left behind: %v", files)
			}
		})
	}
}

// Same inputs, same bytes.
func TestDeterministic(t *testing.T) {
	var outs []string
	for range 2 {
		dir := t.TempDir()
		if code, _, errOut := runCLI(t, dir, "-mode", "analytical", "-w", "example:workload_analytical.txt", "-v", "1"); code != 0 {
			t.Fatal(errOut)
		}
		outs = append(outs, readFile(t, filepath.Join(dir, "results", "workload_analytical-EndToEnd.csv"))+
			readFile(t, filepath.Join(dir, "results", "workload_analytical-chart.html")))
	}
	if outs[0] != outs[1] {
		t.Error("two runs wrote different files")
	}
}

// simd -version prints one line naming simd and the Go toolchain, exit 0.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"-version", "--version", "version"} {
		code, out, errOut := runCLI(t, t.TempDir(), arg)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "simd ") || !strings.Contains(out, "go1.") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d, %q, %q", arg, code, out, errOut)
		}
	}
}
