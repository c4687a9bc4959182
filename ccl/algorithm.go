package ccl

import "fmt"

// Request asks an algorithm for the flow DAG of one collective.
type Request struct {
	Op            Op
	Ranks         []int32 // the group's GPU ranks, ascending (SimAI sorts them)
	GPUsPerServer int     // rank r is on server r / GPUsPerServer
	TotalGPUs     int     // GPUs in the cluster; NVSwitch endpoints are numbered after them
	// Bytes is the collective's size as a SimAI workload gives it: the whole buffer for
	// all-reduce, reduce-scatter and all-gather (the gathered output), and for all-to-all what
	// each rank sends to all ranks together (Bytes/n to each, itself included).
	Bytes int64
	// Channels asks for a number of channels (rings, trees) where the algorithm allows a choice;
	// 0 means the algorithm's default.
	Channels int
	// Truncate cuts the data as SimCCL's integer divisions do (MockNcclGroup: chunk =
	// data_size / nranks / channels): every piece ⌊Bytes/P⌋ bytes, the remainder never sent,
	// and a ring all-reduce, reduce-scatter or all-gather whose pieces come to 0 bytes sends
	// nothing and is done at once. False sends every byte: the first Bytes mod P pieces are
	// one byte larger (Collective.PieceBytes).
	Truncate bool
}

// Validate checks the parts every algorithm relies on.
func (r *Request) Validate() error {
	n := len(r.Ranks)
	switch {
	case n < 1:
		return fmt.Errorf("the group is empty")
	case r.GPUsPerServer < 1:
		return fmt.Errorf("%d GPUs per server", r.GPUsPerServer)
	case r.Bytes < 0:
		return fmt.Errorf("%d bytes", r.Bytes)
	case r.Channels < 0:
		return fmt.Errorf("%d channels", r.Channels)
	}
	seen := make(map[int32]bool, n)
	for i, x := range r.Ranks {
		if x < 0 || int(x) >= r.TotalGPUs {
			return fmt.Errorf("rank %d is not one of the %d GPUs", x, r.TotalGPUs)
		}
		if seen[x] {
			return fmt.Errorf("rank %d is listed twice", x)
		}
		if i > 0 && x < r.Ranks[i-1] {
			return fmt.Errorf("ranks are not ascending (%d after %d)", x, r.Ranks[i-1])
		}
		seen[x] = true
	}
	return nil
}

// Servers is the number of distinct servers the group spans.
func (r *Request) Servers() int {
	n, last := 0, int32(-1)
	for _, x := range r.Ranks {
		if s := x / int32(r.GPUsPerServer); s != last {
			n++
			last = s
		}
	}
	return n
}

// AlphaBeta is the cost of one class of links in the alpha-beta-gamma model: Alpha seconds per
// message, Beta seconds per byte sent, Gamma seconds per byte reduced.
type AlphaBeta struct {
	Alpha, Beta, Gamma float64
}

// LinkCosts are the costs inside a server (NVLink) and between servers (the network).
type LinkCosts struct {
	Intra, Inter AlphaBeta
}

// BusFactor is nccl-tests' bus-bandwidth factor: busbw = algbw × factor, with algbw = the
// buffer size / time (nccl-tests' doc/PERFORMANCE.md).
func BusFactor(op Op, n int) float64 {
	if n < 1 {
		return 0
	}
	switch op {
	case OpAllReduce:
		return 2 * float64(n-1) / float64(n)
	case OpAllGather, OpReduceScatter, OpAllToAll:
		return float64(n-1) / float64(n)
	}
	return 1
}
