package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"simd/ccl/algo"
	"simd/engine"

	"simd/workloads/chakra"
)

// BenchmarkRunTrace runs the 64-rank ResNet-50 trace and the STG Llama trace in the event mode
// on the default fabric, without output files, with NCCL's tuning model choosing the
// algorithms as simd -w TRACE does by default.
//
//	go test -run '^$' -bench RunTrace -count 6 ./workloads/sim
func BenchmarkRunTrace(b *testing.B) {
	for _, tc := range []struct{ name, pattern, groups string }{
		{"resnet50-64", "legacy-2023/resnet50_DataParallel/resnet50_DataParallel.%d.et", ""},
		{"llama-stg-8", "stg/llama_dp2_tp2_pp2/workload", "stg/llama_dp2_tp2_pp2/workload.json"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			opt := chakra.Options{}
			if tc.groups != "" {
				opt.CommGroups = chakraDir + tc.groups
			}
			tr, err := chakra.Load(chakraDir+tc.pattern, opt)
			if err != nil {
				b.Fatal(err)
			}
			in := traceInputs(b, tr, tr.Ranks())
			for b.Loop() {
				opt := EventOptions{SendLatency: -1, Algorithms: algo.Options{Policy: algo.PolicyNCCL}}
				if _, err := RunTrace(context.Background(), in, opt, Attachments{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTraceVsWorkload1024 runs the 1 GiB ring all-reduce over 1,024 GPUs (bench/run's
// ring-allreduce-1024 scenario, CC off) twice: from its SimAI text file, and as a Chakra trace of
// 1,024 ranks, each one ALL_REDUCE of 1 GiB over all ranks, written by chakra.Write and read back
// (its reading and checking included). Both choose SimCCL's ring and give the same iteration;
// the trace should cost about what the text costs.
//
//	go test -run '^$' -bench TraceVsWorkload1024 -benchtime 3x ./workloads/sim
func BenchmarkTraceVsWorkload1024(b *testing.B) {
	const gpus = 1024
	text, err := os.ReadFile(filepath.Join("..", "..", "bench", "scenarios", "allreduce-1GiB.txt"))
	if err != nil {
		b.Fatal(err)
	}
	conf := "CC_MODE 0\nPACKET_PAYLOAD_SIZE 9000\n"
	s := newTestSimulation(b, string(text), gpus, conf)
	dir := b.TempDir()
	for r := range gpus {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("ar.%d.et", r)))
		if err != nil {
			b.Fatal(err)
		}
		n := chakra.Node{ID: 1, Name: "ring_allreduce_1GiB", Type: chakra.CommCollNode, Attrs: []chakra.Attr{
			{Name: "is_cpu_op", Kind: chakra.AttrBool},
			{Name: "comm_type", Kind: chakra.AttrInt64, Int: int64(chakra.AllReduce)},
			{Name: "comm_size", Kind: chakra.AttrInt64, Int: 1 << 30}}}
		if err := chakra.Write(f, &chakra.Metadata{Version: "0.0.4"}, []chakra.Node{n}); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	var workloadEnd, traceEnd engine.Time
	b.Run("workload", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
			if err != nil {
				b.Fatal(err)
			}
			workloadEnd = r.End
		}
	})
	b.Run("trace", func(b *testing.B) {
		for b.Loop() {
			tr, err := chakra.Load(filepath.Join(dir, "ar.%d.et"), chakra.Options{})
			if err != nil {
				b.Fatal(err)
			}
			in := TraceInputs{Trace: tr, Cluster: s.in.Cluster, Conf: s.in.Conf}
			r, err := RunTrace(context.Background(), in, EventOptions{SendLatency: -1}, Attachments{})
			if err != nil {
				b.Fatal(err)
			}
			traceEnd = r.End
		}
	})
	if workloadEnd != 0 && traceEnd != 0 && workloadEnd != traceEnd {
		b.Errorf("the workload ends at %v, the trace at %v", workloadEnd, traceEnd)
	}
}
