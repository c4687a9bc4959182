package alltoall

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"simd/ccl"
)

var sizes = []int{1, 2, 3, 5, 7, 8, 9, 10, 12, 13, 16, 24, 31, 32, 48, 63, 64}

func request(n, gps int, bytes int64) ccl.Request {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(5 + 3*i)
	}
	return ccl.Request{Op: ccl.OpAllToAll, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: 5 + 3*n, Bytes: bytes}
}

var generators = []struct {
	name string
	gen  func(ccl.Request) (ccl.DAG, error)
}{{"direct", Direct}, {"pairwise", func(r ccl.Request) (ccl.DAG, error) { return Pairwise(r) }}}

// Every DAG passes the checker. GPUsPerServer does not change the DAGs (only which NVSwitch
// endpoints the checker allows), so two values suffice.
func TestCheck(t *testing.T) {
	for _, g := range generators {
		for _, n := range sizes {
			for _, gps := range []int{1, 8} {
				d, err := g.gen(request(n, gps, int64(1000*n+7)))
				if err != nil {
					t.Fatal(err)
				}
				if err := ccl.Check(d); err != nil {
					t.Errorf("%s n=%d gps=%d: %v", g.name, n, gps, err)
				}
				if d.NumFlows() != n*(n-1) {
					t.Errorf("%s n=%d: %d flows, want n(n−1) = %d", g.name, n, d.NumFlows(), n*(n-1))
				}
			}
		}
		r := request(4, 8, 100)
		r.Op = ccl.OpAllReduce
		if _, err := g.gen(r); err == nil {
			t.Errorf("%s built an all-reduce", g.name)
		}
	}
}

// Each flow carries Bytes/n (split as ccl.Collective splits it), direct flows have no parents,
// and pairwise round k sends i → i+k, waiting for i's send and receive of round k−1.
func TestStructure(t *testing.T) {
	for _, n := range []int{2, 3, 7, 8, 12} {
		S := int64(100*n + 3) // blocks of S/n, the first S mod n of every rank one byte larger
		d, _ := Direct(request(n, 8, S))
		for i := range d.NumFlows() {
			f := d.Flow(ccl.FlowID(i))
			if len(d.Parents(ccl.FlowID(i), nil)) != 0 {
				t.Fatalf("direct n=%d: flow %d has parents", n, i)
			}
			if want := S/int64(n) + btoi(int64(int(f.PieceLo)%n) < S%int64(n)); f.Bytes != want {
				t.Fatalf("direct n=%d: flow %d is %d B, want %d", n, i, f.Bytes, want)
			}
		}
		p, _ := Pairwise(request(n, 8, S))
		idx := map[int32]int{}
		for i, r := range p.Coll.Ranks {
			idx[r] = i
		}
		// byRound[k][i]: the flow group index i sends in round k.
		byRound := map[[2]int]ccl.FlowID{}
		for id, f := range p.Flows {
			i, j := idx[f.Src], idx[f.Dst]
			k := (j - i + n) % n
			if int(f.Chunk) != k-1 || f.Kind != ccl.KindPairwise || int(f.PieceLo) != i*n+j {
				t.Fatalf("pairwise n=%d: flow %d = %+v", n, id, f)
			}
			byRound[[2]int{k, i}] = ccl.FlowID(id)
		}
		for k := 1; k < n; k++ {
			for i := range n {
				id := byRound[[2]int{k, i}]
				got := p.Parents(id, nil)
				var want []ccl.FlowID
				if k > 1 {
					want = []ccl.FlowID{byRound[[2]int{k - 1, i}], byRound[[2]int{k - 1, (i - k + 1 + n) % n}]}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("pairwise n=%d round %d rank %d: parents %v, want %v", n, k, i, got, want)
				}
			}
		}
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestTimeByHand(t *testing.T) {
	ab := ccl.AlphaBeta{Alpha: 2e-6, Beta: 1e-9}
	// 8 ranks, 8,000 B each: 7 rounds of 2 µs + 1,000 B × 1 ns.
	if got, _ := PairwiseTime(8, 8000, ab); !near(got, 21e-6) {
		t.Errorf("pairwise: %g", got)
	}
	// One step: 2 µs + 7,000 B through the port; on a mesh 2 µs + 1,000 B.
	if got, _ := DirectTime(8, 8000, ab); !near(got, 9e-6) {
		t.Errorf("direct: %g", got)
	}
	if got, _ := DirectMeshTime(8, 8000, ab); !near(got, 3e-6) {
		t.Errorf("direct mesh: %g", got)
	}
	// All-to-all-v on 3 ranks: shift 1 carries max(10, 40, 70) = 70, shift 2 max(20, 30, 60) = 60:
	// 2 × 2 µs + 130 ns.
	v := [][]int64{{0, 10, 20}, {30, 0, 40}, {60, 70, 0}}
	if got, _ := PairwiseTimeV(v, ab); !near(got, 4.13e-6) {
		t.Errorf("pairwise v: %g", got)
	}
	if _, err := PairwiseTimeV([][]int64{{0, 1}, {2}}, ab); err == nil {
		t.Error("ragged sizes accepted")
	}
	if got, _ := PairwiseTime(1, 8000, ab); got != 0 {
		t.Errorf("one rank: %g", got)
	}
}

// Pricing the DAGs round by round gives the formulas: pairwise, α plus the largest flow of each
// round; direct, one step whose cost is the most a rank sends (one port) or the largest flow
// (a link per pair).
func TestTimeMatchesDAG(t *testing.T) {
	ab := ccl.AlphaBeta{Alpha: 3e-6, Beta: 2e-9}
	for _, n := range sizes[1:] {
		S := int64(n * 64)
		d, _ := Pairwise(request(n, 8, S))
		rounds := map[int32]int64{}
		for _, f := range d.Flows {
			rounds[f.Chunk] = max(rounds[f.Chunk], f.Bytes)
		}
		got := 0.0
		for _, b := range rounds {
			got += ab.Alpha + float64(b)*ab.Beta
		}
		want, _ := PairwiseTime(n, S, ab)
		sizes := make([][]int64, n)
		for i := range sizes {
			sizes[i] = make([]int64, n)
		}
		for id := range d.NumFlows() {
			f := d.Flow(ccl.FlowID(id))
			sizes[f.PieceLo/int32(n)][f.PieceLo%int32(n)] = f.Bytes
		}
		wantV, _ := PairwiseTimeV(sizes, ab)
		if len(rounds) != n-1 || !near(got, want) || !near(got, wantV) {
			t.Errorf("pairwise n=%d: %d rounds, DAG %g, formula %g, v %g", n, len(rounds), got, want, wantV)
		}
		dd, _ := Direct(request(n, 8, S))
		port := map[int32]int64{}
		var link int64
		for id := range dd.NumFlows() {
			f := dd.Flow(ccl.FlowID(id))
			port[f.Src] += f.Bytes
			link = max(link, f.Bytes)
		}
		var most int64
		for _, b := range port {
			most = max(most, b)
		}
		w1, _ := DirectTime(n, S, ab)
		w2, _ := DirectMeshTime(n, S, ab)
		if !near(ab.Alpha+float64(most)*ab.Beta, w1) || !near(ab.Alpha+float64(link)*ab.Beta, w2) {
			t.Errorf("direct n=%d: port %d B, link %d B; formulas %g, %g", n, most, link, w1, w2)
		}
	}
}

// edit rebuilds d with flow i's parents replaced by what f returns; keep=false drops the flow,
// dup=true appends a second copy.
func edit(t *testing.T, d ccl.DAG, f func(i int, ps []ccl.FlowID) (ps2 []ccl.FlowID, keep, dup bool)) *ccl.FlowDAG {
	t.Helper()
	out, err := ccl.EditDAG(d, func(id ccl.FlowID, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return f(int(id), ps) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ccl.Check rejects every dropped or duplicated flow and a flow misrouted to the wrong rank;
// in pairwise, a parent from a later round makes a cycle and is rejected too.
func TestCheckRejectsBrokenDAGs(t *testing.T) {
	for _, g := range generators {
		for _, n := range []int{2, 5, 8} {
			name := fmt.Sprintf("%s/n=%d", g.name, n)
			d, _ := g.gen(request(n, 8, 800))
			for victim := range d.NumFlows() {
				drop := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return ps, i != victim, false })
				if ccl.Check(drop) == nil {
					t.Fatalf("%s: dropping flow %d was accepted", name, victim)
				}
				dup := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return ps, true, i == victim })
				if ccl.Check(dup) == nil {
					t.Fatalf("%s: duplicating flow %d was accepted", name, victim)
				}
			}
			if n > 2 {
				bad := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) { return ps, true, false })
				bad.Flows[0].Dst = bad.Flows[1].Dst // deliver 0's block for j to another rank
				if bad.Flows[0].Dst == bad.Flows[0].Src || ccl.Check(bad) == nil {
					t.Fatalf("%s: a misrouted flow was accepted", name)
				}
			}
			if g.name == "pairwise" && n > 2 {
				// Round 2 of rank 0 waits for round 1 of rank 0; make round 1 wait for it too.
				r2 := ccl.FlowID(n)
				cyc := edit(t, d, func(i int, ps []ccl.FlowID) ([]ccl.FlowID, bool, bool) {
					if i == 0 {
						return []ccl.FlowID{r2}, true, false
					}
					return ps, true, false
				})
				if ccl.Check(cyc) == nil {
					t.Fatalf("%s: a parent from a later round was accepted", name)
				}
			}
		}
	}
}
