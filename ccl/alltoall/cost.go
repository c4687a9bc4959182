package alltoall

import (
	"fmt"

	"simd/ccl"
)

// PairwiseTime is the α-β time of Pairwise for p ranks each sending S = bytes in all (S/p to
// each): T = (p−1)·α + β·Σₖ maxᵢ n_{i,i+k} (ccl-facts.md §3.2), with every n_{i,j} = S/p here,
// i.e. (p−1)·(α + S/p·β).
func PairwiseTime(p int, bytes int64, ab ccl.AlphaBeta) (float64, error) {
	if p < 1 || bytes < 0 {
		return 0, fmt.Errorf("alltoall: %d ranks, %d bytes", p, bytes)
	}
	return float64(p-1) * (ab.Alpha + float64(float64(bytes)/float64(p)*ab.Beta)), nil
}

// PairwiseTimeV is PairwiseTime for an all-to-all-v: sizes[i][j] bytes from rank i to rank j
// (the diagonal is ignored); T = (p−1)·α + β·Σₖ₌₁..ₚ₋₁ maxᵢ sizes[i][(i+k) mod p].
func PairwiseTimeV(sizes [][]int64, ab ccl.AlphaBeta) (float64, error) {
	p := len(sizes)
	for i, row := range sizes {
		if len(row) != p {
			return 0, fmt.Errorf("alltoall: row %d has %d sizes, want %d", i, len(row), p)
		}
	}
	if p == 0 {
		return 0, nil
	}
	t := float64(p-1) * ab.Alpha
	for k := 1; k < p; k++ {
		var m int64
		for i := range p {
			m = max(m, sizes[i][(i+k)%p])
		}
		t += float64(float64(m) * ab.Beta)
	}
	return t, nil
}

// DirectTime is the α-β time of Direct when every rank pushes its n−1 blocks through one port
// (an NVSwitch port or a NIC): α + (p−1)/p·S·β.
func DirectTime(p int, bytes int64, ab ccl.AlphaBeta) (float64, error) {
	if p < 1 || bytes < 0 {
		return 0, fmt.Errorf("alltoall: %d ranks, %d bytes", p, bytes)
	}
	if p == 1 {
		return 0, nil
	}
	return ab.Alpha + float64(float64(p-1)/float64(p)*float64(bytes)*ab.Beta), nil
}

// DirectMeshTime is the α-β time of Direct on a full mesh, every ordered pair its own link:
// α + S/p·β (HCCL's Mesh).
func DirectMeshTime(p int, bytes int64, ab ccl.AlphaBeta) (float64, error) {
	if p < 1 || bytes < 0 {
		return 0, fmt.Errorf("alltoall: %d ranks, %d bytes", p, bytes)
	}
	if p == 1 {
		return 0, nil
	}
	return ab.Alpha + float64(float64(bytes)/float64(p)*ab.Beta), nil
}
