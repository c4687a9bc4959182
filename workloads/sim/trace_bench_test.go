package sim

import (
	"context"
	"testing"

	"simd/workloads/chakra"
)

// BenchmarkRunTrace runs the 64-rank ResNet-50 trace and the STG Llama trace in the event mode
// on the default fabric, without output files.
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
				if _, err := RunTrace(context.Background(), in, EventOptions{SendLatency: -1}, Attachments{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
