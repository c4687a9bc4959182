package sim_test

import (
	"context"
	"os"
	"testing"

	"simd/configs"
	"simd/engine"
	"simd/topo"
	"simd/workloads"
	"simd/workloads/sim"
)

// The ring all-reduce of 64 MiB over the two servers of Spectrum-X 16 under SimAI's shipped
// SimAI.conf: queues before the receivers' ports reshape what reaches them (-forwarding
// dequeue), and the first windows of the ring's flows still leave those queues after their
// senders, waiting for their first ACKs, could send nothing. The ports the bytes reach queue
// them without a level the flows' windows could settle them at, and are not looked at again
// packet by packet: before the windows' level counted what reaches a link past the queues
// before it, the run took 23 window events and a ring over 128 GPUs 22,155 (3,384 without
// reshaping).
func TestRingWindowsDoNotChatter(t *testing.T) {
	const dir = "../../cmd/simd/testdata/ns3ref/"
	wf, err := os.Open(dir + "workloads/tp16_allreduce_64MB.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	w, _, err := workloads.Parse(wf, "tp16_allreduce_64MB.txt")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.ReadFile(dir+"topo/Spectrum-X_16g_8gps_400Gbps_H100", "-n")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := sim.ClusterOf(tp, "Spectrum-X 16")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(sim.Inputs{Workload: w, Cluster: cl, Conf: conf}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Event(context.Background(), sim.EventOptions{SendLatency: 6 * engine.Microsecond}, sim.Attachments{})
	if err != nil || res.Stopped != nil {
		t.Fatal(err, res.Stopped)
	}
	if n := res.Sim.CCNetwork().Stats().WindowTargets; n > 5 {
		t.Errorf("%d window events, want a few", n)
	}
}
