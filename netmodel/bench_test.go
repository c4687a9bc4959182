package netmodel

import (
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/topo"
)

// BenchmarkRingAllReduce runs a ring all-reduce DAG over all GPUs of a Spectrum-X fabric, the
// DAG runner and the fluid network together, and reports flow completions per second:
//
//	go test -run '^$' -bench RingAllReduce -benchmem ./netmodel
func BenchmarkRingAllReduce(b *testing.B) {
	for _, n := range []int{128, 256} {
		b.Run(map[int]string{128: "gpus=128", 256: "gpus=256"}[n], func(b *testing.B) {
			tp, err := topo.DefaultFabric(n, 8)
			if err != nil {
				b.Fatal(err)
			}
			fab, err := NewFabric(tp)
			if err != nil {
				b.Fatal(err)
			}
			d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(n), GPUsPerServer: 8, TotalGPUs: n, Bytes: 1 << 30}, nccl.Options{})
			if err != nil {
				b.Fatal(err)
			}
			lat := Latency{Intra: 6 * engine.Microsecond, Inter: 6 * engine.Microsecond}
			var flows uint64
			for b.Loop() {
				s := engine.NewScheduler()
				sim := NewSimulator(s, fab, Options{})
				sim.Run(d, lat, nil)
				s.Run()
				flows += sim.Flows()
			}
			b.ReportMetric(float64(flows)/b.Elapsed().Seconds(), "flows/s")
		})
	}
}
