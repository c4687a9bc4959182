package sim

import (
	"simd/ccl"
	"simd/netmodel"
	"simd/workloads"
)

// rankedCollective is a collective of a pass whose ranks run their own copies of the workload
// (workloads.Ranks, or a pipeline's stages rank by rank): the first rank to reach it starts its
// groups' runs, every rank joins its group's run as it reaches it, and it is done when every
// rank's part is. The ranks that reach it are a block of the job's ranks, base to base+len(runOf)
// − 1 (the pass's, or a stage's: ccl.Layout.StageRanks); its tables are indexed by a rank's
// place in that block.
type rankedCollective struct {
	rec    int              // its record in collectiveNetwork.records
	base   int              // the first rank that reaches it
	runOf  []netmodel.RunID // the run of each place's group, −1 for a rank in none
	joined []bool           // the places whose rank has reached it
	dones  []func()         // what to call when a place's part is done
	joins  int              // ranks that have reached it
	left   int              // ranks whose part is not done, the receivers of a send included
	// peerBase is, for a pipeline send, the first rank of the receiving stage (−1 otherwise):
	// the receivers take no step of their own, and a sender's part is done when the receiver
	// in its place has its message.
	peerBase int
}

// rankKey names the collectives a rank may reach: the same (layer, phase) of the pass, on the
// same stage (−1 without a pipeline), and for a pipeline send the same peer stage. A rank
// joins the oldest one of its key it has not joined, so several may be open at once.
type rankKey struct {
	layer       int
	phase       workloads.Phase
	stage, peer int
	send        bool
}

// StartRank implements workloads.RankNetwork.
func (n *collectiveNetwork) StartRank(rank int, c workloads.Collective, done func()) error {
	k := rankKey{layer: c.Layer, phase: c.Phase, stage: c.Stage, peer: -1}
	if c.Op == ccl.OpSend {
		k.peer, k.send = c.Peer, true
	}
	var rc *rankedCollective
	for _, o := range n.open[k] {
		if !o.joined[rank-o.base] {
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
	at := rank - rc.base
	rc.joined[at] = true
	rc.dones[at] = done
	if rc.joins++; rc.joins == len(rc.runOf) {
		open := n.open[k]
		for i, o := range open {
			if o == rc {
				n.open[k] = append(open[:i:i], open[i+1:]...)
				break
			}
		}
	}
	gpu := n.layout.GPU(rank)
	if id := rc.runOf[at]; id >= 0 {
		return n.sim.Join(id, gpu)
	}
	// The rank is in none of the collective's groups: its part is nothing.
	n.s.AtFunc(n.s.Now(), func() { n.rankDone(rc, gpu) })
	return nil
}

// beginRanked plans and records collective c, reached now by its first rank, and starts its
// groups' runs, each waiting for its ranks to join. A pipeline send's receivers join at once:
// they send nothing, and their part is their message's arrival.
func (n *collectiveNetwork) beginRanked(c workloads.Collective) (*rankedCollective, error) {
	plans, idx, err := n.begin(c)
	if err != nil {
		return nil, err
	}
	base, ranks := 0, n.layout.GPUs
	if c.Stage >= 0 && n.layout.PP > 1 {
		ranks /= n.layout.PP
		base = c.Stage * ranks
	}
	rc := n.rankedOf(ranks)
	rc.rec, rc.base, rc.left, rc.peerBase = idx, base, ranks, -1
	if c.Op == ccl.OpSend {
		rc.peerBase = c.Peer * ranks
	}
	for _, p := range plans {
		id := n.sim.RunRanks(p.DAG, n.latency(p.Choice), func(gpu int32) { n.rankDone(rc, gpu) })
		n.recordRun(id, idx)
		members := p.DAG.Collective().Ranks
		if c.Op == ccl.OpSend {
			// ccl.SendDAG's ranks are its senders, then their receivers in the same order.
			members = members[:len(members)/2]
		}
		for _, g := range members {
			if r := n.rankOf(g); r >= base && r < base+ranks {
				rc.runOf[r-base] = id
			}
		}
		if c.Op != ccl.OpSend {
			continue
		}
		receivers := p.DAG.Collective().Ranks[len(members):]
		rc.left += len(receivers)
		for _, g := range receivers {
			if err := n.sim.Join(id, g); err != nil {
				return nil, err
			}
		}
	}
	return rc, nil
}

// rankedOf is a rankedCollective for ranks ranks with no run, no join and no done, recycled
// from a finished one when there is one of the size: a pipeline's stages start a collective
// per layer, micro-batch and chunk, whose tables would otherwise be garbage by the hundred
// megabytes.
func (n *collectiveNetwork) rankedOf(ranks int) *rankedCollective {
	for i := len(n.spare) - 1; i >= 0; i-- {
		if rc := n.spare[i]; len(rc.runOf) == ranks {
			n.spare = append(n.spare[:i], n.spare[i+1:]...)
			*rc = rankedCollective{runOf: rc.runOf, joined: rc.joined, dones: rc.dones}
			clear(rc.joined)
			for j := range rc.runOf {
				rc.runOf[j] = -1
			}
			return rc
		}
	}
	rc := &rankedCollective{runOf: make([]netmodel.RunID, ranks), joined: make([]bool, ranks), dones: make([]func(), ranks)}
	for j := range rc.runOf {
		rc.runOf[j] = -1
	}
	return rc
}

// rankOf is the job's rank that runs on cluster GPU gpu, −1 for none.
func (n *collectiveNetwork) rankOf(gpu int32) int {
	if n.layout.Placement == nil {
		return int(gpu)
	}
	if n.ranks == nil {
		n.ranks = make([]int32, n.total)
		for i := range n.ranks {
			n.ranks[i] = -1
		}
		for r, g := range n.layout.Placement {
			n.ranks[g] = int32(r)
		}
	}
	if int(gpu) >= len(n.ranks) {
		return -1
	}
	return int(n.ranks[gpu])
}

// rankDone runs when GPU gpu's part of rc is done: the collective is done once every rank's
// is, and the rank goes on (for a pipeline send, the rank whose message gpu received).
func (n *collectiveNetwork) rankDone(rc *rankedCollective, gpu int32) {
	at := n.rankOf(gpu) - rc.base
	if rc.peerBase >= 0 {
		if at >= 0 && at < len(rc.runOf) {
			at = -1 // a sender: its part ends with its receiver's
		} else {
			at = n.rankOf(gpu) - rc.peerBase
		}
	}
	var done func()
	if at >= 0 && at < len(rc.dones) {
		done = rc.dones[at]
		rc.dones[at] = nil
	}
	if rc.left--; rc.left == 0 {
		// Every rank has joined and is done: nothing refers to rc any more.
		n.finished(rc.rec)
		n.spare = append(n.spare, rc)
	}
	if done != nil {
		done()
	}
}
