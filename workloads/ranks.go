package workloads

import (
	"fmt"

	"simd/ccl"
	"simd/engine"
)

// RankNetwork runs collectives for a pass whose ranks each run their own copy of the workload
// (Ranks): a rank reaches a collective on its own and goes on once its own part is done.
type RankNetwork interface {
	// StartRank tells the network that rank has reached collective c (the same collective
	// every rank of c's groups reaches, in the same order: every rank of the pass, or of
	// stage c.Stage in a pipeline) at the scheduler's current time, and calls done exactly
	// once, from an engine event, when the rank's part of it is done. A pipeline send
	// (ccl.OpSend) is reached by the ranks of the sending stage only, and a rank's part is
	// done when its message has arrived at the rank in its place of stage c.Peer.
	StartRank(rank int, c Collective, done func()) error
}

// Ranks is one pass of a workload in which every rank runs its own copy of the iteration, as
// SimAI does (astra-sim's system layer per rank): each rank computes, issues its collectives
// and waits for its own part of them, so a rank whose part of a collective ends early goes on
// to the next while others are still in it. Its figures are rank 0's, as SimAI's per-layer
// report is. Pipelined passes run rank by rank in NewRankPipeline.
type Ranks struct {
	runners []*Runner
	left    int // ranks whose pass has not ended
}

// rankView is one rank's Network: its collectives go to the shared RankNetwork under its
// rank.
type rankView struct {
	net  RankNetwork
	rank int
}

func (v rankView) Start(c Collective, done func()) error { return v.net.StartRank(v.rank, c, done) }

// NewRanks prepares one pass of w under layout l with every one of its l.GPUs ranks running
// its own copy of the plan against net. Only rank 0 keeps the pass's statistics.
func NewRanks(w *Workload, l ccl.Layout, s *engine.Scheduler, net RankNetwork) (*Ranks, error) {
	if l.GPUs < 1 {
		return nil, fmt.Errorf("workload %s: no ranks to run", w.File)
	}
	plan := w.Plan()
	rs := &Ranks{runners: make([]*Runner, l.GPUs)}
	for rank := range rs.runners {
		rs.runners[rank] = newRunner(w, l, s, rankView{net, rank}, plan, rank != 0)
	}
	return rs, nil
}

// Start schedules every rank's pass to begin at time at; ended, if not nil, is called from an
// engine event once every rank's pass has ended.
func (rs *Ranks) Start(at engine.Time, ended func()) {
	rs.left = len(rs.runners)
	for _, r := range rs.runners {
		r.Start(at, func() {
			if rs.left--; rs.left == 0 && ended != nil {
				ended()
			}
		})
	}
}

// Result is rank 0's statistics once every rank's pass has run to its end, or the error that
// stopped one.
func (rs *Ranks) Result() (*RunResult, error) {
	for rank, r := range rs.runners {
		if _, err := r.Result(); err != nil {
			if rank == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("rank %d: %w", rank, err)
		}
	}
	return rs.runners[0].Result()
}

// Err is the error that stopped a rank's pass, nil if none did.
func (rs *Ranks) Err() error {
	for _, r := range rs.runners {
		if err := r.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Partial is rank 0's statistics up to now, for a pass stopped before its end.
func (rs *Ranks) Partial() *RunResult { return rs.runners[0].Partial() }

// Progress is the plan steps done over every rank, and their total.
func (rs *Ranks) Progress() (done, total int) {
	for _, r := range rs.runners {
		d, t := r.Progress()
		done += d
		total += t
	}
	return done, total
}

// RankObserver is an Observer that watches a Ranks pass rank by rank: Rank is the observer of
// rank's own pass.
type RankObserver interface {
	Observer
	Rank(rank int) Observer
}

// Observe hangs o on the pass (before Start): a RankObserver's Rank(r) on every rank r's own
// pass (each then keeps its statistics, to tell its waits), any other observer on rank 0's,
// the one reported.
func (rs *Ranks) Observe(o Observer) {
	ro, ok := o.(RankObserver)
	if !ok {
		rs.runners[0].Observe(o)
		return
	}
	for rank, r := range rs.runners {
		r.keepStats()
		r.Observe(ro.Rank(rank))
	}
}
