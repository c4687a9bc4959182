package nccl

import (
	"fmt"
	"math"
	"math/bits"

	"simd/ccl"
)

// geometry is a group seen server by server. Group indices follow the ascending rank order of
// the request, so the members of one server are consecutive: server k (in the order the group
// meets them) holds group indices off[k] .. off[k+1]-1.
type geometry struct {
	ranks []int32
	n     int
	nsrv  int
	off   []int32 // len nsrv+1
	srv   []int32 // server (group-relative) of each group index
	maxM  int     // most members on one server
	minM  int     // fewest members on one server
}

func newGeometry(req *ccl.Request) geometry {
	g := geometry{ranks: req.Ranks, n: len(req.Ranks)}
	g.srv = make([]int32, g.n)
	gps := int32(req.GPUsPerServer)
	last := int32(-1)
	for i, r := range req.Ranks {
		if s := r / gps; s != last {
			g.off = append(g.off, int32(i))
			last = s
		}
		g.srv[i] = int32(len(g.off) - 1)
	}
	g.nsrv = len(g.off)
	g.off = append(g.off, int32(g.n))
	g.minM = math.MaxInt
	for k := 0; k < g.nsrv; k++ {
		m := g.count(k)
		g.maxM = max(g.maxM, m)
		g.minM = min(g.minM, m)
	}
	if g.nsrv == 0 {
		g.minM = 0
	}
	return g
}

// count is the number of group members on server k.
func (g *geometry) count(k int) int { return int(g.off[k+1] - g.off[k]) }

// uniform says every server holds the same number of members.
func (g *geometry) uniform() bool { return g.minM == g.maxM }

// local is member j (0-based, ascending rank) of server k, as a group index.
func (g *geometry) local(k, j int) int { return int(g.off[k]) + j }

// rotated is entry i of server k's members rotated left by rot: the i-th GPU of server k in the
// order that channel rot uses (SimCCL's gen_local_ring, ccl-facts.md §1.3), as a group index.
func (g *geometry) rotated(k, rot, i int) int {
	m := g.count(k)
	return int(g.off[k]) + mod(rot+i, m)
}

func mod(a, m int) int {
	// The ring's arguments are almost always within one period of the range: avoid the
	// division then (it is the most frequent arithmetic of the ring DAG on the hot path).
	switch {
	case a >= m:
		if a -= m; a < m {
			return a
		}
	case a < 0:
		if a += m; a >= 0 {
			return a
		}
	default:
		return a
	}
	a %= m
	if a < 0 {
		a += m
	}
	return a
}

// collective is the ccl.Collective of a request with the given number of pieces.
func collective(req *ccl.Request, pieces int) ccl.Collective {
	return ccl.Collective{
		Op:            req.Op,
		Ranks:         req.Ranks,
		GPUsPerServer: req.GPUsPerServer,
		TotalGPUs:     req.TotalGPUs,
		Bytes:         req.Bytes,
		Pieces:        max(pieces, 1),
		Truncate:      req.Truncate,
	}
}

// checkSize refuses DAGs whose flow ids would not fit a ccl.FlowID.
func checkSize(flows int64, what string) error {
	if flows > math.MaxInt32 {
		return fmt.Errorf("%s would have %d flows, more than the %d a DAG can number", what, flows, math.MaxInt32)
	}
	return nil
}

func validate(req *ccl.Request, ops ...ccl.Op) error {
	if err := req.Validate(); err != nil {
		return err
	}
	for _, o := range ops {
		if req.Op == o {
			return nil
		}
	}
	return fmt.Errorf("%s is not supported", req.Op)
}

// divider divides by a fixed d ≥ 1 with a multiplication instead of a division, exactly for
// dividends in [0, 2³²) when d < 2³² (flow ids and the sizes that split them are below 2³¹):
// with m = ⌊(2⁶⁴−1)/d⌋+1 = 2⁶⁴/d + e, 0 ≤ e ≤ 1, x·m/2⁶⁴ = x/d + x·e/2⁶⁴, and the excess, below
// 2⁻³² < 1/d, cannot reach the next integer, since x/d's fraction is at most 1 − 1/d.
type divider struct{ d, m uint64 }

func newDivider(d int64) divider {
	if d <= 1 {
		return divider{d: 1}
	}
	return divider{d: uint64(d), m: math.MaxUint64/uint64(d) + 1}
}

// divmod returns x/d and x%d for 0 ≤ x < 2³².
func (v divider) divmod(x int64) (q, r int64) {
	if v.m == 0 {
		return x, 0
	}
	hi, _ := bits.Mul64(uint64(x), v.m)
	return int64(hi), x - int64(hi*v.d)
}
