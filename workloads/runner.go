package workloads

import (
	"fmt"

	"simd/ccl"
	"simd/engine"
)

// Network runs collectives for the Runner. It is the one thing workloads needs from a network
// model; cmd/simd wires an implementation behind it.
type Network interface {
	// Start begins collective c at the scheduler's current time and calls done exactly once, from
	// an engine event, when the collective has finished everywhere.
	Start(c Collective, done func()) error
}

// Observer sees a pass as it runs, for a timeline: the compute delays, the exposed waits for
// collectives and the pipeline receives, each once it is known, from the scheduler's goroutine.
// Stage is the pipeline stage (−1 for a pass of every stage at once). A runner without one
// (the default) pays a nil check per step.
type Observer interface {
	// Compute is a compute delay of a layer's phase, from start to end.
	Compute(stage, layer int, ph Phase, start, end engine.Time)
	// Issued is a collective issued at time at (also with no Network, where it costs nothing).
	Issued(stage int, c Collective, at engine.Time)
	// Exposed is a stretch from start to end in which the pass waited for the collectives of
	// a layer's phase: the time PhaseStats.Exposed charges to it.
	Exposed(stage, layer int, ph Phase, start, end engine.Time)
	// Received is a pipeline receive (st: its layer, phase, micro-batch and chunk) that waited
	// from wait to arrived; sent is when the neighbour sent the message (after wait: the
	// stretch to it is bubble, and the rest pipeline communication; see StageResult).
	Received(stage int, st PlanStep, wait, sent, arrived engine.Time)
}

// PartObserver is an Observer that also sees each collective of the pass from its issue to
// the moment the pass has it done (its update time included): with ranks on their own (Ranks),
// the rank's own part of it.
type PartObserver interface {
	Observer
	Part(stage int, c Collective, issued, done engine.Time)
}

// PhaseStats is what one phase of one layer cost in a run.
//
// Exposed is attributed by one rule: every instant the iteration is suspended belongs to the
// (layer, phase) whose collectives it is waiting for — a blocking collective it issued, a wait
// step's, or at the end of the pass the one StepWaitAll is at — and to no other collective
// running meanwhile, whatever its group. So compute plus the exposed time of every phase is the
// whole pass, and the exposed time of a group is that of the phases whose collectives run on it.
type PhaseStats struct {
	Compute engine.Time // compute delays executed (twice for a recomputed forward pass)
	Comm    engine.Time // Σ over its collectives of finish + update time − issue
	Exposed engine.Time // time the iteration waited for its collectives (see below)
	Issued  int         // collectives issued
}

// RunResult is the outcome of one pass.
type RunResult struct {
	Layers [][3]PhaseStats // per layer, per Phase
	End    engine.Time     // when the pass (including every collective) finished
	// Stopped is set by Runner.Partial for a pass stopped before its end; Finished then says
	// which layers are done (see Done).
	Stopped  bool
	Finished []bool
	// Stages is each stage's pass when the pipeline was simulated (Pipeline), nil otherwise;
	// Layers and End are then those of stage Reported, the one that ended last.
	Stages   []StageResult
	Reported int
}

// Runner executes a workload's plan on an engine.Scheduler. With a nil Network collectives cost
// nothing and finish as they are issued, which is SimAI's analytical backend: only compute
// advances the clock and communication is priced afterwards by the report.
type Runner struct {
	w      *Workload
	layout ccl.Layout
	s      *engine.Scheduler
	net    Network

	// stage is the pipeline stage this runner is, −1 when it runs every stage at once; pipe is
	// then nil.
	stage int
	pipe  *Pipeline
	// rank is the rank whose copy of the pass this is, place its index in its stage (a
	// pipeline's runners rank by rank; 0 otherwise).
	rank, place int
	// recv is the message a suspended stage waits for (an index into pipe.msgs), −1 when it is
	// not waiting for one.
	recv int
	pp   StageResult // the stage's pipeline figures

	plan []PlanStep
	pc   int
	err  error
	obs  Observer     // nil: none
	part PartObserver // obs when it is one, nil otherwise

	res         RunResult
	outstanding [][3]int
	issuedAt    [][3][]engine.Time // issue times of running collectives, FIFO per layer and phase
	// quiet runs the pass without its statistics (res.Layers, issuedAt): a rank whose figures
	// nobody reads (Ranks).
	quiet bool

	// The step the iteration is suspended on, if any, and the (layer, phase) whose collectives
	// it is waiting for (for the end-of-pass wait, the current one; see waitAllNext).
	blocked    bool
	waitLayer  int
	waitPhase  Phase
	waitAll    bool
	waitCursor int // the end-of-pass wait's position in waitAllOrder
	waitStart  engine.Time
	running    int // collectives running

	// The compute delay under way, if the iteration is not suspended: it ends at computeEnd.
	computeLayer int
	computePhase Phase
	computeEnd   engine.Time

	// start is when the pass began (its times are counted from it); ended is called when it
	// ends (Start).
	start engine.Time
	began bool
	ended func()
}

// NewRunner prepares one pass of w under layout l. net may be nil (analytical).
func NewRunner(w *Workload, l ccl.Layout, s *engine.Scheduler, net Network) *Runner {
	return newRunner(w, l, s, net, w.Plan(), false)
}

// newRunner is NewRunner with the pass's plan given; a quiet runner keeps no statistics.
func newRunner(w *Workload, l ccl.Layout, s *engine.Scheduler, net Network, plan []PlanStep, quiet bool) *Runner {
	n := len(w.Layers)
	r := &Runner{
		w: w, layout: l, s: s, net: net, stage: -1, recv: -1,
		plan:        plan,
		outstanding: make([][3]int, n),
		quiet:       quiet,
	}
	if !quiet {
		r.res.Layers = make([][3]PhaseStats, n)
		r.issuedAt = make([][3][]engine.Time, n)
	}
	return r
}

// keepStats makes a quiet runner keep its statistics (before Start).
func (r *Runner) keepStats() {
	if r.quiet {
		r.quiet = false
		r.res.Layers = make([][3]PhaseStats, len(r.w.Layers))
		r.issuedAt = make([][3][]engine.Time, len(r.w.Layers))
	}
}

// Observe hangs o on the pass (before Start); nil removes it.
func (r *Runner) Observe(o Observer) {
	r.obs = o
	r.part, _ = o.(PartObserver)
}

// Progress is how far the pass has come: the steps of the plan issued and, for collectives,
// finished, and the plan's total (a step is a compute delay, a collective or a wait; see Plan).
// Non-blocking collectives can run long after the plan has moved past them, so they count only
// once done. It is for progress reports, read between events on the scheduler's goroutine.
func (r *Runner) Progress() (done, total int) { return r.pc - r.running, len(r.plan) }

// Run executes the pass to the end and returns its statistics.
func (r *Runner) Run() (*RunResult, error) {
	r.Start(r.s.Now(), nil)
	r.s.Run()
	return r.Result()
}

// Start schedules the pass to begin at time at (now or later) without running the scheduler:
// several runners may share one (several jobs on one fabric), and the caller runs it. ended,
// if not nil, is called from an engine event when the pass has finished; the pass's times
// (RunResult.End, the layers' figures) count from its beginning.
func (r *Runner) Start(at engine.Time, ended func()) {
	r.ended, r.start = ended, at
	r.s.AtFunc(at, func() {
		r.began = true
		r.advance()
	})
}

// Err is the error that stopped the pass (a collective the network could not start), nil if
// none did.
func (r *Runner) Err() error { return r.err }

// Result is the statistics of a pass that has run to its end, or the error that stopped it.
func (r *Runner) Result() (*RunResult, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.pc < len(r.plan) || r.running > 0 {
		return nil, fmt.Errorf("workload %s: the iteration stopped at step %d of %d with %d collectives still running (a collective never finished)",
			r.w.File, r.pc, len(r.plan), r.running)
	}
	return &r.res, nil
}

// advance executes plan steps until one suspends the iteration.
func (r *Runner) advance() {
	for r.pc < len(r.plan) && r.err == nil {
		st := r.plan[r.pc]
		r.pc++
		layer := int(st.Layer)
		switch st.Kind {
		case StepCompute:
			ns := r.w.Layers[layer].Phases[st.Phase].ComputeNs
			if ns == 0 {
				continue
			}
			d := engine.Time(ns) * engine.Nanosecond
			if !r.quiet {
				r.res.Layers[layer][st.Phase].Compute += d
			}
			r.computeLayer, r.computePhase, r.computeEnd = layer, st.Phase, r.s.Now()+d
			if r.obs != nil {
				r.obs.Compute(r.stage, layer, st.Phase, r.s.Now(), r.computeEnd)
			}
			r.s.AfterFunc(d, r.advance)
			return
		case StepIssue:
			if r.issue(layer, st.Phase, st.Blocking) {
				return
			}
		case StepWait:
			if r.outstanding[layer][st.Phase] > 0 {
				r.suspend(layer, st.Phase, false)
				return
			}
		case StepSend:
			r.pipe.send(r, st)
		case StepRecv:
			if r.pipe.wait(r, st) {
				return
			}
		case StepWaitAll:
			if r.running > 0 {
				r.waitCursor = 0
				r.waitAllNext()
				r.suspend(r.waitLayer, r.waitPhase, true)
				r.pc-- // check again when everything has finished
				return
			}
			r.res.End = r.s.Now() - r.start
			if r.ended != nil {
				r.ended()
			}
		}
	}
}

func (r *Runner) suspend(layer int, ph Phase, all bool) {
	r.blocked = true
	r.waitLayer, r.waitPhase, r.waitAll = layer, ph, all
	r.waitStart = r.s.Now()
}

// waitAllOrder is the order, within a layer, in which the end-of-pass wait takes the phases
// whose collectives are still running; layers go from 0 up (see StepWaitAll).
var waitAllOrder = [3]Phase{WG, Fwd, IG}

// waitAllNext points the end-of-pass wait at the first (layer, phase) from waitCursor on, in
// the order of StepWaitAll, that has a collective still running; it reports false when none
// has. Nothing is issued during that wait, so a (layer, phase) passed over stays finished.
func (r *Runner) waitAllNext() bool {
	for ; r.waitCursor < 3*len(r.outstanding); r.waitCursor++ {
		layer, ph := r.waitCursor/3, waitAllOrder[r.waitCursor%3]
		if r.outstanding[layer][ph] > 0 {
			r.waitLayer, r.waitPhase = layer, ph
			return true
		}
	}
	return false
}

// issue starts a collective; it reports whether the iteration is now suspended on it.
func (r *Runner) issue(layer int, ph Phase, blocking bool) bool {
	c := r.w.Collective(r.layout, layer, ph)
	c.Stage = r.stage
	if c.Op == ccl.OpNone || c.Group == ccl.GroupNone || c.GroupSize <= 1 {
		// Nothing to communicate: SimAI issues no collective, so no update time follows either.
		return false
	}
	if !r.quiet {
		r.res.Layers[layer][ph].Issued++
	}
	if r.obs != nil {
		r.obs.Issued(r.stage, c, r.s.Now())
	}
	if r.net == nil {
		return false
	}
	now := r.s.Now()
	r.outstanding[layer][ph]++
	if !r.quiet {
		r.issuedAt[layer][ph] = append(r.issuedAt[layer][ph], now)
	}
	r.running++
	if blocking {
		r.suspend(layer, ph, false)
	}
	err := r.net.Start(c, func() { r.collectiveDone(layer, ph) })
	if err != nil {
		r.err = fmt.Errorf("layer %d (%s) %s collective: %w", layer, r.w.Layers[layer].Name, ph, err)
		r.s.Stop()
		return true
	}
	return blocking
}

// collectiveDone runs when the network reports a collective finished; the layer's update time
// follows before the iteration sees it (SimAI's *_Comm_Finished_After_Delay).
func (r *Runner) collectiveDone(layer int, ph Phase) {
	upd := engine.Time(r.w.Layers[layer].UpdateTimeNs) * engine.Nanosecond
	if upd == 0 {
		r.finish(layer, ph)
		return
	}
	r.s.AfterFunc(upd, func() { r.finish(layer, ph) })
}

func (r *Runner) finish(layer int, ph Phase) {
	now := r.s.Now()
	r.outstanding[layer][ph]--
	r.running--
	var st *PhaseStats
	var start engine.Time
	if !r.quiet {
		q := r.issuedAt[layer][ph]
		start = q[0]
		r.issuedAt[layer][ph] = q[1:]
		st = &r.res.Layers[layer][ph]
		st.Comm += now - start
		if r.part != nil {
			c := r.w.Collective(r.layout, layer, ph)
			c.Stage = r.stage
			r.part.Part(r.stage, c, start, now)
		}
	}
	if !r.blocked || r.recv >= 0 {
		return // not waiting, or waiting for a pipeline message: a collective has no part in it
	}
	// Every instant of a wait is exposed communication of the (layer, phase) waited for, and
	// of no other collective running meanwhile.
	if r.waitLayer == layer && r.waitPhase == ph {
		if !r.quiet {
			from := max(start, r.waitStart)
			st.Exposed += now - from
			if r.obs != nil {
				r.obs.Exposed(r.stage, layer, ph, from, now)
			}
		}
		r.waitStart = now
	}
	if r.outstanding[r.waitLayer][r.waitPhase] > 0 {
		return
	}
	if r.waitAll && r.waitAllNext() {
		return // the end-of-pass wait goes on, for the next (layer, phase) in its order
	}
	r.blocked = false
	r.advance()
}
