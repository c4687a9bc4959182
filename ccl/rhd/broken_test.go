package rhd

import (
	"fmt"
	"testing"

	"simd/ccl"
)

// edit rebuilds d with flow i's parents replaced by what f returns; keep=false drops the flow
// (its children lose that parent), dup=true appends a second copy of it.
func edit(t *testing.T, d *ccl.FlowDAG, f func(i int, ps []ccl.FlowID) (ps2 []ccl.FlowID, keep, dup bool)) *ccl.FlowDAG {
	t.Helper()
	out, err := ccl.EditDAG(d, func(id ccl.FlowID, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return f(int(id), ps) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every way of breaking the DAGs is caught by ccl.Check: dropping any flow, duplicating any
// flow, and making any flow that sends data it received wait for an unrelated flow without
// parents instead.
func TestCheckRejectsBrokenDAGs(t *testing.T) {
	for _, p := range []int{4, 5, 6, 8, 11} {
		for _, op := range ops {
			name := fmt.Sprintf("%s/p=%d", op, p)
			d, err := New(request(op, p, 8, 4096))
			if err != nil {
				t.Fatal(err)
			}
			if err := ccl.Check(d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wrongParents := 0
			for victim := range d.Flows {
				drop := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return ps, i != victim, false })
				if ccl.Check(drop) == nil {
					t.Fatalf("%s: dropping flow %d was accepted", name, victim)
				}
				dup := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return ps, true, i == victim })
				if ccl.Check(dup) == nil {
					t.Fatalf("%s: duplicating flow %d was accepted", name, victim)
				}
				if len(d.Parents(ccl.FlowID(victim), nil)) == 0 {
					continue
				}
				if vf := d.Flows[victim]; op == ccl.OpAllGather && vf.PieceHi == vf.PieceLo+1 && d.Coll.Ranks[vf.PieceLo] == vf.Src {
					continue // it sends its own block: no parent brings it anything
				}
				wrong := ccl.FlowID(-1)
				for j, f := range d.Flows[:victim] {
					if len(d.Parents(ccl.FlowID(j), nil)) == 0 && f.Dst != d.Flows[victim].Src {
						wrong = ccl.FlowID(j)
						break
					}
				}
				if wrong < 0 {
					continue
				}
				bad := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
					if i == victim {
						return []ccl.FlowID{wrong}, true, false
					}
					return ps, true, false
				})
				if ccl.Check(bad) == nil {
					t.Fatalf("%s: flow %d waiting for flow %d instead of its parents was accepted", name, victim, wrong)
				}
				wrongParents++
			}
			if wrongParents == 0 {
				t.Errorf("%s: no wrong parent tried", name)
			}
		}
	}
}
