package algo

import (
	"fmt"
	"slices"

	"simd/ccl"
	"simd/ccl/nccl"
)

// Planned is one group's share of a collective: its ranks, the algorithm chosen and the DAG.
type Planned struct {
	Ranks  []int32
	Choice Choice
	DAG    ccl.DAG
}

// Plan decomposes op of bytes on every group of the given kind of layout l: the groups of one
// kind run the same collective at the same time (every rank executes the same workload).
// totalGPUs numbers the NVSwitch endpoints; chunks is Params.Chunks (and the selector's
// PXNVariant Params.PXN). A kind with no groups of two or more ranks plans nothing.
func (s *Selector) Plan(l ccl.Layout, totalGPUs int, op ccl.Op, kind ccl.GroupKind, bytes int64, chunks int) ([]Planned, error) {
	groups := l.Groups(kind)
	out := make([]Planned, 0, len(groups))
	for _, g := range groups {
		req := ccl.Request{Op: op, GPUsPerServer: l.GPUsPerServer, TotalGPUs: totalGPUs, Bytes: bytes, Truncate: s.Truncates()}
		req.Ranks = make([]int32, len(g))
		for i, r := range g {
			req.Ranks[i] = l.GPU(r)
		}
		if l.Placement != nil {
			// A group is a set of GPUs; the algorithms order it themselves, from ascending ids.
			slices.Sort(req.Ranks)
		}
		c, err := s.Choose(op, kind, &req)
		if err != nil {
			return nil, err
		}
		d, err := Generate(c.Algorithm, req, s.params(chunks))
		if err != nil {
			return nil, fmt.Errorf("%s %s on %s group %v: %w", c.Algorithm, op, kind, g[:min(len(g), 8)], err)
		}
		out = append(out, Planned{Ranks: req.Ranks, Choice: c, DAG: d})
	}
	return out, nil
}

// NCCLAlgorithm is the NCCL algorithm a choice corresponds to, for SimAI's send-latency table;
// ok is false for algorithms NCCL does not have (Multi-Ring, RHD, direct and pairwise
// all-to-all), which get SimAI's default latency.
func (c Choice) NCCLAlgorithm() (nccl.Algorithm, bool) {
	switch c.Algorithm {
	case Ring, PXN:
		return nccl.AlgoRing, true
	case Tree:
		return nccl.AlgoTree, true
	case NVLS:
		return nccl.AlgoNVLS, true
	case NVLSTree:
		return nccl.AlgoNVLSTree, true
	}
	return 0, false
}

// SendLatencyNs is SimAI's start latency for a flow of this choice, in ns (see
// nccl.SendLatencyNs).
func (c Choice) SendLatencyNs(sameServer bool) int64 {
	a, ok := c.NCCLAlgorithm()
	if !ok {
		return nccl.DefaultSendLatencyNs
	}
	return nccl.SendLatencyNs(a, c.Protocol, sameServer)
}
