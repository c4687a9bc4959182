package nccl

import (
	"fmt"
	"math/bits"

	"simd/ccl"
)

// btree is NCCL's binary tree over n ranks with root 0 (ncclGetBtree, ccl-facts.md §2.2): a
// rank's parent comes from its lowest set bit, its children are r∓bit/2 (the second one halved
// until it exists), and the root's only child, the largest power of two below n, is its child
// 1. childType is 0 if r is its parent's first child (smaller than the parent), else 1.
func btree(n, r int) (up, d0, d1, childType int) {
	bit := 1
	for bit < n && bit&r == 0 {
		bit <<= 1
	}
	if r == 0 {
		d1 = -1
		if n > 1 {
			d1 = bit >> 1
		}
		return -1, -1, d1, 0
	}
	up = (r ^ bit) | (bit << 1)
	if up >= n {
		up = r ^ bit
	}
	if r > up {
		childType = 1
	}
	low := bit >> 1
	d0, d1 = -1, -1
	if low != 0 {
		d0 = r - low
		d1 = r + low
		for d1 >= n {
			low >>= 1
			if low == 0 {
				d1 = -1
				break
			}
			d1 = r + low
		}
	}
	return up, d0, d1, childType
}

// dtree is tree t (0 or 1) of NCCL's double binary tree (ncclGetDtree): tree 0 is btree; tree 1
// is its mirror (r → n−1−r) when n is even and its shift (r → r+1 mod n) when n is odd.
func dtree(n, r, t int) (up, d0, d1, childType int) {
	if t == 0 {
		return btree(n, r)
	}
	var f func(int) int
	var tr int
	if n%2 == 1 {
		tr = mod(r-1, n)
		f = func(x int) int { return (x + 1) % n }
	} else {
		tr = n - 1 - r
		f = func(x int) int { return n - 1 - x }
	}
	up, d0, d1, childType = btree(n, tr)
	m := func(x int) int {
		if x < 0 {
			return -1
		}
		return f(x)
	}
	return m(up), m(d0), m(d1), childType
}

// DoubleTree is server (or rank) r's place in tree t (0 or 1) of NCCL's double binary tree over
// n: its parent (-1 at the root) and whether it is its parent's child 0 or child 1 (the tree
// Tree and NVLSTree run between servers).
func DoubleTree(n, r, t int) (parent, childType int) {
	parent, _, _, childType = dtree(n, r, t)
	return parent, childType
}

// rankTree is the rank-level tree of one channel: up[gi] is the group index gi sends its partial
// result to (-1 at the root).
//
// Inside server k the tree is a chain in the channel's order I (the server's members rotated by
// rot): I[i] sends up to I[i-1]. Between servers, server k's I[0] sends to its parent server's
// I[1] if k is that server's child 0, and to its I[0] if k is its child 1 (NCCL's default
// BALANCED_TREE pattern: parent link and child 1 on the first GPU, child 0 on the second;
// ncclTopoPresetTree and connectTrees, §2.2). A server with one member takes both children on it.
func rankTree(g *geometry, t, rot int) []int32 {
	up := make([]int32, g.n)
	N := g.nsrv
	for k := 0; k < N; k++ {
		m := g.count(k)
		for i := 1; i < m; i++ {
			up[g.rotated(k, rot, i)] = int32(g.rotated(k, rot, i-1))
		}
		p, _, _, ct := dtree(N, k, t)
		head := g.rotated(k, rot, 0)
		if p < 0 {
			up[head] = -1
			continue
		}
		attach := g.rotated(p, rot, 0)
		if ct == 0 && g.count(p) >= 2 {
			attach = g.rotated(p, rot, 1)
		}
		up[head] = int32(attach)
	}
	return up
}

// treeOrder lists the group indices root first, each after its parent, with everyone's
// children.
func treeOrder(up []int32) (order []int32, children [][]int32) {
	n := len(up)
	children = make([][]int32, n)
	root := -1
	for i, p := range up {
		if p < 0 {
			root = i
		} else {
			children[p] = append(children[p], int32(i))
		}
	}
	order = append(order, int32(root))
	for h := 0; h < len(order); h++ {
		order = append(order, children[order[h]]...)
	}
	return order, children
}

// treeDepth is NCCL's approximation of the tree depth: ppn − 1 + log2(nodes).
func treeDepth(n, nodes int) int { return n/nodes - 1 + log2i(nodes) }

// log2i is floor(log2(x)) for x ≥ 1, and 0 for x < 1.
func log2i(x int) int {
	if x < 1 {
		return 0
	}
	return bits.Len(uint(x)) - 1
}

// treeChunks is the default number of chunks per channel for Tree: NCCL's Simple tree chunk of
// 512 KiB (a 4 MiB buffer over 8 steps), halved while the message would give fewer than 8, 4 and
// 1 chunks per tree level (down to 128, 64 and 32 KiB; enqueue.cc, §2.6).
func treeChunks(bytes int64, channels, depth, maxK int) int {
	chunk := int64(512 << 10)
	per := func() int64 { return bytes / (int64(channels) * chunk) }
	d := int64(depth)
	for per() < d*8 && chunk > 128<<10 {
		chunk /= 2
	}
	for per() < d*4 && chunk > 64<<10 {
		chunk /= 2
	}
	for per() < d && chunk > 32<<10 {
		chunk /= 2
	}
	return chunksFor(bytes, channels, chunk, maxK)
}

// Tree builds NCCL's double-binary-tree all-reduce (§2.2): on each channel a reduction up the
// tree to its root and a broadcast back down, pipelined in chunks. Channel c uses tree c%2 and
// the servers' members rotated by c/2, so the channels spread the servers' heads over their
// GPUs; the default is 2 channels per member of a server (SimCCL's count, §1.3).
func Tree(req ccl.Request, opt Options) (ccl.DAG, error) {
	if err := validate(&req, ccl.OpAllReduce); err != nil {
		return nil, fmt.Errorf("tree: %w (NCCL uses trees only for all-reduce)", err)
	}
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	g := newGeometry(&req)
	C := req.Channels
	if C == 0 {
		C = 2 * g.maxM
	}
	K := ChunksPerChannel(AlgoTree, req.Bytes, C, g.n, g.nsrv, opt)
	chans := make([]template, C)
	for ch := range chans {
		chans[ch] = treeTemplate(&g, ch%2, ch/2)
	}
	return newChunked(collective(&req, C*K), K, chans)
}

// treeTemplate is one chunk of one tree channel: every non-root rank sends its partial sum up
// once it has its children's, the root sends the result down once it has all its children's,
// and every rank passes the result on to its children once it has it.
func treeTemplate(g *geometry, t, rot int) template {
	var b templateBuilder
	if g.n < 2 {
		return b.build()
	}
	up := rankTree(g, t, rot)
	order, children := treeOrder(up)
	upFlow := make([]int32, g.n)
	for i := len(order) - 1; i > 0; i-- { // deepest first: children before parents
		r := order[i]
		var ps []int32
		for _, c := range children[r] {
			ps = append(ps, upFlow[c])
		}
		upFlow[r] = b.add(g.ranks[r], g.ranks[up[r]], ccl.KindTree, ps...)
	}
	root := order[0]
	downFlow := make([]int32, g.n)
	for _, r := range order[1:] {
		p := up[r]
		var ps []int32
		if p == root {
			for _, c := range children[root] {
				ps = append(ps, upFlow[c])
			}
		} else {
			ps = []int32{downFlow[p]}
		}
		downFlow[r] = b.add(g.ranks[p], g.ranks[r], ccl.KindTree, ps...)
	}
	return b.build()
}
