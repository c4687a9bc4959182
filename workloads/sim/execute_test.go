package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"simd/topo"
	"simd/workloads/chakra"
	"simd/workloads/sim"
)

// TestExecuteOutcome checks that Execute hands back, as values, what its summary prints and its
// files hold: the results of each mode (and only those), the files listed on its "results:"
// lines, and, for a stopped run, what was computed up to the stop together with the
// StoppedError.
func TestExecuteOutcome(t *testing.T) {
	flowFile := filepath.Join(t.TempDir(), "flows.txt")
	if err := os.WriteFile(flowFile, []byte("2\n0 8 3 100 1048576 0\n1 9 3 100 1048576 0.000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	topoFile := writeSpectrumX16(t, t.TempDir())
	jobsDir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(jobsDir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("dp.txt", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n"+
		"grad -1 100 ALLREDUCE 4194304 1 NONE 0 1 ALLREDUCE 16777216 1\n")
	jobsFile := write("jobs.yaml", "jobs:\n  - {name: a, workload: dp.txt, gpus: \"0-3,8-11\"}\n  - {name: b, workload: dp.txt, gpus: \"4-7,12-15\"}\n")
	trace := writeAllReduceTrace(t, t.TempDir(), 16)
	tests := []struct {
		name    string
		req     sim.Request
		stopped bool
		// the results expected: a for Analytical, e Event, c Comparison, t Trace, j Jobs
		has string
	}{
		{name: "analytical", req: sim.Request{Mode: "analytical"}, has: "a"},
		{name: "event", req: sim.Request{Mode: "event"}, has: "e"},
		{name: "compare", req: sim.Request{Mode: "compare"}, has: "aec"},
		{name: "event stopped", req: sim.Request{Mode: "event", Event: sim.EventRequest{MaxEvents: 200}}, stopped: true, has: "e"},
		{name: "jobs", req: sim.Request{Mode: "event", Jobs: jobsFile, Cluster: sim.ClusterRequest{TopologyFile: topoFile}}, has: "j"},
		{name: "jobs analytical", req: sim.Request{Mode: "analytical", Jobs: jobsFile, Cluster: sim.ClusterRequest{TopologyFile: topoFile}}, has: "j"},
		{name: "trace", req: sim.Request{Mode: "event", Workload: trace, Cluster: sim.ClusterRequest{TopologyFile: topoFile}}, has: "t"},
		{name: "flows", req: sim.Request{Mode: "event", Flows: flowFile, Cluster: sim.ClusterRequest{TopologyFile: topoFile}}, has: "e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			r.OutDir, r.OutDirGiven, r.Lang, r.JobsAlone = t.TempDir(), true, "en", "run"
			r.Cluster.Names = sim.SimAIFlags
			r.Event.AlgoPolicy, r.Event.EPDispatch, r.Event.Completion, r.Event.SendLatencyNs, r.Event.Seed = "simccl", "nccl", "ack", -1, 1
			r.Event.LookupEnv = func(string) (string, bool) { return "", false }
			var stdout bytes.Buffer
			out, err := sim.Execute(context.Background(), r, sim.Hooks{Stdout: &stdout})
			var se sim.StoppedError
			if tc.stopped != errors.As(err, &se) || (!tc.stopped && err != nil) {
				t.Fatalf("err = %v, want stopped %v", err, tc.stopped)
			}
			has := func(c byte, ok bool) {
				if want := bytes.IndexByte([]byte(tc.has), c) >= 0; ok != want {
					t.Errorf("result %c present %v, want %v", c, ok, want)
				}
			}
			has('a', out.Analytical != nil)
			has('e', out.Event != nil)
			has('c', out.Comparison != nil)
			has('t', out.Trace != nil)
			has('j', out.Jobs != nil || out.JobRows != nil)
			if out.Comparison != nil && (out.Comparison.Analytical != out.Analytical || out.Comparison.Event != out.Event) {
				t.Errorf("compare: the Outcome's Analytical and Event are not the Comparison's")
			}
			if out.Event != nil && (out.Event.Stopped != nil) != tc.stopped {
				t.Errorf("Event.Stopped = %v, want stopped %v", out.Event.Stopped, tc.stopped)
			}
			// The files are the summary's "results:" lines, in order, and all exist.
			var listed []string
			for _, m := range regexp.MustCompile(`(?m)^results: (.*)$`).FindAllStringSubmatch(stdout.String(), -1) {
				listed = append(listed, m[1])
			}
			if len(listed) == 0 || fmt.Sprint(listed) != fmt.Sprint(out.Files) {
				t.Errorf("Files = %q, the summary lists %q", out.Files, listed)
			}
			for _, f := range out.Files {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("listed file: %v", err)
				}
			}
			// The iteration the summary prints is the result's.
			if m := regexp.MustCompile(`iteration[a-z ]*: (\d+) us`).FindStringSubmatch(stdout.String()); m != nil && tc.has != "aec" {
				var total float64
				switch {
				case out.Event != nil:
					total = out.Event.Report.Summary.Total
				case out.Analytical != nil:
					total = out.Analytical.Summary.Total
				}
				if got := strconv.FormatFloat(total, 'f', 0, 64); got != m[1] {
					t.Errorf("the result's iteration %s us, the summary's %s us", got, m[1])
				}
			}
		})
	}
}

// writeSpectrumX16 writes the 16-GPU Spectrum-X fabric the flow file above runs on, as simd
// topo -topo Spectrum-X -g 16 does.
func writeSpectrumX16(t *testing.T, dir string) string {
	t.Helper()
	o := topo.NewGeneratorOptions("Spectrum-X", false, false, false)
	o.GPUs = 16
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.WriteFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAllReduceTrace writes a Chakra trace of one 16 MiB all-reduce on every one of gpus ranks
// and returns its pattern.
func writeAllReduceTrace(t *testing.T, dir string, gpus int) string {
	t.Helper()
	for r := range gpus {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("ar.%d.et", r)))
		if err != nil {
			t.Fatal(err)
		}
		n := chakra.Node{ID: 1, Name: "allreduce", Type: chakra.CommCollNode, Attrs: []chakra.Attr{
			{Name: "is_cpu_op", Kind: chakra.AttrBool},
			{Name: "comm_type", Kind: chakra.AttrInt64, Int: int64(chakra.AllReduce)},
			{Name: "comm_size", Kind: chakra.AttrInt64, Int: 16 << 20}}}
		if err := chakra.Write(f, &chakra.Metadata{Version: "0.0.4"}, []chakra.Node{n}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ar.%d.et")
}

// A folder's files are in its folder under its prefix, or in the sub-folder the prefix names.
func TestFolderFiles(t *testing.T) {
	for _, c := range []struct {
		f               sim.Folder
		dir, wantPrefix string
	}{
		{sim.Folder{Dir: "results", Prefix: "run_"}, "results", "run_"},
		{sim.Folder{Dir: "results", Prefix: "a/b_"}, filepath.Join("results", "a"), "b_"},
		{sim.Folder{Dir: "results", Prefix: "a/"}, filepath.Join("results", "a"), ""},
		{sim.Folder{}, ".", ""},
	} {
		if dir, prefix := c.f.Files(); dir != c.dir || prefix != c.wantPrefix {
			t.Errorf("%+v: %q, %q; want %q, %q", c.f, dir, prefix, c.dir, c.wantPrefix)
		}
	}
}
