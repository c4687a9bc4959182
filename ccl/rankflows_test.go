package ccl

import (
	"fmt"
	"slices"
	"testing"
)

// The all-to-all's shortcuts give what its flows say (members: the group indices of Src and Dst), and a stored DAG is counted by its flows,
// endpoints outside the group (an NVSwitch) not counted.
func TestMembersAndRankFlows(t *testing.T) {
	var dags []DAG
	for _, n := range []int{2, 3, 5, 8} {
		for _, rot := range []bool{false, true} {
			r := make([]int32, n)
			for i := range r {
				r[i] = int32(3*i + 1)
			}
			dags = append(dags, &PairsDAG{Coll: Collective{Op: OpAllToAll, Ranks: r, GPUsPerServer: 4, TotalGPUs: 32, Bytes: 1 << 20, Pieces: n * n}, Rotated: rot})
		}
	}
	b := NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: []int32{0, 1, 2}, GPUsPerServer: 4, TotalGPUs: 4})
	up := b.Add(Flow{Src: 0, Dst: 4, Bytes: 10}) // to the NVSwitch, endpoint 4
	b.Add(Flow{Src: 4, Dst: 1, Bytes: 10}, up)
	b.Add(Flow{Src: 4, Dst: 2, Bytes: 10}, up)
	b.Add(Flow{Src: 2, Dst: 0, Bytes: 10})
	fd, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	dags = append(dags, fd)
	for k, d := range dags {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			ranks := d.Collective().Ranks
			want := make([]int32, len(ranks))
			index := func(r int32) int32 { return int32(slices.Index(ranks, r)) }
			for f := range d.NumFlows() {
				fl := d.Flow(FlowID(f))
				src, dst := Members(d, FlowID(f), index)
				if src != index(fl.Src) || dst != index(fl.Dst) {
					t.Fatalf("flow %d (%d → %d): members %d → %d", f, fl.Src, fl.Dst, src, dst)
				}
				if i := slices.Index(ranks, fl.Src); i >= 0 {
					want[i]++
				}
				if i := slices.Index(ranks, fl.Dst); i >= 0 {
					want[i]++
				}
			}
			got := make([]int32, len(ranks))
			RankFlows(d, got)
			if !slices.Equal(got, want) {
				t.Errorf("flows per member %v, the DAG has %v", got, want)
			}
		})
	}
	got := make([]int32, 3)
	RankFlows(fd, got)
	if want := []int32{2, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("the stored DAG: %v, want %v", got, want)
	}
}
