package nccl

import (
	"fmt"

	"simd/ccl"
)

// Closed-form times (seconds) in the alpha-beta-gamma model, one per algorithm.
//
// The model: every GPU has one NVLink port and one network port (its rail's NIC), both full
// duplex. A flow hop costs α of its link class (Intra for NVLink, Inter for the network); the
// bytes a port carries in one step cost β per byte, all the channels of the step sharing the
// port; a byte reduced costs γ (Intra.Gamma: the reduction runs on the GPU; Inter.Gamma is not
// used). Flows of one step run at once and the step lasts as long as its slowest flow ("the
// slowest hop bounds a step"); pipelined algorithms (Tree, NVLS, NVLS-Tree) pay the hops of
// their deepest path once and their slowest hop once per further chunk. The number of α terms
// is the number of steps on the DAG's critical path.
//
// n is the group size and perServer the members on each server (n/perServer servers); all
// counts describe the DAGs the generators of this package build with their default channels.

func checkShape(n, perServer int, bytes int64) error {
	switch {
	case n < 1:
		return fmt.Errorf("group of %d ranks", n)
	case perServer < 1 || n%perServer != 0:
		return fmt.Errorf("%d members per server does not divide a group of %d", perServer, n)
	case bytes < 0:
		return fmt.Errorf("%d bytes", bytes)
	}
	return nil
}

// hop is α plus the load of a port times β.
func hop(a ccl.AlphaBeta, load float64) float64 { return a.Alpha + float64(load*a.Beta) }

// ringStep is one ring step: every GPU sends S/n over its channels; a ring crossing servers
// sends 1/m of it over the network (each GPU is the exit of one of the m channels) and the rest
// over NVLink.
func ringStep(n, m int, S float64, c ccl.LinkCosts) float64 {
	per := S / float64(n)
	if n == m {
		return hop(c.Intra, per)
	}
	t := hop(c.Inter, per/float64(m))
	if m > 1 {
		t = max(t, hop(c.Intra, per*float64(m-1)/float64(m)))
	}
	return t
}

// RingTime is the time of SimCCL's ring (§1.4): all-reduce 2(n−1) steps plus (n−1)/n·S·γ,
// reduce-scatter n−1 steps plus (n−1)/n·S·γ, all-gather n−1 steps (S is the gathered output),
// all-to-all one step in which each GPU sends (m−1)·S/n over NVLink and (n−m)·S/n over the
// network. A step of a one-server ring is α + S/n·β over NVLink; across servers it is the slower
// of the NVLink hop (α_intra + (m−1)/m·S/n·β_intra) and the network hop (α_inter + S/(n·m)·β_inter).
// On a one-GPU-per-server ring that is 2(n−1)α + 2(n−1)/n·Sβ + (n−1)/n·Sγ for an all-reduce.
func RingTime(op ccl.Op, n, perServer int, bytes int64, c ccl.LinkCosts) (float64, error) {
	if err := checkShape(n, perServer, bytes); err != nil {
		return 0, err
	}
	if n == 1 {
		return 0, nil
	}
	S, m := float64(bytes), perServer
	red := float64(float64(n-1) / float64(n) * S * c.Intra.Gamma)
	step := ringStep(n, m, S, c)
	switch op {
	case ccl.OpAllReduce:
		return float64(2*float64(n-1)*step) + red, nil
	case ccl.OpReduceScatter:
		return float64(float64(n-1)*step) + red, nil
	case ccl.OpAllGather:
		return float64(n-1) * step, nil
	case ccl.OpAllToAll:
		return allToAllStep(n, m, S, c), nil
	}
	return 0, fmt.Errorf("no ring time for %s", op)
}

func allToAllStep(n, m int, S float64, c ccl.LinkCosts) float64 {
	per := S / float64(n)
	t := 0.0
	if m > 1 {
		t = hop(c.Intra, per*float64(m-1))
	}
	if n > m {
		t = max(t, hop(c.Inter, per*float64(n-m)))
	}
	return t
}

// PXNTime is the time of the PXN ring (Ring with Options.PXN and Options.PXNVariant v). A split
// step is an NVLink hop carrying S/n per GPU (the exit's relay hop shares the port with the m−1
// ring hops) followed by the network hop (S/(n·m)); a direct step is a plain crossing step; a
// dropped step only moves data inside the servers. SimCCL's PXN splits every step of an
// all-reduce (2(n−1)) or reduce-scatter (n−1) and runs all-gather and all-to-all as the plain
// ring does. The NCCL-like PXN splits every reduce-scatter step and the first m−1 of a gather
// phase: all-reduce n−1+m−1 split, n−2m direct, m dropped steps; reduce-scatter n−1 split;
// all-gather m−1 split, n−2m+1 direct, m−1 dropped; its all-to-all is two steps: the NVLink
// relays with the direct flows, then the relayed network hops. A one-server group or one member
// per server is the plain ring.
func PXNTime(op ccl.Op, n, perServer int, bytes int64, c ccl.LinkCosts, v PXNVariant) (float64, error) {
	if err := checkShape(n, perServer, bytes); err != nil {
		return 0, err
	}
	m := perServer
	if opt := (Options{PXN: true, PXNVariant: v}); n == m || m == 1 || !opt.PXNApplies(op) {
		return RingTime(op, n, perServer, bytes, c)
	}
	S, N := float64(bytes), n/m
	per := S / float64(n)
	red := float64(float64(n-1) / float64(n) * S * c.Intra.Gamma)
	split := hop(c.Intra, per) + hop(c.Inter, per/float64(m))
	if v == PXNSimCCL {
		switch op {
		case ccl.OpAllReduce:
			return float64(float64(2*(n-1))*split) + red, nil
		case ccl.OpReduceScatter:
			return float64(float64(n-1)*split) + red, nil
		}
	}
	direct := ringStep(n, m, S, c)
	dropped := hop(c.Intra, per*float64(m-1)/float64(m))
	f := func(x int) float64 { return float64(x) }
	switch op {
	case ccl.OpAllReduce:
		last := 0.0
		if m > 2 {
			last = hop(c.Intra, per*float64(m-2)/float64(m))
		}
		return float64(f(n-1+m-1)*split) + float64(f(n-2*m)*direct) + float64(f(m-1)*dropped) + last + red, nil
	case ccl.OpReduceScatter:
		return float64(f(n-1)*split) + red, nil
	case ccl.OpAllGather:
		return float64(f(m-1)*split) + float64(f(n-2*m+1)*direct) + float64(f(m-1)*dropped), nil
	case ccl.OpAllToAll:
		// Step 1: each GPU sends its m−1 server-mates' pieces and the (N−1)(m−1) pieces it
		// relays over NVLink, and its N−1 rail-aligned pieces over the network; step 2: each
		// GPU forwards the (N−1)(m−1) pieces it relays.
		first := max(hop(c.Intra, per*f(N*(m-1))), hop(c.Inter, per*f(N-1)))
		return first + hop(c.Inter, per*f((N-1)*(m-1))), nil
	}
	return 0, fmt.Errorf("no PXN time for %s", op)
}

// TreeTime is the time of the Tree all-reduce with 2·perServer channels and chunks chunks per
// channel (0: the default of Tree). Per chunk step all channels together move S/K: a GPU sends
// (m−1)/m of it over NVLink and 1/m over the network (it heads two channels). An up hop costs
// α + load·β + S/K·γ, a down hop α + load·β; the time is the up and down hops of the costliest
// path from a leaf to the root, built as Tree builds it (NVLink chains inside the servers, NCCL's
// binary tree between them), plus K−1 times the costliest hop on it.
func TreeTime(n, perServer int, bytes int64, chunks int, c ccl.LinkCosts) (float64, error) {
	if err := checkShape(n, perServer, bytes); err != nil {
		return 0, err
	}
	if chunks < 0 {
		return 0, fmt.Errorf("%d chunks", chunks)
	}
	if n == 1 {
		return 0, nil
	}
	m, N := perServer, n/perServer
	K := chunks
	if K == 0 {
		K = treeChunks(bytes, 2*m, treeDepth(n, N), defaultMaxChunks)
	}
	SK := float64(bytes) / float64(K)
	li, le := SK*float64(m-1)/float64(m), SK/float64(m)
	upI, upE := hop(c.Intra, li)+float64(SK*c.Intra.Gamma), hop(c.Inter, le)+float64(SK*c.Intra.Gamma)
	dnI, dnE := hop(c.Intra, li), hop(c.Inter, le)
	best := -1.0
	for _, p := range treePaths(n, m) {
		cost := float64(float64(p[0])*(upI+dnI)) + float64(float64(p[1])*(upE+dnE))
		h := 0.0
		if p[0] > 0 {
			h = upI
		}
		if p[1] > 0 {
			h = max(h, upE)
		}
		best = max(best, cost+float64(float64(K-1)*h))
	}
	return best, nil
}

// treePaths lists, for every rank of channel 0's tree of a uniform group, the NVLink and network
// hops between it and the root.
func treePaths(n, m int) [][2]int {
	g := uniformGeometry(n, m)
	up := rankTree(&g, 0, 0)
	order, _ := treeOrder(up)
	hops := make([][2]int, n)
	for _, r := range order[1:] {
		p := up[r]
		hops[r] = hops[p]
		if g.srv[r] == g.srv[p] {
			hops[r][0]++
		} else {
			hops[r][1]++
		}
	}
	return hops
}

func uniformGeometry(n, m int) geometry {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(i)
	}
	return newGeometry(&ccl.Request{Ranks: ranks, GPUsPerServer: m, TotalGPUs: n})
}

// nodeTreeHeight is the height of NCCL's binary tree over N nodes (tree 1 has the same shape).
func nodeTreeHeight(N int) int {
	depth := make([]int, N)
	up := make([]int32, N)
	for k := range N {
		p, _, _, _ := btree(N, k)
		up[k] = int32(p)
	}
	order, _ := treeOrder(up)
	h := 0
	for _, k := range order[1:] {
		depth[k] = depth[up[k]] + 1
		h = max(h, depth[k])
	}
	return h
}

// NVLSTime is the time of the single-server NVLS all-reduce in K chunks (0: NVLS's default 4):
// each chunk goes up to the NVSwitch and down to every GPU, one chunk at a time per connection,
// so K+1 hops of α_intra + S/K·β_intra. The NVSwitch reduces in the switch: no γ.
func NVLSTime(n int, bytes int64, chunks int, c ccl.LinkCosts) (float64, error) {
	if err := checkShape(n, n, bytes); err != nil {
		return 0, err
	}
	if chunks < 0 {
		return 0, fmt.Errorf("%d chunks", chunks)
	}
	if n == 1 {
		return 0, nil
	}
	K := chunks
	if K == 0 {
		K = 4
	}
	return float64(K+1) * hop(c.Intra, float64(bytes)/float64(K)), nil
}

// NVLSTreeTime is the time of the NVLS-Tree all-reduce with 2·perServer channels and K chunks
// per channel (0: the default of NVLSTree). Per chunk step all channels move S/K: members send
// (m−1)/m of it to the NVSwitch, which sends the heads 1/m (plus γ: the head adds its own); the
// heads (two channels each) send 1/m over the network per tree level up (plus γ) and down; the
// heads send 1/m back to the NVSwitch, which sends (m−1)/m to the members. The deepest chain is
// these four NVLink hops and twice the height H of the servers' tree; K−1 more times the costliest
// hop. With one member per server only the 2H network hops remain.
func NVLSTreeTime(n, perServer int, bytes int64, chunks int, c ccl.LinkCosts) (float64, error) {
	if err := checkShape(n, perServer, bytes); err != nil {
		return 0, err
	}
	if chunks < 0 {
		return 0, fmt.Errorf("%d chunks", chunks)
	}
	m, N := perServer, n/perServer
	if N < 2 {
		return 0, fmt.Errorf("NVLS-Tree needs at least two servers")
	}
	K := chunks
	if K == 0 {
		K = chunksFor(bytes, 2*m, 128<<10, defaultMaxChunks)
	}
	SK := float64(bytes) / float64(K)
	head := SK / float64(m)
	H := float64(nodeTreeHeight(N))
	up := hop(c.Inter, head) + float64(head*c.Intra.Gamma)
	down := hop(c.Inter, head)
	t := float64(H * (up + down))
	worst := up
	if m > 1 {
		toSwitch := hop(c.Intra, SK*float64(m-1)/float64(m))
		toHead := hop(c.Intra, head) + float64(head*c.Intra.Gamma)
		fromHead := hop(c.Intra, head)
		t += float64(2*toSwitch) + toHead + fromHead
		worst = max(worst, toSwitch, toHead)
	}
	return t + float64(float64(K-1)*worst), nil
}
