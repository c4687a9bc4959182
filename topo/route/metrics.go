package route

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"simd/engine"
	"simd/topo"
)

// PairMetrics are SimAI's per-pair figures of §7.6 (common.h: CalculateRoute, SetupNetwork),
// taken over the routes of the pair (every path some hash can produce). SimAI computes them
// along one BFS-tree path per pair; when all routes of a pair have the same delays and rates —
// as in every fabric SimAI's generator writes — the figures are the same.
type PairMetrics struct {
	Hops int
	// RTT is pairRtt, the largest over the routes of 2·(sum of link delays) + the sum over
	// hops of the transmission time of one payload (PACKET_PAYLOAD_SIZE·8e9/rate, whole ns per
	// hop as in SimAI).
	RTT engine.Time
	// Bandwidth is pairBw, the smallest over the routes of the route's slowest link, bits/s.
	Bandwidth float64
	// BDP is pairBdp in bytes, the largest over the routes of ⌊rtt·bw/8e9⌋ with rtt in ns and
	// bw the route's slowest link in bits/s, in SimAI's integer arithmetic.
	BDP int64
}

// weights makes r.dag.weight hold each link's contribution to the RTT for payload bytes:
// 2·delay plus the transmission time of one payload, ⌊payload·8e9/rate⌋ ns (integer, as SimAI
// computes it with uint64 bit rates).
func (r *Router) weights(payload int) []int64 {
	s := &r.dag
	if s.weightInit && s.weightPay == payload && len(s.weight) == r.g.NumLinks() {
		return s.weight
	}
	s.weight = make([]int64, r.g.NumLinks())
	for i := range s.weight {
		s.weight[i] = linkWeight(r.g.rate[i], r.g.delay[i], payload)
	}
	s.weightPay, s.weightInit = payload, true
	return s.weight
}

func linkWeight(rate float64, delay engine.Time, payload int) int64 {
	bps := bitRate(rate)
	tx := uint64(payload) * 8_000_000_000 / bps
	return 2*int64(delay) + int64(tx)*int64(engine.Nanosecond)
}

// bitRate is rate as SimAI's uint64 bits/s (at least 1).
func bitRate(rate float64) uint64 {
	if rate >= 1<<63 {
		return 1 << 63
	}
	if b := uint64(rate); b > 0 {
		return b
	}
	return 1
}

// bdp is SimAI's ⌊rtt·bw/1e9/8⌋ for rtt in ps (rtt_ns·bw/8e9 = rtt_ps·bw/8e12).
func bdp(rtt int64, rate float64) int64 {
	if rtt <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(rtt), bitRate(rate))
	const div = 8_000_000_000_000
	if hi >= div {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, div)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// PairMetrics computes SimAI's pairRtt, pairBw and pairBdp for src → dst over the current
// routes, for a payload of payload bytes (PACKET_PAYLOAD_SIZE).
func (r *Router) PairMetrics(src, dst int32, payload int) (PairMetrics, error) {
	if payload < 0 {
		return PairMetrics{}, fmt.Errorf("route: negative payload %d", payload)
	}
	d, err := r.prepare(src, dst)
	if err != nil {
		return PairMetrics{}, err
	}
	w := r.weights(payload)
	g := r.g
	if g.kinds[dst] != topo.GPU {
		m := PairMetrics{Hops: 1, Bandwidth: math.Inf(1)}
		for _, l := range r.appendUpLinks(r.cand[:0], src, dst) {
			rtt := w[l>>1]
			m.RTT = max(m.RTT, engine.Time(rtt))
			m.Bandwidth = min(m.Bandwidth, g.rate[l>>1])
			m.BDP = max(m.BDP, bdp(rtt, g.rate[l>>1]))
		}
		return m, nil
	}
	nthr := len(g.rates)
	s := &r.dag
	s.begin(g.NumNodes(), nthr)
	r.expandAll(src, dst, d)
	s.newStamp() // from here a current stamp means "evaluated"
	r.evalPair(src, dst, w)
	m := PairMetrics{Hops: d, RTT: engine.Time(s.rtt[src]), Bandwidth: s.bw[src]}
	for b := 0; b < nthr; b++ {
		if v := s.thr[int(src)*nthr+b]; v >= 0 {
			m.BDP = max(m.BDP, bdp(v, g.rates[b]))
		}
	}
	return m, nil
}

// evalPair fills the dag values of x: the largest weight of a route to dst, the smallest
// bottleneck, and per rate threshold the largest weight of a route whose links all reach it.
func (r *Router) evalPair(x, dst int32, w []int64) {
	s := &r.dag
	g := r.g
	nthr := s.nthr
	if s.stamp[x] == s.cur {
		return
	}
	s.stamp[x] = s.cur
	th := s.thr[int(x)*nthr : int(x)*nthr+nthr]
	if x == dst {
		s.rtt[x], s.bw[x] = 0, math.Inf(1)
		for b := range th {
			th[b] = 0
		}
		return
	}
	s.rtt[x], s.bw[x] = -1, math.Inf(1)
	for b := range th {
		th[b] = -1
	}
	for i := s.lo[x]; i < s.hi[x]; i++ {
		l := s.arena[i]
		y := g.ends[l]
		r.evalPair(y, dst, w)
		wl, rate := w[l>>1], g.rate[l>>1]
		s.rtt[x] = max(s.rtt[x], wl+s.rtt[y])
		s.bw[x] = min(s.bw[x], rate, s.bw[y])
		ty := s.thr[int(y)*nthr : int(y)*nthr+nthr]
		for b := range th {
			if rate >= g.rates[b] && ty[b] >= 0 {
				th[b] = max(th[b], wl+ty[b])
			}
		}
	}
}

// SimAIMax are SimAI's maxRtt and maxBdp: the largest pairRtt and pairBdp over all ordered pairs
// of distinct GPUs that have a route.
type SimAIMax struct {
	RTT engine.Time
	BDP int64
}

// smallComp is the number of attached GPUs up to which MaxRTTBDP evaluates the pairs of an
// NVLink component (see MaxRTTBDP) one by one.
const smallComp = 256

// MaxRTTBDP computes SimAI's maxRtt and maxBdp (the window and base RTT of every QP, since
// SimAI forces GLOBAL_T to 1) over the current routes for a payload of payload bytes, without
// visiting every pair of GPUs where the structure allows.
//
// A GPU's signature in a component of the switch graph is the list of its up links into that
// component (switch, rate, delay). Two pairs whose GPUs have the same signatures in the
// components they share have the same routes up to renaming and so the same figures, unless the
// GPUs are adjacent. A component with an NVSwitch and at most 256 attached GPUs (a server's
// NVLink domain) is small; a pair sharing a small component, or joined by a direct link, is
// evaluated on its own with PairMetrics. Every other pair is keyed by the two GPUs' profiles
// (their signatures in the large components) and evaluated once per pair of profiles, by a
// dynamic program over the component toward each destination signature.
//
// Which components are small changes the cost, not the figures (every pair is evaluated
// exactly either way; TestMaxRTTBDPAgainstBruteForce tries several choices). A fabric's switch
// component is never small, whatever its size: its GPUs hang off a few ToRs, so few profiles
// cover them, where its pairs are the square of its GPUs (a 256-GPU AlibabaHPN fabric: 1.4 ms
// against 0.74 s pair by pair, BenchmarkMaxRTTBDP). An NVLink domain is the other way round:
// every GPU of a server has its own NVSwitch port, so its own profile there.
//
// Cost: O(P² + Σ over destination signatures of the component's links × rates + S) where P is
// the number of distinct profiles (the number of ToRs in a single-ToR fabric, of ToR pairs in a
// dual-ToR one) and S the pairs evaluated on their own (GPU pairs inside a server). For a
// 16,384-GPU Spectrum-X fabric P = 256.
func (r *Router) MaxRTTBDP(payload int) (SimAIMax, error) {
	return r.maxRTTBDP(payload, smallComp, true)
}

// sigEntry is one up link of a GPU into a component.
type sigEntry struct {
	node int32   // the switch
	rate float64 // bits/s
	w    int64   // weight (see weights)
}

type profile struct {
	comps []int32 // ascending
	sigs  []int32 // the signature in each of comps
	count int64   // GPUs with this profile
}

// maxRTTBDP is MaxRTTBDP with the components with at most small attached GPUs small, only
// those with an NVSwitch if nvOnly.
func (r *Router) maxRTTBDP(payload, small int, nvOnly bool) (SimAIMax, error) {
	var res SimAIMax
	if payload < 0 {
		return res, fmt.Errorf("route: negative payload %d", payload)
	}
	g := r.g
	w := r.weights(payload)
	n := g.NumNodes()

	// Signatures per GPU and component.
	sigID := map[string]int32{}
	var sigs [][]sigEntry
	var sigComp []int32
	type gpuSig struct{ comp, sig int32 }
	gsStart := make([]int32, n+1)
	var gs []gpuSig
	compMembers := make([][]int32, len(g.compSize))
	var key []byte
	for x := int32(0); int(x) < n; x++ {
		gsStart[x] = int32(len(gs))
		if g.kinds[x] != topo.GPU {
			continue
		}
		first := len(gs)
		for e := g.off[x]; e < g.swEnd[x]; {
			c := g.comp[g.nbr[e]]
			// The links of x into component c, in adjacency order.
			key = binary.LittleEndian.AppendUint32(key[:0], uint32(c))
			var ents []sigEntry
			for f := g.off[x]; f < g.swEnd[x]; f++ {
				if g.comp[g.nbr[f]] != c || !r.up[g.dlink[f]>>1] {
					continue
				}
				li := g.dlink[f] >> 1
				ents = append(ents, sigEntry{node: g.nbr[f], rate: g.rate[li], w: w[li]})
				key = binary.LittleEndian.AppendUint32(key, uint32(g.nbr[f]))
				key = binary.LittleEndian.AppendUint64(key, math.Float64bits(g.rate[li]))
				key = binary.LittleEndian.AppendUint64(key, uint64(w[li]))
			}
			// Skip to the next component not seen yet.
			for e < g.swEnd[x] && g.comp[g.nbr[e]] == c {
				e++
			}
			seen := false
			for _, p := range gs[first:] {
				if p.comp == c {
					seen = true
				}
			}
			if seen || len(ents) == 0 {
				continue
			}
			id, ok := sigID[string(key)]
			if !ok {
				id = int32(len(sigs))
				sigID[string(key)] = id
				sigs = append(sigs, ents)
				sigComp = append(sigComp, c)
			}
			gs = append(gs, gpuSig{c, id})
			compMembers[c] = append(compMembers[c], x)
		}
		sort.Slice(gs[first:], func(i, j int) bool { return gs[first+i].comp < gs[first+j].comp })
	}
	gsStart[n] = int32(len(gs))
	isSmall := func(c int32) bool { return len(compMembers[c]) <= small && (!nvOnly || g.compNV[c]) }

	// Profiles: the signatures in the large components.
	profID := map[string]int32{}
	var profs []profile
	gprof := make([]int32, n)
	for x := int32(0); int(x) < n; x++ {
		gprof[x] = -1
		if g.kinds[x] != topo.GPU {
			continue
		}
		key = key[:0]
		var p profile
		for _, s := range gs[gsStart[x]:gsStart[x+1]] {
			if isSmall(s.comp) {
				continue
			}
			key = binary.LittleEndian.AppendUint32(key, uint32(s.comp))
			key = binary.LittleEndian.AppendUint32(key, uint32(s.sig))
			p.comps = append(p.comps, s.comp)
			p.sigs = append(p.sigs, s.sig)
		}
		id, ok := profID[string(key)]
		if !ok {
			id = int32(len(profs))
			profID[string(key)] = id
			profs = append(profs, p)
		}
		profs[id].count++
		gprof[x] = id
	}

	// Pairs evaluated on their own: sharing a small component, or adjacent.
	special := map[uint64]int64{}
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	fold := func(i, j int32) error {
		mark[j] = i
		special[uint64(gprof[i])<<32|uint64(gprof[j])]++
		m, err := r.PairMetrics(i, j, payload)
		if err != nil {
			if errors.Is(err, ErrNoRoute) {
				return nil
			}
			return err
		}
		res.RTT = max(res.RTT, m.RTT)
		res.BDP = max(res.BDP, m.BDP)
		return nil
	}
	for i := int32(0); int(i) < n; i++ {
		if g.kinds[i] != topo.GPU {
			continue
		}
		mark[i] = i
		for _, s := range gs[gsStart[i]:gsStart[i+1]] {
			if !isSmall(s.comp) {
				continue
			}
			for _, j := range compMembers[s.comp] {
				if mark[j] != i {
					if err := fold(i, j); err != nil {
						return res, err
					}
				}
			}
		}
		for e := g.swEnd[i]; e < g.off[i+1]; e++ {
			if j := g.nbr[e]; r.up[g.dlink[e]>>1] && mark[j] != i {
				if err := fold(i, j); err != nil {
					return res, err
				}
			}
		}
	}

	// Every other pair, by pairs of profiles.
	nthr := len(g.rates)
	dp := dpTables{}
	for v := range profs {
		pv := &profs[v]
		if len(pv.comps) == 0 {
			continue
		}
		tabs := make([]*sigTable, len(pv.comps))
		for k, c := range pv.comps {
			t, err := dp.get(r, c, pv.sigs[k], sigs[pv.sigs[k]], nthr)
			if err != nil {
				return res, err
			}
			tabs[k] = t
		}
		for u := range profs {
			pu := &profs[u]
			pairs := pu.count * pv.count
			if u == v {
				pairs -= pu.count
			}
			pairs -= special[uint64(u)<<32|uint64(v)]
			if pairs <= 0 {
				continue
			}
			rtt, bd, ok := evalProfiles(g, pu, pv, sigs, tabs, nthr)
			if ok {
				res.RTT = max(res.RTT, engine.Time(rtt))
				res.BDP = max(res.BDP, bd)
			}
		}
	}
	return res, nil
}

// sigTable is the dynamic program over one component toward the GPUs of one signature: for
// every switch of the component (by local index) its distance to such a GPU and the values of
// evalPair.
type sigTable struct {
	comp, sig int32
	dist      []int32 // hops to the GPU, inf if none
	rtt       []int64
	thr       []int64 // local × threshold
}

// dpTables caches tables, up to dpCacheBytes of them.
type dpTables struct {
	cache map[int64]*sigTable // by component<<32 | signature
	bytes int
	nodes map[int32][]int32 // component → its nodes by local index
}

const dpCacheBytes = 64 << 20

func (t *dpTables) get(r *Router, c, sig int32, ents []sigEntry, nthr int) (*sigTable, error) {
	if t.cache == nil {
		t.cache = map[int64]*sigTable{}
		t.nodes = map[int32][]int32{}
	}
	k := int64(c)<<32 | int64(sig)
	if st := t.cache[k]; st != nil {
		return st, nil
	}
	g := r.g
	nodes := t.nodes[c]
	if nodes == nil {
		nodes = make([]int32, g.compSize[c])
		for x := range g.kinds {
			if g.comp[x] == c {
				nodes[g.local[x]] = int32(x)
			}
		}
		t.nodes[c] = nodes
	}
	size := len(nodes)
	st := &sigTable{comp: c, sig: sig, dist: make([]int32, size), rtt: make([]int64, size), thr: make([]int64, size*nthr)}
	// Distances: 1 + the distance through switches to the nearest attachment switch.
	var tabs [][]uint8
	for i, e := range ents {
		if i > 0 && ents[i-1].node == e.node {
			continue
		}
		tb, err := r.table(e.node)
		if err != nil {
			return nil, err
		}
		tabs = append(tabs, tb)
	}
	maxd := int32(0)
	for li := range st.dist {
		best := int32(unreachable)
		for _, tb := range tabs {
			best = min(best, int32(tb[li]))
		}
		if best >= unreachable {
			st.dist[li] = inf
			continue
		}
		st.dist[li] = best + 1
		maxd = max(maxd, best+1)
	}
	// Nodes by distance.
	byDist := make([][]int32, maxd+1)
	for li, d := range st.dist {
		if d < inf {
			byDist[d] = append(byDist[d], int32(li))
		}
	}
	w := r.dag.weight
	for d := int32(1); d <= maxd; d++ {
		for _, li := range byDist[d] {
			x := nodes[li]
			th := st.thr[int(li)*nthr : int(li)*nthr+nthr]
			st.rtt[li] = -1
			for b := range th {
				th[b] = -1
			}
			if d == 1 {
				// The last hop: x's links to the GPU.
				for _, e := range ents {
					if e.node != x {
						continue
					}
					st.rtt[li] = max(st.rtt[li], e.w)
					for b := range th {
						if e.rate >= g.rates[b] {
							th[b] = max(th[b], e.w)
						}
					}
				}
				continue
			}
			// Candidates: up links to switches one hop nearer; NVSwitches preferred.
			nv := false
			for e := g.off[x]; e < g.swEnd[x]; e++ {
				y := g.nbr[e]
				if r.up[g.dlink[e]>>1] && st.dist[g.local[y]] == d-1 && g.kinds[y] == topo.NVSwitch {
					nv = true
					break
				}
			}
			for e := g.off[x]; e < g.swEnd[x]; e++ {
				y := g.nbr[e]
				l := g.dlink[e]
				if !r.up[l>>1] || st.dist[g.local[y]] != d-1 || (nv && g.kinds[y] != topo.NVSwitch) {
					continue
				}
				ly := g.local[y]
				wl, rate := w[l>>1], g.rate[l>>1]
				if v := st.rtt[ly]; v >= 0 {
					st.rtt[li] = max(st.rtt[li], wl+v)
				}
				ty := st.thr[int(ly)*nthr : int(ly)*nthr+nthr]
				for b := range th {
					if rate >= g.rates[b] && ty[b] >= 0 {
						th[b] = max(th[b], wl+ty[b])
					}
				}
			}
		}
	}
	size = size * (2 + nthr) * 8
	if t.bytes+size > dpCacheBytes {
		clear(t.cache)
		t.bytes = 0
	}
	t.cache[k] = st
	t.bytes += size
	return st, nil
}

// evalProfiles is the largest RTT and BDP of the routes from a GPU of profile pu to a GPU of
// profile pv that share no small component and are not adjacent; ok is false if there is no
// route.
func evalProfiles(g *Graph, pu, pv *profile, sigs [][]sigEntry, tabs []*sigTable, nthr int) (rtt, bd int64, ok bool) {
	// The first hops: over the shared components, the links to switches nearest the destination.
	best := int32(inf)
	nv := false
	for k, c := range pv.comps {
		i := sort.Search(len(pu.comps), func(i int) bool { return pu.comps[i] >= c })
		if i == len(pu.comps) || pu.comps[i] != c {
			continue
		}
		t := tabs[k]
		for _, e := range sigs[pu.sigs[i]] {
			d := t.dist[g.local[e.node]]
			if d < best {
				best, nv = d, false
			}
			if d == best && g.kinds[e.node] == topo.NVSwitch {
				nv = true
			}
		}
	}
	if best >= inf {
		return 0, 0, false
	}
	rtt = -1
	var thrBest [8]int64
	tb := thrBest[:0]
	for b := 0; b < nthr; b++ {
		tb = append(tb, -1)
	}
	for k, c := range pv.comps {
		i := sort.Search(len(pu.comps), func(i int) bool { return pu.comps[i] >= c })
		if i == len(pu.comps) || pu.comps[i] != c {
			continue
		}
		t := tabs[k]
		for _, e := range sigs[pu.sigs[i]] {
			ls := g.local[e.node]
			if t.dist[ls] != best || (nv && g.kinds[e.node] != topo.NVSwitch) {
				continue
			}
			if v := t.rtt[ls]; v >= 0 {
				rtt = max(rtt, e.w+v)
			}
			for b := range tb {
				if v := t.thr[int(ls)*nthr+b]; e.rate >= g.rates[b] && v >= 0 {
					tb[b] = max(tb[b], e.w+v)
				}
			}
		}
	}
	for b, v := range tb {
		if v >= 0 {
			bd = max(bd, bdp(v, g.rates[b]))
		}
	}
	return max(rtt, 0), bd, true
}
