package moe

import (
	"strings"
	"testing"

	"simd/ccl"
)

// An EP group of 8 ranks on 2 servers of 8 GPUs (ranks 0, 2, 4, 6 and 8, 10, 12, 14): the
// dispatch's flows run between the group's ranks only, cross servers only in RDMA flows, and
// carry as many token bytes as the plan; each rank holds bytes / (top-k × token) tokens.
func TestDispatchDAGOnAGroup(t *testing.T) {
	ranks := []int32{8, 0, 10, 2, 12, 4, 14, 6}
	m := DispatchModel{Hidden: 512, DtypeBytes: 2, TopK: 2, ExpertsPerGPU: 2, Seed: 3}
	for _, kind := range []Kind{DeepEP, FAST} {
		d, err := DispatchDAG(kind, m, ranks, 8, 16, 10*2*1024) // 10 tokens per rank
		if err != nil {
			t.Fatal(err)
		}
		in := map[int32]bool{}
		for _, r := range ranks {
			in[r] = true
		}
		var total int64
		for i := range d.NumFlows() {
			f := d.Flow(ccl.FlowID(i))
			if !in[f.Src] || !in[f.Dst] {
				t.Fatalf("%v: flow %d %d→%d leaves the group", kind, i, f.Src, f.Dst)
			}
			cross := f.Src/8 != f.Dst/8
			if cross != (f.Kind == ccl.KindDispatchRDMA) {
				t.Errorf("%v: flow %d %d→%d is %v", kind, i, f.Src, f.Dst, f.Kind)
			}
			total += f.Bytes
		}
		if total == 0 || total%1024 != 0 {
			t.Errorf("%v: %d bytes, want whole 1 KB tokens", kind, total)
		}
		if c := d.Collective(); c.TotalGPUs != 16 || c.GPUsPerServer != 8 || len(c.Ranks) != 8 || c.Ranks[0] != 0 {
			t.Errorf("%v: collective %+v", kind, c)
		}
	}
}

// A group with more ranks on one server than on another has no DeepEP or FAST plan.
func TestDispatchDAGUnevenGroup(t *testing.T) {
	m := DispatchModel{Hidden: 512, DtypeBytes: 2, TopK: 2, ExpertsPerGPU: 1}
	_, err := DispatchDAG(DeepEP, m, []int32{0, 1, 2, 8}, 8, 16, 4096)
	if err == nil || !strings.Contains(err.Error(), "same number on every server") {
		t.Fatalf("err = %v", err)
	}
}
