package rhd

import (
	"fmt"

	"simd/ccl"
)

// Time is the α-β-γ time of RHD as seed 002's cost table gives it (ccl-facts.md §3.2), for p
// ranks and S = bytes (the whole buffer; the gathered output for all-gather). With
// k = ⌊log₂ p⌋ and p′ = 2^k:
//
// p a power of two:
//
//	ReduceScatter  k·α + (p−1)/p·S·β + (p−1)/p·S·γ
//	AllGather      k·α + (p−1)/p·S·β
//	AllReduce      2k·α + 2(p−1)/p·S·β + (p−1)/p·S·γ
//
// otherwise:
//
//	ReduceScatter  (α + S·β + S·γ)                             fold
//	             + k·α + (S/p)·Σᵢ₌₁..ₖ ⌈p/2^i⌉·(β + γ)           non-uniform reduce-scatter
//	             + α + S/p·β                                   scatter to the folded ranks
//	AllGather      the same without the γ terms
//	AllReduce      (2k+2)·α + (2(p′−1)/p′ + 2)·S·β + ((p′−1)/p′ + 1)·S·γ
//
// The DAGs of this package take exactly these steps and, step by step, these largest messages,
// except that the last step of the non-power-of-two all-gather sends (p−1)/p·S (the folded rank
// already holds its own block) where the seed charges S·β.
func Time(op ccl.Op, p int, bytes int64, ab ccl.AlphaBeta) (float64, error) {
	if p < 1 || bytes < 0 {
		return 0, fmt.Errorf("rhd: %d ranks, %d bytes", p, bytes)
	}
	pl := NewPlan(p)
	k, pp := float64(pl.K), float64(pl.PPrime)
	S, pf := float64(bytes), float64(p)
	a, b, g := ab.Alpha, ab.Beta, ab.Gamma
	pow2 := pl.R == 0
	switch op {
	case ccl.OpAllReduce:
		if pow2 {
			return float64(2*k*a) + float64(2*(pf-1)/pf*S*b) + float64((pf-1)/pf*S*g), nil
		}
		return float64((float64(2*k)+2)*a) + float64((float64(2*(pp-1)/pp)+2)*S*b) + float64((float64((pp-1)/pp)+1)*S*g), nil
	case ccl.OpReduceScatter, ccl.OpAllGather:
		if op == ccl.OpAllGather {
			g = 0
		}
		if pow2 {
			return float64(k*a) + float64((pf-1)/pf*S*(b+g)), nil
		}
		sum := float64(CeilSum(p))
		return (a + float64(S*b) + float64(S*g)) + (float64(k*a) + float64(S/pf*sum*(b+g))) + (a + float64(S/pf*b)), nil
	}
	return 0, fmt.Errorf("rhd: no closed form for %s", op)
}

// CeilSum is Σᵢ₌₁..ₖ ⌈p/2^i⌉, k = ⌊log₂ p⌋: the blocks (of S/p) the largest messages of the
// non-uniform reduce-scatter carry in all. The seed bounds it by k + 2^k − 1 below and
// 2^(k+1) − 2 above.
func CeilSum(p int) int {
	pl := NewPlan(p)
	s := 0
	for i := 1; i <= pl.K; i++ {
		s += (p + 1<<i - 1) >> i
	}
	return s
}
