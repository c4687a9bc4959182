package nccl

import (
	"fmt"

	"simd/ccl"
)

// NVLS builds SimCCL's NVLink SHARP all-reduce inside one server (§1.4): the buffer in chunks
// (default 4); for each chunk every rank sends it to the server's NVSwitch, which reduces, and
// the NVSwitch sends the result to every rank once all of the chunk has arrived. A chunk on a
// connection waits for the previous chunk on it, which is how SimAI pipelines the chunks.
func NVLS(req ccl.Request, opt Options) (ccl.DAG, error) {
	if err := validate(&req, ccl.OpAllReduce); err != nil {
		return nil, fmt.Errorf("NVLS: %w", err)
	}
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("NVLS: %w", err)
	}
	g := newGeometry(&req)
	if g.nsrv > 1 {
		return nil, fmt.Errorf("NVLS: the group spans %d servers; NVLS reduces inside one server (use NVLSTree across servers)", g.nsrv)
	}
	K := ChunksPerChannel(AlgoNVLS, req.Bytes, 1, g.n, g.nsrv, opt)
	coll := collective(&req, K)
	var b templateBuilder
	if g.n >= 2 {
		nvs := coll.NVSwitch(int(g.ranks[0]) / req.GPUsPerServer)
		ups := make([]int32, g.n)
		for i, r := range g.ranks {
			ups[i] = b.add(r, nvs, ccl.KindNVLS)
		}
		for _, r := range g.ranks {
			b.add(nvs, r, ccl.KindNVLS, ups...)
		}
	}
	return newChunked(coll, K, []template{b.build()})
}

// NVLSTree builds NCCL's NVLS-Tree all-reduce across servers (§2.3): on each channel and chunk,
// the members of a server other than its head send to its NVSwitch, which sends their sum to
// the head (which adds its own); the heads reduce up and broadcast down the channel's tree of the double binary tree
// (channel c uses tree c%2 and head c/2 of each server); each head then sends the result to its
// NVSwitch, which multicasts it to the server's other members (not back to the head, which has
// it). A server with a single member skips the NVSwitch. The default is 2 channels per member of
// a server and NCCL's 128 KiB NVLS chunk.
func NVLSTree(req ccl.Request, opt Options) (ccl.DAG, error) {
	if err := validate(&req, ccl.OpAllReduce); err != nil {
		return nil, fmt.Errorf("NVLS-Tree: %w", err)
	}
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("NVLS-Tree: %w", err)
	}
	g := newGeometry(&req)
	if g.nsrv < 2 {
		return nil, fmt.Errorf("NVLS-Tree: the group is on one server; NCCL disables NVLS-Tree there (use NVLS)")
	}
	C := req.Channels
	if C == 0 {
		C = 2 * g.maxM
	}
	K := ChunksPerChannel(AlgoNVLSTree, req.Bytes, C, g.n, g.nsrv, opt)
	coll := collective(&req, C*K)
	chans := make([]template, C)
	for ch := range chans {
		chans[ch] = nvlsTreeTemplate(&g, &coll, ch%2, ch/2)
	}
	return newChunked(coll, K, chans)
}

func nvlsTreeTemplate(g *geometry, coll *ccl.Collective, t, h int) template {
	var b templateBuilder
	N := g.nsrv
	gps := int32(coll.GPUsPerServer)
	head := make([]int, N)
	nvs := make([]int32, N)
	atHead := make([][]int32, N) // flows that bring a head its server's sum and its children's
	for k := range N {
		head[k] = g.rotated(k, h, 0)
		nvs[k] = coll.NVSwitch(int(g.ranks[head[k]] / gps))
		if g.count(k) < 2 {
			continue
		}
		var ups []int32
		for j := range g.count(k) {
			if r := g.local(k, j); r != head[k] {
				ups = append(ups, b.add(g.ranks[r], nvs[k], ccl.KindNVLSTree))
			}
		}
		atHead[k] = append(atHead[k], b.add(nvs[k], g.ranks[head[k]], ccl.KindNVLSTree, ups...))
	}
	// Reduce up the tree of servers, deepest first.
	parent := make([]int, N)
	for k := range N {
		parent[k], _, _, _ = dtree(N, k, t)
	}
	up32 := make([]int32, N)
	for k := range N {
		up32[k] = int32(parent[k])
	}
	order, _ := treeOrder(up32)
	for i := len(order) - 1; i > 0; i-- {
		k := int(order[i])
		p := parent[k]
		f := b.add(g.ranks[head[k]], g.ranks[head[p]], ccl.KindNVLSTree, atHead[k]...)
		atHead[p] = append(atHead[p], f)
	}
	// Broadcast down; result[k] is the flow (or flows, at the root) after which head k holds
	// the result.
	result := make([][]int32, N)
	root := int(order[0])
	result[root] = atHead[root]
	for _, k32 := range order[1:] {
		k := int(k32)
		p := parent[k]
		result[k] = []int32{b.add(g.ranks[head[p]], g.ranks[head[k]], ccl.KindNVLSTree, result[p]...)}
	}
	// Multicast inside each server.
	for k := range N {
		if g.count(k) < 2 {
			continue
		}
		bc := b.add(g.ranks[head[k]], nvs[k], ccl.KindNVLSTree, result[k]...)
		for j := range g.count(k) {
			if r := g.local(k, j); r != head[k] {
				b.add(nvs[k], g.ranks[r], ccl.KindNVLSTree, bc)
			}
		}
	}
	return b.build()
}
