package route

import (
	"fmt"
	"math"
	"sort"

	"simd/topo"
)

// NodeCounts is the number of nodes of each kind.
type NodeCounts struct {
	GPUs, NVSwitches, Switches int
}

// NodeCounts counts g's nodes by kind.
func (g *Graph) NodeCounts() NodeCounts {
	var c NodeCounts
	for _, k := range g.kinds {
		switch k {
		case topo.GPU:
			c.GPUs++
		case topo.NVSwitch:
			c.NVSwitches++
		default:
			c.Switches++
		}
	}
	return c
}

// RateCount is the number of links of one rate.
type RateCount struct {
	Rate  float64 // bits/s
	Links int
}

// LinkCountsByRate counts g's links by rate, ascending.
func (g *Graph) LinkCountsByRate() []RateCount {
	out := make([]RateCount, len(g.rates))
	for i, r := range g.rates {
		out[i].Rate = r
	}
	for _, r := range g.rate {
		i := sort.SearchFloat64s(g.rates, r)
		out[i].Links++
	}
	return out
}

// Tiers returns, per node, its tier: 0 for a GPU; for a switch or an NVSwitch, the number of
// hops from the nearest GPU through switches and NVSwitches (GPUs do not forward), so a ToR
// (ASW) is 1, a spine (PSW) 2, a core switch 3, and an NVSwitch 1; -1 for a switch no GPU
// reaches. Every link counts, up or down.
func (g *Graph) Tiers() []int32 {
	n := len(g.kinds)
	tier := make([]int32, n)
	var q []int32
	for x := range tier {
		tier[x] = -1
		if g.kinds[x] == topo.GPU {
			tier[x] = 0
		}
	}
	for x := int32(0); int(x) < n; x++ {
		if g.kinds[x] != topo.GPU {
			continue
		}
		for e := g.off[x]; e < g.swEnd[x]; e++ {
			if y := g.nbr[e]; tier[y] < 0 {
				tier[y] = 1
				q = append(q, y)
			}
		}
	}
	for i := 0; i < len(q); i++ {
		x := q[i]
		for e := g.off[x]; e < g.swEnd[x]; e++ {
			if y := g.nbr[e]; tier[y] < 0 {
				tier[y] = tier[x] + 1
				q = append(q, y)
			}
		}
	}
	return tier
}

// SwitchLoad is the capacity of one network switch toward lower tiers (down, including GPUs),
// higher tiers (up) and its own tier (lateral), in bits/s.
type SwitchLoad struct {
	Node              int32
	Tier              int32
	Down, Up, Lateral float64
}

// Oversubscription is Down/Up: 1 is non-blocking, 3 is 3:1. It is +Inf for a switch without
// uplinks (the top tier) and NaN for one without links.
func (s SwitchLoad) Oversubscription() float64 { return ratio(s.Down, s.Up) }

// TierLoad is the capacity of all network switches of one tier.
type TierLoad struct {
	Tier              int32
	Switches          int
	Down, Up, Lateral float64
}

// Oversubscription is Down/Up over the tier (see SwitchLoad.Oversubscription).
func (t TierLoad) Oversubscription() float64 { return ratio(t.Down, t.Up) }

func ratio(down, up float64) float64 {
	switch {
	case up > 0:
		return down / up
	case down > 0:
		return math.Inf(1)
	}
	return math.NaN()
}

// Loads returns the down/up/lateral capacity of every network switch (Kind Switch; NVSwitches
// are inside servers and left out), by node id, and the sums per tier, by tier. Tiers are those
// of Tiers; switches no GPU reaches are left out.
func (g *Graph) Loads() (switches []SwitchLoad, tiers []TierLoad) {
	tier := g.Tiers()
	byTier := map[int32]*TierLoad{}
	for x := int32(0); int(x) < len(g.kinds); x++ {
		if g.kinds[x] != topo.Switch || tier[x] < 0 {
			continue
		}
		s := SwitchLoad{Node: x, Tier: tier[x]}
		for e := g.off[x]; e < g.off[x+1]; e++ {
			r := g.rate[g.dlink[e]>>1]
			switch t := tier[g.nbr[e]]; {
			case t < s.Tier:
				s.Down += r
			case t > s.Tier:
				s.Up += r
			default:
				s.Lateral += r
			}
		}
		switches = append(switches, s)
		tl := byTier[s.Tier]
		if tl == nil {
			tl = &TierLoad{Tier: s.Tier}
			byTier[s.Tier] = tl
		}
		tl.Switches++
		tl.Down += s.Down
		tl.Up += s.Up
		tl.Lateral += s.Lateral
	}
	for _, tl := range byTier {
		tiers = append(tiers, *tl)
	}
	sort.Slice(tiers, func(i, j int) bool { return tiers[i].Tier < tiers[j].Tier })
	return switches, tiers
}

// Bisection is the bandwidth between the two halves of the servers.
type Bisection struct {
	Servers   int // servers in all
	FirstHalf int // servers in the first half
	// Bandwidth is the maximum flow, in bits/s, from the GPUs of the first half of the servers to
	// those of the second half, every link an undirected edge whose capacity is its rate
	// (rounded to whole bits/s) in each direction, GPUs free to send and receive any amount.
	// By max-flow/min-cut it is also the capacity of the smallest set of links whose removal
	// separates the halves.
	Bandwidth float64
	// NIC is, per half, the total rate of the links from its GPUs to network switches: the
	// bandwidth a full-bisection network would have to carry.
	NIC [2]float64
	// CutLinks are the indices (in the topology's link list) of the links of one minimum cut.
	CutLinks []int
}

// Bisection computes the bisection bandwidth of g. Servers are numbered as SimAI numbers them:
// the k-th GPU by id is in server ⌊k/GPUsPerServer⌋. The first half is servers
// 0..⌊S/2⌋-1 of the S servers, the second half the rest. Every link counts, up or down. It is
// an error if there are fewer than two servers.
func (g *Graph) Bisection() (Bisection, error) {
	var b Bisection
	n := len(g.kinds)
	half := make([]int8, n) // 0: not a GPU, 1: first half, 2: second half
	gpus := 0
	for _, k := range g.kinds {
		if k == topo.GPU {
			gpus++
		}
	}
	gps := max(g.gps, 1)
	b.Servers = (gpus + gps - 1) / gps
	if b.Servers < 2 {
		return b, fmt.Errorf("route: bisection needs at least 2 servers, the topology has %d", b.Servers)
	}
	b.FirstHalf = b.Servers / 2
	rank := 0
	for x := range g.kinds {
		if g.kinds[x] != topo.GPU {
			continue
		}
		if rank/gps < b.FirstHalf {
			half[x] = 1
		} else {
			half[x] = 2
		}
		rank++
	}
	s, t := int32(n), int32(n+1)
	f := newMaxFlow(n + 2)
	const big = int64(1) << 50
	for x := int32(0); int(x) < n; x++ {
		switch half[x] {
		case 1:
			f.addArc(s, x, big, 0)
		case 2:
			f.addArc(x, t, big, 0)
		}
	}
	for i, r := range g.rate {
		c := int64(math.Round(min(r, 1e15)))
		u, v := g.ends[2*i], g.ends[2*i+1]
		f.addArc(u, v, c, c)
		for k, end := range [2]int32{u, v} {
			other := [2]int32{v, u}[k]
			if h := half[end]; h > 0 && g.kinds[other] == topo.Switch {
				b.NIC[h-1] += r
			}
		}
	}
	b.Bandwidth = float64(f.run(s, t))
	side := f.sourceSide(s)
	for i := range g.rate {
		if side[g.ends[2*i]] != side[g.ends[2*i+1]] {
			b.CutLinks = append(b.CutLinks, i)
		}
	}
	return b, nil
}
