package multiring

import (
	"fmt"
	"math"
	"testing"

	"simd/ccl"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Hand-computed: n = 8, S = 56,000 B (chunks of 1,000 B), α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B.
func TestTimeByHand(t *testing.T) {
	ab := ccl.AlphaBeta{Alpha: 1e-6, Beta: 1e-9, Gamma: 0.5e-9}
	cases := []struct {
		name string
		got  func() (float64, error)
		want float64
	}{
		// 7 steps × (1 µs + 1,000 B × 1 ns).
		{"AG full mesh", func() (float64, error) { return Time(ccl.OpAllGather, 8, 56000, FullMesh, ab) }, 14e-6},
		// 7 steps × (1 µs + 7,000 B × 1 ns): the port carries 7 chunks.
		{"AG switch", func() (float64, error) { return Time(ccl.OpAllGather, 8, 56000, Switch, ab) }, 56e-6},
		{"AG ring", func() (float64, error) { return RingTime(ccl.OpAllGather, 8, 56000, ab) }, 56e-6},
		// RS: 7 × (2 µs) + 7 × 7,000 B × 0.5 ns = 14 + 24.5 µs.
		{"RS full mesh", func() (float64, error) { return Time(ccl.OpReduceScatter, 8, 56000, FullMesh, ab) }, 38.5e-6},
		{"AR full mesh", func() (float64, error) { return Time(ccl.OpAllReduce, 8, 56000, FullMesh, ab) }, 52.5e-6},
		// 14 × 8 µs + 24.5 µs.
		{"AR ring", func() (float64, error) { return RingTime(ccl.OpAllReduce, 8, 56000, ab) }, 136.5e-6},
		{"AR switch", func() (float64, error) { return Time(ccl.OpAllReduce, 8, 56000, Switch, ab) }, 136.5e-6},
		{"one GPU", func() (float64, error) { return Time(ccl.OpAllReduce, 1, 56000, FullMesh, ab) }, 0},
	}
	// Two servers of 8: S = 128,000 B, chunks of 1,000 B; NVLink 1 µs + 1 ns/B, NIC 5 µs + 8 ns/B.
	lc := ccl.LinkCosts{Intra: ccl.AlphaBeta{Alpha: 1e-6, Beta: 1e-9}, Inter: ccl.AlphaBeta{Alpha: 5e-6, Beta: 8e-9}}
	cases = append(cases, []struct {
		name string
		got  func() (float64, error)
		want float64
	}{
		// 15 steps × (5 µs + max(1,000 × 8 ns, 7 × 1,000 × 1 ns)).
		{"servers switch", func() (float64, error) { return ServerTime(ccl.OpAllGather, 8, 2, 128000, Switch, lc) }, 195e-6},
		// 15 × (5 µs + max(8 µs, 1 µs)).
		{"servers mesh", func() (float64, error) { return ServerTime(ccl.OpAllGather, 8, 2, 128000, FullMesh, lc) }, 195e-6},
		// 15 × (5 µs + 8,000 B × 8 ns).
		{"servers ring", func() (float64, error) { return ServerRingTime(ccl.OpAllGather, 8, 2, 128000, lc) }, 1035e-6},
	}...)
	for _, c := range cases {
		got, err := c.got()
		if err != nil || !near(got, c.want) {
			t.Errorf("%s: %g, %v; want %g", c.name, got, err, c.want)
		}
	}
	if _, err := Time(ccl.OpAllToAll, 8, 1, Switch, ab); err == nil {
		t.Error("all-to-all priced")
	}
}

// The comparison of §6.6: on a full mesh Multi-Ring's all-gather bandwidth term is 1/(n−1) of
// the ring's; on a switch the two are equal.
func TestTASPComparison(t *testing.T) {
	bw := ccl.AlphaBeta{Beta: 1e-9} // no latency: pure bandwidth terms
	for _, n := range []int{3, 8, 16, 64} {
		S := int64(n * (n - 1) * 1000)
		ring, _ := RingTime(ccl.OpAllGather, n, S, bw)
		mesh, _ := Time(ccl.OpAllGather, n, S, FullMesh, bw)
		sw, _ := Time(ccl.OpAllGather, n, S, Switch, bw)
		if !near(ring, float64(n-1)*float64(S)/float64(n)*1e-9) || !near(mesh, ring/float64(n-1)) || !near(sw, ring) {
			t.Errorf("n=%d: ring %g, full mesh %g, switch %g", n, ring, mesh, sw)
		}
	}
}

// stepTime prices a DAG step by step (flows grouped by Chunk): each step costs α plus β times
// the busiest link (fabric FullMesh: a GPU pair; Switch: a GPU's port; across servers the NIC
// and the NVLink side separately), plus γ times what a GPU reduces in a reduce-scatter step.
func stepTime(d *ccl.FlowDAG, gps int, f Fabric, c ccl.LinkCosts, rsSteps int) float64 {
	type key struct{ a, b int32 }
	steps := map[int32][]ccl.Flow{}
	maxStep := int32(0)
	for _, fl := range d.Flows {
		steps[fl.Chunk] = append(steps[fl.Chunk], fl)
		maxStep = max(maxStep, fl.Chunk)
	}
	total := 0.0
	for s := range maxStep + 1 {
		intra, inter, recv := map[key]float64{}, map[int32]float64{}, map[int32]float64{}
		crosses := false
		for _, fl := range steps[s] {
			recv[fl.Dst] += float64(fl.Bytes)
			if fl.Src/int32(gps) != fl.Dst/int32(gps) {
				inter[fl.Src] += float64(fl.Bytes)
				crosses = true
				continue
			}
			k := key{fl.Src, fl.Dst}
			if f == Switch {
				k.b = -1
			}
			intra[k] += float64(fl.Bytes)
		}
		load := 0.0
		for _, b := range intra {
			load = max(load, b*c.Intra.Beta)
		}
		for _, b := range inter {
			load = max(load, b*c.Inter.Beta)
		}
		alpha := c.Intra.Alpha
		if crosses {
			alpha = max(alpha, c.Inter.Alpha)
		}
		total += alpha + load
		if int(s) < rsSteps {
			red := 0.0
			for _, b := range recv {
				red = max(red, b)
			}
			total += red * c.Intra.Gamma
		}
	}
	return total
}

// The closed forms are what the DAGs do: pricing the generated flows step by step gives Time
// and ServerTime, for every op, on both fabrics.
func TestTimeMatchesDAG(t *testing.T) {
	lc := ccl.LinkCosts{Intra: ccl.AlphaBeta{Alpha: 2e-6, Beta: 1e-9, Gamma: 3e-10}, Inter: ccl.AlphaBeta{Alpha: 7e-6, Beta: 9e-9}}
	shapes := []struct{ m, u int }{{3, 1}, {8, 1}, {10, 1}, {13, 1}, {16, 1}, {8, 2}, {4, 3}, {2, 4}, {1, 6}, {7, 2}}
	for _, sh := range shapes {
		n := sh.m * sh.u
		R := sh.m
		if sh.u == 1 {
			R = n - 1
		}
		bytes := int64(n * R * 64) // every chunk 64 B
		for _, op := range ops {
			for _, f := range []Fabric{FullMesh, Switch} {
				name := fmt.Sprintf("%s/m=%d/u=%d/%s", op, sh.m, sh.u, f)
				d, err := New(request(op, 0, n, sh.m, bytes))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				rs := 0
				if op != ccl.OpAllGather {
					rs = n - 1
				}
				got := stepTime(d, sh.m, f, lc, rs)
				want, err := ServerTime(op, sh.m, sh.u, bytes, f, lc)
				if err != nil || !near(got, want) {
					t.Errorf("%s: DAG %g, formula %g (%v)", name, got, want, err)
				}
			}
		}
	}
}
