package ccl

import "fmt"

// Layout is how the ranks of a job are divided among the parallelism dimensions.
//
// Ranks 0..GPUs-1 are GPUs; rank r lives on server r/GPUsPerServer. Pipeline stages are
// contiguous blocks of GPUs/PP ranks. Inside a stage, tensor-parallel groups are consecutive
// ranks, data-parallel groups take the same local TP index from every TP group, expert-parallel
// groups are EP consecutive members of a DP group and DP_EP groups the members of a DP group that
// are EP apart (SimAI's MockNcclGroup, simai-formats.md §2.5).
//
// SimAI builds its groups as if PP were 1 (DP = GPUs/TP) while its report divides by PP
// (DP = GPUs/(TP·PP)); simd uses the second everywhere, so the groups it simulates are the groups
// its report prices. With PP = 1 the two agree rank for rank.
type Layout struct {
	GPUs          int
	GPUsPerServer int
	TP, PP, EP    int
	// Placement maps the job's ranks to the cluster's GPUs when the job runs on some of them
	// (one job of several sharing a fabric): rank r runs on GPU Placement[r], whose server is
	// Placement[r]/GPUsPerServer. nil: rank r is GPU r.
	Placement []int32
}

// GPU is the cluster GPU rank r runs on (see Placement).
func (l Layout) GPU(r int) int32 {
	if l.Placement == nil {
		return int32(r)
	}
	return l.Placement[r]
}

// DP is the data-parallel group size, GPUs/(TP·PP).
func (l Layout) DP() int { return l.GPUs / (l.TP * l.PP) }

// DPEP is the size of a DP_EP group, DP/EP.
func (l Layout) DPEP() int { return l.DP() / l.EP }

// Validate checks that the dimensions multiply out to the GPU count.
func (l Layout) Validate() error {
	switch {
	case l.GPUs < 1:
		return fmt.Errorf("GPU count %d: need at least 1 GPU", l.GPUs)
	case l.GPUsPerServer < 1:
		return fmt.Errorf("GPUs per server %d: need at least 1", l.GPUsPerServer)
	case l.TP < 1 || l.PP < 1 || l.EP < 1:
		return fmt.Errorf("parallelism TP=%d PP=%d EP=%d: every size must be at least 1", l.TP, l.PP, l.EP)
	case l.Placement == nil && l.GPUs%l.GPUsPerServer != 0 && l.GPUs > l.GPUsPerServer:
		// (Placed, a job's servers are those of its GPUs, whatever its size.)
		return fmt.Errorf("GPU count %d is not a multiple of GPUs per server %d", l.GPUs, l.GPUsPerServer)
	case l.GPUs%(l.TP*l.PP) != 0:
		return fmt.Errorf("GPU count %d is not divisible by TP×PP = %d×%d", l.GPUs, l.TP, l.PP)
	case l.DP()%l.EP != 0:
		return fmt.Errorf("DP size %d (= %d GPUs / (TP %d × PP %d)) is not divisible by EP %d", l.DP(), l.GPUs, l.TP, l.PP, l.EP)
	case l.Placement != nil && len(l.Placement) != l.GPUs:
		return fmt.Errorf("placement of %d GPUs for a job of %d", len(l.Placement), l.GPUs)
	}
	if l.Placement != nil {
		seen := make(map[int32]bool, len(l.Placement))
		for r, g := range l.Placement {
			if g < 0 || seen[g] {
				return fmt.Errorf("placement: rank %d on GPU %d, which is negative or another rank's", r, g)
			}
			seen[g] = true
		}
	}
	return nil
}

// GroupSize is the number of ranks in one group of the given kind (1 for GroupNone).
func (l Layout) GroupSize(kind GroupKind) int {
	switch kind {
	case GroupTP:
		return l.TP
	case GroupDP:
		return l.DP()
	case GroupPP:
		return l.PP
	case GroupEP:
		return l.EP
	case GroupDPEP:
		return l.DPEP()
	}
	return 1
}

// Groups lists every group of the given kind as ascending rank lists, in a fixed order (by
// pipeline stage, then by SimAI's construction order). A dimension of size 1 has no groups,
// as in SimAI. The layout must be valid. The ranks are the job's; GPU maps them to the
// cluster's GPUs.
func (l Layout) Groups(kind GroupKind) [][]int {
	if l.GroupSize(kind) <= 1 || kind == GroupNone {
		return nil
	}
	stage := l.GPUs / l.PP
	tp, dp, ep := l.TP, l.DP(), l.EP
	var out [][]int
	switch kind {
	case GroupPP:
		for r := 0; r < stage; r++ {
			g := make([]int, l.PP)
			for s := range g {
				g[s] = s*stage + r
			}
			out = append(out, g)
		}
		return out
	}
	for s := 0; s < l.PP; s++ {
		base := s * stage
		switch kind {
		case GroupTP:
			for i := 0; i < dp; i++ {
				g := make([]int, tp)
				for j := range g {
					g[j] = base + i*tp + j
				}
				out = append(out, g)
			}
		case GroupDP:
			for k := 0; k < tp; k++ {
				g := make([]int, dp)
				for j := range g {
					g[j] = base + k + j*tp
				}
				out = append(out, g)
			}
		case GroupEP:
			for b := 0; b < dp/ep; b++ {
				for k := 0; k < tp; k++ {
					g := make([]int, ep)
					for m := range g {
						g[m] = base + (b*ep+m)*tp + k
					}
					out = append(out, g)
				}
			}
		case GroupDPEP:
			for i := 0; i < ep; i++ {
				for k := 0; k < tp; k++ {
					g := make([]int, dp/ep)
					for m := range g {
						g[m] = base + (i+m*ep)*tp + k
					}
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// StageRanks lists the ranks of pipeline stage s in order: the contiguous block
// s·GPUs/PP .. (s+1)·GPUs/PP − 1. Rank i of one stage talks to rank i of the next.
func (l Layout) StageRanks(s int) []int32 {
	n := l.GPUs / l.PP
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(s*n + i)
	}
	return out
}
