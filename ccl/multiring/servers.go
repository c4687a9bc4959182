package multiring

import (
	"fmt"
	"slices"
)

// Paths returns m arc-disjoint directed Hamiltonian paths of K_m* that together use all its
// m(m−1) arcs; path i starts at vertex i, and every vertex ends exactly one path.
//
//   - m = 1: the one-vertex path.
//   - m even: the translates i + (0, 1, −1, 2, −2, …, m/2) of the zig-zag path; path i ends at
//     i + m/2. For m = 8 these are TASP's local paths (ccl-facts.md §6.5).
//   - m odd, m ≥ 7: Cycles(m+1) with the vertex m deleted from every cycle.
//   - m = 3, 5: ErrNoDecomposition. Closing every path of a decomposition through a new vertex
//     would decompose K_4* or K_6* into Hamiltonian cycles, which Tillson showed impossible.
func Paths(m int) ([][]int, error) {
	switch {
	case m < 1:
		return nil, fmt.Errorf("multiring: %d vertices", m)
	case m == 1:
		return [][]int{{0}}, nil
	case m == 3 || m == 5:
		return nil, fmt.Errorf("multiring: Hamiltonian paths of K_%d*: %w (it would decompose K_%d*)", m, ErrNoDecomposition, m+1)
	case m%2 == 0:
		b := zigzag(m)
		out := make([][]int, m)
		for i := range out {
			p := make([]int, m)
			for j, x := range b {
				p[j] = (x + i) % m
			}
			out[i] = p
		}
		return out, nil
	}
	cycles, err := Cycles(m + 1)
	if err != nil {
		return nil, err
	}
	out := make([][]int, m)
	for _, c := range cycles {
		at := slices.Index(c, m)
		p := make([]int, 0, m)
		p = append(p, c[at+1:]...)
		p = append(p, c[:at]...)
		out[p[0]] = p
	}
	return out, nil
}

// family is a set of m arc-disjoint Hamiltonian paths of K_m*, indexed by their first vertex.
type family [][]int

// end is the permutation σ of the family: σ(x) is where the path starting at x ends.
func (f family) end() []int {
	s := make([]int, len(f))
	for x, p := range f {
		s[x] = p[len(p)-1]
	}
	return s
}

// reversed is the family with every path walked backwards: its permutation is σ⁻¹.
func (f family) reversed() family {
	g := make(family, len(f))
	for _, p := range f {
		q := slices.Clone(p)
		slices.Reverse(q)
		g[q[0]] = q
	}
	return g
}

// relabeled renames every vertex x to pi[x]: its permutation is π σ π⁻¹.
func (f family) relabeled(pi []int) family {
	g := make(family, len(f))
	for _, p := range f {
		q := make([]int, len(p))
		for i, x := range p {
			q[i] = pi[x]
		}
		g[q[0]] = q
	}
	return g
}

// conjugator returns π with π a π⁻¹ = b for two fixed-point-free involutions a and b: it maps
// the i-th pair {x, a(x)} of a, by smallest element, onto the i-th pair of b.
func conjugator(a, b []int) []int {
	pairs := func(t []int) [][2]int {
		var ps [][2]int
		for x, y := range t {
			if x < y {
				ps = append(ps, [2]int{x, y})
			}
		}
		return ps
	}
	pa, pb := pairs(a), pairs(b)
	pi := make([]int, len(a))
	for i := range pa {
		pi[pa[i][0]] = pb[i][0]
		pi[pa[i][1]] = pb[i][1]
	}
	return pi
}

func isInvolution(s []int) bool {
	for x, y := range s {
		if s[y] != x {
			return false
		}
	}
	return true
}

// ServerCycles returns the m rings of the topology-aware decomposition (m−K_m−m)^u of
// ccl-facts.md §6.5, generalised to any m ∉ {3, 5} and any u ≥ 2: u servers of m GPUs, GPU
// (server k, local index j) numbered k·m + j. Ring x starts at local GPU x of server 0, walks a
// Hamiltonian path of server 0, hops to server 1, walks a path there, and so on through server
// u−1 and back to server 0. Every server uses a whole path family (Paths, possibly reversed or
// relabelled), so the rings use every intra-server arc exactly once and every GPU has exactly
// one inter-server out-arc and one in-arc over all rings — per step, every GPU sends m−1 chunks
// over NVLink and one over its NIC.
//
// railAligned reports whether every inter-server hop joins GPUs with the same local index (the
// same rail). TASP's shipped tables hop from local i+4 to local i; here the paths are chosen so
// that a path starts where the previous server's path ended:
//
//   - σ (where each path of the family ends) is x ↦ x + m/2 for even m and the identity for
//     m = 1: an involution, so the same family on every server closes every ring after an even
//     number of servers — rail-aligned for every even u;
//   - odd m ≥ 7: the family alternates with its reverse (σ, σ⁻¹, σ, …) — rail-aligned for even u;
//   - odd u and m ≡ 0 (mod 4): servers 0, 1, 2 use the family relabelled so that their σ are
//     τ₀ = x + m/2, τ₁ = x XOR 1 and τ₀τ₁ (three commuting fixed-point-free involutions whose
//     product is the identity), the other servers the plain family — rail-aligned;
//   - otherwise (odd u with m ≡ 2 (mod 4) or odd m): no such choice exists among the
//     relabellings for m ≡ 2 (mod 4) (σ is then an odd permutation and a product of an odd
//     number of its conjugates is odd), so the hop that closes each ring from server u−1 back
//     to server 0 crosses rails; every other hop is rail-aligned.
func ServerCycles(m, u int) (rings [][]int, railAligned bool, err error) {
	if u < 2 {
		return nil, false, fmt.Errorf("multiring: %d servers: the multi-server rings need at least 2", u)
	}
	paths, err := Paths(m)
	if err != nil {
		return nil, false, err
	}
	f := family(paths)
	sigma := f.end()
	fams := make([]family, u)
	inv := isInvolution(sigma)
	for k := range fams {
		fams[k] = f
		if !inv && k%2 == 1 {
			fams[k] = f.reversed()
		}
	}
	if u%2 == 1 && m%4 == 0 {
		t0 := sigma // x + m/2
		t1 := make([]int, m)
		t2 := make([]int, m)
		for x := range t1 {
			t1[x] = x ^ 1
			t2[x] = t0[t1[x]]
		}
		fams[1] = f.relabeled(conjugator(t0, t1))
		fams[2] = f.relabeled(conjugator(t0, t2))
	}
	railAligned = true
	rings = make([][]int, m)
	for x := range rings {
		ring := make([]int, 0, m*u)
		cur := x
		for k, fam := range fams {
			p := fam[cur]
			for _, v := range p {
				ring = append(ring, k*m+v)
			}
			cur = p[len(p)-1]
		}
		if cur != x {
			railAligned = false
		}
		rings[x] = ring
	}
	return rings, railAligned, nil
}
