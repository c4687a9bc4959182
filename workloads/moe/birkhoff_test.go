package moe

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteAssign returns the least total cost over all permutations (n ≤ 7).
func bruteAssign(cost [][]float64) float64 {
	n := len(cost)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	best := math.Inf(1)
	var rec func(k int, acc float64)
	rec = func(k int, acc float64) {
		if k == n {
			best = min(best, acc)
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k+1, acc+cost[k][perm[k]])
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0, 0)
	return best
}

func isPerm(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, c := range p {
		if c < 0 || c >= n || seen[c] {
			return false
		}
		seen[c] = true
	}
	return true
}

func TestAssignOptimalAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + rng.IntN(7)
		cost := make([][]float64, n)
		for r := range cost {
			cost[r] = make([]float64, n)
			for c := range cost[r] {
				switch trial % 3 {
				case 0: // many ties
					cost[r][c] = float64(rng.IntN(3))
				case 1: // the seed's support costs
					if rng.IntN(3) == 0 {
						cost[r][c] = offSupportCost
					}
				default:
					cost[r][c] = rng.NormFloat64() * 100
				}
			}
		}
		p, err := Assign(cost)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !isPerm(p, n) {
			t.Fatalf("trial %d: %v is not a permutation of %d", trial, p, n)
		}
		got := 0.0
		for r, c := range p {
			got += cost[r][c]
		}
		if want := bruteAssign(cost); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("trial %d: cost %v with %v, brute force %v\n%v", trial, got, p, want, cost)
		}
	}
}

// scipy's tie-breaking: a constant matrix gives the identity (scipy issue 11602), and among
// equal reduced costs an unassigned column wins.
func TestAssignTieBreaking(t *testing.T) {
	for n := 1; n <= 6; n++ {
		cost := make([][]float64, n)
		for r := range cost {
			cost[r] = make([]float64, n)
			for c := range cost[r] {
				cost[r][c] = 7
			}
		}
		p, _ := Assign(cost)
		for r, c := range p {
			if r != c {
				t.Fatalf("n=%d: constant matrix gave %v, want the identity", n, p)
			}
		}
	}
	// Row 0 may take column 0 or 1 (both 0). The free columns are scanned from the last and an
	// equal reduced cost on a free column replaces the current best, so row 0 takes column 0.
	// Row 1 can only use column 0: its search reaches row 0, which moves to column 1 along the
	// augmenting path. Row 2 takes the free column 2.
	p, _ := Assign([][]float64{{0, 0, 1e9}, {0, 1e9, 1e9}, {1e9, 0, 0}})
	if want := []int{1, 0, 2}; !equalInts(p, want) {
		t.Fatalf("got %v, want %v", p, want)
	}
}

func TestAssignRejectsBadInput(t *testing.T) {
	if _, err := Assign([][]float64{{1, 2}, {3}}); err == nil {
		t.Error("ragged matrix accepted")
	}
	if _, err := Assign([][]float64{{math.NaN()}}); err == nil {
		t.Error("NaN accepted")
	}
	if p, err := Assign(nil); err != nil || len(p) != 0 {
		t.Errorf("empty matrix: %v, %v", p, err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPadSeedByHand(t *testing.T) {
	// Row sums 3, 1, 0 and column sums 0, 2, 2: the target is 3. The walk fills (0,0)? No:
	// row 0 is full, so it moves to row 1; column 0 needs 3, row 1 needs 2 → (1,0) += 2, row 1
	// full; row 2 needs 3, column 0 needs 1 → (2,0) += 1; column 1 needs 1 → (2,1) += 1;
	// column 2 needs 1 → (2,2) += 1.
	m := [][]int64{{0, 1, 2}, {0, 1, 0}, {0, 0, 0}}
	padded, padding, err := PadSeed(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{0, 0, 0}, {2, 0, 0}, {1, 1, 1}}
	for r := range want {
		for c := range want[r] {
			if padding[r][c] != want[r][c] || padded[r][c] != m[r][c]+want[r][c] {
				t.Fatalf("padding %v, padded %v; want padding %v", padding, padded, want)
			}
		}
	}
	if _, _, err := PadSeed(m, 2); err == nil {
		t.Error("a target below a line sum was accepted")
	}
}

func TestPadSeedProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 500 {
		n := 1 + rng.IntN(8)
		m := make([][]int64, n)
		var lsum int64
		for r := range m {
			m[r] = make([]int64, n)
			for c := range m[r] {
				if rng.IntN(3) > 0 {
					m[r][c] = int64(rng.IntN(50))
				}
			}
		}
		for i := range n {
			var row, col int64
			for j := range n {
				row += m[i][j]
				col += m[j][i]
			}
			lsum = max(lsum, row, col)
		}
		target := lsum + int64(rng.IntN(3))
		padded, padding, err := PadSeed(m, target)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var row, col int64
			for j := range n {
				if padding[i][j] < 0 || padded[i][j] != m[i][j]+padding[i][j] {
					t.Fatalf("trial %d: bad padding at (%d,%d)", trial, i, j)
				}
				row += padded[i][j]
				col += padded[j][i]
			}
			if row != target || col != target {
				t.Fatalf("trial %d: line %d sums to %d and %d, want %d", trial, i, row, col, target)
			}
		}
	}
}

// checkBvN checks that stages reproduce m: every stage a permutation with a positive weight,
// at most (n−1)²+1 of them, the weights summing to the line sum and Σ w·P = m, all within
// 1e-9 of the line sum.
func checkBvN(t *testing.T, m [][]float64, stages []Stage) {
	t.Helper()
	n := len(m)
	lsum := 0.0
	for _, x := range m[0] {
		lsum += x
	}
	if len(stages) > (n-1)*(n-1)+1 {
		t.Fatalf("%d stages for n=%d: more than (n−1)²+1", len(stages), n)
	}
	rec := make([][]float64, n)
	for r := range rec {
		rec[r] = make([]float64, n)
	}
	wsum := 0.0
	for k, st := range stages {
		if !isPerm(st.Perm, n) {
			t.Fatalf("stage %d: %v is not a permutation", k, st.Perm)
		}
		if !(st.Weight > 0) {
			t.Fatalf("stage %d: weight %v", k, st.Weight)
		}
		wsum += st.Weight
		for r, c := range st.Perm {
			rec[r][c] += st.Weight
		}
	}
	tol := 1e-9 * math.Max(lsum, 1e-300)
	if math.Abs(wsum-lsum) > tol {
		t.Fatalf("weights sum to %v, line sum %v", wsum, lsum)
	}
	for r := range n {
		for c := range n {
			if math.Abs(rec[r][c]-m[r][c]) > tol {
				t.Fatalf("entry (%d,%d): rebuilt %v, want %v", r, c, rec[r][c], m[r][c])
			}
		}
	}
}

func TestBirkhoffByHand(t *testing.T) {
	// [[2 1] [1 2]]: the support is full; the assignment (cost 0 everywhere) is the identity
	// (scipy's rule for a constant matrix), weight min(2, 2) = 2, leaving [[0 1] [1 0]]: the
	// swap, weight 1.
	stages, err := Birkhoff([][]float64{{2, 1}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || !equalInts(stages[0].Perm, []int{0, 1}) || stages[0].Weight != 2 ||
		!equalInts(stages[1].Perm, []int{1, 0}) || stages[1].Weight != 1 {
		t.Fatalf("got %+v", stages)
	}
	if stages, err := Birkhoff([][]float64{{0, 0}, {0, 0}}); err != nil || len(stages) != 0 {
		t.Fatalf("zero matrix: %v, %v", stages, err)
	}
}

func TestBirkhoffRejects(t *testing.T) {
	for _, tc := range []struct {
		m    [][]float64
		want string
	}{
		{[][]float64{{1, 2}, {3}}, "row 1"},
		{[][]float64{{-1, 2}, {2, -1}}, "(0,0)"},
		{[][]float64{{1, 0}, {1, 0}}, "not doubly stochastic"},
		{[][]float64{{math.Inf(1)}}, "(0,0)"},
	} {
		if _, err := Birkhoff(tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.m, err, tc.want)
		}
	}
}

func TestBirkhoffRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 1500 {
		n := 1 + rng.IntN(9)
		m := make([][]float64, n)
		for r := range m {
			m[r] = make([]float64, n)
		}
		switch trial % 3 {
		case 0: // a random mixture of permutations with real weights
			for range 1 + rng.IntN(2*n) {
				w := rng.Float64() * math.Pow(10, float64(rng.IntN(7)-3))
				for r, c := range rng.Perm(n) {
					m[r][c] += w
				}
			}
		case 1: // a random integer matrix padded as the seed pads
			im := make([][]int64, n)
			var lsum int64
			for r := range im {
				im[r] = make([]int64, n)
				for c := range im[r] {
					if rng.IntN(2) == 0 {
						im[r][c] = int64(rng.IntN(1000))
					}
				}
			}
			for i := range n {
				var row, col int64
				for j := range n {
					row += im[i][j]
					col += im[j][i]
				}
				lsum = max(lsum, row, col)
			}
			padded, _, err := PadSeed(im, lsum)
			if err != nil {
				t.Fatal(err)
			}
			m = toFloat(padded)
		default: // a dense real mixture: many stages, rounding everywhere
			for range n * n {
				w := rng.Float64()
				for r, c := range rng.Perm(n) {
					m[r][c] += w
				}
			}
		}
		stages, err := Birkhoff(m)
		if err != nil {
			t.Fatalf("trial %d: %v\n%v", trial, err, m)
		}
		checkBvN(t, m, stages)
	}
}
