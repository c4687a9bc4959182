package rhd

import (
	"fmt"
	"math"
	"testing"

	"simd/ccl"
)

var sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 24, 31, 32, 33, 48, 63, 64}

var ops = []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather}

func request(op ccl.Op, n, gps int, bytes int64) ccl.Request {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(3 + 2*i) // not 0..n−1: group indices and ranks differ
	}
	total := 3 + 2*n
	return ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: total, Bytes: bytes}
}

func TestCheck(t *testing.T) {
	for _, n := range sizes {
		for _, op := range ops {
			for _, gps := range []int{1, 8} {
				d, err := New(request(op, n, gps, 1<<20+13))
				if err != nil {
					t.Fatalf("%s n=%d: %v", op, n, err)
				}
				if err := ccl.Check(d); err != nil {
					t.Errorf("%s n=%d gps=%d: %v", op, n, gps, err)
				}
			}
		}
	}
	if _, err := New(request(ccl.OpAllToAll, 4, 8, 100)); err == nil {
		t.Error("all-to-all accepted")
	}
	if _, err := AllGather(request(ccl.OpAllReduce, 4, 8, 100)); err == nil {
		t.Error("AllGather built an all-reduce")
	}
}

// The pairs are consecutive group indices, spread so that every aligned run of 2^j virtual
// ranks holds at most ⌈r/2^(k−j)⌉ of them.
func TestPlan(t *testing.T) {
	for p := 1; p <= 200; p++ {
		pl := NewPlan(p)
		if pl.PPrime > p || 2*pl.PPrime <= p || pl.R != p-pl.PPrime || 1<<pl.K != pl.PPrime {
			t.Fatalf("p=%d: %+v", p, pl)
		}
		g, pairs := 0, 0
		for v := range pl.PPrime {
			if pl.Rep[v] != g {
				t.Fatalf("p=%d: virtual %d starts at %d, want %d", p, v, pl.Rep[v], g)
			}
			g++
			if pl.Partner[v] >= 0 {
				if pl.Partner[v] != g {
					t.Fatalf("p=%d: partner of %d is %d", p, v, pl.Partner[v])
				}
				g++
				pairs++
			}
		}
		if g != p || pairs != pl.R {
			t.Fatalf("p=%d: %d ranks, %d pairs", p, g, pairs)
		}
		for j := 0; j <= pl.K; j++ {
			size := 1 << j
			limit := (pl.R + 1<<(pl.K-j) - 1) >> (pl.K - j)
			for base := 0; base < pl.PPrime; base += size {
				c := 0
				for v := base; v < base+size; v++ {
					if pl.Partner[v] >= 0 {
						c++
					}
				}
				if c > limit {
					t.Fatalf("p=%d: run [%d, %d) holds %d pairs, more than %d", p, base, base+size, c, limit)
				}
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Hand-computed: S = 8,000 B, α = 1 µs, β = 1 ns/B, γ = 0.1 ns/B.
func TestTimeByHand(t *testing.T) {
	ab := ccl.AlphaBeta{Alpha: 1e-6, Beta: 1e-9, Gamma: 1e-10}
	cases := []struct {
		op   ccl.Op
		p    int
		want float64
	}{
		// 6 α + 2·7/8·8 µs + 7/8·0.8 µs.
		{ccl.OpAllReduce, 8, 20.7e-6},
		{ccl.OpReduceScatter, 8, 10.7e-6},
		{ccl.OpAllGather, 8, 10e-6},
		// 6 α + (2·3/4 + 2)·8 µs + (3/4 + 1)·0.8 µs.
		{ccl.OpAllReduce, 5, 35.4e-6},
		// fold 1 + 8 + 0.8; 2 α + 1,600 B·(3 + 2)·1.1 ns; scatter 1 + 1.6.
		{ccl.OpReduceScatter, 5, 23.2e-6},
		{ccl.OpAllGather, 5, 21.6e-6},
		// p = 6: CeilSum = 3 + 2 = 5; 9 + (2 + 8000/6·5·1e-3·1.1) + (1 + 8/6) µs.
		{ccl.OpReduceScatter, 6, 9.8e-6 + 2e-6 + 8000.0/6*5*1.1e-9 + 1e-6 + 8000.0/6*1e-9},
		{ccl.OpAllReduce, 1, 0},
		{ccl.OpAllReduce, 2, 2e-6 + 8e-6 + 0.4e-6},
	}
	for _, c := range cases {
		got, err := Time(c.op, c.p, 8000, ab)
		if err != nil || !near(got, c.want) {
			t.Errorf("%s p=%d: %g, %v; want %g", c.op, c.p, got, err, c.want)
		}
	}
	if got := []int{CeilSum(5), CeilSum(6), CeilSum(7), CeilSum(12), CeilSum(8)}; fmt.Sprint(got) != "[5 5 6 11 7]" {
		t.Errorf("CeilSum = %v", got)
	}
}

// The seed's bounds on the non-uniform reduce-scatter: k + 2^k − 1 ≤ Σ⌈p/2^i⌉ ≤ 2^(k+1) − 2.
func TestCeilSumBounds(t *testing.T) {
	for p := 3; p <= 1000; p++ {
		pl := NewPlan(p)
		if pl.R == 0 {
			continue
		}
		s := CeilSum(p)
		if s < pl.K+pl.PPrime-1 || s > 2*pl.PPrime-2 {
			t.Errorf("p=%d: %d outside [%d, %d]", p, s, pl.K+pl.PPrime-1, 2*pl.PPrime-2)
		}
	}
}

// stats prices a DAG step by step and counts what each rank sends.
type stats struct {
	steps int
	time  float64   // Σ over steps of α + β·(most a rank sends) + γ·(same, in reduction steps)
	msgs  []int     // flows sent per group index
	bytes []float64 // bytes sent per group index
	max   []int64   // per step, the most bytes a rank sends
}

func measure(d *ccl.FlowDAG, ab ccl.AlphaBeta, reduces func(step int) bool) stats {
	n := len(d.Coll.Ranks)
	idx := map[int32]int{}
	for i, r := range d.Coll.Ranks {
		idx[r] = i
	}
	st := stats{msgs: make([]int, n), bytes: make([]float64, n)}
	per := map[[2]int]int64{}
	for _, f := range d.Flows {
		st.steps = max(st.steps, int(f.Chunk)+1)
		st.msgs[idx[f.Src]]++
		st.bytes[idx[f.Src]] += float64(f.Bytes)
		per[[2]int{int(f.Chunk), idx[f.Src]}] += f.Bytes
	}
	st.max = make([]int64, st.steps)
	for k, b := range per {
		st.max[k[0]] = max(st.max[k[0]], b)
	}
	for s, m := range st.max {
		st.time += ab.Alpha + float64(m)*ab.Beta
		if reduces(s) {
			st.time += float64(m) * ab.Gamma
		}
	}
	return st
}

// The DAGs take the seed's steps and, step by step, its message sizes: pricing them gives Time
// (less S/p·β for the non-power-of-two all-gather, whose last step skips the block the folded
// rank already holds). Every rank sends as many messages and bytes as the formula charges.
func TestTimeMatchesDAG(t *testing.T) {
	ab := ccl.AlphaBeta{Alpha: 3e-6, Beta: 2e-9, Gamma: 5e-10}
	for _, p := range sizes[1:] {
		pl := NewPlan(p)
		pow2 := pl.R == 0
		S := int64(p * pl.PPrime * 8) // every block a whole number of bytes
		for _, op := range ops {
			name := fmt.Sprintf("%s/p=%d", op, p)
			d, err := New(request(op, p, 8, S))
			if err != nil {
				t.Fatal(err)
			}
			wantSteps := pl.K
			if op == ccl.OpAllReduce {
				wantSteps *= 2
			}
			if !pow2 {
				wantSteps += 2
			}
			// Reduction steps: the fold and the reduce-scatter steps.
			red := 0
			switch op {
			case ccl.OpAllReduce, ccl.OpReduceScatter:
				red = pl.K
				if !pow2 {
					red++
				}
			}
			st := measure(d, ab, func(s int) bool { return s < red })
			if st.steps != wantSteps {
				t.Errorf("%s: %d steps, want %d", name, st.steps, wantSteps)
			}
			want, _ := Time(op, p, S, ab)
			if op == ccl.OpAllGather && !pow2 {
				want -= float64(S) / float64(p) * ab.Beta
			}
			if !near(st.time, want) {
				t.Errorf("%s: DAG %g, formula %g", name, st.time, want)
			}
			// Messages and bytes per rank.
			for i := range p {
				wantMsgs, wantBytes := 0, 0.0
				Sf, pf, ppf := float64(S), float64(p), float64(pl.PPrime)
				v, role := -1, "single"
				for w := range pl.PPrime {
					if pl.Rep[w] == i {
						v = w
						if pl.Partner[w] >= 0 {
							role = "rep"
						}
					}
				}
				if v < 0 {
					role = "folded"
				}
				switch {
				case role == "folded" && op == ccl.OpAllGather:
					wantMsgs, wantBytes = 1, Sf/pf
				case role == "folded":
					wantMsgs, wantBytes = 1, Sf
				case op == ccl.OpAllReduce && pow2:
					wantMsgs, wantBytes = 2*pl.K, 2*(pf-1)/pf*Sf
				case op == ccl.OpAllReduce:
					wantMsgs, wantBytes = 2*pl.K, 2*(ppf-1)/ppf*Sf
					if role == "rep" {
						wantMsgs, wantBytes = wantMsgs+1, wantBytes+Sf
					}
				case pow2:
					wantMsgs, wantBytes = pl.K, (pf-1)/pf*Sf
				default:
					wantMsgs, wantBytes = pl.K, -1 // non-uniform: checked through the step maxima
					if role == "rep" {
						wantMsgs++
						if op == ccl.OpAllGather && pl.Partner[v] != 0 && pl.Partner[v] != p-1 {
							wantMsgs++ // everything but the folded rank's block, in two runs
						}
					}
				}
				if st.msgs[i] != wantMsgs || (wantBytes >= 0 && !near(st.bytes[i], wantBytes)) {
					t.Errorf("%s: %s rank %d sends %d flows, %g B; want %d, %g", name, role, i, st.msgs[i], st.bytes[i], wantMsgs, wantBytes)
				}
			}
			// Non-uniform steps: the largest message of step i is ⌈p/2^i⌉ blocks.
			if !pow2 && op != ccl.OpAllReduce {
				for i := 1; i <= pl.K; i++ {
					s := i // reduce-scatter: step 1 is the first halving (distance p′/2)
					if op == ccl.OpAllGather {
						s = pl.K + 1 - i
					}
					if want := int64((p+1<<i-1)>>i) * S / int64(p); st.max[s] != want {
						t.Errorf("%s: step %d sends up to %d B, want ⌈p/2^%d⌉·S/p = %d", name, s, st.max[s], i, want)
					}
				}
			}
		}
	}
}
