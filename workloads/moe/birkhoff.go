package moe

import (
	"errors"
	"fmt"
	"math"
)

// Stage is one term of a Birkhoff–von Neumann decomposition: the permutation Perm (row r is
// matched with column Perm[r]; for FAST, server r sends to server Perm[r]) with weight Weight.
type Stage struct {
	Perm   []int
	Weight float64
}

// offSupportCost is the cost the seed gives an entry outside the support of the residual
// (np.where(residual > 0, 0, 10**9)); the entries inside cost 0.
const offSupportCost = 1e9

// Assign solves the linear sum assignment problem for the square cost matrix: it returns the
// permutation p minimising Σ_r cost[r][p[r]]. It is the shortest-augmenting-path algorithm of
// Crouse (IEEE TAES 52(4), 2016) — the one scipy.optimize.linear_sum_assignment runs — with
// the same order of scanning and the same tie-breaking (unassigned columns first among equal
// reduced costs; the free columns are scanned from the last to the first), so that it picks the
// same optimum as the seed's script when there are several. O(n³). It returns an error if the
// matrix is not square or holds a NaN or an infinity.
func Assign(cost [][]float64) ([]int, error) {
	n := len(cost)
	c := make([]float64, n*n)
	minv := math.Inf(1)
	for r, row := range cost {
		if len(row) != n {
			return nil, fmt.Errorf("moe: cost matrix row %d has %d entries, want %d", r, len(row), n)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("moe: cost matrix entry (%d,%d) is %v", r, j, v)
			}
			c[r*n+j] = v
			minv = math.Min(minv, v)
		}
	}
	for i := range c {
		c[i] -= minv
	}
	var s lsap
	return s.solve(n, c)
}

// lsap holds the work arrays of one assignment so that a decomposition reuses them.
type lsap struct {
	u, v, spc      []float64
	path, col4row  []int
	row4col, free  []int
	rowSeen, colIn []bool
}

func (s *lsap) solve(n int, c []float64) ([]int, error) {
	if cap(s.u) < n {
		s.u, s.v, s.spc = make([]float64, n), make([]float64, n), make([]float64, n)
		s.path, s.col4row, s.row4col, s.free = make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		s.rowSeen, s.colIn = make([]bool, n), make([]bool, n)
	}
	u, v, spc := s.u[:n], s.v[:n], s.spc[:n]
	path, col4row, row4col := s.path[:n], s.col4row[:n], s.row4col[:n]
	rowSeen, colIn := s.rowSeen[:n], s.colIn[:n]
	for i := range n {
		u[i], v[i] = 0, 0
		path[i], col4row[i], row4col[i] = -1, -1, -1
	}
	for cur := range n {
		// Dijkstra-like search for the shortest augmenting path from row cur.
		free := s.free[:n]
		for k := range n {
			free[k] = n - 1 - k
		}
		nfree := n
		for k := range n {
			rowSeen[k], colIn[k], spc[k] = false, false, math.Inf(1)
		}
		minVal := 0.0
		i, sink := cur, -1
		for sink < 0 {
			rowSeen[i] = true
			best, lowest := -1, math.Inf(1)
			for k := 0; k < nfree; k++ {
				j := free[k]
				if r := minVal + c[i*n+j] - u[i] - v[j]; r < spc[j] {
					path[j], spc[j] = i, r
				}
				if spc[j] < lowest || (spc[j] == lowest && row4col[j] == -1) {
					lowest, best = spc[j], k
				}
			}
			minVal = lowest
			if math.IsInf(minVal, 1) {
				return nil, errors.New("moe: assignment infeasible")
			}
			j := free[best]
			if row4col[j] == -1 {
				sink = j
			} else {
				i = row4col[j]
			}
			colIn[j] = true
			nfree--
			free[best] = free[nfree]
		}
		// Dual update.
		u[cur] += minVal
		for r := range n {
			if rowSeen[r] && r != cur {
				u[r] += minVal - spc[col4row[r]]
			}
		}
		for j := range n {
			if colIn[j] {
				v[j] -= minVal - spc[j]
			}
		}
		// Augment along the path back to cur.
		for j := sink; ; {
			r := path[j]
			row4col[j] = r
			col4row[r], j = j, col4row[r]
			if r == cur {
				break
			}
		}
	}
	return append([]int(nil), col4row...), nil
}

// PadSeed pads a non-negative integer matrix so that every row and column sums to target, the
// seed's _pad_matrix: a north-west-corner walk that, at row r and column c, adds
// min(target − rowsum_r, target − colsum_c) to entry (r, c) and moves past whichever line is
// full. It returns the padded matrix and the padding added (padded = m + padding); the padding
// may land on the diagonal. target must be at least every row and column sum.
func PadSeed(m [][]int64, target int64) (padded, padding [][]int64, err error) {
	n := len(m)
	rows, cols := make([]int64, n), make([]int64, n)
	padded, padding = make([][]int64, n), make([][]int64, n)
	for r, row := range m {
		if len(row) != n {
			return nil, nil, fmt.Errorf("moe: matrix row %d has %d entries, want %d", r, len(row), n)
		}
		padded[r], padding[r] = append([]int64(nil), row...), make([]int64, n)
		for c, x := range row {
			if x < 0 {
				return nil, nil, fmt.Errorf("moe: matrix entry (%d,%d) is negative", r, c)
			}
			rows[r] += x
			cols[c] += x
		}
	}
	for i := range n {
		if rows[i] > target || cols[i] > target {
			return nil, nil, fmt.Errorf("moe: line %d sums past the target %d", i, target)
		}
	}
	for r, c := 0, 0; r < n && c < n; {
		rs, cs := target-rows[r], target-cols[c]
		if rs == 0 {
			r++
			continue
		}
		if cs == 0 {
			c++
			continue
		}
		f := min(rs, cs)
		padded[r][c] += f
		padding[r][c] += f
		rows[r] += f
		cols[c] += f
		if rows[r] == target {
			r++
		}
		if cols[c] == target {
			c++
		}
	}
	return padded, padding, nil
}

// BvNTolerance is the tolerance Birkhoff uses for a matrix of size n whose line sum is sum:
// residual entries at or below it count as zero. It is 8·n²·ε·sum (ε = 2⁻⁵²), far below one
// for integer matrices, so integer matrices are decomposed exactly.
func BvNTolerance(n int, sum float64) float64 {
	return 8 * float64(n*n) * 0x1p-52 * sum
}

// Birkhoff decomposes a non-negative square matrix whose rows and columns all have the same
// sum L into a weighted sum of permutation matrices, as the seed's _brikhoff_decomposition
// does: while the residual has a positive entry, pick a perfect matching inside its support by
// solving an assignment with cost 0 on positive entries and 10⁹ elsewhere (Assign, scipy's
// algorithm and tie-breaking), take the smallest matched entry as the weight, subtract it
// along the matching. Each stage zeroes at least one entry, so the loop ends; the weights sum
// to L. Birkhoff's theorem guarantees the perfect matching on the support of a matrix with
// equal line sums.
//
// With floating-point entries, residual entries at or below BvNTolerance(n, L) count as zero
// (and are set to zero). The function returns an error if the matrix is not square, holds a
// negative or non-finite entry, or its line sums differ by more than n times the tolerance.
func Birkhoff(m [][]float64) ([]Stage, error) {
	n := len(m)
	res := make([]float64, n*n)
	rows, cols := make([]float64, n), make([]float64, n)
	for r, row := range m {
		if len(row) != n {
			return nil, fmt.Errorf("moe: matrix row %d has %d entries, want %d", r, len(row), n)
		}
		for c, x := range row {
			if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("moe: matrix entry (%d,%d) is %v", r, c, x)
			}
			res[r*n+c] = x
			rows[r] += x
			cols[c] += x
		}
	}
	if n == 0 {
		return nil, nil
	}
	lsum := 0.0
	for i := range n {
		lsum = max(lsum, rows[i], cols[i])
	}
	tol := BvNTolerance(n, lsum)
	for i := range n {
		if lsum-rows[i] > float64(n)*tol || lsum-cols[i] > float64(n)*tol {
			return nil, fmt.Errorf("moe: line %d sums to %v and %v, not %v: the matrix is not doubly stochastic", i, rows[i], cols[i], lsum)
		}
	}
	for i, x := range res {
		if x <= tol {
			res[i] = 0
		}
	}
	cost := make([]float64, n*n)
	var s lsap
	var stages []Stage
	for {
		positive := false
		for i, x := range res {
			if x > 0 {
				cost[i] = 0
				positive = true
			} else {
				cost[i] = offSupportCost
			}
		}
		if !positive {
			return stages, nil
		}
		perm, err := s.solve(n, cost)
		if err != nil {
			return nil, err
		}
		w := math.Inf(1)
		for r, c := range perm {
			w = math.Min(w, res[r*n+c])
		}
		if w <= 0 {
			return nil, errors.New("moe: no perfect matching on the support of the residual: the matrix is not doubly stochastic")
		}
		for r, c := range perm {
			if x := res[r*n+c] - w; x > tol {
				res[r*n+c] = x
			} else {
				res[r*n+c] = 0
			}
		}
		stages = append(stages, Stage{Perm: perm, Weight: w})
	}
}
