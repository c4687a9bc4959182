package multiring

import (
	"fmt"
	"testing"

	"simd/ccl"
)

// edit rebuilds d with flow i replaced by what f returns: keep=false drops it (its children lose
// that parent), dup=true adds a second copy of it at the end with the same parents.
func edit(t *testing.T, d *ccl.FlowDAG, f func(i int, fl ccl.Flow, ps []ccl.FlowID) (ps2 []ccl.FlowID, keep, dup bool)) *ccl.FlowDAG {
	t.Helper()
	out, err := ccl.EditDAG(d, func(id ccl.FlowID, fl *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
		return f(int(id), *fl, ps)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every way of breaking a small Multi-Ring DAG is caught by ccl.Check: dropping any flow,
// duplicating any flow, or making any flow wait for a flow of another ring that arrived at its
// sender instead of the one that brought it its data.
func TestCheckRejectsBrokenDAGs(t *testing.T) {
	cases := []ccl.Request{
		request(ccl.OpAllGather, 0, 5, 8, 1000),
		request(ccl.OpReduceScatter, 0, 5, 8, 1000),
		request(ccl.OpAllReduce, 0, 5, 8, 1000),
		request(ccl.OpAllReduce, 0, 6, 2, 999), // 3 servers of 2
	}
	for _, req := range cases {
		d, err := New(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := ccl.Check(d); err != nil {
			t.Fatal(err)
		}
		wrongParents := 0
		name := fmt.Sprintf("%s/n=%d/gps=%d", req.Op, len(req.Ranks), req.GPUsPerServer)
		for victim := range d.Flows {
			drop := edit(t, d, func(i int, _ ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
				return ps, i != victim, false
			})
			if ccl.Check(drop) == nil {
				t.Fatalf("%s: dropping flow %d was accepted", name, victim)
			}
			dup := edit(t, d, func(i int, _ ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
				return ps, true, i == victim
			})
			if ccl.Check(dup) == nil {
				t.Fatalf("%s: duplicating flow %d was accepted", name, victim)
			}
			ps := d.Parents(ccl.FlowID(victim), nil)
			if len(ps) == 0 {
				continue
			}
			// Another flow into the victim's sender, from another ring, no later than the real parent.
			vf, pf := d.Flows[victim], d.Flows[ps[0]]
			wrong := ccl.FlowID(-1)
			for j := range ccl.FlowID(victim) {
				if f := d.Flows[j]; f.Dst == vf.Src && f.Channel != vf.Channel && f.Chunk == pf.Chunk {
					wrong = j
					break
				}
			}
			if wrong < 0 {
				continue
			}
			bad := edit(t, d, func(i int, _ ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
				if i == victim {
					return []ccl.FlowID{wrong}, true, false
				}
				return ps, true, false
			})
			if ccl.Check(bad) == nil {
				t.Fatalf("%s: flow %d waiting for flow %d instead of %d was accepted", name, victim, wrong, ps[0])
			}
			wrongParents++
		}
		if wrongParents == 0 {
			t.Errorf("%s: no wrong parent tried", name)
		}
	}
}
