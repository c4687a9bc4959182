package nccl

import (
	"sort"

	"simd/ccl"
)

// tflow is one flow of a channel template: endpoints are ranks or NVSwitch ids.
type tflow struct {
	src, dst int32
	kind     ccl.FlowKind
}

// template is the flows of one chunk of one channel, with their dependencies inside the chunk.
type template struct {
	flows          []tflow
	pstart, par    []int32 // parents of flow j: par[pstart[j]:pstart[j+1]]
	cstart, childs []int32
}

type templateBuilder struct {
	flows []tflow
	edges [][2]int32 // (parent, child)
}

func (b *templateBuilder) add(src, dst int32, kind ccl.FlowKind, parents ...int32) int32 {
	j := int32(len(b.flows))
	b.flows = append(b.flows, tflow{src, dst, kind})
	for _, p := range parents {
		b.edges = append(b.edges, [2]int32{p, j})
	}
	return j
}

func (b *templateBuilder) build() template {
	n := len(b.flows)
	t := template{flows: b.flows, pstart: make([]int32, n+1), cstart: make([]int32, n+1)}
	for _, e := range b.edges {
		t.pstart[e[1]+1]++
		t.cstart[e[0]+1]++
	}
	for i := range n {
		t.pstart[i+1] += t.pstart[i]
		t.cstart[i+1] += t.cstart[i]
	}
	t.par = make([]int32, len(b.edges))
	t.childs = make([]int32, len(b.edges))
	pf := append([]int32(nil), t.pstart[:n]...)
	cf := append([]int32(nil), t.cstart[:n]...)
	for _, e := range b.edges {
		t.par[pf[e[1]]] = e[0]
		pf[e[1]]++
		t.childs[cf[e[0]]] = e[1]
		cf[e[0]]++
	}
	return t
}

// chunkedDAG repeats each channel's template for K chunks. Chunk k of channel ch carries piece
// ch·K+k, and each of its flows also waits for the same flow of chunk k-1: a connection carries
// one chunk at a time, as SimAI queues the later chunks of a (channel, src, dst) connection
// behind the earlier ones (ccl-facts.md §1.7, step 5). Memory is that of the templates, not of
// the K copies.
type chunkedDAG struct {
	coll  ccl.Collective
	K     int
	chans []template
	start []int64 // first flow id of each channel; len(chans)+1
}

func newChunked(coll ccl.Collective, K int, chans []template) (*chunkedDAG, error) {
	d := &chunkedDAG{coll: coll, K: K, chans: chans, start: make([]int64, len(chans)+1)}
	for i, t := range chans {
		d.start[i+1] = d.start[i] + int64(len(t.flows))*int64(K)
	}
	if err := checkSize(d.start[len(chans)], "the DAG"); err != nil {
		return nil, err
	}
	return d, nil
}

// Collective implements ccl.DAG.
func (d *chunkedDAG) Collective() *ccl.Collective { return &d.coll }

// NumFlows implements ccl.DAG.
func (d *chunkedDAG) NumFlows() int { return int(d.start[len(d.chans)]) }

func (d *chunkedDAG) decode(id ccl.FlowID) (ch, k, j int) {
	x := int64(id)
	ch = sort.Search(len(d.chans), func(i int) bool { return d.start[i+1] > x })
	F := int64(len(d.chans[ch].flows))
	off := x - d.start[ch]
	return ch, int(off / F), int(off % F)
}

func (d *chunkedDAG) id(ch, k, j int) ccl.FlowID {
	return ccl.FlowID(d.start[ch] + int64(k)*int64(len(d.chans[ch].flows)) + int64(j))
}

// Flow implements ccl.DAG.
func (d *chunkedDAG) Flow(id ccl.FlowID) ccl.Flow {
	ch, k, j := d.decode(id)
	f := d.chans[ch].flows[j]
	piece := ch*d.K + k
	return ccl.Flow{
		Src: f.src, Dst: f.dst,
		Bytes:   d.coll.PieceBytes(piece),
		Channel: int32(ch), Chunk: int32(k), Kind: f.kind,
		PieceLo: int32(piece), PieceHi: int32(piece + 1),
	}
}

// Parents implements ccl.DAG: the template's parents and the same flow of the previous chunk.
func (d *chunkedDAG) Parents(id ccl.FlowID, buf []ccl.FlowID) []ccl.FlowID {
	ch, k, j := d.decode(id)
	t := &d.chans[ch]
	for _, p := range t.par[t.pstart[j]:t.pstart[j+1]] {
		buf = append(buf, d.id(ch, k, int(p)))
	}
	if k > 0 {
		buf = append(buf, d.id(ch, k-1, j))
	}
	return buf
}

// Children implements ccl.DAG.
func (d *chunkedDAG) Children(id ccl.FlowID, buf []ccl.FlowID) []ccl.FlowID {
	ch, k, j := d.decode(id)
	t := &d.chans[ch]
	for _, c := range t.childs[t.cstart[j]:t.cstart[j+1]] {
		buf = append(buf, d.id(ch, k, int(c)))
	}
	if k+1 < d.K {
		buf = append(buf, d.id(ch, k+1, j))
	}
	return buf
}

// ChunksPerChannel is the number of chunks each channel of Tree, NVLS or NVLSTree is cut into
// for a buffer of bytes over the given channels, on a group of n ranks spanning servers servers:
// opt.Chunks if set, else the algorithm's default: NCCL's Simple tree chunk rule for Tree
// (treeChunks) and NCCL's 128 KiB NVLS chunk for NVLSTree, both capped at opt.MaxChunks, and
// SimCCL's 4 for NVLS. Other algorithms are not chunked: 1.
func ChunksPerChannel(a Algorithm, bytes int64, channels, n, servers int, opt Options) int {
	if opt.Chunks > 0 {
		return opt.Chunks
	}
	switch a {
	case AlgoTree:
		return treeChunks(bytes, channels, treeDepth(n, servers), opt.maxChunks())
	case AlgoNVLS:
		return nvlsChunks
	case AlgoNVLSTree:
		return chunksFor(bytes, channels, 128<<10, opt.maxChunks())
	}
	return 1
}

// nvlsChunks is SimCCL's number of chunks of an NVLS all-reduce.
const nvlsChunks = 4

// chunksFor is ceil(perChannel/chunk) clamped to [1, maxK].
func chunksFor(bytes int64, channels int, chunk int64, maxK int) int {
	per := bytes / int64(max(channels, 1))
	k := (per + chunk - 1) / chunk
	return int(min(max(k, 1), int64(maxK)))
}
