package route

import (
	"fmt"
	"math"
	"sort"

	"simd/engine"
	"simd/topo"
)

// Graph is the compact, immutable form of a topology that routing and the network model work
// on. Node ids are the topology's; link i of the topology gives the directed links 2i (Src→Dst)
// and 2i+1 (Dst→Src), so per-direction state can live in flat slices of length NumDirLinks.
//
// Each node's adjacency is stored in CSR form (flat slices, int32 ids) in two sorted runs: first
// its neighbours that are switches or NVSwitches, then its GPU neighbours, each run ordered by
// neighbour id and, for parallel links, by link index. That order is the order in which
// equal-cost next hops are numbered (see the package documentation).
//
// The switch graph (switches and NVSwitches with the links among them) is split into its
// connected components once, over all links; a switch's component and its index inside it
// key the distance tables the Router caches.
type Graph struct {
	kinds []topo.NodeKind
	gps   int

	rate  []float64     // per undirected link, bits/s
	delay []engine.Time // per undirected link
	ends  []int32       // per directed link: the node it enters

	off   []int32 // CSR offsets, len NumNodes+1
	swEnd []int32 // per node: end of the switch run of its adjacency
	nbr   []int32 // per half-edge: the neighbour
	dlink []int32 // per half-edge: the directed link leaving the node toward nbr
	nloc  []int32 // per half-edge: the neighbour's index in its component (-1 for a GPU)

	comp     []int32 // per node: switch-graph component, -1 for GPUs
	local    []int32 // per node: index inside its component, -1 for GPUs
	compSize []int32
	compNV   []bool // per component: whether it has an NVSwitch

	rates []float64 // distinct link rates, ascending
}

// NewGraph builds the graph of t. The topology must pass t.Validate.
func NewGraph(t *topo.Topology) (*Graph, error) {
	if t == nil {
		return nil, fmt.Errorf("route: nil topology")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	n := t.NumNodes()
	if int64(len(t.Links))*2 > math.MaxInt32 {
		return nil, fmt.Errorf("route: %d links are too many (at most %d)", len(t.Links), math.MaxInt32/2)
	}
	g := &Graph{
		kinds: append([]topo.NodeKind(nil), t.Kinds...),
		gps:   t.GPUsPerServer,
		rate:  make([]float64, len(t.Links)),
		delay: make([]engine.Time, len(t.Links)),
		ends:  make([]int32, 2*len(t.Links)),
		off:   make([]int32, n+1),
		swEnd: make([]int32, n),
		nbr:   make([]int32, 2*len(t.Links)),
		dlink: make([]int32, 2*len(t.Links)),
	}
	deg := make([]int32, n)
	for i := range t.Links {
		l := &t.Links[i]
		g.rate[i], g.delay[i] = l.Rate, l.Delay
		g.ends[2*i], g.ends[2*i+1] = l.Dst, l.Src
		deg[l.Src]++
		deg[l.Dst]++
	}
	for x := 0; x < n; x++ {
		g.off[x+1] = g.off[x] + deg[x]
	}
	fill := append([]int32(nil), g.off[:n]...)
	for i := range t.Links {
		l := &t.Links[i]
		e := fill[l.Src]
		fill[l.Src]++
		g.nbr[e], g.dlink[e] = l.Dst, int32(2*i)
		e = fill[l.Dst]
		fill[l.Dst]++
		g.nbr[e], g.dlink[e] = l.Src, int32(2*i+1)
	}
	// Sort each adjacency: switches before GPUs, then by neighbour id, then by link.
	for x := 0; x < n; x++ {
		lo, hi := g.off[x], g.off[x+1]
		sort.Sort(adjSorter{g, lo, hi})
		s := lo
		for s < hi && g.kinds[g.nbr[s]] != topo.GPU {
			s++
		}
		g.swEnd[x] = s
	}
	g.components()
	g.nloc = make([]int32, len(g.nbr))
	for e, y := range g.nbr {
		g.nloc[e] = g.local[y]
	}
	seen := map[float64]bool{}
	for _, r := range g.rate {
		if !seen[r] {
			seen[r] = true
			g.rates = append(g.rates, r)
		}
	}
	sort.Float64s(g.rates)
	return g, nil
}

type adjSorter struct {
	g      *Graph
	lo, hi int32
}

func (s adjSorter) Len() int { return int(s.hi - s.lo) }
func (s adjSorter) Less(i, j int) bool {
	a, b := s.lo+int32(i), s.lo+int32(j)
	na, nb := s.g.nbr[a], s.g.nbr[b]
	ga, gb := s.g.kinds[na] == topo.GPU, s.g.kinds[nb] == topo.GPU
	if ga != gb {
		return gb
	}
	if na != nb {
		return na < nb
	}
	return s.g.dlink[a] < s.g.dlink[b]
}
func (s adjSorter) Swap(i, j int) {
	a, b := s.lo+int32(i), s.lo+int32(j)
	s.g.nbr[a], s.g.nbr[b] = s.g.nbr[b], s.g.nbr[a]
	s.g.dlink[a], s.g.dlink[b] = s.g.dlink[b], s.g.dlink[a]
}

// components labels the connected components of the switch graph over all links.
func (g *Graph) components() {
	n := len(g.kinds)
	g.comp = make([]int32, n)
	g.local = make([]int32, n)
	for x := range g.comp {
		g.comp[x], g.local[x] = -1, -1
	}
	var queue []int32
	for s := 0; s < n; s++ {
		if g.kinds[s] == topo.GPU || g.comp[s] >= 0 {
			continue
		}
		c := int32(len(g.compSize))
		size := int32(0)
		queue = append(queue[:0], int32(s))
		g.comp[s], g.local[s] = c, 0
		size++
		for i := 0; i < len(queue); i++ {
			x := queue[i]
			for e := g.off[x]; e < g.swEnd[x]; e++ {
				y := g.nbr[e]
				if g.comp[y] < 0 {
					g.comp[y], g.local[y] = c, size
					size++
					queue = append(queue, y)
				}
			}
		}
		g.compSize = append(g.compSize, size)
		nv := false
		for _, x := range queue {
			nv = nv || g.kinds[x] == topo.NVSwitch
		}
		g.compNV = append(g.compNV, nv)
	}
}

// NumNodes is the number of nodes.
func (g *Graph) NumNodes() int { return len(g.kinds) }

// NumLinks is the number of (full-duplex) links.
func (g *Graph) NumLinks() int { return len(g.rate) }

// NumDirLinks is the number of directed links, 2·NumLinks.
func (g *Graph) NumDirLinks() int { return len(g.ends) }

// Kind is the kind of node x.
func (g *Graph) Kind(x int32) topo.NodeKind { return g.kinds[x] }

// GPUsPerServer is the topology's GPUs per server (header field 2).
func (g *Graph) GPUsPerServer() int { return g.gps }

// From is the node directed link l leaves.
func (g *Graph) From(l int32) int32 { return g.ends[l^1] }

// To is the node directed link l enters.
func (g *Graph) To(l int32) int32 { return g.ends[l] }

// Rate is the rate of directed link l in bits/s (both directions of a link have the same rate).
func (g *Graph) Rate(l int32) float64 { return g.rate[l>>1] }

// Delay is the propagation delay of directed link l.
func (g *Graph) Delay(l int32) engine.Time { return g.delay[l>>1] }

// Reverse is the other direction of directed link l.
func Reverse(l int32) int32 { return l ^ 1 }

// LinkIndex is the index in the topology's link list of directed link l.
func LinkIndex(l int32) int { return int(l >> 1) }

// Adjacent returns node x's neighbours and, at the same positions, the directed links from x to
// them: switches and NVSwitches first, then GPUs, each by ascending id (parallel links by link
// index). The slices alias the graph and must not be modified.
func (g *Graph) Adjacent(x int32) (nbrs, links []int32) {
	lo, hi := g.off[x], g.off[x+1]
	return g.nbr[lo:hi:hi], g.dlink[lo:hi:hi]
}

// Degree is the number of links at node x.
func (g *Graph) Degree(x int32) int { return int(g.off[x+1] - g.off[x]) }

// Links returns the directed links from a to b, ascending (several when the topology lists
// parallel links). The result is appended to buf.
func (g *Graph) Links(buf []int32, a, b int32) []int32 {
	lo, hi := g.off[a], g.off[a+1]
	if g.kinds[b] == topo.GPU {
		lo = g.swEnd[a]
	} else {
		hi = g.swEnd[a]
	}
	i := lo + int32(sort.Search(int(hi-lo), func(k int) bool { return g.nbr[lo+int32(k)] >= b }))
	for ; i < hi && g.nbr[i] == b; i++ {
		buf = append(buf, g.dlink[i])
	}
	return buf
}

// Rates is the distinct link rates of the graph, ascending. The slice must not be modified.
func (g *Graph) Rates() []float64 { return g.rates }

// checkNode reports whether x is a node id of g.
func (g *Graph) checkNode(x int32) error {
	if x < 0 || int(x) >= len(g.kinds) {
		return fmt.Errorf("route: node %d is out of range [0,%d)", x, len(g.kinds))
	}
	return nil
}
