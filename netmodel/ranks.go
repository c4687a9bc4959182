package netmodel

import (
	"fmt"
	"math/bits"
	"slices"

	"simd/ccl"
	"simd/engine"
)

// This file holds the runs whose ranks reach the collective one by one (RunRanks). SimAI runs
// every rank's copy of the workload on its own (astra-sim's Sys per rank): a rank issues a
// collective when its own program reaches it, sends its first chunks then, takes in the chunks
// that reached it earlier as it starts (their sends went out regardless: the network does not
// wait for a receiver), and goes on with its program as soon as its own part is done — every
// flow it sends or receives, which is the time SimAI's per-layer report, rank 0's, shows
// (docs/differences-from-simai.md). A run of the whole collective done at once (Run) is the
// synchronous program of the same flows.

// rankGate is what a run keeps of its ranks when they join one by one: per rank of the DAG's
// group (by its index there), when it joined (−1: not yet), the flows released before it did,
// the flows it sends or receives still to arrive, and the latest arrival among those done.
type rankGate struct {
	// ranks[i] = base + i·stride when the group is an arithmetic progression (every TP, DP
	// and EP group of a layout is), found by a shift when stride is a power of two (shift ≥ 0;
	// a division costs as much as the rest of a flow's count), by a division otherwise; pos
	// when it is no progression.
	base, stride int32
	shift        int32
	pos          map[int32]int32
	n            int32
	ranks        []int32
	// mem tells a flow's members without Flow, where the DAG can (rings, all-to-alls).
	mem ccl.MembersDAG

	joinAt []engine.Time
	// roots are the run's roots by sender, rootAt[i]..rootAt[i+1] those of group index i (the
	// rank's first sends, made when it joins; an all-to-all's million of them wait here at 4
	// bytes each).
	roots  []ccl.FlowID
	rootAt []int32
	// held are the flows whose parents arrived before their sender joined.
	held     [][]heldFlow
	left     []int32
	end      []engine.Time
	unjoined int32
	rankDone func(rank int32)
}

// newRankGate builds the gate of a run of d: its group's ranks, and how many flows each sends
// or receives (ccl.RankFlows, a pass over the DAG's flows for most DAGs, the first time d runs;
// counts holds them per DAG, since a workload runs the same DAG layer after layer). A flow's
// members come from ccl.MembersDAG where d has it: a ring's or an all-to-all's arithmetic
// gives its sender's and receiver's group indices for less than a rank's lookup.
func newRankGate(d ccl.DAG, coll *ccl.Collective, rankDone func(int32), counts map[ccl.DAG][]int32) *rankGate {
	ranks := coll.Ranks
	g := &rankGate{n: int32(len(ranks)), ranks: ranks, rankDone: rankDone}
	g.mem, _ = d.(ccl.MembersDAG)
	if len(ranks) > 0 {
		g.base, g.stride = ranks[0], 1
		if len(ranks) > 1 {
			g.stride = ranks[1] - ranks[0]
		}
		for i, r := range ranks {
			if g.stride <= 0 || r != g.base+int32(i)*g.stride {
				g.stride = 0
				break
			}
		}
		g.shift = -1
		if g.stride > 0 && g.stride&(g.stride-1) == 0 {
			g.shift = int32(bits.TrailingZeros32(uint32(g.stride)))
		}
		if g.stride == 0 {
			g.pos = make(map[int32]int32, len(ranks))
			for i, r := range ranks {
				g.pos[r] = int32(i)
			}
		}
	}
	g.joinAt = make([]engine.Time, g.n)
	for i := range g.joinAt {
		g.joinAt[i] = -1
	}
	g.held = make([][]heldFlow, g.n)
	g.left = make([]int32, g.n)
	g.end = make([]engine.Time, g.n)
	g.unjoined = g.n
	if c, ok := counts[d]; ok {
		copy(g.left, c)
		return g
	}
	ccl.RankFlows(d, g.left)
	counts[d] = append([]int32(nil), g.left...)
	return g
}

// local is rank r's index in the group, −1 when r is not one of its ranks (an NVSwitch
// endpoint, or a relay outside the group: neither waits for anyone).
func (g *rankGate) local(r int32) int32 {
	if g.shift >= 0 {
		d := r - g.base
		if i := d >> g.shift; d >= 0 && d&(g.stride-1) == 0 && i < g.n {
			return i
		}
		return -1
	}
	if g.stride > 0 {
		d := r - g.base
		if d < 0 || d%g.stride != 0 || d/g.stride >= g.n {
			return -1
		}
		return d / g.stride
	}
	if i, ok := g.pos[r]; ok {
		return i
	}
	return -1
}

// members is flow f's sender and receiver as group indices (−1 outside the group).
func (g *rankGate) members(d ccl.DAG, f ccl.FlowID) (src, dst int32) {
	if g.mem != nil {
		if s, t, ok := g.mem.Members(f); ok {
			return s, t
		}
	}
	fl := d.Flow(f)
	return g.local(fl.Src), g.local(fl.Dst)
}

// holdRoots keeps the run's roots until their senders join, grouped by sender; it returns those
// sent from outside the group (none in the DAGs of ccl, whose roots' senders are members).
func (g *rankGate) holdRoots(d ccl.DAG, roots []ccl.FlowID) (outside []ccl.FlowID) {
	g.rootAt = make([]int32, g.n+1)
	for _, f := range roots {
		if i, _ := g.members(d, f); i >= 0 {
			g.rootAt[i+1]++
		} else {
			outside = append(outside, f)
		}
	}
	for i := range g.n {
		g.rootAt[i+1] += g.rootAt[i]
	}
	g.roots = make([]ccl.FlowID, len(roots))
	next := slices.Clone(g.rootAt[:g.n])
	for _, f := range roots {
		if i, _ := g.members(d, f); i >= 0 {
			g.roots[next[i]] = f
			next[i]++
		}
	}
	return outside
}

// RunRanks is Run for a collective whose ranks reach it one by one, each in its own copy of the
// workload as SimAI runs them: the flows a rank of d's group sends are released only once the
// rank has joined (Join) — those whose parents arrived before are released then — and
// rankDone is called, from an engine event, for every rank of the group once it has joined
// and every flow it sends or receives has arrived, at the latest of those arrivals and its
// join. The run's slot is kept until every rank has joined, so Join may come after the last
// flow.
func (m *Simulator) RunRanks(d ccl.DAG, lat Latency, rankDone func(rank int32)) RunID {
	return m.run(d, lat, nil, rankDone)
}

// Join tells run id (RunRanks) that rank has reached its collective, now.
func (m *Simulator) Join(id RunID, rank int32) error {
	if int(id) >= len(m.runs) || m.runs[id].gate == nil {
		return fmt.Errorf("netmodel: run %d does not take ranks one by one", id)
	}
	g := m.runs[id].gate
	i := g.local(rank)
	if i < 0 {
		return fmt.Errorf("netmodel: rank %d is not in the group of run %d", rank, id)
	}
	if g.joinAt[i] >= 0 {
		return fmt.Errorf("netmodel: rank %d joined run %d twice", rank, id)
	}
	now := m.s.Now()
	g.joinAt[i] = now
	g.unjoined--
	if g.rootAt != nil { // nil for a run without flows
		for _, f := range g.roots[g.rootAt[i]:g.rootAt[i+1]] {
			m.ready(id, f, now)
		}
	}
	held := g.held[i]
	g.held[i] = nil
	for _, h := range held {
		m.ready(id, h.f, max(h.at, now))
	}
	if g.left[i] == 0 {
		m.rankDoneAt(g, rank, max(g.end[i], now))
	}
	if r := &m.runs[id]; r.remaining == 0 && g.unjoined == 0 {
		m.finishRun(id, r.end)
	}
	return nil
}

// gated reports whether flow f of run r, ready at time at, waits for its sender to join (it is
// then held), and otherwise when it is ready: not before its sender joined. Once every rank
// has joined nothing waits: a flow made ready then is ready at an arrival reported after its
// sender joined, which is no earlier than the join.
func (g *rankGate) gated(r *dagRun, f ccl.FlowID, at engine.Time) (bool, engine.Time) {
	if g.unjoined == 0 {
		return false, at
	}
	i, _ := g.members(r.dag, f)
	if i < 0 {
		return false, at
	}
	if g.joinAt[i] < 0 {
		g.held[i] = append(g.held[i], heldFlow{f, at})
		return true, at
	}
	return false, max(at, g.joinAt[i])
}

// rankArrived counts flow f of run r, arrived at at, for its two ranks.
func (m *Simulator) rankArrived(g *rankGate, r *dagRun, f ccl.FlowID, at engine.Time) {
	src, dst := g.members(r.dag, f)
	if src >= 0 {
		m.rankFlowDone(g, src, at)
	}
	if dst >= 0 {
		m.rankFlowDone(g, dst, at)
	}
}

// rankFlowDone counts a flow of member i done at at.
func (m *Simulator) rankFlowDone(g *rankGate, i int32, at engine.Time) {
	g.end[i] = max(g.end[i], at)
	if g.left[i]--; g.left[i] == 0 && g.joinAt[i] >= 0 {
		m.rankDoneAt(g, g.ranks[i], max(g.end[i], g.joinAt[i]))
	}
}

// rankDoneAt calls g's rankDone for rank from an event at time at (now at the earliest): the
// caller may be in the middle of a run's bookkeeping, which the rank's next collective would
// change under it.
func (m *Simulator) rankDoneAt(g *rankGate, rank int32, at engine.Time) {
	done := g.rankDone
	m.s.AtFunc(max(at, m.s.Now()), func() { done(rank) })
}
