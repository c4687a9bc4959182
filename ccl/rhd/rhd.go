package rhd

import (
	"fmt"
	"math/bits"

	"simd/ccl"
)

// Plan is how RHD arranges p ranks: k = ⌊log₂ p⌋, p′ = 2^k "virtual" ranks take part in the
// halving-doubling, r = p − p′ of them stand for a pair of ranks ("part 1" of the seed: 2r ranks
// folded into r).
type Plan struct {
	P, K, PPrime, R int
	// Rep[v] is the group index of virtual rank v; Partner[v] the group index of the rank
	// folded into it (Rep[v]+1), or −1.
	Rep, Partner []int
}

// NewPlan arranges p ≥ 1 ranks. Virtual ranks take consecutive group indices in order, so that
// virtual rank v's ranks own a contiguous run of blocks and a reduce-scatter keeps the scatter
// order. The pairs are the virtual ranks whose k-bit reversal is below r: this spreads them so
// that every aligned block of 2^j virtual ranks holds at most ⌈r/2^(k−j)⌉ pairs, which is what
// makes the largest message of non-uniform step i exactly ⌈p/2^i⌉ blocks (the seed's n_i).
func NewPlan(p int) Plan {
	k := bits.Len(uint(p)) - 1
	pp := 1 << k
	pl := Plan{P: p, K: k, PPrime: pp, R: p - pp, Rep: make([]int, pp), Partner: make([]int, pp)}
	g := 0
	for v := range pp {
		pl.Rep[v] = g
		pl.Partner[v] = -1
		if reverse(v, k) < pl.R {
			pl.Partner[v] = g + 1
			g++
		}
		g++
	}
	return pl
}

// reverse reverses the low k bits of v.
func reverse(v, k int) int {
	if k == 0 {
		return 0
	}
	return int(bits.Reverse(uint(v)) >> (bits.UintSize - k))
}

// blocks returns the first block owned by virtual rank v (its representative's group index);
// v = p′ gives p.
func (pl Plan) blocks(v int) int {
	if v == pl.PPrime {
		return pl.P
	}
	return pl.Rep[v]
}

// builder adds flows step by step. A rank's send in step t waits for its send and its receive
// of the last step it took part in: "step t at a rank starts when step t−1 is complete there".
// Through the chain of its own sends, a flow thus waits for everything its sender received
// before.
type builder struct {
	b        *ccl.DAGBuilder
	ranks    []int32
	lastSend []ccl.FlowID
	lastRecv []ccl.FlowID
	pending  [][2]int // (src, dst) group indices of the current step
	ids      []ccl.FlowID
	step     int32
}

func newBuilder(c ccl.Collective) *builder {
	n := len(c.Ranks)
	bl := &builder{b: ccl.NewDAGBuilder(c), ranks: c.Ranks, lastSend: make([]ccl.FlowID, n), lastRecv: make([]ccl.FlowID, n)}
	for i := range n {
		bl.lastSend[i], bl.lastRecv[i] = -1, -1
	}
	return bl
}

// send adds a flow of pieces [lo, hi) from group index a to b in the current step (nothing if
// the range is empty).
func (bl *builder) send(a, b, lo, hi int) {
	if lo >= hi {
		return
	}
	var ps []ccl.FlowID
	if bl.lastSend[a] >= 0 {
		ps = append(ps, bl.lastSend[a])
	}
	if bl.lastRecv[a] >= 0 {
		ps = append(ps, bl.lastRecv[a])
	}
	id := bl.b.Add(ccl.Flow{Src: bl.ranks[a], Dst: bl.ranks[b], Chunk: bl.step, Kind: ccl.KindRHD,
		PieceLo: int32(lo), PieceHi: int32(hi)}, ps...)
	bl.pending = append(bl.pending, [2]int{a, b})
	bl.ids = append(bl.ids, id)
}

// next closes the current step: its flows become the last send and receive of their ranks.
func (bl *builder) next() {
	if len(bl.pending) == 0 {
		return
	}
	for i, e := range bl.pending {
		bl.lastSend[e[0]] = bl.ids[i]
		bl.lastRecv[e[1]] = bl.ids[i]
	}
	bl.pending, bl.ids = bl.pending[:0], bl.ids[:0]
	bl.step++
}

// New returns the RHD DAG of a request: all-reduce, reduce-scatter or all-gather.
func New(req ccl.Request) (*ccl.FlowDAG, error) {
	switch req.Op {
	case ccl.OpAllReduce:
		return AllReduce(req)
	case ccl.OpReduceScatter:
		return ReduceScatter(req)
	case ccl.OpAllGather:
		return AllGather(req)
	}
	return nil, fmt.Errorf("rhd: %s is not an all-reduce, reduce-scatter or all-gather", req.Op)
}

func collective(req ccl.Request, pieces int) ccl.Collective {
	return ccl.Collective{Op: req.Op, Ranks: req.Ranks, GPUsPerServer: req.GPUsPerServer,
		TotalGPUs: req.TotalGPUs, Bytes: req.Bytes, Pieces: pieces, Truncate: req.Truncate}
}

func check(req ccl.Request, op ccl.Op) error {
	if err := req.Validate(); err != nil {
		return fmt.Errorf("rhd: %w", err)
	}
	if req.Op != op {
		return fmt.Errorf("rhd: asked for %s, request is %s", op, req.Op)
	}
	return nil
}

// AllReduce is vector halving + distance doubling reduce-scatter among the p′ virtual ranks,
// then the mirror all-gather (distance halving, vector doubling), on p′ pieces of S/p′. For p
// not a power of two, the r folded ranks first send their whole vector to their partner (step
// 0) and get the whole result back at the end. Steps: 2k, or 2k+2.
func AllReduce(req ccl.Request) (*ccl.FlowDAG, error) {
	if err := check(req, ccl.OpAllReduce); err != nil {
		return nil, err
	}
	pl := NewPlan(len(req.Ranks))
	P := pl.PPrime
	bl := newBuilder(collective(req, P))
	fold(bl, pl, func(v int) (int, int) { return 0, P })
	// Reduce-scatter: at distance 2^j each virtual rank keeps the half of its range given by bit
	// j of v and sends the other half. Both partners hold the same range before the step.
	lo, hi := make([]int, pl.PPrime), make([]int, pl.PPrime)
	for v := range hi {
		hi[v] = P
	}
	type rng struct{ lo, hi int }
	hist := make([][]rng, pl.K) // ranges before each step, to retrace in the all-gather
	for j := range pl.K {
		hist[j] = make([]rng, pl.PPrime)
		for v := range pl.PPrime {
			hist[j][v] = rng{lo[v], hi[v]}
			w := v ^ 1<<j
			mid := lo[v] + (hi[v]-lo[v])/2
			if v>>j&1 == 0 {
				bl.send(pl.Rep[v], pl.Rep[w], mid, hi[v])
			} else {
				bl.send(pl.Rep[v], pl.Rep[w], lo[v], mid)
			}
		}
		for v := range pl.PPrime {
			mid := lo[v] + (hi[v]-lo[v])/2
			if v>>j&1 == 0 {
				hi[v] = mid
			} else {
				lo[v] = mid
			}
		}
		bl.next()
	}
	// All-gather: retrace, sending the reduced range to the partner of the step.
	for j := pl.K - 1; j >= 0; j-- {
		for v := range pl.PPrime {
			w := v ^ 1<<j
			bl.send(pl.Rep[v], pl.Rep[w], lo[v], hi[v])
		}
		for v := range pl.PPrime {
			lo[v], hi[v] = hist[j][v].lo, hist[j][v].hi
		}
		bl.next()
	}
	unfold(bl, pl, func(v int) [][2]int { return [][2]int{{0, P}} })
	return bl.b.Build()
}

// ReduceScatter keeps the scatter order: p pieces (group index i ends with piece i). The
// folded ranks first send their whole vector to their partner; then, at distances p′/2, p′/4,
// …, 1, each virtual rank sends the half of its current run of virtual ranks that does not hold
// it (their blocks, contiguous) to its partner, so the largest message of step i is ⌈p/2^i⌉
// blocks; last, each partner sends the folded rank its block. Steps: k, or k+2.
func ReduceScatter(req ccl.Request) (*ccl.FlowDAG, error) {
	if err := check(req, ccl.OpReduceScatter); err != nil {
		return nil, err
	}
	pl := NewPlan(len(req.Ranks))
	bl := newBuilder(collective(req, pl.P))
	fold(bl, pl, func(v int) (int, int) { return 0, pl.P })
	for j := pl.K - 1; j >= 0; j-- {
		for v := range pl.PPrime {
			base := v >> (j + 1) << (j + 1) // the run of 2^(j+1) virtual ranks holding v
			mid := base + 1<<j
			other := [2]int{mid, mid + 1<<j}
			if v >= mid {
				other = [2]int{base, mid}
			}
			bl.send(pl.Rep[v], pl.Rep[v^1<<j], pl.blocks(other[0]), pl.blocks(other[1]))
		}
		bl.next()
	}
	unfold(bl, pl, func(v int) [][2]int {
		q := pl.Partner[v]
		return [][2]int{{q, q + 1}}
	})
	return bl.b.Build()
}

// AllGather is the reduce-scatter backwards: the folded ranks send their block to their
// partner, then at distances 1, 2, …, p′/2 each virtual rank sends everything it holds (the
// blocks of its aligned run of 2^j virtual ranks, contiguous) to its partner, and last the
// partners send the folded ranks everything but their own block. Steps: k, or k+2.
func AllGather(req ccl.Request) (*ccl.FlowDAG, error) {
	if err := check(req, ccl.OpAllGather); err != nil {
		return nil, err
	}
	pl := NewPlan(len(req.Ranks))
	bl := newBuilder(collective(req, pl.P))
	fold(bl, pl, func(v int) (int, int) {
		q := pl.Partner[v]
		return q, q + 1
	})
	for j := range pl.K {
		for v := range pl.PPrime {
			base := v >> j << j
			bl.send(pl.Rep[v], pl.Rep[v^1<<j], pl.blocks(base), pl.blocks(base+1<<j))
		}
		bl.next()
	}
	unfold(bl, pl, func(v int) [][2]int {
		q := pl.Partner[v]
		return [][2]int{{0, q}, {q + 1, pl.P}}
	})
	return bl.b.Build()
}

// fold is the pre-step: every folded rank sends pieces rng(v) to its partner.
func fold(bl *builder, pl Plan, rng func(v int) (int, int)) {
	for v := range pl.PPrime {
		if q := pl.Partner[v]; q >= 0 {
			lo, hi := rng(v)
			bl.send(q, pl.Rep[v], lo, hi)
		}
	}
	bl.next()
}

// unfold is the post-step: every partner sends the folded rank the ranges of rng(v).
func unfold(bl *builder, pl Plan, rng func(v int) [][2]int) {
	for v := range pl.PPrime {
		if q := pl.Partner[v]; q >= 0 {
			for _, r := range rng(v) {
				bl.send(pl.Rep[v], q, r[0], r[1])
			}
		}
	}
	bl.next()
}
