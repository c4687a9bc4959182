package route

import (
	"math"

	"simd/engine"
	"simd/topo"
)

// PathStats are the attributes of one path the network model needs.
type PathStats struct {
	Hops       int         // links
	Delay      engine.Time // sum of the links' propagation delays
	Bottleneck float64     // smallest link rate, bits/s (+Inf for an empty path)
}

// Stats returns the attributes of path (directed link ids).
func (g *Graph) Stats(path []int32) PathStats {
	s := PathStats{Hops: len(path), Bottleneck: math.Inf(1)}
	for _, l := range path {
		s.Delay += g.delay[l>>1]
		if r := g.rate[l>>1]; r < s.Bottleneck {
			s.Bottleneck = r
		}
	}
	return s
}

// dagScratch holds per-node state for the computations over the set of all routes of one pair
// (AllPaths, PairMetrics), reset by bumping a stamp so that no per-query clearing is needed.
type dagScratch struct {
	stamp      []uint32
	cur        uint32
	lo, hi     []int32 // per node: its candidates are arena[lo:hi]
	arena      []int32
	rtt        []int64   // max weight to the destination
	bw         []float64 // min bottleneck to the destination
	thr        []int64   // per node × threshold: max weight over routes whose links all reach the threshold rate, -1 if none
	nthr       int
	weight     []int64 // per undirected link: 2·delay + transmission time of one payload, ps
	weightPay  int     // the payload weight was computed for, -1 before
	weightInit bool
}

// begin starts a new computation over nodes.
func (s *dagScratch) begin(n, nthr int) {
	if len(s.stamp) != n {
		s.stamp = make([]uint32, n)
		s.lo = make([]int32, n)
		s.hi = make([]int32, n)
		s.rtt = make([]int64, n)
		s.bw = make([]float64, n)
		s.cur = 0
	}
	if s.nthr != nthr || len(s.thr) != n*nthr {
		s.thr = make([]int64, n*nthr)
		s.nthr = nthr
	}
	s.newStamp()
	s.arena = s.arena[:0]
}

// newStamp makes every node unvisited again, keeping the recorded candidate lists.
func (s *dagScratch) newStamp() {
	s.cur++
	if s.cur == 0 { // wrapped: forget every stamp
		for i := range s.stamp {
			s.stamp[i] = 0
		}
		s.cur = 1
	}
}

// expand records the candidates of x (d hops from the destination whose targets are set) and
// marks x visited; it reports false if x was already visited.
func (r *Router) expand(x, dst int32, d int) bool {
	s := &r.dag
	if s.stamp[x] == s.cur {
		return false
	}
	s.stamp[x] = s.cur
	s.lo[x] = int32(len(s.arena))
	if x != dst {
		s.arena = append(s.arena, r.candidates(x, dst, d)...)
	}
	s.hi[x] = int32(len(s.arena))
	return true
}

// AllPaths enumerates the routes from src to dst (every path some hash can produce), in the
// order of the next-hop lists, up to limit of them. complete is false when there are more.
func (r *Router) AllPaths(src, dst int32, limit int) (paths [][]int32, complete bool, err error) {
	d, err := r.prepare(src, dst)
	if err != nil {
		return nil, false, err
	}
	if r.g.kinds[dst] != topo.GPU {
		for _, l := range r.appendUpLinks(nil, src, dst) {
			if len(paths) == limit {
				return paths, false, nil
			}
			paths = append(paths, []int32{l})
		}
		return paths, true, nil
	}
	r.dag.begin(r.g.NumNodes(), 0)
	r.expandAll(src, dst, d)
	complete = true
	var cur []int32
	var walk func(x int32) bool
	walk = func(x int32) bool {
		if x == dst {
			if len(paths) == limit {
				complete = false
				return false
			}
			paths = append(paths, append([]int32(nil), cur...))
			return true
		}
		s := &r.dag
		for i := s.lo[x]; i < s.hi[x]; i++ {
			l := s.arena[i]
			cur = append(cur, l)
			ok := walk(r.g.ends[l])
			cur = cur[:len(cur)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	walk(src)
	return paths, complete, nil
}

// expandAll records the candidates of every node on a route from x (d hops from dst).
func (r *Router) expandAll(x, dst int32, d int) {
	if !r.expand(x, dst, d) {
		return
	}
	s := &r.dag
	for i := s.lo[x]; i < s.hi[x]; i++ {
		r.expandAll(r.g.ends[s.arena[i]], dst, d-1)
	}
}

// SinglePath reports whether src has exactly one route to dst (CountPaths == 1), in O(hops):
// every candidate next hop lies on a shortest route, so there is one route exactly when every
// node of the walk from src has one candidate. It does not build the routes' graph, which for a
// pair across pods of a large fabric holds hundreds of switches.
func (r *Router) SinglePath(src, dst int32) (bool, error) {
	d, err := r.prepare(src, dst)
	if err != nil {
		return false, err
	}
	if r.g.kinds[dst] != topo.GPU {
		return len(r.appendUpLinks(r.cand[:0], src, dst)) == 1, nil
	}
	for x := src; x != dst; d-- {
		c := r.candidates(x, dst, d)
		if len(c) != 1 {
			return false, nil
		}
		x = r.g.ends[c[0]]
	}
	return true, nil
}

// CountPaths is the number of routes from src to dst (saturating at MaxInt64).
func (r *Router) CountPaths(src, dst int32) (int64, error) {
	d, err := r.prepare(src, dst)
	if err != nil {
		return 0, err
	}
	if r.g.kinds[dst] != topo.GPU {
		return int64(len(r.appendUpLinks(r.cand[:0], src, dst))), nil
	}
	r.dag.begin(r.g.NumNodes(), 0)
	r.expandAll(src, dst, d)
	s := &r.dag
	s.newStamp() // from here a current stamp means "counted"
	var count func(x int32) int64
	count = func(x int32) int64 {
		if x == dst {
			return 1
		}
		if s.stamp[x] == s.cur {
			return s.rtt[x]
		}
		var n int64
		for i := s.lo[x]; i < s.hi[x]; i++ {
			c := count(r.g.ends[s.arena[i]])
			if n > math.MaxInt64-c {
				n = math.MaxInt64
			} else {
				n += c
			}
		}
		s.stamp[x], s.rtt[x] = s.cur, n
		return n
	}
	return count(src), nil
}
