package multiring

import (
	"errors"
	"fmt"
	"testing"
)

// decomposes reports why cycles are not n−1 arc-disjoint directed Hamiltonian cycles of K_n*
// (nil if they are): every cycle visits every vertex once, and every ordered pair (i, j), i ≠ j,
// is an arc of exactly one cycle.
func decomposes(n int, cycles [][]int) error {
	if len(cycles) != n-1 {
		return fmt.Errorf("%d cycles, want %d", len(cycles), n-1)
	}
	used := make([]int, n*n)
	for ci, c := range cycles {
		if err := checkRing(c, n); err != nil {
			return fmt.Errorf("cycle %d is not Hamiltonian: %v", ci, err)
		}
		for j, v := range c {
			w := c[(j+1)%n]
			used[v*n+w]++
		}
	}
	for v := range n {
		for w := range n {
			if v != w && used[v*n+w] != 1 {
				return fmt.Errorf("arc %d→%d is used %d times", v, w, used[v*n+w])
			}
		}
	}
	return nil
}

// The acceptance test: every directed pair is used exactly once (per step) by the
// Multi-Ring cycles, for every n from 2 to 64 where a decomposition exists; none for 4 and 6.
func TestCyclesDecompose(t *testing.T) {
	for n := 1; n <= 64; n++ {
		c, err := Cycles(n)
		if n == 4 || n == 6 {
			if !errors.Is(err, ErrNoDecomposition) {
				t.Errorf("n=%d: err = %v, want ErrNoDecomposition", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if err := decomposes(n, c); err != nil {
			t.Errorf("n=%d: %v", n, err)
		}
	}
}

// The constructions are closed forms, not searches: check them far beyond the sizes simd uses.
func TestCyclesLarge(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for n := 65; n <= 400; n++ {
		c, err := Cycles(n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if err := decomposes(n, c); err != nil {
			t.Errorf("n=%d: %v", n, err)
		}
	}
}

// The general n ≡ 0 (mod 4) branch of gen_hamilton_circle also works for n = 8, and the fixed
// table is a decomposition.
func TestTASPGeneralBranchAt8(t *testing.T) {
	c, err := extend(6, taspShifts(8))
	if err != nil {
		t.Fatal(err)
	}
	if err := decomposes(8, c); err != nil {
		t.Error(err)
	}
	if err := decomposes(8, tasp8); err != nil {
		t.Error(err)
	}
}

// §6.3's construction, step by step, for n = 12: k = 2, rows 0, 3, 6, 8 rotated by 1, 10, 3, 8
// and the others by 4; cycle 1 is [11] followed by row 1 = [10, 1, 2, 0, 3, 9, 4, 8, 5, 7, 6]
// rotated left by 4.
func TestTASPRows(t *testing.T) {
	want := []int{1, 4, 4, 10, 4, 4, 3, 4, 8, 4}
	s := taspShifts(12)
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("shifts %v, want %v", s, want)
	}
	c, _ := Cycles(12)
	if got := fmt.Sprint(c[1]); got != "[11 3 9 4 8 5 7 6 10 1 2 0]" {
		t.Errorf("cycle 1 = %s", got)
	}
}

// The n ≡ 2 (mod 4) transversal visits every vertex and takes one arc from every row; breaking
// it (swapping two steps) is caught.
func TestWalk2Mod4(t *testing.T) {
	for m := 8; m <= 400; m += 4 {
		p := walk2mod4(m)
		if len(p) != m+1 {
			t.Fatalf("m=%d: %d vertices", m, len(p))
		}
		if _, err := shiftsFromPath(m, p); err != nil {
			t.Fatalf("m=%d: %v", m, err)
		}
	}
	p := walk2mod4(16)
	// 0 2 4 6 7 8 …: go 0 2 4 5 … instead (uses +1 twice from different tails, then clashes).
	q := append([]int(nil), p...)
	q[4] = 5
	if _, err := extendFromPath(16, q); err == nil {
		t.Error("a broken walk was accepted")
	}
}

func extendFromPath(m int, p []int) ([][]int, error) {
	s, err := shiftsFromPath(m, p)
	if err != nil {
		return nil, err
	}
	return extend(m, s)
}

func TestPaths(t *testing.T) {
	for m := 1; m <= 64; m++ {
		ps, err := Paths(m)
		if m == 3 || m == 5 {
			if !errors.Is(err, ErrNoDecomposition) {
				t.Errorf("m=%d: err = %v", m, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("m=%d: %v", m, err)
		}
		if len(ps) != m {
			t.Fatalf("m=%d: %d paths", m, len(ps))
		}
		used := make([]int, m*m)
		ends := make([]int, m)
		for i, p := range ps {
			if err := checkRing(p, m); err != nil {
				t.Fatalf("m=%d path %d: %v", m, i, err)
			}
			if p[0] != i {
				t.Errorf("m=%d: path %d starts at %d", m, i, p[0])
			}
			ends[p[m-1]]++
			for j := 1; j < m; j++ {
				used[p[j-1]*m+p[j]]++
			}
		}
		for v := range m {
			if ends[v] != 1 {
				t.Errorf("m=%d: %d paths end at %d", m, ends[v], v)
			}
			for w := range m {
				if v != w && used[v*m+w] != 1 {
					t.Errorf("m=%d: arc %d→%d used %d times", m, v, w, used[v*m+w])
				}
			}
		}
	}
	// TASP's local paths for m = 8: path i = i, i+1, i−1, i+2, i−2, i+3, i−3, i+4.
	ps, _ := Paths(8)
	if got := fmt.Sprint(ps[3]); got != "[3 4 2 5 1 6 0 7]" {
		t.Errorf("path 3 of K_8* = %s", got)
	}
}

// The doc's "microseconds": Cycles for the largest sizes of each branch up to 64.
func BenchmarkCycles(b *testing.B) {
	for _, n := range []int{63, 62, 64} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Cycles(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
