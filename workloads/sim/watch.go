package sim

import (
	"context"
	"time"

	"simd/engine"
)

// WatchEvents is how many events pass between two looks at a run (its context, its event limit,
// its Watch): a millisecond or two of simulation, so a cancellation is noticed at once, and a
// look is nothing next to the events' own cost (engine's BenchmarkScheduler -watched variants).
const WatchEvents = 1 << 12

// watcher looks at a run on its scheduler between events: it stops the run when its context is
// done (or past its deadline: the one reading of the wall clock, which never reaches a result)
// or its event limit is reached, and otherwise reports its status. Near the limit it looks
// at every event, so that a limited run stops after exactly that many.
type watcher struct {
	ctx       context.Context
	s         *engine.Scheduler
	maxEvents uint64 // 0: none
	watch     func(Status)
	status    func() Status
	cause     error
	deadline  time.Time // the context's, zero if none
}

// watchRun starts looking at the run on s; finish ends it.
func watchRun(ctx context.Context, s *engine.Scheduler, maxEvents uint64, watch func(Status), status func() Status) *watcher {
	if ctx == nil {
		ctx = context.Background()
	}
	g := &watcher{ctx: ctx, s: s, maxEvents: maxEvents, watch: watch, status: status}
	g.deadline, _ = ctx.Deadline()
	g.next()
	return g
}

// next asks the scheduler for the next look.
func (g *watcher) next() {
	every := uint64(WatchEvents)
	if g.maxEvents > 0 {
		left := g.maxEvents - min(g.maxEvents, g.s.Processed())
		every = max(1, min(every, left))
	}
	g.s.Watch(every, g.tick)
}

func (g *watcher) tick() {
	switch {
	case g.maxEvents > 0 && g.s.Processed() >= g.maxEvents:
		g.cause = EventLimitError{g.maxEvents}
	case g.ctx.Err() != nil:
		g.cause = context.Cause(g.ctx)
	case !g.deadline.IsZero() && !time.Now().Before(g.deadline):
		// Past the deadline, but its timer has not fired yet (another goroutine runs it): wait
		// for it, so that the run stops at the first look past its deadline.
		<-g.ctx.Done()
		g.cause = context.Cause(g.ctx)
	}
	if g.cause != nil {
		g.s.Stop()
		g.s.Watch(0, nil)
		return
	}
	if g.watch != nil {
		g.watch(g.status())
	}
	g.next()
}

// finish stops looking and returns why the run stopped, nil if it was not stopped. A
// cancellation after the last look does not count: the run is complete.
func (g *watcher) finish() error {
	g.s.Watch(0, nil)
	return g.cause
}

// flowsDone measures a simulator's flows' worth of work done (netmodel.Simulator.Progress)
// for the looks at a run, at a bounded cost. Progress visits every flow slot — a million in an
// all-to-all over 1,024 GPUs — so measuring at every look (every WatchEvents events) cost more
// than the events once they were cheap: 60% of the last seconds of alltoall-1024 under DCQCN,
// whose flows were all out and only ACKs and queues were left. It measures again only when the
// wall time since the last measurement began is at least a hundred times what that
// measurement took, so measuring costs at most 1% of the run, and counts in between
// (netmodel.Simulator.ProgressCounted: the starts and ends of now, the bytes of the last
// measurement). Counting the starts and ends at every look matters after an all-to-all's
// instant of starts: its ends are most of the rest, and a measurement a second or more apart
// left the time-left estimate nothing to measure their rate by. While the count has stood still
// since the last measurement (no flow started or ended: the flows are sending, which only a
// measurement sees) it measures once fifty times the cost has passed, at most 2% of those
// stretches: the 1,024-GPU all-to-all under DCQCN sends its million flows for a sixth of its
// run, in which a measurement every 1.5–2.5 s left the work done unchanged for seconds. Still
// from one look to the next was not enough: a PFC storm runs thousands of events between two
// ends, and measuring once twenty times the cost had passed at such looks cost
// moe40-ga24-384-dcqcn 8% (a measurement also evicts what the events were using). Under
// congestion control a measurement reads a line the model keeps (ccfluid's InFlightProgress,
// O(1)), so the rule lets it measure at nearly every look. The value only feeds Status: nothing
// a run writes depends on it.
type flowsDone struct {
	progress func() float64   // measures
	counted  func() float64   // counts
	clock    func() time.Time // time.Now; tests set their own
	measured bool
	at       time.Time     // when the last measurement began
	cost     time.Duration // what it took
	count    float64       // the count just after it
}

func newFlowsDone(progress, counted func() float64) *flowsDone {
	return &flowsDone{progress: progress, counted: counted, clock: time.Now}
}

// value returns the flows' worth of work done, measured or counted now.
func (f *flowsDone) value() float64 {
	began := f.clock()
	if f.measured {
		if since := began.Sub(f.at); since < 100*f.cost {
			if c := f.counted(); c != f.count || since < 50*f.cost {
				return c
			}
		}
	}
	v := f.progress()
	f.measured, f.at, f.cost = true, began, f.clock().Sub(began)
	f.count = f.counted()
	return v
}

// status sets st's FlowsDone from a look now, and returns st.
func (f *flowsDone) status(st Status) Status {
	st.FlowsDone = f.value()
	return st
}
