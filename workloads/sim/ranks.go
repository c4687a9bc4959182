package sim

import (
	"simd/netmodel"
	"simd/workloads"
)

// rankedCollective is a collective of a pass whose ranks run their own copies of the workload
// (workloads.Ranks): the first rank to reach it starts its groups' runs, every rank joins its
// group's run as it reaches it, and it is done when every rank's part is. Its per-rank tables
// are indexed by cluster GPU (a job's ranks may sit anywhere on the fabric).
type rankedCollective struct {
	rec    int              // its record in collectiveNetwork.records
	runOf  []netmodel.RunID // the run of each GPU's group, −1 for a GPU in none
	joined []bool           // the GPUs whose rank has reached it
	dones  []func()         // what to call when a GPU's part is done
	joins  int              // ranks that have reached it
	left   int              // ranks whose part is not done
}

// rankKey names the collectives a rank may reach: the same (layer, phase) of the pass. A rank
// joins the oldest one of its key it has not joined, so several may be open at once.
type rankKey struct {
	layer int
	phase workloads.Phase
}

// StartRank implements workloads.RankNetwork.
func (n *collectiveNetwork) StartRank(rank int, c workloads.Collective, done func()) error {
	k := rankKey{c.Layer, c.Phase}
	gpu := n.layout.GPU(rank)
	var rc *rankedCollective
	for _, o := range n.open[k] {
		if !o.joined[gpu] {
			rc = o
			break
		}
	}
	if rc == nil {
		var err error
		if rc, err = n.beginRanked(c); err != nil {
			return err
		}
		if n.open == nil {
			n.open = map[rankKey][]*rankedCollective{}
		}
		n.open[k] = append(n.open[k], rc)
	}
	rc.joined[gpu] = true
	rc.dones[gpu] = done
	if rc.joins++; rc.joins == n.layout.GPUs {
		open := n.open[k]
		for i, o := range open {
			if o == rc {
				n.open[k] = append(open[:i:i], open[i+1:]...)
				break
			}
		}
	}
	if id := rc.runOf[gpu]; id >= 0 {
		return n.sim.Join(id, gpu)
	}
	// The rank is in none of the collective's groups: its part is nothing.
	n.s.AtFunc(n.s.Now(), func() { n.rankDone(rc, gpu) })
	return nil
}

// beginRanked plans and records collective c, reached now by its first rank, and starts its
// groups' runs, each waiting for its ranks to join.
func (n *collectiveNetwork) beginRanked(c workloads.Collective) (*rankedCollective, error) {
	plans, idx, err := n.begin(c)
	if err != nil {
		return nil, err
	}
	rc := &rankedCollective{
		rec: idx, runOf: make([]netmodel.RunID, n.total), joined: make([]bool, n.total),
		dones: make([]func(), n.total), left: n.layout.GPUs,
	}
	for i := range rc.runOf {
		rc.runOf[i] = -1
	}
	for _, p := range plans {
		id := n.sim.RunRanks(p.DAG, n.latency(p.Choice), func(gpu int32) { n.rankDone(rc, gpu) })
		n.recordRun(id, idx)
		for _, g := range p.DAG.Collective().Ranks {
			if int(g) < len(rc.runOf) {
				rc.runOf[g] = id
			}
		}
	}
	return rc, nil
}

// rankDone runs when GPU gpu's part of rc is done: the collective is done once every rank's
// is, and the rank goes on.
func (n *collectiveNetwork) rankDone(rc *rankedCollective, gpu int32) {
	done := rc.dones[gpu]
	rc.dones[gpu] = nil
	if rc.left--; rc.left == 0 {
		n.finished(rc.rec)
	}
	done()
}
