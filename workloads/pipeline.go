package workloads

import (
	"fmt"

	"simd/ccl"
	"simd/engine"
)

// PipelineLayers is how a workload's layers map onto a pipeline stage's schedule (see
// docs/formats.md, "Pipeline parallelism in the event mode").
//
// The file describes one stage: every stage runs the same layers (AICB generates the layers of
// num_layers/pp transformer blocks). AICB lists the layers of one micro-batch ga times over, one
// copy per micro-batch, between per-iteration layers (gradient synchronisation before, the
// loss and the optimizer after); that run of ga copies is found by the layer names. A file
// without one (ga = 1, or a hand-written file) is one micro-batch's layers, run ga times.
type PipelineLayers struct {
	Head, Tail []int // per-iteration layers before and after the micro-batches, in file order
	// Micro-batch m runs layers Start + m·Stride + j for 0 ≤ j < Len: Stride is Len when the
	// file lists every micro-batch, 0 when every micro-batch runs the same layers.
	Start, Len, Stride int
	// Chunks has vpp+1 entries: model chunk c is positions Chunks[c] .. Chunks[c+1]−1 of a
	// micro-batch, the layers divided as evenly as their count allows.
	Chunks []int
}

// Layer is the workload layer of micro-batch m at position j.
func (pl *PipelineLayers) Layer(m, j int) int { return pl.Start + m*pl.Stride + j }

// PipelineLayers finds how the layers map onto the pipeline (see PipelineLayers). The header's
// vpp must not exceed the layers of a micro-batch.
func (w *Workload) PipelineLayers() (*PipelineLayers, error) {
	n, ga, vpp := len(w.Layers), max(w.Header.GA, 1), max(w.Header.VPP, 1)
	pl := &PipelineLayers{Len: n}
	if start, l, ok := repeatedRun(w.Layers, ga); ok {
		pl.Start, pl.Len, pl.Stride = start, l, l
		for i := range start {
			pl.Head = append(pl.Head, i)
		}
		for i := start + ga*l; i < n; i++ {
			pl.Tail = append(pl.Tail, i)
		}
	}
	if vpp > pl.Len {
		return nil, fmt.Errorf("%s: header field vpp: %d model chunks per stage but a micro-batch has %d layers", w.File, vpp, pl.Len)
	}
	pl.Chunks = make([]int, vpp+1)
	for c := range pl.Chunks {
		pl.Chunks[c] = c * pl.Len / vpp
	}
	return pl, nil
}

// repeatedRun finds the longest block of layers that the file lists ga times in a row (by
// name), the earliest such block on a tie; ok is false for ga < 2 or none.
func repeatedRun(layers []Layer, ga int) (start, l int, ok bool) {
	n := len(layers)
	if ga < 2 {
		return 0, 0, false
	}
	ids := make([]int32, n)
	names := map[string]int32{}
	for i, ly := range layers {
		id, seen := names[ly.Name]
		if !seen {
			id = int32(len(names))
			names[ly.Name] = id
		}
		ids[i] = id
	}
	for l = n / ga; l >= 1; l-- {
		// A block of l repeated ga times is a run of (ga−1)·l positions i with ids[i] = ids[i+l].
		need, run := (ga-1)*l, 0
		for i := 0; i+l < n; i++ {
			if ids[i] != ids[i+l] {
				run = 0
				continue
			}
			if run++; run == need {
				return i + 1 - need, l, true
			}
		}
	}
	return 0, 0, false
}

// StagePlan is the plan of pipeline stage `stage` of pp (see docs/formats.md): the forward
// passes of the head layers, the stage's schedule (PipelineSchedule) of micro-batch and chunk
// passes with their receives and sends, the tail layers forward and backward, the head layers'
// backward, and the end-of-pass wait. A forward pass is SimAI's (compute, then the blocking
// forward collective) layer by layer; a backward pass is SimAI's (input-gradient compute and
// blocking collective, weight-gradient compute) layer by layer down, the weight-gradient
// collective issued only in the last micro-batch, as gradient accumulation does. Checkpoint
// recomputation is not simulated in a pipeline.
func (w *Workload) StagePlan(pl *PipelineLayers, pp, stage int) []PlanStep {
	ga, vpp := max(w.Header.GA, 1), len(pl.Chunks)-1
	var p planBuilder
	for _, i := range pl.Head {
		p.forward(i, true)
	}
	last := pp*vpp - 1
	for _, t := range PipelineSchedule(pp, stage, ga, vpp) {
		v := t.Chunk*pp + stage // the virtual stage
		lo, hi := pl.Chunks[t.Chunk], pl.Chunks[t.Chunk+1]
		m := t.Micro
		if !t.Backward {
			if v > 0 {
				p.pipe(StepRecv, pl.Layer(m, lo), Fwd, m, t.Chunk)
			}
			for j := lo; j < hi; j++ {
				i := pl.Layer(m, j)
				p.add(StepCompute, i, Fwd, false)
				p.add(StepIssue, i, Fwd, true)
			}
			if v < last {
				p.pipe(StepSend, pl.Layer(m, hi-1), Fwd, m, t.Chunk)
			}
			continue
		}
		if v < last {
			p.pipe(StepRecv, pl.Layer(m, hi-1), IG, m, t.Chunk)
		}
		for j := hi - 1; j >= lo; j-- {
			i := pl.Layer(m, j)
			p.backward(i, m == ga-1)
		}
		if v > 0 {
			p.pipe(StepSend, pl.Layer(m, lo), IG, m, t.Chunk)
		}
	}
	for _, i := range pl.Tail {
		p.forward(i, true)
	}
	for k := len(pl.Tail) - 1; k >= 0; k-- {
		p.backward(pl.Tail[k], true)
	}
	for k := len(pl.Head) - 1; k >= 0; k-- {
		p.backward(pl.Head[k], true)
	}
	p.steps = append(p.steps, PlanStep{Kind: StepWaitAll})
	return p.steps
}

func (p *planBuilder) backward(i int, wg bool) {
	p.add(StepCompute, i, IG, false)
	p.add(StepIssue, i, IG, true)
	p.add(StepCompute, i, WG, false)
	if wg {
		p.add(StepIssue, i, WG, false)
	}
}

func (p *planBuilder) pipe(k StepKind, layer int, ph Phase, micro, chunk int) {
	p.steps = append(p.steps, PlanStep{Kind: k, Layer: int32(layer), Phase: ph, Micro: int32(micro), Chunk: int32(chunk)})
}

// Pipelined reports whether an event run of w under layout l simulates the pipeline: PP > 1
// and a Transformer policy (the others keep SimAI's one pass with the analytical bubble).
func (w *Workload) Pipelined(l ccl.Layout) bool {
	p := w.Header.Policy
	return l.PP > 1 && (p == PolicyTransformerFwdInBckwd || p == PolicyTransformer)
}

// StageResult is what one pipeline stage's pass cost.
type StageResult struct {
	Layers [][3]PhaseStats // per layer, per Phase, on this stage
	End    engine.Time     // when the stage's own pass ended
	// Bubble is the time the stage waited for a message its neighbour had not sent yet;
	// PPExposed the time it waited for one already sent (pipeline communication). Compute,
	// the exposed communication of Layers, Bubble and PPExposed add up to End.
	Bubble, PPExposed engine.Time
	// Sends is the messages the stage sent and PPComm the sum of their times, send to arrival.
	Sends  int
	PPComm engine.Time
}

// message is one pipeline send: the activations or gradients of a micro-batch for a model chunk.
type message struct {
	sentAt    engine.Time
	sent      bool
	delivered bool
}

// Pipeline runs the stages of a pipeline-parallel iteration on one clock: one Runner per
// stage, each on its StagePlan, the stages' collectives on their own groups, and the sends
// between adjacent stages as point-to-point transfers (ccl.OpSend) of the header's pp_comm bytes
// through the same Network, so they share the fabric with everything else.
//
// A send does not hold its stage up (the stage goes on as soon as it has issued it); a receive
// does, until the message has arrived. A receive's wait is bubble up to the moment the
// neighbour sent the message and pipeline communication from then on.
//
// Rank by rank (NewRankPipeline) every rank of a stage runs its own copy of the stage's plan,
// as Ranks does for a pass without a pipeline: it reaches the stage's collectives on its own
// and goes on once its own part is done, sends its own message to the rank in its place of
// the next (or previous) stage, and waits for its own. A stage's figures are then its first
// rank's.
type Pipeline struct {
	w      *Workload
	layout ccl.Layout
	s      *engine.Scheduler
	net    Network
	rnet   RankNetwork // rank by rank (NewRankPipeline); nil: a program per stage
	layers *PipelineLayers
	// stages is the runner each stage reports (its program, or its first rank's); runners is
	// every runner, places of them per stage (1, or the stage's ranks), by stage and place.
	stages  []*Runner
	runners []*Runner
	places  int
	msgs    []message // by (direction, receiving stage, chunk, micro-batch, place): see msgIndex
	vpp     int
	start   engine.Time // when the pass begins (Start)
}

// NewPipeline prepares one pass of w's pipeline under layout l (PP > 1) against net, a program
// per stage.
func NewPipeline(w *Workload, l ccl.Layout, s *engine.Scheduler, net Network) (*Pipeline, error) {
	return newPipeline(w, l, s, net, nil)
}

// NewRankPipeline prepares one pass of w's pipeline under layout l (PP > 1) in which every rank
// runs its own copy of its stage's plan against net (see Pipeline).
func NewRankPipeline(w *Workload, l ccl.Layout, s *engine.Scheduler, net RankNetwork) (*Pipeline, error) {
	return newPipeline(w, l, s, nil, net)
}

func newPipeline(w *Workload, l ccl.Layout, s *engine.Scheduler, net Network, rnet RankNetwork) (*Pipeline, error) {
	pl, err := w.PipelineLayers()
	if err != nil {
		return nil, err
	}
	ga := max(w.Header.GA, 1)
	p := &Pipeline{w: w, layout: l, s: s, net: net, rnet: rnet, layers: pl, vpp: len(pl.Chunks) - 1, places: 1}
	if rnet != nil {
		p.places = l.GPUs / l.PP
	}
	p.msgs = make([]message, 2*l.PP*p.vpp*ga*p.places)
	for st := range l.PP {
		plan := w.StagePlan(pl, l.PP, st)
		for place := range p.places {
			var r *Runner
			if rnet != nil {
				rank := st*p.places + place // ccl.Layout.StageRanks
				r = newRunner(w, l, s, rankView{rnet, rank}, plan, place != 0)
				r.rank = rank
			} else {
				r = newRunner(w, l, s, net, plan, false)
			}
			r.stage, r.place, r.pipe = st, place, p
			p.runners = append(p.runners, r)
			if place == 0 {
				p.stages = append(p.stages, r)
			}
		}
	}
	return p, nil
}

// Layers is the mapping of the workload's layers onto the pipeline.
func (p *Pipeline) Layers() *PipelineLayers { return p.layers }

func (p *Pipeline) msgIndex(ph Phase, stage, chunk, micro, place int) int {
	d := 0
	if ph != Fwd {
		d = 1
	}
	return (((d*p.layout.PP+stage)*p.vpp+chunk)*max(p.w.Header.GA, 1)+micro)*p.places + place
}

// runner is the runner of stage st in place place.
func (p *Pipeline) runner(st, place int) *Runner { return p.runners[st*p.places+place] }

// peer is the stage and chunk a stage's pass of chunk sends to: the next virtual stage for
// activations, the previous for gradients.
func (p *Pipeline) peer(stage, chunk int, ph Phase) (int, int) {
	pp := p.layout.PP
	v := chunk*pp + stage
	if ph == Fwd {
		v++
	} else {
		v--
	}
	return v % pp, v / pp
}

// send issues a stage's message to its neighbour (rank by rank: a rank's to the rank in its
// place there).
func (p *Pipeline) send(r *Runner, st PlanStep) {
	dst, chunk := p.peer(r.stage, int(st.Chunk), st.Phase)
	idx := p.msgIndex(st.Phase, dst, chunk, int(st.Micro), r.place)
	now := p.s.Now()
	p.msgs[idx] = message{sentAt: now, sent: true}
	r.pp.Sends++
	bytes := p.w.Header.PPCommBytes
	to := p.runner(dst, r.place)
	arrive := func() {
		r.pp.PPComm += p.s.Now() - now
		p.deliver(idx, to)
	}
	if bytes == 0 || (p.net == nil && p.rnet == nil) {
		p.s.AtFunc(now, arrive)
		return
	}
	c := Collective{Layer: int(st.Layer), Phase: st.Phase, Op: ccl.OpSend, Group: ccl.GroupPP, GroupSize: p.layout.PP,
		Bytes: bytes, Stage: r.stage, Peer: dst}
	var err error
	if p.rnet != nil {
		err = p.rnet.StartRank(r.rank, c, arrive)
	} else {
		err = p.net.Start(c, arrive)
	}
	if err != nil {
		r.err = fmt.Errorf("stage %d pipeline send of micro-batch %d (layer %d, %s): %w", r.stage, st.Micro, st.Layer, st.Phase, err)
		p.s.Stop()
	}
}

// deliver marks a message arrived and resumes its receiver r if it waits for it.
func (p *Pipeline) deliver(idx int, r *Runner) {
	m := &p.msgs[idx]
	m.delivered = true
	if !r.blocked || r.recv != idx {
		return
	}
	if r.obs != nil {
		r.obs.Received(r.stage, r.plan[r.pc-1], r.waitStart, max(m.sentAt, r.waitStart), p.s.Now())
	}
	r.pp.chargeRecv(r.waitStart, p.s.Now(), m)
	r.blocked, r.recv = false, -1
	r.advance()
}

// wait reports whether stage r must suspend for the message st receives, and suspends it.
func (p *Pipeline) wait(r *Runner, st PlanStep) bool {
	idx := p.msgIndex(st.Phase, r.stage, int(st.Chunk), int(st.Micro), r.place)
	if p.msgs[idx].delivered {
		return false
	}
	r.blocked, r.recv, r.waitStart = true, idx, p.s.Now()
	return true
}

// chargeRecv charges a receive's wait from `from` to now: bubble until the message was sent,
// pipeline communication after.
func (st *StageResult) chargeRecv(from, now engine.Time, m *message) {
	if !m.sent {
		st.Bubble += now - from
		return
	}
	if m.sentAt > from {
		st.Bubble += m.sentAt - from
		from = m.sentAt
	}
	st.PPExposed += now - from
}

// Observe hangs o on every stage's reported pass (before Start).
func (p *Pipeline) Observe(o Observer) {
	for _, r := range p.stages {
		r.Observe(o)
	}
}

// Progress is the plan steps of every stage (every rank) issued and finished, and their total
// (see Runner.Progress).
func (p *Pipeline) Progress() (done, total int) {
	for _, r := range p.runners {
		d, t := r.Progress()
		done, total = done+d, total+t
	}
	return done, total
}

// Run executes the pass of every stage to the end (see Result).
func (p *Pipeline) Run() (*RunResult, error) {
	p.Start(p.s.Now(), nil)
	p.s.Run()
	return p.Result()
}

// Start schedules every stage's pass to begin at time at without running the scheduler, as
// Runner.Start does; ended is called when the last stage (the last rank) has finished.
func (p *Pipeline) Start(at engine.Time, ended func()) {
	p.start = at
	left := len(p.runners)
	for _, r := range p.runners {
		r.Start(at, func() {
			if left--; left == 0 && ended != nil {
				ended()
			}
		})
	}
}

// Err is the first stage's error that stopped the pass, nil if none did.
func (p *Pipeline) Err() error {
	for _, r := range p.runners {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// Result is the pass's statistics once every stage has run to its end, or the error that
// stopped it. Its Stages hold each stage's figures (rank by rank, its first rank's); its
// Layers, End and report are those of the stage that finished last (the first of them on a
// tie): End is when the last stage finished, counted from the pass's start.
func (p *Pipeline) Result() (*RunResult, error) {
	if err := p.Err(); err != nil {
		return nil, err
	}
	for _, r := range p.runners {
		if r.pc < len(r.plan) || r.running > 0 {
			what := fmt.Sprintf("%d collectives still running", r.running)
			if r.recv >= 0 {
				what = "waiting for a pipeline message that was never sent"
			}
			who := ""
			if p.rnet != nil {
				who = fmt.Sprintf(" rank %d", r.rank)
			}
			return nil, fmt.Errorf("workload %s: pipeline stage %d%s stopped at step %d of %d, %s", p.w.File, r.stage, who, r.pc, len(r.plan), what)
		}
	}
	res := &RunResult{}
	for _, r := range p.stages {
		st := r.pp
		st.Layers, st.End = r.res.Layers, r.res.End
		res.Stages = append(res.Stages, st)
	}
	res.pick()
	return res, nil
}

// pick sets Layers and End from the stage that ended last.
func (res *RunResult) pick() {
	res.Reported = 0
	for i, st := range res.Stages {
		if st.End > res.Stages[res.Reported].End {
			res.Reported = i
		}
	}
	res.Layers = res.Stages[res.Reported].Layers
	res.End = res.Stages[res.Reported].End
}

// Partial is the result of a pass stopped before its end (see Runner.Partial), stage by stage:
// a receive under way is bubble or pipeline communication up to the stop. The reported stage is
// the first; Finished is its.
func (p *Pipeline) Partial() *RunResult {
	res := &RunResult{Stopped: true}
	now := p.s.Now()
	for _, r := range p.stages {
		st := r.pp
		var part *RunResult
		if r.blocked && r.recv >= 0 {
			r.blocked = false // the layers see no wait; the receive's is charged here
			part = r.Partial()
			r.blocked = true
			st.chargeRecv(r.waitStart, now, &p.msgs[r.recv])
		} else {
			part = r.Partial()
		}
		st.Layers, st.End = part.Layers, part.End
		res.Stages = append(res.Stages, st)
		if len(res.Stages) == 1 {
			res.Finished = part.Finished
		}
	}
	res.Reported = 0
	res.Layers, res.End = res.Stages[0].Layers, max(now-p.start, 0)
	return res
}
