package sim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"simd/workloads/sim"
)

// SimCCL divides a collective's bytes in integers (chunk = size / ranks / channels): AICB's
// 1-byte weight-gradient all-gather on DP 2 (one rank a server, one channel) has chunks of 0
// bytes, no flow, and takes no time in SimAI (its ns-3 log: issued and finished at the same
// tick), and a size that does not divide sends ⌊size/64⌋ bytes a flow on TP 8. By default the
// event mode does the same (-chunk-bytes simccl); -chunk-bytes exact sends every byte, so the
// all-gather runs its one step of 1-byte flows after SimAI's send latency.
func TestChunkBytes(t *testing.T) {
	dir := t.TempDir()
	topoFile := writeSpectrumX16(t, dir)
	w := filepath.Join(dir, "w.txt")
	text := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n2\n" +
		"grad_gather -1 1 NONE 0 1 NONE 0 1 ALLGATHER 1 100\n" +
		"layer -1 1 ALLREDUCE 5000 1 NONE 0 1 NONE 0 100\n"
	if err := os.WriteFile(w, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(rule string) *sim.Result {
		t.Helper()
		r := sim.Request{Mode: "event", Workload: w, OutDir: t.TempDir(), OutDirGiven: true, Lang: "en"}
		r.Cluster.Names, r.Cluster.TopologyFile = sim.SimAIFlags, topoFile
		r.Event.AlgoPolicy, r.Event.EPDispatch, r.Event.Completion, r.Event.SendLatencyNs, r.Event.Seed = "simccl", "nccl", "ack", -1, 1
		r.Event.ChunkBytes = rule
		r.Event.LookupEnv = func(string) (string, bool) { return "", false }
		out, err := sim.Execute(context.Background(), r, sim.Hooks{})
		if err != nil {
			t.Fatalf("-chunk-bytes %q: %v", rule, err)
		}
		return out.Event
	}
	byName := func(res *sim.Result) map[string]sim.Collective {
		m := map[string]sim.Collective{}
		for _, c := range res.Collectives {
			m[c.Name] = c
		}
		return m
	}
	simccl, exact := byName(run("simccl")), byName(run("exact"))
	if c := simccl["grad_gather"]; c.Flows != 0 || c.EndUs != c.StartUs || !c.Done {
		t.Errorf("SimCCL's 1-byte all-gather: %d flows, %.3f µs to %.3f µs (done %v); want none, at once", c.Flows, c.StartUs, c.EndUs, c.Done)
	}
	// Eight DP groups of 2 ranks, one flow each way.
	if c := exact["grad_gather"]; c.Flows != 16 || c.EndUs-c.StartUs < 6 {
		t.Errorf("every byte of the 1-byte all-gather: %d flows in %.3f µs; want 16 flows after the 6 µs send latency", c.Flows, c.EndUs-c.StartUs)
	}
	// Two TP groups, each 8 channels × 14 steps × 8 ranks, in both.
	if a, b := simccl["layer"], exact["layer"]; a.Flows != 2*896 || b.Flows != 2*896 {
		t.Errorf("the 5000-byte all-reduce: %d and %d flows, want 1792 both", a.Flows, b.Flows)
	}
	r := sim.Request{Mode: "event", Workload: w, OutDir: t.TempDir(), OutDirGiven: true, Lang: "en"}
	r.Cluster.Names, r.Cluster.TopologyFile = sim.SimAIFlags, topoFile
	r.Event.AlgoPolicy, r.Event.EPDispatch, r.Event.Completion, r.Event.SendLatencyNs = "simccl", "nccl", "ack", -1
	r.Event.ChunkBytes = "floor"
	if _, err := sim.Execute(context.Background(), r, sim.Hooks{}); !errors.As(err, new(sim.InputError)) {
		t.Errorf("-chunk-bytes floor: %v, want an input error", err)
	}
}
