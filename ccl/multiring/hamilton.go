package multiring

import (
	"errors"
	"fmt"
)

// ErrNoDecomposition says that the arc-disjoint Hamiltonian cycles (or paths) asked for do not
// exist: K_4* and K_6* have no decomposition into 3 and 5 directed Hamiltonian cycles (Tillson),
// and hence K_3* and K_5* none into 3 and 5 Hamiltonian paths. Callers fall back to another
// algorithm when they see it (errors.Is).
var ErrNoDecomposition = errors.New("no decomposition into arc-disjoint Hamiltonian cycles exists")

// tasp8 is the fixed n = 8 table of TASP's gen_hamilton_circle (ccl-facts.md §6.3), kept so that
// the rings simd simulates for the most common server size are the ones TASP runs.
var tasp8 = [][]int{
	{7, 0, 1, 5, 2, 4, 3, 6}, {7, 2, 0, 3, 5, 4, 6, 1}, {6, 2, 3, 1, 4, 0, 7, 5}, {2, 5, 1, 0, 6, 3, 7, 4},
	{2, 1, 6, 4, 5, 7, 3, 0}, {5, 0, 4, 7, 1, 3, 2, 6}, {5, 3, 4, 1, 2, 7, 6, 0},
}

// Cycles returns n−1 arc-disjoint directed Hamiltonian cycles of the complete symmetric digraph
// K_n* on the vertices 0..n−1: together they use every ordered pair (i, j), i ≠ j, exactly once.
// Each cycle lists its vertices in order; the last vertex is followed by the first.
//
// Which construction covers which n (see the package documentation for the proofs):
//
//   - n = 1: no cycles; n = 2: the one cycle (0, 1).
//   - n odd: Walecki's decomposition oriented both ways — the m = n−1 rotations of the zig-zag
//     path through ∞ = n−1.
//   - n = 8: TASP's fixed table.
//   - n ≡ 0 (mod 4), n ≥ 12: TASP's gen_hamilton_circle construction (ccl-facts.md §6.3).
//   - n ≡ 2 (mod 4), n ≥ 10: the same two-point extension of the odd case as §6.3, with a
//     transversal walk of this package's own (package documentation).
//   - n = 4, 6: ErrNoDecomposition (Tillson: none exists).
//
// Every branch is closed-form: O(n²) time, no search.
func Cycles(n int) ([][]int, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("multiring: %d vertices", n)
	case n == 1:
		return [][]int{}, nil
	case n == 2:
		return [][]int{{0, 1}}, nil
	case n == 4 || n == 6:
		return nil, fmt.Errorf("multiring: K_%d*: %w (Tillson 1980)", n, ErrNoDecomposition)
	case n%2 == 1:
		return rotationalRows(n - 1), nil
	case n == 8:
		out := make([][]int, len(tasp8))
		for i, c := range tasp8 {
			out[i] = append([]int(nil), c...)
		}
		return out, nil
	case n%4 == 0:
		return extend(n-2, taspShifts(n))
	default:
		m := n - 2
		s, err := shiftsFromPath(m, walk2mod4(m))
		if err != nil {
			return nil, err
		}
		return extend(m, s)
	}
}

// zigzag is the path b = 0, 1, m−1, 2, m−2, 3, … of Z_m (m even): b[i] = −i/2 for even i and
// (i+1)/2 for odd i. Its steps b[j]−b[j−1] are +1, −2, +3, −4, …, ±(m−1): every non-zero
// residue once, so the m translates b+r are arc-disjoint Hamiltonian paths of K_m*; path r starts
// at r and ends at r + m/2.
func zigzag(m int) []int {
	b := make([]int, m)
	for i := range b {
		if i%2 == 0 {
			b[i] = mod(-i/2, m)
		} else {
			b[i] = (i + 1) / 2
		}
	}
	return b
}

func mod(a, m int) int { return ((a % m) + m) % m }

// rotationalRows are the m cycles (∞, b+r), r ∈ Z_m, of K_{m+1}* with ∞ = m (m even): the
// arcs inside Z_m are the translates of the zig-zag path, ∞ → r and r + m/2 → ∞ close them. For
// odd n = m+1 this is Walecki's decomposition with each cycle taken in both directions.
func rotationalRows(m int) [][]int {
	b := zigzag(m)
	rows := make([][]int, m)
	for r := range rows {
		row := make([]int, 0, m+1)
		row = append(row, m)
		for _, x := range b {
			row = append(row, (x+r)%m)
		}
		rows[r] = row
	}
	return rows
}

// extend turns the rotational decomposition of K_{m+1}* into one of K_{m+2}* by adding the vertex
// ∞₂ = m+1. Row r (∞₁ = m followed by b+r) is cut between its positions s[r]−1 and s[r] and ∞₂
// is inserted there: cycle r = ∞₂, row[s[r]:], row[:s[r]]. The cut arcs, one per row, must form
// a Hamiltonian path of the m+1 old vertices; the last cycle is ∞₂ followed by that path. This
// is how TASP's gen_hamilton_circle works (§6.3 steps 2–5); s holds the rotations of its step 3.
func extend(m int, s []int) ([][]int, error) {
	rows := rotationalRows(m)
	next := make([]int, m+1) // cut arcs: tail → head
	isHead := make([]bool, m+1)
	for i := range next {
		next[i] = -1
	}
	out := make([][]int, 0, m+1)
	for r, row := range rows {
		k := s[r]
		if k < 1 || k > m {
			return nil, fmt.Errorf("multiring: internal: rotation %d of row %d", k, r)
		}
		tail, head := row[k-1], row[k]
		if next[tail] >= 0 || isHead[head] {
			return nil, fmt.Errorf("multiring: internal: the cut arcs of K_%d* are not a path", m+2)
		}
		next[tail] = head
		isHead[head] = true
		c := make([]int, 0, m+2)
		c = append(c, m+1)
		c = append(c, row[k:]...)
		c = append(c, row[:k]...)
		out = append(out, c)
	}
	start := -1
	for v, h := range isHead {
		if !h {
			start = v
		}
	}
	last := []int{m + 1}
	for v := start; v >= 0 && len(last) < m+2; v = next[v] {
		last = append(last, v)
	}
	if start < 0 || len(last) != m+2 {
		return nil, fmt.Errorf("multiring: internal: the cut arcs of K_%d* are not a Hamiltonian path", m+2)
	}
	return append(out, last), nil
}

// taspShifts are the rotations of gen_hamilton_circle (§6.3 step 3) for n ≡ 0 (mod 4): with
// k = n/4 − 1, s₀ = 1, s_{k+1} = 4k+2, s_{2k+2} = 3, s_{3k+2} = 4k, and 2k for every other row.
func taspShifts(n int) []int {
	m, k := n-2, n/4-1
	s := make([]int, m)
	for r := range s {
		s[r] = 2 * k
	}
	s[0] = 1
	s[k+1] = 4*k + 2
	s[2*k+2] = 3
	s[3*k+2] = 4 * k
	return s
}

// walk2mod4 is the transversal for m = n−2 ≡ 0 (mod 4), m ≥ 8, k = m/4: the path ∞₁ → 0 and
// then, from 0, the steps
//
//	+2 (k−1 times), +1, +1, +2 (k−1 times), +1, +2 (k−1 times), +4, +2 (k−2 times)
//
// through every vertex of Z_m. The package documentation shows that its arcs lie in m different
// rows (ccl-facts.md §6.3's construction needs exactly that).
func walk2mod4(m int) []int {
	k := m / 4
	var steps []int
	run := func(n, d int) {
		for range n {
			steps = append(steps, d)
		}
	}
	run(k-1, 2)
	steps = append(steps, 1, 1)
	run(k-1, 2)
	steps = append(steps, 1)
	run(k-1, 2)
	steps = append(steps, 4)
	run(k-2, 2)
	path := []int{m, 0}
	x := 0
	for _, d := range steps {
		x = (x + d) % m
		path = append(path, x)
	}
	return path
}

// shiftsFromPath finds, for each arc of path (a Hamiltonian path of the m+1 vertices of
// K_{m+1}*), the row of rotationalRows(m) that holds it and the rotation that cuts it there. It
// fails unless every row holds exactly one arc of the path.
func shiftsFromPath(m int, path []int) ([]int, error) {
	rows := rotationalRows(m)
	N := m + 1
	// row[a·N+b] and cut[a·N+b]: the row holding arc a→b and the rotation that cuts it.
	row := make([]int32, N*N)
	cut := make([]int32, N*N)
	for r, rw := range rows {
		for i := range rw {
			a, b := rw[i], rw[(i+1)%N]
			row[a*N+b], cut[a*N+b] = int32(r), int32(i+1)
		}
	}
	s := make([]int, m)
	for i := 1; i < len(path); i++ {
		a, b := path[i-1], path[i]
		if a == b || a < 0 || b < 0 || a >= N || b >= N || cut[a*N+b] > int32(m) {
			return nil, fmt.Errorf("multiring: internal: arc %d→%d cannot be cut", a, b)
		}
		r := row[a*N+b]
		if s[r] != 0 {
			return nil, fmt.Errorf("multiring: internal: transversal of K_%d* uses row %d twice", N, r)
		}
		s[r] = int(cut[a*N+b])
	}
	return s, nil
}
