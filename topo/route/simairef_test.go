package route

import (
	"sort"

	"simd/topo"
)

// simaiRef re-implements SimAI's route computation (common.h: CalculateRoute, CalculateRoutes,
// SetupNetwork) literally, as a reference: one BFS per GPU h through switches and NVSwitches,
// recording for every node the next hops toward h and, along the BFS tree, the delay, the
// transmission delay of one payload and the bottleneck. Neighbours are visited in the order of
// the Node objects' addresses, as SimAI visits them (see the package documentation and before). Parallel links are not supported (SimAI keeps one link per node pair).
type simaiRef struct {
	nextHop map[[2]int32][]int32 // (node, host) → next-hop nodes in SimAI's list order
	delay   map[[2]int32]uint64  // (node, host) → ns
	txDelay map[[2]int32]uint64
	bw      map[[2]int32]uint64
	hosts   []int32
}

func newSimAIRef(tp *topo.Topology, payload uint64) *simaiRef {
	n := tp.NumNodes()
	type nbr struct {
		node  int32
		delay uint64
		bw    uint64
	}
	adj := make([][]nbr, n)
	for _, l := range tp.Links {
		d := uint64(l.Delay / 1000)
		adj[l.Src] = append(adj[l.Src], nbr{l.Dst, d, uint64(l.Rate)})
		adj[l.Dst] = append(adj[l.Dst], nbr{l.Src, d, uint64(l.Rate)})
	}
	// SimAI's std::map<Ptr<Node>, Interface> visits neighbours by address: GPUs are small
	// ns3::Node objects on the heap, created in id order (ascending addresses); SwitchNode and
	// NVSwitchNode objects are ~34 MB each, so each is its own mmap, which Linux places
	// top-down: above the heap, at descending addresses in id order.
	before := func(a, b int32) bool {
		ga, gb := tp.Kinds[a] == topo.GPU, tp.Kinds[b] == topo.GPU
		switch {
		case ga && gb:
			return a < b
		case ga != gb:
			return ga
		}
		return a > b
	}
	for x := range adj {
		sort.Slice(adj[x], func(i, j int) bool { return before(adj[x][i].node, adj[x][j].node) })
	}
	ref := &simaiRef{
		nextHop: map[[2]int32][]int32{},
		delay:   map[[2]int32]uint64{},
		txDelay: map[[2]int32]uint64{},
		bw:      map[[2]int32]uint64{},
	}
	for h := int32(0); int(h) < n; h++ {
		if tp.Kinds[h] != topo.GPU {
			continue
		}
		ref.hosts = append(ref.hosts, h)
		dis := map[int32]int{h: 0}
		delay := map[int32]uint64{h: 0}
		tx := map[int32]uint64{h: 0}
		bw := map[int32]uint64{h: ^uint64(0)}
		q := []int32{h}
		for i := 0; i < len(q); i++ {
			now := q[i]
			d := dis[now]
			for _, e := range adj[now] {
				next := e.node
				if _, ok := dis[next]; !ok {
					dis[next] = d + 1
					delay[next] = delay[now] + e.delay
					tx[next] = tx[now] + payload*1000000000*8/e.bw
					bw[next] = min(bw[now], e.bw)
					if tp.Kinds[next] != topo.GPU {
						q = append(q, next)
					}
				}
				if d+1 == dis[next] {
					k := [2]int32{next, h}
					viaNV := false
					for _, x := range ref.nextHop[k] {
						if tp.Kinds[x] == topo.NVSwitch {
							viaNV = true
						}
					}
					if !viaNV {
						if tp.Kinds[now] == topo.NVSwitch {
							ref.nextHop[k] = ref.nextHop[k][:0]
						}
						ref.nextHop[k] = append(ref.nextHop[k], now)
					} else if tp.Kinds[now] == topo.NVSwitch {
						ref.nextHop[k] = append(ref.nextHop[k], now)
					}
				}
			}
		}
		for x, v := range delay {
			ref.delay[[2]int32{x, h}] = v
		}
		for x, v := range tx {
			ref.txDelay[[2]int32{x, h}] = v
		}
		for x, v := range bw {
			ref.bw[[2]int32{x, h}] = v
		}
	}
	return ref
}

// max returns SimAI's maxRtt (ns) and maxBdp (bytes).
func (ref *simaiRef) max() (maxRtt, maxBdp uint64) {
	for _, i := range ref.hosts {
		for _, j := range ref.hosts {
			k := [2]int32{i, j}
			rtt := ref.delay[k]*2 + ref.txDelay[k]
			bdp := rtt * ref.bw[k] / 1000000000 / 8
			maxRtt = max(maxRtt, rtt)
			maxBdp = max(maxBdp, bdp)
		}
	}
	return maxRtt, maxBdp
}
