package multiring

import (
	"errors"
	"fmt"

	"simd/ccl"
)

// ErrShape says that the group's GPUs are not spread evenly over its servers, so the
// multi-server rings do not apply. Callers fall back to another algorithm when they see it.
var ErrShape = errors.New("the group does not hold the same number of GPUs on every server")

// Topology says which decomposition Rings chose.
type Topology struct {
	Servers   int // u: the servers the group spans
	PerServer int // m: the group's GPUs on each server
	// MultiServer is true for the (m−K_m−m)^u rings of ServerCycles, false for the K_n* rings of
	// Cycles (a group inside one server).
	MultiServer bool
	// RailAligned: every inter-server hop joins GPUs with the same local index (always true
	// inside one server).
	RailAligned bool
}

// Rings returns the rings Multi-Ring runs for a request, as lists of group indices (positions
// in req.Ranks): the n−1 cycles of Cycles(n) when the group lies in one server, and the m
// cycles of ServerCycles(m, u) when it spans u ≥ 2 servers with m GPUs on each. Local index j
// on a server is the group's j-th GPU there; for ccl.Layout's groups whose stride divides the
// server size, the j-th GPUs of all servers sit on the same rail (rank mod GPUsPerServer).
//
// It fails with ErrNoDecomposition for a one-server group of 4 or 6 GPUs and for 3 or 5 GPUs
// per server, and with ErrShape when the servers hold different numbers of the group's GPUs.
func Rings(req ccl.Request) ([][]int, Topology, error) {
	if err := req.Validate(); err != nil {
		return nil, Topology{}, fmt.Errorf("multiring: %w", err)
	}
	t, err := shape(&req)
	if err != nil {
		return nil, Topology{}, err
	}
	if !t.MultiServer {
		c, err := Cycles(t.PerServer)
		return c, t, err
	}
	c, aligned, err := ServerCycles(t.PerServer, t.Servers)
	t.RailAligned = aligned
	return c, t, err
}

// shape is the Topology Rings chooses for a valid request, RailAligned left false across
// servers (ServerCycles decides it), or ErrShape.
func shape(req *ccl.Request) (Topology, error) {
	n := len(req.Ranks)
	u := req.Servers()
	if u == 1 {
		return Topology{Servers: 1, PerServer: n, RailAligned: true}, nil
	}
	gps := int32(req.GPUsPerServer)
	m := n / u
	for i, r := range req.Ranks {
		// Ranks ascend, so the k-th server's GPUs are positions k·m .. k·m+m−1 when the split
		// is even.
		if n%u != 0 || r/gps != req.Ranks[i/m*m]/gps {
			return Topology{}, fmt.Errorf("multiring: %d GPUs on %d servers: %w", n, u, ErrShape)
		}
	}
	return Topology{Servers: u, PerServer: m, MultiServer: true}, nil
}

// RingCount is the number of rings Rings returns for a valid request (req.Validate), counted
// without building them in O(n) time and O(1) memory: n−1 for a group inside one server, m for
// one spread over servers with m GPUs each. It fails exactly when Rings does.
func RingCount(req ccl.Request) (int, error) {
	t, err := shape(&req)
	if err != nil {
		return 0, err
	}
	if !t.MultiServer {
		if n := t.PerServer; n < 1 || n == 4 || n == 6 {
			_, err := Cycles(n) // the error, without building anything
			return 0, err
		}
		return t.PerServer - 1, nil
	}
	if m := t.PerServer; m == 3 || m == 5 {
		_, _, err := ServerCycles(m, t.Servers) // Paths(m) fails before building anything
		return 0, err
	}
	return t.PerServer, nil
}

// New returns the Multi-Ring DAG of a request (all-gather, reduce-scatter or all-reduce) over
// the rings of Rings.
func New(req ccl.Request) (*ccl.FlowDAG, error) {
	rings, _, err := Rings(req)
	if err != nil {
		return nil, err
	}
	return Build(req, rings)
}

// Build returns the Multi-Ring DAG of req.Op over the given rings, each a Hamiltonian cycle of
// the group indices 0..n−1 (any number R ≥ 1 of them; arc-disjointness is what makes them fast,
// not what makes them correct).
//
// The buffer is cut into n·R pieces; piece g·R + r is ring r's chunk of group index g (so g's
// R chunks are the pieces [g·R, (g+1)·R) that ccl.Collective gives it). Flow fields: Channel is
// the ring, Chunk the step (all-reduce numbers its all-gather steps n−1 .. 2n−3), Kind
// ccl.KindMultiRing.
//
//   - All-gather (§6.4): n−1 steps; at step s every GPU v sends, on every ring r, the chunk it
//     received at step s−1 (its own at step 0) to its successor on r. Its only parent is the
//     step s−1 flow of ring r that arrived at v.
//   - Reduce-scatter: the same rings and dependencies; at step s the GPU at position j of ring r
//     sends its partial sum of the chunk owned by position j−s−1, so after n−1 steps every GPU
//     holds its own chunk of every ring fully reduced.
//   - All-reduce: reduce-scatter, then all-gather of the reduced chunks on the same rings; the
//     first all-gather flow of a GPU waits for the last reduce-scatter flow it received.
//
// Request.Channels is ignored: the number of rings is fixed by the decomposition.
func Build(req ccl.Request, rings [][]int) (*ccl.FlowDAG, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("multiring: %w", err)
	}
	switch req.Op {
	case ccl.OpAllGather, ccl.OpReduceScatter, ccl.OpAllReduce:
	default:
		return nil, fmt.Errorf("multiring: %s is not an all-gather, reduce-scatter or all-reduce", req.Op)
	}
	n := len(req.Ranks)
	R := len(rings)
	pieces := n * R
	if n == 1 {
		pieces = 1
	} else if R == 0 {
		return nil, fmt.Errorf("multiring: no rings for %d GPUs", n)
	}
	for r, ring := range rings {
		if err := checkRing(ring, n); err != nil {
			return nil, fmt.Errorf("multiring: ring %d: %w", r, err)
		}
	}
	b := ccl.NewDAGBuilder(ccl.Collective{
		Op: req.Op, Ranks: req.Ranks, GPUsPerServer: req.GPUsPerServer, TotalGPUs: req.TotalGPUs,
		Bytes: req.Bytes, Pieces: pieces, Truncate: req.Truncate,
	})
	if n == 1 {
		return b.Build()
	}
	// prev[r][j]: the flow of ring r that arrived at position j in the last step.
	prev := make([][]ccl.FlowID, R)
	for r := range prev {
		prev[r] = make([]ccl.FlowID, n)
	}
	next := make([][]ccl.FlowID, R)
	for r := range next {
		next[r] = make([]ccl.FlowID, n)
	}
	step := func(chunk int, first bool, owner func(j int) int) {
		for r, ring := range rings {
			for j, v := range ring {
				w := ring[(j+1)%n]
				piece := int32(ring[mod(owner(j), n)]*R + r)
				f := ccl.Flow{Src: req.Ranks[v], Dst: req.Ranks[w], Channel: int32(r), Chunk: int32(chunk),
					Kind: ccl.KindMultiRing, PieceLo: piece, PieceHi: piece + 1}
				var id ccl.FlowID
				if first {
					id = b.Add(f)
				} else {
					id = b.Add(f, prev[r][j])
				}
				next[r][(j+1)%n] = id
			}
		}
		prev, next = next, prev
	}
	chunk := 0
	if req.Op != ccl.OpAllGather {
		for s := 0; s < n-1; s++ {
			step(chunk, s == 0, func(j int) int { return j - s - 1 })
			chunk++
		}
	}
	if req.Op != ccl.OpReduceScatter {
		for s := 0; s < n-1; s++ {
			step(chunk, chunk == 0, func(j int) int { return j - s })
			chunk++
		}
	}
	return b.Build()
}

// checkRing checks that a ring visits each of 0..n−1 once.
func checkRing(ring []int, n int) error {
	if len(ring) != n {
		return fmt.Errorf("%d GPUs, not %d", len(ring), n)
	}
	seen := make([]bool, n)
	for _, v := range ring {
		if v < 0 || v >= n || seen[v] {
			return fmt.Errorf("GPU %d is outside 0..%d or visited twice", v, n-1)
		}
		seen[v] = true
	}
	return nil
}
