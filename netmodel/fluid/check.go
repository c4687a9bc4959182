package fluid

import (
	"fmt"
	"math"
)

// Check verifies that the current rates are the max-min fair allocation of the transmitting
// flows, within Tol: every rate is finite and non-negative, no directed link carries more than
// its capacity, and every flow's recorded bottleneck is a link of its path that is saturated
// and on which no flow is faster. Those conditions characterise the max-min allocation, which
// is unique. It returns nil while a recompute is queued (the rates of the current instant are
// not set yet). O(flows · path length). Builds with -tags invariants run it after every
// recompute.
func (n *Network) Check() error {
	if n.pending {
		return nil
	}
	nl := len(n.links)
	if n.chkLoad == nil {
		n.chkLoad = make([]float64, nl)
		n.chkMax = make([]float64, nl)
		n.chkCnt = make([]int32, nl)
	}
	load, top := n.chkLoad, n.chkMax
	for l := range nl {
		load[l], top[l] = 0, 0
		for _, e := range n.links[l].on {
			r := n.hot[e.f].rate
			if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
				return fmt.Errorf("fluid: flow %d has rate %v", e.f, r)
			}
			w := n.hot[e.f].w
			if w == 0 {
				return fmt.Errorf("fluid: flow %d is on link %d but stands for no flow", e.f, l)
			}
			load[l] += float64(r * float64(w))
			top[l] = max(top[l], r)
		}
		if load[l] > n.links[l].capa*(1+Tol) {
			return fmt.Errorf("fluid: link %d carries %v bits/s over its capacity %v", l, load[l], n.links[l].capa)
		}
	}
	cnt := n.chkCnt
	clear(cnt)
	for id := range n.hot {
		f := &n.hot[id]
		if (f.state != stateActive && f.state != stateBundle) || f.hops == 0 {
			continue
		}
		bn := f.bn
		if bn >= 0 {
			cnt[bn]++
		}
		onPath := false
		for _, l := range n.arena[f.off : f.off+f.hops] {
			onPath = onPath || l == bn
		}
		if !onPath {
			return fmt.Errorf("fluid: flow %d (rate %v) has bottleneck %d, not a link of its path", id, f.rate, bn)
		}
		if load[bn] < n.links[bn].capa*(1-Tol) {
			return fmt.Errorf("fluid: flow %d (rate %v): its bottleneck %d is not saturated (%v of %v bits/s)", id, f.rate, bn, load[bn], n.links[bn].capa)
		}
		if f.rate < top[bn]*(1-Tol) {
			return fmt.Errorf("fluid: flow %d (rate %v) is not the fastest on its bottleneck %d (%v)", id, f.rate, bn, top[bn])
		}
	}
	for l := range nl {
		if cnt[l] != n.links[l].bnCnt {
			return fmt.Errorf("fluid: link %d is the bottleneck of %d flows but counts %d", l, cnt[l], n.links[l].bnCnt)
		}
	}
	return nil
}
