package alltoall

import (
	"fmt"
	"math"

	"simd/ccl"
)

func collective(req ccl.Request) (ccl.Collective, error) {
	if err := req.Validate(); err != nil {
		return ccl.Collective{}, fmt.Errorf("alltoall: %w", err)
	}
	if req.Op != ccl.OpAllToAll {
		return ccl.Collective{}, fmt.Errorf("alltoall: %s is not an all-to-all", req.Op)
	}
	n := len(req.Ranks)
	return ccl.Collective{Op: req.Op, Ranks: req.Ranks, GPUsPerServer: req.GPUsPerServer,
		TotalGPUs: req.TotalGPUs, Bytes: req.Bytes, Pieces: n * n, Truncate: req.Truncate}, nil
}

// flow is group index i's block for group index j: piece i·n + j, Bytes/n (the first Bytes mod n
// destinations one byte more, or none with Truncate, as ccl.Collective.PieceBytes splits it).
func flow(c *ccl.Collective, i, j int, kind ccl.FlowKind, chunk int) ccl.Flow {
	n := len(c.Ranks)
	p := int32(i*n + j)
	return ccl.Flow{Src: c.Ranks[i], Dst: c.Ranks[j], Bytes: c.RangeBytes(p, p+1), Chunk: int32(chunk),
		Kind: kind, PieceLo: p, PieceHi: p + 1}
}

// Direct is the all-to-all with every ordered pair (i, j), i ≠ j, one flow of Bytes/n, all
// sent at once: n(n−1) flows without parents, all in step (Chunk) 0. Flow i·(n−1) + k − 1 is
// group index i's block for (i+k) mod n. The DAG is arithmetic: a million-flow all-to-all
// stores no flow (as a FlowDAG its 40 MB of flows and their empty parent lists were fresh
// memory to clear as the run starts; alltoall-1024 runs in 0.96 of the time without them).
func Direct(req ccl.Request) (ccl.DAG, error) {
	c, err := collective(req)
	if err != nil {
		return nil, err
	}
	n := len(req.Ranks)
	if int64(n)*int64(n-1) > math.MaxInt32 {
		return nil, fmt.Errorf("alltoall: %d ranks have more flows than a DAG can number", n)
	}
	return &ccl.PairsDAG{Coll: c, Rotated: true}, nil
}

// Pairwise is the all-to-all in n−1 rounds: in round k (k = 1..n−1) group index i sends its
// block to (i+k) mod n and receives from (i−k) mod n. Chunk is the round, 0-based (k−1).
//
// Dependencies: round k at a rank starts when round k−1 is complete at that rank, i.e. the flow
// i → i+k waits for both flows of round k−1 that touch i: its own send i → i+k−1 (delivered)
// and its receive i−k+1 → i. This is HCCL's pairwise exchange, one send/receive pair per step
// and a step starting when the last one has finished, so that a rank never has more than one
// message in flight in each direction. The data do not need the dependencies (every block
// starts where it is sent from); they only pace the rounds.
func Pairwise(req ccl.Request) (*ccl.FlowDAG, error) {
	c, err := collective(req)
	if err != nil {
		return nil, err
	}
	b := ccl.NewDAGBuilder(c)
	n := len(req.Ranks)
	b.Grow(n*(n-1), 2*n*max(n-2, 0))
	sent := make([]ccl.FlowID, n) // round k−1's flow sent by i
	recv := make([]ccl.FlowID, n) // round k−1's flow received by i
	nsent := make([]ccl.FlowID, n)
	for k := 1; k < n; k++ {
		for i := range n {
			f := flow(&c, i, (i+k)%n, ccl.KindPairwise, k-1)
			if k == 1 {
				nsent[i] = b.Add(f)
			} else {
				nsent[i] = b.Add(f, sent[i], recv[i])
			}
		}
		for i := range n {
			sent[i] = nsent[i]
			recv[(i+k)%n] = nsent[i]
		}
	}
	return b.Build()
}
