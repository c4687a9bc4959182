package algo

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"simd/ccl"
	"simd/ccl/multiring"
	"simd/ccl/nccl"
)

// Footprint is what a collective's flow DAG holds, counted without generating it.
//
// FootprintOf computes it in closed form from the group's shape (how many ranks, how many on
// each server, on which rails), in O(n) time and O(1) memory for most algorithms (O(servers)
// for the trees, O(min(n, GPUs per server)) for the NCCL-like PXN all-to-all), so that a
// caller can refuse up front a run whose DAG would not fit in memory: an all-to-all over 16,384
// ranks has 268 million flows, all in flight at once. Counts are exact (Flows, Roots, Stored) or a
// proven bound (Width), in int64; a count that would not fit is an error naming it.
// FootprintOf also counts DAGs too large for Generate, which refuses more than 2³¹−1 flows (a
// FlowID is an int32).
type Footprint struct {
	// Flows is the number of flows of the DAG: Generate(...).NumFlows().
	Flows int64
	// Roots is the number of flows with no parent, released together when the collective
	// starts.
	Roots int64
	// Stored is the number of flow records the generated DAG keeps in memory: Flows for the
	// DAGs stored flat (ccl.FlowDAG: Multi-Ring, RHD, direct and pairwise all-to-all, the
	// NCCL-like PXN all-to-all), one chunk's template per channel for the chunked ones (Tree,
	// NVLS, NVLS-Tree), and 0 for the DAGs computed from the flow id (SimCCL's ring, with or
	// without PXN, and its one-shot all-to-all).
	Stored int64
	// Width bounds the number of flows in flight at once, whatever their durations: flows in
	// flight together never wait for one another, directly or not, so they form an antichain
	// of the DAG, and Width bounds its largest antichain. For the DAGs in which no flow has two
	// parents (the rings, Multi-Ring) the largest antichain is the number of flows without
	// children, and Width is exactly that; see FootprintOf for each algorithm's bound.
	Width int64
}

// Scaled is the footprint of k groups each holding at most f (Selector.Footprint's per-group
// footprint times its group count), or an error if a count would not fit an int64.
func (f Footprint) Scaled(k int) (Footprint, error) {
	c := arith{what: "flows"}
	out := Footprint{Flows: c.mul(f.Flows, int64(k))}
	c.what = "roots"
	out.Roots = c.mul(f.Roots, int64(k))
	c.what = "stored flows"
	out.Stored = c.mul(f.Stored, int64(k))
	c.what = "flows in flight"
	out.Width = c.mul(f.Width, int64(k))
	if c.err != nil {
		return Footprint{}, fmt.Errorf("%d groups: %w", k, c.err)
	}
	return out, nil
}

// FootprintOf counts the flow DAG that Generate(a, req, p) would build, without building it.
// It takes the same arguments, applies the same defaults (p.Chunks 0 is the algorithm's
// default; req.Channels as Generate) and fails with Generate's error for every request Generate
// refuses, except for size: it counts DAGs of any size.
//
// With n ranks, N servers holding m_k of them (m the largest), C channels (req.Channels, or
// the generator's default), K chunks per channel and S the steps of a ring (2(n−1) for an
// all-reduce, n−1 otherwise):
//
//   - Ring (nccl.Ring): every step every rank sends one flow per channel, waiting only for the
//     one it received at the step before: Flows = C·S·n, Roots = C·n (step 0), Width = C·n
//     (every (channel, chunk) chain has one flow in flight), Stored = 0, C = m by default.
//     All-to-all is SimCCL's one shot: n(n−1) flows, all roots, Width n(n−1), Stored 0.
//   - PXN ring (same m on every server, N ≥ 2, m ≥ 2, and an operation the variant relays:
//     all-reduce and reduce-scatter for SimCCL's, all three rings for the NCCL-like one;
//     otherwise the plain ring). SimCCL's relays at every step: n+N flows a step (each
//     server's exit → entry over NVLink, then the entry's network hop), Roots = C·n (step 0's
//     n), Width = C·n (the last step's n−N ring flows and N network hops; every other flow
//     has a child). The NCCL-like PXN: a step of channel c has n+N flows when it relays, n
//     when the entries send for their exits, n−N when nothing crosses servers and n−2N at the
//     last step of an all-reduce (nccl's blockSize and kind). Roots are step 0's n flows per
//     channel, plus, in an all-gather, the N hops the entries send from their own data at step
//     m−1. Width counts the flows without children: Roots plus one per flow with two children
//     (a relayed chunk the entry also forwards later, m steps on or after the ring has dropped
//     it).
//   - PXN all-to-all: SimCCL's PXN does not relay it (the one-shot all-to-all above). The
//     NCCL-like PXN: the n(n−1) pairs, plus one NVLink hop for each pair on different
//     servers and rails whose sender's server holds a group member on the receiver's rail:
//     Σ over servers s of (|rails of s| − 1)·Σ_{rails b of s} (members on rail b − 1). Roots =
//     Width = n(n−1) (a pair is a chain of at most two flows), Stored = Flows.
//   - Tree (C = 2m by default): per channel and chunk, one flow up and one down per non-root
//     rank, 2(n−1); Flows = C·K·2(n−1), Stored = Width = C·2(n−1) (a connection carries one
//     chunk at a time, so each flow of a channel's template is in flight for one chunk at
//     most), Roots = the up flows of the rank tree's leaves in chunk 0 of every channel: one per
//     server of ≥ 3 members (the end of its chain), and for a server of 2 (1) members one if it
//     has no child 0 (no child) in the channel's server tree.
//   - NVLS (one server): per chunk n flows to the NVSwitch and n back: Flows = 2n·K, Roots = n,
//     Stored = Width = 2n.
//   - NVLS-Tree (C = 2m by default): per channel and chunk, F = Σ_{m_k ≥ 2} 2m_k + 2(N−1)
//     flows (the members other than the head to the NVSwitch and its sum to the head, up and
//     down the server tree, the head to the NVSwitch and its multicast); Flows = C·K·F, Stored =
//     Width = C·F, Roots = Σ_{m_k ≥ 2} (m_k − 1) + the servers of one member that are leaves of
//     the channel's tree, per channel.
//   - Multi-Ring: R rings (n−1 inside one server, m across servers), each a ring all-gather or
//     reduce-scatter of n−1 steps: Flows = Stored = R·S·n, Roots = Width = R·n.
//   - RHD, p = 2^k + r ranks: all-reduce 2k·2^k + 2r flows, reduce-scatter k·2^k + 2r,
//     all-gather k·2^k + 3r (fold, k steps of 2^k, unfold; the all-gather's unfold sends two
//     ranges); Roots = 2^k; Stored = Flows; Width = 2^k (every rank's sends form a chain, and
//     a fold flow is the parent of its partner's first send), p for the all-gather (whose
//     partners send their two unfold ranges at once).
//   - Direct all-to-all: Flows = Roots = Width = n(n−1), Stored = 0 (arithmetic).
//   - Pairwise all-to-all: Flows = Stored = n(n−1), Roots = Width = n (a rank's sends form a
//     chain: one round in flight).
func FootprintOf(a Name, req ccl.Request, p Params) (Footprint, error) {
	if err := validate(&req); err != nil {
		return Footprint{}, err
	}
	if !Supports(a, req.Op) {
		return refuse(a, req, p)
	}
	nc := a == Ring || a == PXN || a == Tree || a == NVLS || a == NVLSTree
	if nc && (p.Chunks < 0 || p.PXN > nccl.PXNNCCL) {
		return refuse(a, req, p)
	}
	chunks := p.Chunks
	opt := p.options(a)
	n := int64(len(req.Ranks))
	c := arith{what: "flows"}
	var f Footprint
	switch a {
	case Ring, PXN:
		pxn := opt.PXNApplies(req.Op)
		if req.Op == ccl.OpAllToAll {
			if pxn {
				f = pxnAllToAll(&req, &c)
				break
			}
			x := c.mul(n, n-1)
			f = Footprint{Flows: x, Roots: x, Width: x}
			break
		}
		sh := shapeOf(&req)
		if pxn && sh.servers >= 2 && sh.maxM >= 2 && sh.minM != sh.maxM {
			return refuse(a, req, p) // PXN needs the same member count on every server
		}
		f = ring(&req, sh, pxn, opt.PXNVariant == nccl.PXNSimCCL, &c)
	case Tree, NVLS, NVLSTree:
		sh := shapeOf(&req)
		if (a == NVLS && sh.servers > 1) || (a == NVLSTree && sh.servers < 2) {
			return refuse(a, req, p)
		}
		f = chunked(a, &req, sh, chunks, &c)
	case MultiRing:
		rings, err := multiring.RingCount(req)
		if err != nil {
			return Footprint{}, err
		}
		x := c.mul(int64(rings), n)
		f = Footprint{Flows: c.mul(x, ringSteps(req.Op, n)), Roots: x, Width: x}
		f.Stored = f.Flows
	case RHD:
		f = rhdCounts(req.Op, n, &c)
	case Direct:
		x := c.mul(n, n-1)
		f = Footprint{Flows: x, Roots: x, Width: x} // arithmetic: nothing stored
	case Pairwise:
		f = Footprint{Flows: c.mul(n, n-1)}
		if n >= 2 {
			f.Roots, f.Width = n, n
		}
		f.Stored = f.Flows
	}
	if c.err != nil {
		return Footprint{}, fmt.Errorf("%s %s over %d ranks: %w", a, req.Op, n, c.err)
	}
	return f, nil
}

// validate is req.Validate without its O(n) set of ranks: strictly ascending ranks are
// distinct. On any doubt it returns req.Validate's own error.
func validate(req *ccl.Request) error {
	ok := len(req.Ranks) >= 1 && req.GPUsPerServer >= 1 && req.Bytes >= 0 && req.Channels >= 0
	prev := int32(-1)
	for _, x := range req.Ranks {
		if x <= prev || int(x) >= req.TotalGPUs {
			ok = false
			break
		}
		prev = x
	}
	if ok {
		return nil
	}
	return req.Validate()
}

// refuse returns Generate's error for a request FootprintOf found it refuses; those checks come
// before any flow is built, so it costs what the checks cost.
func refuse(a Name, req ccl.Request, p Params) (Footprint, error) {
	if _, err := Generate(a, req, p); err != nil {
		return Footprint{}, err
	}
	return Footprint{}, fmt.Errorf("footprint of %s %s: internal: Generate accepted a request thought refused", a, req.Op)
}

// arith is int64 arithmetic on non-negative counts that keeps the first overflow, naming the
// quantity being counted.
type arith struct {
	what string
	err  error
}

var errOverflow = errors.New("more than 2⁶³−1")

func (c *arith) mul(x, y int64) int64 {
	if c.err != nil {
		return 0
	}
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	if hi != 0 || lo > math.MaxInt64 {
		c.err = fmt.Errorf("the number of %s is %w", c.what, errOverflow)
		return 0
	}
	return int64(lo)
}

func (c *arith) add(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		if c.err != nil {
			return 0
		}
		if s > math.MaxInt64-x {
			c.err = fmt.Errorf("the number of %s is %w", c.what, errOverflow)
			return 0
		}
		s += x
	}
	return s
}

// groupShape is what the counts need of a group's placement: members and servers, as
// nccl's geometry sees them (servers in the order of the ascending ranks).
type groupShape struct {
	n, servers, minM, maxM int
}

func shapeOf(req *ccl.Request) groupShape {
	sh := groupShape{n: len(req.Ranks), minM: math.MaxInt}
	gps := int32(req.GPUsPerServer)
	last, cnt := int32(-1), 0
	for _, r := range req.Ranks {
		if s := r / gps; s != last {
			if cnt > 0 {
				sh.minM, sh.maxM = min(sh.minM, cnt), max(sh.maxM, cnt)
			}
			sh.servers++
			last, cnt = s, 0
		}
		cnt++
	}
	if cnt > 0 {
		sh.minM, sh.maxM = min(sh.minM, cnt), max(sh.maxM, cnt)
	}
	return sh
}

// serverCounts is the number of members on each server the group spans, in order.
func serverCounts(req *ccl.Request, servers int) []int {
	out := make([]int, 0, servers)
	gps := int32(req.GPUsPerServer)
	last := int32(-1)
	for _, r := range req.Ranks {
		if s := r / gps; s != last {
			out = append(out, 0)
			last = s
		}
		out[len(out)-1]++
	}
	return out
}

// ringSteps is the number of steps of a ring: 2(n−1) for an all-reduce, n−1 otherwise.
func ringSteps(op ccl.Op, n int64) int64 {
	if n < 2 {
		return 0
	}
	if op == ccl.OpAllReduce {
		return 2 * (n - 1)
	}
	return n - 1
}

// channels is the request's channel count, or def.
func channels(req *ccl.Request, def int) int64 {
	if req.Channels > 0 {
		return int64(req.Channels)
	}
	return int64(def)
}

// span is the length of [lo, hi), 0 if empty.
func span(lo, hi int64) int64 { return max(hi-lo, 0) }

// ring counts nccl.Ring's DAG for an all-reduce, reduce-scatter or all-gather (see ringDAG's
// kind and blockSize there for the step kinds and their flows), with PXN relays if pxn (as
// SimCCL does if simccl).
func ring(req *ccl.Request, sh groupShape, pxn, simccl bool, c *arith) Footprint {
	n := int64(sh.n)
	C := channels(req, sh.maxM)
	S := ringSteps(req.Op, n)
	if S == 0 || req.Truncate && req.Bytes < n*C {
		return Footprint{} // no step, or SimCCL's chunks of 0 bytes: no flow
	}
	if !pxn || sh.servers < 2 || sh.maxM < 2 {
		f := Footprint{Flows: c.mul(c.mul(C, S), n)}
		c.what = "roots"
		f.Roots = c.mul(C, n)
		f.Width = f.Roots
		return f
	}
	N, m := int64(sh.servers), int64(sh.maxM) // n = N·m
	if simccl {
		f := Footprint{Flows: c.mul(c.mul(C, S), n+N)}
		c.what = "roots"
		f.Roots = c.mul(C, n)
		f.Width = f.Roots
		return f
	}
	R := int64(0) // reduce-scatter steps
	if req.Op != ccl.OpAllGather {
		R = n - 1
	}
	G := S - R                  // gather steps
	D := n - m - min(R, 1)      // first gather step at which nothing crosses servers
	directLo := R + min(m-1, G) // steps [0, directLo) relay (split)
	directHi := R + max(min(D, G), min(m-1, G))
	droppedHi, last := S, int64(0)
	if R > 0 && G > 0 && directHi < S {
		droppedHi, last = S-1, 1 // an all-reduce's last step drops two senders per server
	}
	split, direct, dropped := directLo, directHi-directLo, droppedHi-directHi
	perChan := c.add(c.mul(split, n+N), c.mul(direct, n), c.mul(dropped, n-N), c.mul(last, n-2*N))
	f := Footprint{Flows: c.mul(C, perChan)}
	// Roots: step 0, and the entries' own chunks sent at direct steps before step m.
	c.what = "roots"
	roots := c.add(n, c.mul(N, span(directLo, min(directHi, m))))
	f.Roots = c.mul(C, roots)
	// Flows with two children: the NVLink hop whose chunk the entry sends on after a dropped
	// step (dropped steps x with an entry flow at x+1), and the flow into an entry at a relaying
	// or direct step x that the entry also sends for its exit at direct step x+m.
	twice := span(directHi, min(droppedHi, S-1))
	if last == 1 && m == 2 && twice > 0 {
		twice-- // at an all-reduce's last step a two-member server's entry sends nothing
	}
	twice += span(max(directLo-m, 0), directHi-m)
	c.what = "flows in flight"
	f.Width = c.mul(C, c.add(roots, c.mul(N, twice)))
	return f
}

// pxnAllToAll counts nccl's NCCL-like PXN all-to-all: a pair on different servers and rails is
// relayed through the sender's server-mate on the receiver's rail when the group holds one.
func pxnAllToAll(req *ccl.Request, c *arith) Footprint {
	n := int64(len(req.Ranks))
	pairs := c.mul(n, n-1)
	gps := int32(req.GPUsPerServer)
	// onRail[b]: the group's members on rail b (a server holds at most one GPU of a rail).
	var slice []int64
	var table map[int32]int64
	if int64(gps) <= 2*n {
		slice = make([]int64, gps)
	} else {
		table = make(map[int32]int64)
	}
	count := func(b int32, d int64) int64 {
		if slice != nil {
			slice[b] += d
			return slice[b]
		}
		table[b] += d
		return table[b]
	}
	for _, r := range req.Ranks {
		count(r%gps, 1)
	}
	var relayed int64
	ranks := req.Ranks
	for i := 0; i < len(ranks); {
		j := i
		var others int64 // Σ over the server's rails of the members on that rail elsewhere
		for ; j < len(ranks) && ranks[j]/gps == ranks[i]/gps; j++ {
			others += count(ranks[j]%gps, 0) - 1
		}
		relayed = c.add(relayed, c.mul(int64(j-i-1), others))
		i = j
	}
	f := Footprint{Flows: c.add(pairs, relayed), Roots: pairs, Width: pairs}
	f.Stored = f.Flows
	return f
}

// chunked counts nccl's Tree, NVLS and NVLSTree DAGs: K copies of one template per channel.
func chunked(a Name, req *ccl.Request, sh groupShape, chunks int, c *arith) Footprint {
	n := int64(sh.n)
	if n < 2 {
		return Footprint{}
	}
	opt := nccl.Options{Chunks: chunks}
	var C, F int64     // channels, flows per template
	var roots [2]int64 // template flows without parents, for server trees 0 and 1
	switch a {
	case NVLS:
		C, F = 1, 2*n
		roots[0] = n
	case Tree:
		C, F = channels(req, 2*sh.maxM), 2*(n-1)
		counts := serverCounts(req, sh.servers)
		for t := range 2 {
			kids := serverChildren(len(counts), t)
			for k, m := range counts {
				// The rank tree's leaves: the end of each server's chain, unless servers
				// attach to it (child 0 on the second member, both on a lone member).
				if m >= 3 || (m == 2 && kids[k]&1 == 0) || (m == 1 && kids[k] == 0) {
					roots[t]++
				}
			}
		}
	case NVLSTree:
		C = channels(req, 2*sh.maxM)
		counts := serverCounts(req, sh.servers)
		F = 2 * int64(len(counts)-1)
		for t := range 2 {
			kids := serverChildren(len(counts), t)
			for k, m := range counts {
				switch {
				case m >= 2:
					roots[t] += int64(m - 1)
				case kids[k] == 0:
					roots[t]++ // a lone member with nothing to wait for sends up at once
				}
			}
		}
		for _, m := range counts {
			if m >= 2 {
				F += 2 * int64(m)
			}
		}
	}
	alg := nccl.AlgoTree
	switch a {
	case NVLS:
		alg = nccl.AlgoNVLS
	case NVLSTree:
		alg = nccl.AlgoNVLSTree
	}
	K := int64(nccl.ChunksPerChannel(alg, req.Bytes, int(C), sh.n, sh.servers, opt))
	f := Footprint{Flows: c.mul(c.mul(C, K), F)}
	c.what = "roots"
	if a == NVLS {
		f.Roots = roots[0]
	} else {
		f.Roots = c.add(c.mul((C+1)/2, roots[0]), c.mul(C/2, roots[1]))
	}
	c.what = "stored flows"
	f.Stored = c.mul(C, F)
	f.Width = f.Stored
	return f
}

// serverChildren is, for each of N servers, which child types (bit 0: child 0, bit 1: child 1)
// it has in tree t of NCCL's double binary tree.
func serverChildren(N, t int) []uint8 {
	kids := make([]uint8, N)
	for k := range N {
		if p, ct := nccl.DoubleTree(N, k, t); p >= 0 {
			kids[p] |= 1 << ct
		}
	}
	return kids
}

// rhdCounts counts rhd's DAGs for p = 2^k + r ranks (rhd.NewPlan).
func rhdCounts(op ccl.Op, p int64, c *arith) Footprint {
	if p < 2 {
		return Footprint{}
	}
	k := int64(bits.Len64(uint64(p)) - 1)
	pp := int64(1) << k
	r := p - pp
	var f Footprint
	steps := c.mul(k, pp) // the halving-doubling steps, 2^k flows each
	switch op {
	case ccl.OpAllReduce:
		f.Flows = c.add(steps, steps, r, r)
	case ccl.OpReduceScatter:
		f.Flows = c.add(steps, r, r)
	case ccl.OpAllGather:
		f.Flows = c.add(steps, r, r, r)
	}
	f.Roots, f.Stored, f.Width = pp, f.Flows, pp
	if op == ccl.OpAllGather {
		f.Width = p
	}
	return f
}

// Footprint is Plan's footprint without the DAGs: the largest footprint of one group of the
// given kind of layout l (field by field), the number of groups, and the first group's
// choice. Nothing is generated: it enumerates the groups' shifts (O(groups), no list of
// groups) and counts one group per distinct placement, at most GPUsPerServer of them.
//
// Every group of a kind is the first one shifted by a constant (ccl.Layout.Groups), and two
// groups whose shifts agree modulo GPUsPerServer sit on their servers and rails alike, so they
// get the same choice and footprint. Groups whose shifts differ modulo GPUsPerServer may not:
// with 6 GPUs per server and TP = 4, ranks 0–3 share a server while 4–7 straddle two, so
// under PXN the first runs the ring and the second the PXN ring, with different channel counts.
// per is then the field-by-field maximum over every group (each group's DAG holds at most per,
// so per.Scaled(groups) bounds them all together), and choice is still the first group's. A
// kind with no groups of two or more ranks has no footprint (0 groups). Errors are Plan's,
// and an invalid layout (ccl.Layout.Validate) is one.
func (s *Selector) Footprint(l ccl.Layout, totalGPUs int, op ccl.Op, kind ccl.GroupKind, bytes int64, chunks int) (per Footprint, groups int, choice Choice, err error) {
	if err := l.Validate(); err != nil {
		return Footprint{}, 0, Choice{}, err
	}
	first := firstGroup(l, kind)
	if first == nil {
		return Footprint{}, 0, Choice{}, nil
	}
	req := ccl.Request{Op: op, GPUsPerServer: l.GPUsPerServer, TotalGPUs: totalGPUs, Bytes: bytes, Truncate: s.Truncates()}
	req.Ranks = make([]int32, len(first))
	seen := map[int]bool{}
	gps := l.GPUsPerServer
	groupOffsets(l, kind, func(d int) {
		groups++
		if err != nil || seen[d%gps] {
			return
		}
		seen[d%gps] = true
		for i, r := range first {
			req.Ranks[i] = int32(r + d)
		}
		c, e := s.Choose(op, kind, &req)
		if e != nil {
			err = e
			return
		}
		f, e := FootprintOf(c.Algorithm, req, s.params(chunks))
		if e != nil {
			err = fmt.Errorf("%s %s on %s group %v: %w", c.Algorithm, op, kind, req.Ranks[:min(len(req.Ranks), 8)], e)
			return
		}
		if groups == 1 {
			choice = c
		}
		per = Footprint{Flows: max(per.Flows, f.Flows), Roots: max(per.Roots, f.Roots),
			Stored: max(per.Stored, f.Stored), Width: max(per.Width, f.Width)}
	})
	if err != nil {
		return Footprint{}, 0, Choice{}, err
	}
	return per, groups, choice, nil
}

// firstGroup is ccl.Layout.Groups(kind)[0], or nil if the kind has no groups.
func firstGroup(l ccl.Layout, kind ccl.GroupKind) []int {
	size := l.GroupSize(kind)
	if size <= 1 || kind == ccl.GroupNone {
		return nil
	}
	stride := map[ccl.GroupKind]int{ccl.GroupTP: 1, ccl.GroupDP: l.TP, ccl.GroupPP: l.GPUs / l.PP,
		ccl.GroupEP: l.TP, ccl.GroupDPEP: l.EP * l.TP}[kind]
	g := make([]int, size)
	for i := range g {
		g[i] = i * stride
	}
	return g
}

// groupOffsets calls yield with each group's shift from the first group, in the order of
// ccl.Layout.Groups (whose construction this follows; a test holds them together).
func groupOffsets(l ccl.Layout, kind ccl.GroupKind, yield func(d int)) {
	stage := l.GPUs / l.PP
	tp, dp, ep := l.TP, l.DP(), l.EP
	if kind == ccl.GroupPP {
		for r := range stage {
			yield(r)
		}
		return
	}
	for s := range l.PP {
		base := s * stage
		switch kind {
		case ccl.GroupTP:
			for i := range dp {
				yield(base + i*tp)
			}
		case ccl.GroupDP:
			for k := range tp {
				yield(base + k)
			}
		case ccl.GroupEP:
			for b := range dp / ep {
				for k := range tp {
					yield(base + b*ep*tp + k)
				}
			}
		case ccl.GroupDPEP:
			for i := range ep {
				for k := range tp {
					yield(base + i*tp + k)
				}
			}
		}
	}
}
