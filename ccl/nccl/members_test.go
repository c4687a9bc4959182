package nccl

import (
	"fmt"
	"testing"

	"simd/ccl"
)

// A ring's shortcuts for a runner whose ranks join one by one give what its flows say: every
// flow's members are the group indices of its Src and Dst, and the flows counted per member are
// those a pass over every flow counts, with and without PXN (both variants), over groups of
// every shape, ranks out of order among them.
func TestRingMembersAndRankFlows(t *testing.T) {
	var reqs []ccl.Request
	for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather} {
		for _, n := range []int{2, 3, 8, 13, 16} {
			for _, gps := range []int{1, 4, 8} {
				reqs = append(reqs, consecutive(op, n, gps, 1000003))
			}
			reqs = append(reqs, strided(op, n, 8, 2, 1, 999))
		}
		r := consecutive(op, 12, 4, 1<<20)
		r.Channels = 6
		reqs = append(reqs, r, explicitRanks(op, 4, 16, 4096, 9, 10, 11, 0, 1, 2))
	}
	for _, req := range reqs {
		for _, o := range []Options{{}, {PXN: true, PXNVariant: PXNNCCL}, {PXN: true, PXNVariant: PXNSimCCL}} {
			name := fmt.Sprintf("%s/%v/gps%d/pxn=%v/%v", req.Op, req.Ranks, req.GPUsPerServer, o.PXN, o.PXNVariant)
			d, err := Ring(req, o)
			if err != nil {
				continue // PXN refuses some groups; TestRingMatchesExplicit covers which
			}
			t.Run(name, func(t *testing.T) {
				at := map[int32]int{}
				for i, r := range req.Ranks {
					at[r] = i
				}
				index := func(r int32) int32 {
					if i, ok := at[r]; ok {
						return int32(i)
					}
					return -1
				}
				want := make([]int32, len(req.Ranks))
				for f := range d.NumFlows() {
					fl := d.Flow(ccl.FlowID(f))
					src, dst := ccl.Members(d, ccl.FlowID(f), index) // a PXN ring's from Flow, through index
					if src != index(fl.Src) || dst != index(fl.Dst) {
						t.Fatalf("flow %d (%d → %d): members %d → %d", f, fl.Src, fl.Dst, src, dst)
					}
					if i, ok := at[fl.Src]; ok {
						want[i]++
					}
					if i, ok := at[fl.Dst]; ok {
						want[i]++
					}
				}
				got := make([]int32, len(req.Ranks))
				ccl.RankFlows(d, got)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("member %d (rank %d): %d flows counted, %d in the DAG", i, req.Ranks[i], got[i], want[i])
					}
				}
			})
		}
	}
}
