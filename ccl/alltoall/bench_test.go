package alltoall

import (
	"testing"

	"simd/ccl"
)

// BenchmarkDirect1024 generates the direct all-to-all over 1,024 ranks: 1,047,552 flows.
func BenchmarkDirect1024(b *testing.B) {
	ranks := make([]int32, 1024)
	for i := range ranks {
		ranks[i] = int32(i)
	}
	req := ccl.Request{Op: ccl.OpAllToAll, Ranks: ranks, GPUsPerServer: 8, TotalGPUs: 1024, Bytes: 256 << 20}
	for b.Loop() {
		if _, err := Direct(req); err != nil {
			b.Fatal(err)
		}
	}
}
