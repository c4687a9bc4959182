package sim_test

import (
	"bytes"
	"context"
	"fmt"

	"simd/configs"
	"simd/topo"
	"simd/workloads"
	"simd/workloads/sim"
)

// A 16 MiB all-reduce over 16 GPUs on two servers (the shipped example) on the default
// Spectrum-X fabric with the shipped SimAI.conf, in both modes.
func Example() {
	data, _ := configs.ExampleWorkload("microAllReduce.txt")
	w, _, _ := workloads.Parse(bytes.NewReader(data), "microAllReduce.txt")
	fabric, _ := topo.DefaultFabric(16, 8)
	cl, _ := sim.ClusterOf(fabric, "default fabric")
	conf, _ := configs.ShippedSimAIConf()
	s, err := sim.New(sim.Inputs{Workload: w, Cluster: cl, Conf: conf}, sim.Options{})
	if err != nil {
		panic(err)
	}
	rep, _ := s.Analytical()
	res, _ := s.Event(context.Background(), sim.EventOptions{SendLatency: -1}, sim.Attachments{})
	fmt.Printf("analytical %.0f us, event %.0f us: %d flows, complete %v\n",
		rep.Summary.Total, res.Report.Summary.Total, res.Sim.Flows(), res.Stopped == nil)
	// Output: analytical 1492 us, event 1690 us: 3584 flows, complete true
}
