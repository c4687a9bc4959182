package route

import (
	"errors"
	"fmt"
	"slices"

	"simd/topo"
)

// ErrNoRoute is wrapped by the errors of queries for a pair that has no route: the nodes are
// disconnected (possibly after SetLinkDown), or the destination is not a GPU and not adjacent
// to the source (SimAI installs routes toward GPUs only).
var ErrNoRoute = errors.New("no route")

// unreachable marks a switch that cannot reach an attachment switch in a distance table.
const unreachable = 255

// inf is a distance larger than any real one.
const inf = 1 << 30

// Router routes flows over a Graph the way SimAI's ns-3 switches and NICs forward packets. It
// keeps the state of every link (up or down) and caches, for each switch that has GPUs
// attached, the BFS distances from it through the switch graph; everything else is computed
// per query. A Router is not safe for concurrent use.
type Router struct {
	g     *Graph
	up    []bool    // per undirected link
	ndown int       // links down
	dist  [][]uint8 // per node: distances from it through the switch graph (by local index), nil until needed
	epoch uint64

	queue  []int32   // BFS scratch
	tg     []target  // the current destination's attachment switches
	tgDst  int32     // the destination tg belongs to, -1 when none
	tgEp   uint64    // the epoch tg was computed in
	tc     [][]uint8 // the distance tables of the targets in component tcComp
	tcComp int32     // -1 when tc is stale

	// The candidates at switches (see candidates) are remembered until a link changes state, in
	// one dense table per attachment profile (profs; profHead chains them by first attachment)
	// indexed by local index in the profile's component. mTab is the table of the current
	// targets' profile in component mComp (-1 when stale; nil when not remembered). Lists that
	// are not a run of the switch's adjacency live in candArena, for the epoch candEp.
	profs     []candProfile
	profHead  []int32 // per node: 1 + the first profile whose first attachment it is, 0 none
	mComp     int32
	mTab      []uint32
	candArena []int32
	candEp    uint64
	cand      []int32 // candidate scratch

	dag dagScratch // for the path-set computations of metrics.go and paths.go
}

// target is a switch with an up link to the destination, with its distance table.
type target struct {
	node int32
	comp int32
	dist []uint8
}

// candProfile is a set of attachment switches of a destination in one component of the switch
// graph: at a switch x of that component the candidates toward the destination, and its
// distance, depend only on x and on that set (GPUs do not forward, so a route from x stays in
// x's component until the last hop). A single-ToR fabric has one profile per ToR, a dual-ToR
// fabric one per ToR pair.
//
// tab[local index of x] is the candidates at x, for epoch ep: 0 until computed; a run of x's
// adjacency as start<<16 | count (start, the offset from x's first half-edge, below 1<<15,
// count below 1<<16), the directed links of those half-edges; otherwise memoArena | o, with
// candArena[o] the count and the links after it. A table is compSize·4 bytes, allocated the
// first time a route passes one of the component's switches at two or more hops from a
// destination of the profile. On the 16,384-GPU Spectrum-X fabric (4 pods) that is at most 256
// ToR profiles × 4,608 switches × 4 B = 4.7 MB (measured: routing every pair kind allocates all
// of them), every list a run so that candArena stays empty; an NVSwitch is always one hop from
// its destinations and needs no table. In general it is at most (number of profiles) ×
// (switches in the component) × 4 B, and candArena at most the switch graph's half-edges per
// profile (plus one count per list).
type candProfile struct {
	key  [4]int32 // the attachment switches, ascending, -1 after the last
	next int32    // the next profile with the same first attachment, -1 none
	ep   uint64
	tab  []uint32
}

// memoArena marks a memo entry that is an offset into candArena.
const memoArena = 1 << 31

// New builds the graph of t and a Router over it with every link up.
func New(t *topo.Topology) (*Router, error) {
	g, err := NewGraph(t)
	if err != nil {
		return nil, err
	}
	return NewRouter(g), nil
}

// NewRouter returns a Router over g with every link up.
func NewRouter(g *Graph) *Router {
	r := &Router{
		g:      g,
		up:     make([]bool, g.NumLinks()),
		dist:   make([][]uint8, g.NumNodes()),
		tgDst:  -1,
		tcComp: -1,
		mComp:  -1,
	}
	for i := range r.up {
		r.up[i] = true
	}
	return r
}

// Graph is the graph r routes over.
func (r *Router) Graph() *Graph { return r.g }

// Epoch counts the link state changes so far; a caller that caches paths re-routes them when
// it changes.
func (r *Router) Epoch() uint64 { return r.epoch }

// LinkUp reports whether directed link l (and so its link) is up.
func (r *Router) LinkUp(l int32) bool { return r.up[l>>1] }

// LinksDown is the number of links currently down.
func (r *Router) LinksDown() int { return r.ndown }

// SetLinkDown takes down the link between nodes a and b (every link, if the topology lists
// several between them), as SimAI's LINK_DOWN does: from then on routes avoid it. It is an
// error if a and b are not adjacent.
func (r *Router) SetLinkDown(a, b int32) error { return r.setLink(a, b, false) }

// SetLinkUp brings the link between nodes a and b back up.
func (r *Router) SetLinkUp(a, b int32) error { return r.setLink(a, b, true) }

func (r *Router) setLink(a, b int32, up bool) error {
	g := r.g
	if err := g.checkNode(a); err != nil {
		return err
	}
	if err := g.checkNode(b); err != nil {
		return err
	}
	var buf [4]int32
	ls := g.Links(buf[:0], a, b)
	if len(ls) == 0 {
		return fmt.Errorf("route: no link between nodes %d and %d", a, b)
	}
	changed := false
	for _, l := range ls {
		if r.up[l>>1] != up {
			r.up[l>>1] = up
			changed = true
			if up {
				r.ndown--
			} else {
				r.ndown++
			}
		}
	}
	if !changed {
		return nil
	}
	r.epoch++
	r.tgDst, r.mComp = -1, -1
	if g.kinds[a] != topo.GPU && g.kinds[b] != topo.GPU {
		// A switch-graph link: the distance tables of its component are stale.
		c := g.comp[a]
		for x := range r.dist {
			if g.comp[x] == c {
				r.dist[x] = nil
			}
		}
	}
	return nil
}

// table returns the distances from switch a through the switch graph over up links, indexed by
// local index in a's component, computing them on first use.
func (r *Router) table(a int32) ([]uint8, error) {
	if t := r.dist[a]; t != nil {
		return t, nil
	}
	g := r.g
	t := make([]uint8, g.compSize[g.comp[a]])
	for i := range t {
		t[i] = unreachable
	}
	t[g.local[a]] = 0
	q := append(r.queue[:0], a)
	for i := 0; i < len(q); i++ {
		x := q[i]
		d := t[g.local[x]]
		for e := g.off[x]; e < g.swEnd[x]; e++ {
			if !r.up[g.dlink[e]>>1] {
				continue
			}
			y := g.nbr[e]
			if ly := g.local[y]; t[ly] == unreachable {
				if d+1 >= unreachable {
					r.queue = q
					return nil, fmt.Errorf("route: switch %d is %d or more hops from switch %d (at most %d are supported)", y, unreachable, a, unreachable-1)
				}
				t[ly] = d + 1
				q = append(q, y)
			}
		}
	}
	r.queue = q
	r.dist[a] = t
	return t, nil
}

// Warm computes now every distance table routing may need, so that later queries do not
// allocate.
func (r *Router) Warm() error {
	g := r.g
	for x := range g.kinds {
		if g.kinds[x] != topo.GPU {
			continue
		}
		for e := g.off[x]; e < g.swEnd[x]; e++ {
			if _, err := r.table(g.nbr[e]); err != nil {
				return err
			}
		}
	}
	return nil
}

// setTargets makes r.tg the attachment switches of dst: its non-GPU neighbours over up links,
// ascending.
func (r *Router) setTargets(dst int32) error {
	if r.tgDst == dst && r.tgEp == r.epoch {
		return nil
	}
	g := r.g
	r.tg = r.tg[:0]
	r.tgDst, r.tcComp, r.mComp = -1, -1, -1
	for e := g.off[dst]; e < g.swEnd[dst]; e++ {
		if !r.up[g.dlink[e]>>1] {
			continue
		}
		a := g.nbr[e]
		if n := len(r.tg); n > 0 && r.tg[n-1].node == a {
			continue
		}
		t, err := r.table(a)
		if err != nil {
			return err
		}
		r.tg = append(r.tg, target{node: a, comp: g.comp[a], dist: t})
	}
	r.tgDst, r.tgEp = dst, r.epoch
	return nil
}

// compTables returns the distance tables of the current targets in component c.
func (r *Router) compTables(c int32) [][]uint8 {
	if r.tcComp == c {
		return r.tc
	}
	r.tc = r.tc[:0]
	for i := range r.tg {
		if r.tg[i].comp == c {
			r.tc = append(r.tc, r.tg[i].dist)
		}
	}
	r.tcComp = c
	return r.tc
}

// swDist is the number of hops from switch x to the current destination through switches, or
// inf.
func (r *Router) swDist(x int32) int {
	lx := r.g.local[x]
	best := uint8(unreachable)
	for _, t := range r.compTables(r.g.comp[x]) {
		best = min(best, t[lx])
	}
	if best >= unreachable {
		return inf
	}
	return int(best) + 1
}

// hasUpLink reports whether some link from x to y is up.
func (r *Router) hasUpLink(x, y int32) bool {
	g := r.g
	lo, hi := r.run(x, y)
	for i := lowerBound(g.nbr, lo, hi, y); i < hi && g.nbr[i] == y; i++ {
		if r.up[g.dlink[i]>>1] {
			return true
		}
	}
	return false
}

// run is the part of x's adjacency where neighbour y would be.
func (r *Router) run(x, y int32) (lo, hi int32) {
	g := r.g
	if g.kinds[y] == topo.GPU {
		return g.swEnd[x], g.off[x+1]
	}
	return g.off[x], g.swEnd[x]
}

// lowerBound is the first index in [lo,hi) whose value in a is ≥ v (a ascending there).
func lowerBound(a []int32, lo, hi, v int32) int32 {
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		if a[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// appendUpLinks appends the up links from x to y.
func (r *Router) appendUpLinks(c []int32, x, y int32) []int32 {
	g := r.g
	lo, hi := r.run(x, y)
	for i := lowerBound(g.nbr, lo, hi, y); i < hi && g.nbr[i] == y; i++ {
		if l := g.dlink[i]; r.up[l>>1] {
			c = append(c, l)
		}
	}
	return c
}

// nodeDist is the number of hops of a shortest route from x to dst (targets set), or inf. A GPU
// x is a source: it does not forward, so only its own links count.
func (r *Router) nodeDist(x, dst int32) int {
	g := r.g
	if g.kinds[x] != topo.GPU {
		return r.swDist(x)
	}
	if x == dst {
		return 0
	}
	if g.kinds[dst] == topo.GPU && r.hasUpLink(x, dst) {
		return 1
	}
	best := inf
	for e := g.off[x]; e < g.swEnd[x]; e++ {
		if !r.up[g.dlink[e]>>1] {
			continue
		}
		if d := r.swDist(g.nbr[e]); d < best {
			best = d
		}
	}
	if best >= inf {
		return inf
	}
	return best + 1
}

// candidates returns the equal-cost next hops (directed links) at node x, d hops from dst
// (targets set): the up links to neighbours on a shortest route, by neighbour id then link
// (the reverse of SimAI's order, simaiIndex); if one of them leads to an NVSwitch, only those
// that do.
// The result aliases r.cand, the graph or the memo and must not be modified.
func (r *Router) candidates(x, dst int32, d int) []int32 {
	// At a switch the candidates depend only on the switch and the destination's attachment
	// switches in its component (d, the true distance, is a function of those) — the same for
	// every GPU behind a ToR and every flow between a pair — so they are remembered in the
	// profile's table (see candProfile) until a link changes state. Scanning a switch's
	// neighbours costs O(degree) per hop.
	g := r.g
	if d < 2 || g.kinds[x] == topo.GPU {
		return r.scanCandidates(x, dst, d)
	}
	tab := r.memoTable(g.comp[x])
	if tab == nil {
		return r.scanCandidates(x, dst, d)
	}
	lx := g.local[x]
	if e := tab[lx]; e != 0 {
		if e&memoArena == 0 {
			lo := g.off[x] + int32(e>>16)
			hi := lo + int32(e&0xffff)
			return g.dlink[lo:hi:hi]
		}
		o := int32(e &^ memoArena)
		hi := o + 1 + r.candArena[o]
		return r.candArena[o+1 : hi : hi]
	}
	c := r.scanCandidates(x, dst, d)
	tab[lx] = r.memoEntry(x, c)
	return c
}

// memoTable returns the memo table of the current targets' profile in component c, or nil if
// the targets have none or more than four attachment switches there.
func (r *Router) memoTable(c int32) []uint32 {
	if r.mComp == c {
		return r.mTab
	}
	g := r.g
	r.mComp, r.mTab = c, nil
	if r.candEp != r.epoch {
		r.candArena, r.candEp = r.candArena[:0], r.epoch
	}
	key := [4]int32{-1, -1, -1, -1}
	n := 0
	for i := range r.tg {
		if r.tg[i].comp == c {
			if n == len(key) {
				return nil
			}
			key[n] = r.tg[i].node
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if r.profHead == nil {
		r.profHead = make([]int32, len(g.kinds))
	}
	id := r.profHead[key[0]] - 1
	for id >= 0 && r.profs[id].key != key {
		id = r.profs[id].next
	}
	if id < 0 {
		id = int32(len(r.profs))
		r.profs = append(r.profs, candProfile{key: key, next: r.profHead[key[0]] - 1})
		r.profHead[key[0]] = id + 1
	}
	p := &r.profs[id]
	if p.tab == nil {
		p.tab = make([]uint32, g.compSize[c])
	} else if p.ep != r.epoch {
		clear(p.tab)
	}
	p.ep = r.epoch
	r.mTab = p.tab
	return p.tab
}

// memoEntry encodes the candidates c of switch x as a memo entry (see candProfile), adding
// them to candArena unless they are a run of x's adjacency; 0 if they cannot be remembered.
func (r *Router) memoEntry(x int32, c []int32) uint32 {
	g := r.g
	if n := len(c); n > 0 && n < 1<<16 {
		lo, hi := g.off[x], g.off[x+1]
		s := lo
		for s < hi && g.dlink[s] != c[0] {
			s++
		}
		if s-lo < 1<<15 && int(hi-s) >= n && slices.Equal(g.dlink[s:s+int32(n)], c) {
			return uint32(s-lo)<<16 | uint32(n)
		}
	}
	o := len(r.candArena)
	if o+1+len(c) >= memoArena {
		return 0
	}
	r.candArena = append(r.candArena, int32(len(c)))
	r.candArena = append(r.candArena, c...)
	return memoArena | uint32(o)
}

// scanCandidates computes candidates by scanning x's neighbours.
func (r *Router) scanCandidates(x, dst int32, d int) []int32 {
	g := r.g
	c := r.cand[:0]
	switch {
	case d == 1:
		c = r.appendUpLinks(c, x, dst)
		r.cand = c
		return c
	case d == 2:
		// The next hop is one of dst's attachment switches.
		for i := range r.tg {
			c = r.appendUpLinks(c, x, r.tg[i].node)
		}
	case g.kinds[x] == topo.GPU:
		for e := g.off[x]; e < g.swEnd[x]; e++ {
			l := g.dlink[e]
			if r.up[l>>1] && r.swDist(g.nbr[e]) == d-1 {
				c = append(c, l)
			}
		}
	default:
		// A switch: every switch neighbour is in its component; the neighbours d-1 hops from
		// dst are d-2 hops from the nearest of dst's attachment switches.
		tc := r.compTables(g.comp[x])
		want := uint8(d - 2)
		allUp := r.ndown == 0
		lo, hi := g.off[x], g.swEnd[x]
		if len(tc) == 1 {
			t := tc[0]
			for e := lo; e < hi; e++ {
				if t[g.nloc[e]] == want {
					if l := g.dlink[e]; allUp || r.up[l>>1] {
						c = append(c, l)
					}
				}
			}
		} else {
			for e := lo; e < hi; e++ {
				m := uint8(unreachable)
				for _, t := range tc {
					m = min(m, t[g.nloc[e]])
				}
				if m == want {
					if l := g.dlink[e]; allUp || r.up[l>>1] {
						c = append(c, l)
					}
				}
			}
		}
		if !g.compNV[g.comp[x]] {
			r.cand = c
			return c
		}
	}
	nv := false
	for _, l := range c {
		if g.kinds[g.ends[l]] == topo.NVSwitch {
			nv = true
			break
		}
	}
	if nv {
		k := 0
		for _, l := range c {
			if g.kinds[g.ends[l]] == topo.NVSwitch {
				c[k] = l
				k++
			}
		}
		c = c[:k]
	}
	r.cand = c
	return c
}

// pick returns the next hop of index h mod n among the n candidates of node x, d hops from dst
// (targets set), or -1 if there are none: candidates(x, dst, d)[simaiIndex(h, n)], read from
// the memo without building the slice when it is there.
func (r *Router) pick(x, dst int32, d int, h uint32) int32 {
	g := r.g
	if d >= 2 && g.kinds[x] != topo.GPU {
		if tab := r.memoTable(g.comp[x]); tab != nil {
			if e := tab[g.local[x]]; e != 0 {
				if e&memoArena == 0 {
					return g.dlink[g.off[x]+int32(e>>16)+int32(simaiIndex(h, e&0xffff))]
				}
				o := int32(e &^ memoArena)
				n := uint32(r.candArena[o])
				if n == 0 {
					return -1
				}
				return r.candArena[o+1+int32(simaiIndex(h, n))]
			}
		}
	}
	c := r.candidates(x, dst, d)
	if len(c) == 0 {
		return -1
	}
	return c[simaiIndex(h, uint32(len(c)))]
}

// simaiIndex is the position, in simd's candidate order (ascending node id, then link), of
// the candidate SimAI's hash value h selects among n: SimAI's list is in the reverse order
// (see the package documentation), and it takes h mod n.
func simaiIndex(h, n uint32) uint32 { return n - 1 - h%n }

// prepare checks a query and sets the targets; it returns the hop count of a shortest route
// from src to dst.
func (r *Router) prepare(src, dst int32) (int, error) {
	g := r.g
	if err := g.checkNode(src); err != nil {
		return 0, err
	}
	if err := g.checkNode(dst); err != nil {
		return 0, err
	}
	if src == dst {
		return 0, fmt.Errorf("route: source and destination are both node %d", src)
	}
	if g.kinds[src] == topo.Switch {
		return 0, fmt.Errorf("route: node %d is a network switch; flows start at GPUs or NVSwitches", src)
	}
	if g.kinds[dst] != topo.GPU {
		// SimAI has routes toward GPUs only; an NVSwitch is reached (NVLS) over a direct link.
		if r.hasUpLink(src, dst) {
			return 1, nil
		}
		return 0, fmt.Errorf("route: %w from %d to %v %d (only GPUs and adjacent nodes are destinations)", ErrNoRoute, src, g.kinds[dst], dst)
	}
	if err := r.setTargets(dst); err != nil {
		return 0, err
	}
	d := r.nodeDist(src, dst)
	if d >= inf {
		return 0, fmt.Errorf("route: %w from %d to %d", ErrNoRoute, src, dst)
	}
	return d, nil
}

// Distance is the hop count of a shortest route from src to dst (a GPU or NVSwitch source).
func (r *Router) Distance(src, dst int32) (int, error) { return r.prepare(src, dst) }

// NextHops appends to buf the equal-cost next hops (directed links) of node x toward dst, in
// the order the ECMP hash indexes them, and returns it. x is a node on a route toward dst: a
// GPU or NVSwitch source, or a switch; a GPU x other than a source is treated as one.
func (r *Router) NextHops(buf []int32, x, dst int32) ([]int32, error) {
	if err := r.g.checkNode(x); err != nil {
		return buf, err
	}
	if err := r.g.checkNode(dst); err != nil {
		return buf, err
	}
	if x == dst {
		return buf, nil
	}
	if r.g.kinds[dst] != topo.GPU {
		n := len(buf)
		buf = r.appendUpLinks(buf, x, dst)
		slices.Reverse(buf[n:])
		return buf, nil
	}
	if err := r.setTargets(dst); err != nil {
		return buf, err
	}
	d := r.nodeDist(x, dst)
	if d >= inf {
		return buf, fmt.Errorf("route: %w from %d to %d", ErrNoRoute, x, dst)
	}
	// In SimAI's order, the reverse of the candidates'.
	c := r.candidates(x, dst, d)
	for i := len(c) - 1; i >= 0; i-- {
		buf = append(buf, c[i])
	}
	return buf, nil
}

// Route appends to buf[:0] the path of a flow from src to dst with the given ports, as directed
// link ids, and returns it. Hop by hop it does what SimAI does: the source (a GPU, or an
// NVSwitch originating NVLS traffic) picks one of its equal-cost interfaces by
// Hash(key, NICSeed) mod their number, and every switch or NVSwitch on the way picks one of its
// equal-cost next hops by Hash(key, its node id) mod their number, where key is
// FlowKey(NodeIP(src), NodeIP(dst), sport, dport). Routing a flow again with a buffer of enough
// capacity allocates nothing (once the distance tables it needs exist; see Warm).
func (r *Router) Route(buf []int32, src, dst int32, sport, dport uint16) ([]int32, error) {
	return r.route(buf, src, dst, sport, dport, sport, 0)
}

// RouteQP is Route for the QP of a connection that is shift places after the connection's
// first QP, whose source port is first: the source takes the interface Route would give the
// first QP moved on by shift places (mod the number of its equal-cost interfaces), so that
// the QPs of a connection take the NIC's ports in turn, as a RoCE LAG NIC gives its QPs their
// transmit port (round robin); every switch on the way hashes the QP's own ports as in Route.
// RouteQP(buf, src, dst, sport, dport, sport, 0) is Route(buf, src, dst, sport, dport).
func (r *Router) RouteQP(buf []int32, src, dst int32, sport, dport, first uint16, shift int) ([]int32, error) {
	return r.route(buf, src, dst, sport, dport, first, shift)
}

func (r *Router) route(buf []int32, src, dst int32, sport, dport, first uint16, shift int) ([]int32, error) {
	buf = buf[:0]
	d, err := r.prepare(src, dst)
	if err != nil {
		return buf, err
	}
	g := r.g
	key := FlowKey(NodeIP(src), NodeIP(dst), sport, dport)
	x, seed := src, NICSeed
	if g.kinds[dst] != topo.GPU {
		c := r.appendUpLinks(r.cand[:0], src, dst)
		r.cand = c
		return append(buf, c[simaiIndex(Hash(key, seed), uint32(len(c)))]), nil
	}
	if shift != 0 {
		// The source's interface, taken in turn from the first QP's.
		c := r.candidates(x, dst, d)
		if len(c) == 0 {
			return buf, fmt.Errorf("route: internal error: no next hop at node %d toward %d", x, dst)
		}
		n := uint32(len(c))
		i := (simaiIndex(Hash(FlowKey(NodeIP(src), NodeIP(dst), first, dport), NICSeed), n) + uint32(shift%int(n))) % n
		l := c[i]
		buf = append(buf, l)
		x = g.ends[l]
		if x == dst {
			return buf, nil
		}
		d--
		seed = uint32(x)
	}
	for {
		l := r.pick(x, dst, d, Hash(key, seed))
		if l < 0 {
			// Cannot happen: a node d hops away has a neighbour d-1 hops away.
			return buf, fmt.Errorf("route: internal error: no next hop at node %d toward %d", x, dst)
		}
		buf = append(buf, l)
		x = g.ends[l]
		if x == dst {
			return buf, nil
		}
		d--
		seed = uint32(x)
	}
}
