package sim_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"simd/workloads/sim"
)

// A flow file's run logs congestion control's counters, as a workload's does: marks, CNPs,
// rate changes and PFC frames are what an incast study reads first.
func TestFlowRunLogsCongestionControl(t *testing.T) {
	dir := t.TempDir()
	flowFile := filepath.Join(dir, "flows.txt")
	if err := os.WriteFile(flowFile, []byte("2\n0 8 3 100 1048576 0\n1 8 3 100 1048576 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	req := sim.Request{Mode: "event", Flows: flowFile, Cluster: sim.ClusterRequest{TopologyFile: writeSpectrumX16(t, dir)},
		OutDir: filepath.Join(dir, "out"), OutDirGiven: true}
	req.Event.AlgoPolicy, req.Event.EPDispatch, req.Event.SendLatencyNs, req.Event.Seed = "simccl", "nccl", -1, 1
	if _, err := sim.Execute(context.Background(), req, sim.Hooks{Log: zap.New(core), Stdout: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessage("congestion control").Len(); n != 1 {
		t.Errorf("%d congestion-control log entries, want 1 (the shipped SimAI.conf runs DCQCN)", n)
	}
}
