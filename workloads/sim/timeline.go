package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"simd/ccl"
	"simd/engine"
	"simd/netmodel"
	"simd/workloads"
	"simd/workloads/chakra"
	"simd/workloads/timeline"
)

// Timeline records a run as a Chrome trace (package timeline) and writes it: an observer
// attached to the run, never part of it. It holds one process per job (one for a single
// workload) with a track per pipeline stage (the whole job when the pipeline is not simulated:
// every rank runs the same spans), and a "network" process with the link sampler's counters.
//
// On a stage's track: the compute delays ("L12 attention_layer fwd compute"), the stretches
// the pass waited for a layer's collectives ("L12 fwd wait allreduce TP", the report's exposed
// time), and in a pipeline the receives' bubble and pipeline waits; on its comm lanes every
// collective ("L12 fwd allreduce TP 16 MiB (ring)") with its bytes, algorithm, group and flows
// in args, and the pipeline sends. An MoE dispatch run has one track of layers, each with its
// flows by kind (RDMA copies, NVLink moves) as the dispatch's phases.
//
// Use: Attach before the run; after it, Collectives (event runs) or Analytical; then Write.
type Timeline struct {
	trace *timeline.Trace
	// BusiestLinks is how many of the links that sent most get a counter each (default 4).
	BusiestLinks int
	jobs         []*jobLine
	links        *netmodel.LinkSampler
	moe          *moeLine
}

// NewTimeline starts a timeline; allRanks keeps one track per rank (see timeline.Trace).
func NewTimeline(allRanks bool) *Timeline {
	t := timeline.New()
	t.AllRanks = allRanks
	return &Timeline{trace: t, BusiestLinks: 4}
}

// Meta adds a key and value to the file's otherData (the inputs that made the run).
func (tl *Timeline) Meta(key string, value any) {
	tl.trace.Meta = append(tl.trace.Meta, timeline.Arg{Key: key, Value: value})
}

// jobLine is one job's process: its tracks by stage (−1: every rank at once).
type jobLine struct {
	proc   *timeline.Process
	w      *workloads.Workload
	layout ccl.Layout
	tracks map[int]*timeline.Track
	comm   [][3]engine.Time // analytical: each layer's phases' communication time
}

// job declares a job's process: a track per stage when pipelined (the event mode simulates
// the pipeline), else one.
func (tl *Timeline) job(name string, s *Simulation, pipelined bool) *jobLine {
	jl := &jobLine{proc: tl.trace.Process(name), w: s.in.Workload, layout: s.layout, tracks: map[int]*timeline.Track{}}
	if pipelined {
		for st := range s.layout.PP {
			jl.tracks[st] = jl.proc.Track("stage "+strconv.Itoa(st), s.layout.StageRanks(st))
		}
	} else {
		all := make([]int32, s.layout.GPUs)
		for r := range all {
			all[r] = int32(r)
		}
		jl.tracks[-1] = jl.proc.Track("", all)
	}
	tl.jobs = append(tl.jobs, jl)
	return jl
}

func (jl *jobLine) track(stage int) *timeline.Track {
	if t, ok := jl.tracks[stage]; ok {
		return t
	}
	return jl.tracks[-1]
}

// Attach returns att with the timeline's observers added: the passes of jobs (one job for
// Simulation.Event and Compare, the jobs of RunJobs in their order), the link sampler, and for
// RunMoE (no jobs) the dispatch layers. att's own Attach and Ended still run.
func (tl *Timeline) Attach(att Attachments, jobs []Job) Attachments {
	for _, j := range jobs {
		tl.job(j.Name, j.Sim, j.Sim.in.Workload.Pipelined(j.Sim.layout))
	}
	if len(jobs) == 0 {
		attach := att.Attach
		att.Attach = func(m *netmodel.Simulator) error {
			if attach != nil {
				if err := attach(m); err != nil {
					return err
				}
			}
			tl.moe = &moeLine{track: tl.trace.Process("MoE dispatch").Track("layers", nil)}
			m.Observe(tl.moe)
			return nil
		}
	}
	att = tl.AttachLinks(att)
	if len(jobs) > 0 {
		att.Observe = func(job, _ int) workloads.Observer { return tl.jobs[job] }
	} else {
		att.Dispatched = func(it, layer int, start, end engine.Time) { tl.moe.layer(it, layer, start, end) }
	}
	return att
}

func (jl *jobLine) Compute(stage, layer int, ph workloads.Phase, start, end engine.Time) {
	jl.compute(jl.track(stage), layer, ph, start, end)
}

func (jl *jobLine) compute(t *timeline.Track, layer int, ph workloads.Phase, start, end engine.Time) {
	t.Span(fmt.Sprintf("L%d %s %s compute", layer, jl.w.Layers[layer].Name, ph), "compute", start, end,
		timeline.Arg{Key: "layer", Value: layer}, timeline.Arg{Key: "phase", Value: ph.String()})
}

// Rank implements workloads.RankObserver: where every rank runs its own copy of the pass
// (-ranks own), each rank's compute and waits go on a track of its own (ranks whose passes
// are alike are merged into one when written), and the job's track keeps the collectives.
func (jl *jobLine) Rank(rank int) workloads.Observer {
	jl.track(-1).SetLabel("collectives")
	return &rankLine{jl: jl, track: jl.proc.Track("", []int32{int32(rank)})}
}

// rankLine is the observer of one rank's own pass.
type rankLine struct {
	jl    *jobLine
	track *timeline.Track
}

func (rl *rankLine) Compute(_, layer int, ph workloads.Phase, start, end engine.Time) {
	rl.jl.compute(rl.track, layer, ph, start, end)
}

func (rl *rankLine) Issued(stage int, c workloads.Collective, at engine.Time) {
	rl.jl.Issued(stage, c, at) // the analytical mode's; a pass of ranks is the event mode's
}

func (rl *rankLine) Exposed(_, layer int, ph workloads.Phase, start, end engine.Time) {
	rl.jl.exposed(rl.track, layer, ph, start, end)
}

func (rl *rankLine) Received(_ int, st workloads.PlanStep, wait, sent, arrived engine.Time) {
	rl.jl.received(rl.track, st, wait, sent, arrived)
}

// Part implements workloads.PartObserver: the rank's own part of a collective, from its join
// to its last flow (and the layer's update time), on the rank's comm lanes; the collectives
// track holds the whole collective, from the first rank's join to the last rank's part.
func (rl *rankLine) Part(_ int, c workloads.Collective, issued, done engine.Time) {
	rl.track.Comm(fmt.Sprintf("L%d %s %s %s %s (own part)", c.Layer, c.Phase, c.Op, c.Group, sizeName(c.Bytes)), "comm", issued, done,
		timeline.Arg{Key: "layer", Value: c.Layer}, timeline.Arg{Key: "phase", Value: c.Phase.String()},
		timeline.Arg{Key: "op", Value: c.Op.String()}, timeline.Arg{Key: "group", Value: c.Group.String()},
		timeline.Arg{Key: "bytes", Value: c.Bytes})
}

func (jl *jobLine) Issued(stage int, c workloads.Collective, at engine.Time) {
	if jl.comm == nil || c.Op == ccl.OpSend {
		return // the event mode's collectives come from the run's records
	}
	// The analytical mode: the collective priced in closed form, from its issue.
	d := jl.comm[c.Layer][c.Phase]
	jl.track(stage).Comm(collectiveName(c.Layer, c.Phase.String(), c.Op.String(), c.Group.String(), c.Bytes, "analytical"), "comm", at, at+d,
		timeline.Arg{Key: "layer", Value: c.Layer}, timeline.Arg{Key: "phase", Value: c.Phase.String()},
		timeline.Arg{Key: "op", Value: c.Op.String()}, timeline.Arg{Key: "group", Value: c.Group.String()},
		timeline.Arg{Key: "group_size", Value: c.GroupSize}, timeline.Arg{Key: "bytes", Value: c.Bytes},
		timeline.Arg{Key: "model", Value: "analytical (closed form; not on the pass's clock)"})
}

func (jl *jobLine) Exposed(stage, layer int, ph workloads.Phase, start, end engine.Time) {
	jl.exposed(jl.track(stage), layer, ph, start, end)
}

func (jl *jobLine) exposed(t *timeline.Track, layer int, ph workloads.Phase, start, end engine.Time) {
	c := jl.w.Layers[layer].Phases[ph].Comm
	t.Span(fmt.Sprintf("L%d %s wait %s %s", layer, ph, c.Op, c.Group), "wait", start, end,
		timeline.Arg{Key: "layer", Value: layer}, timeline.Arg{Key: "phase", Value: ph.String()})
}

func (jl *jobLine) Received(stage int, st workloads.PlanStep, wait, sent, arrived engine.Time) {
	jl.received(jl.track(stage), st, wait, sent, arrived)
}

func (jl *jobLine) received(t *timeline.Track, st workloads.PlanStep, wait, sent, arrived engine.Time) {
	what := "activations"
	if st.Phase != workloads.Fwd {
		what = "gradients"
	}
	args := []timeline.Arg{{Key: "layer", Value: int(st.Layer)}, {Key: "micro_batch", Value: int(st.Micro)}, {Key: "chunk", Value: int(st.Chunk)}}
	if sent > wait {
		t.Span(fmt.Sprintf("bubble (micro-batch %d %s)", st.Micro, what), "bubble", wait, sent, args...)
	}
	if arrived > sent {
		t.Span(fmt.Sprintf("pp wait (micro-batch %d %s)", st.Micro, what), "wait", sent, arrived, args...)
	}
}

// collectiveName is a collective span's name: "L12 fwd allreduce TP 16 MiB (ring)".
func collectiveName(layer int, phase, op, group string, bytes uint64, algo string) string {
	return fmt.Sprintf("L%d %s %s %s %s (%s)", layer, phase, op, group, sizeName(bytes), algo)
}

// sizeName is a byte count in B, KiB, MiB or GiB with up to four significant digits.
func sizeName(b uint64) string {
	v, unit := float64(b), "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
}

// Collectives adds an event run's collectives of job (its index in Attach's jobs) to its comm
// lanes; end is the run's end, where a collective the run did not finish is cut.
func (tl *Timeline) Collectives(job int, recs []Collective, end engine.Time) {
	jl := tl.jobs[job]
	for _, c := range recs {
		stage := -1
		if c.Stage != nil {
			stage = *c.Stage
		}
		start := fromMicros(c.StartUs)
		stop := fromMicros(c.EndUs)
		args := []timeline.Arg{{Key: "layer", Value: c.Layer}, {Key: "phase", Value: c.Phase}, {Key: "op", Value: c.Op},
			{Key: "group", Value: c.Group}, {Key: "groups", Value: c.Groups}, {Key: "group_size", Value: c.GroupSize},
			{Key: "bytes", Value: c.Bytes}, {Key: "algorithm", Value: c.Algorithm}, {Key: "flows", Value: c.Flows}}
		name := collectiveName(c.Layer, c.Phase, c.Op, c.Group, c.Bytes, c.Algorithm)
		if c.ToStage != nil {
			name = fmt.Sprintf("L%d %s send to stage %d %s", c.Layer, c.Phase, *c.ToStage, sizeName(c.Bytes))
			args = append(args, timeline.Arg{Key: "to_stage", Value: *c.ToStage})
		}
		if !c.Done {
			stop = end
			args = append(args, timeline.Arg{Key: "unfinished", Value: true})
		}
		jl.track(stage).Comm(name, "comm", start, stop, args...)
	}
}

// fromMicros is a record's time back in picoseconds.
func fromMicros(us float64) engine.Time {
	return engine.Time(math.Round(us * float64(engine.Microsecond)))
}

// Analytical runs s's analytical mode with the timeline observing the pass, as job name: the
// compute on the pass's clock, each collective on the comm lanes from its issue for its
// closed-form time, and after the pass the exposed communication and bubble the model adds.
// A nil timeline runs the analytical mode alone (Simulation.Analytical).
func (tl *Timeline) Analytical(name string, s *Simulation) (*workloads.AnalyticalReport, error) {
	rep, err := s.Analytical() // the per-phase communication times first
	if err != nil || tl == nil {
		return rep, err
	}
	jl := tl.job(name, s, false) // the analytical mode runs the stages as one pass
	jl.comm = make([][3]engine.Time, len(rep.Rows))
	for i, r := range rep.Rows {
		ns := func(v uint64) engine.Time { return engine.Time(v) * engine.Nanosecond }
		jl.comm[i] = [3]engine.Time{ns(r.FwdComm), ns(r.IGComm), ns(r.WGComm)}
	}
	r := workloads.NewRunner(s.in.Workload, s.layout, engine.NewScheduler(), nil)
	r.Observe(jl)
	res, err := r.Run()
	if err != nil {
		return nil, err
	}
	t := jl.track(-1)
	at := res.End
	sm := rep.Summary
	for _, x := range []struct {
		name string
		us   float64
	}{{"exposed communication (analytical, after the pass)", sm.Exposed}, {"bubble (analytical)", sm.Bubble}} {
		if d := fromMicros(x.us); d > 0 {
			t.Span(x.name, "wait", at, at+d)
			at += d
		}
	}
	return rep, nil
}

// moeLine records an MoE dispatch run: each layer's span and its flows by kind.
type moeLine struct {
	track *timeline.Track
	kinds map[ccl.FlowKind]*kindSpan
}

type kindSpan struct {
	first, last engine.Time
	flows       int64
	bytes       int64
}

// FlowDone gathers the flows of the layer under way by kind.
func (m *moeLine) FlowDone(r *netmodel.FlowRecord) {
	if m.kinds == nil {
		m.kinds = map[ccl.FlowKind]*kindSpan{}
	}
	k := m.kinds[r.Kind]
	if k == nil {
		k = &kindSpan{first: r.Start, last: r.Arrived}
		m.kinds[r.Kind] = k
	}
	k.first, k.last = min(k.first, r.Start), max(k.last, r.Arrived)
	k.flows++
	k.bytes += r.Bytes
}

// layer closes a dispatch layer: its span, and one per kind of flow from the first start to
// the last arrival.
func (m *moeLine) layer(it, layer int, start, end engine.Time) {
	var flows, bytes int64
	kinds := make([]ccl.FlowKind, 0, len(m.kinds))
	for k, s := range m.kinds {
		kinds = append(kinds, k)
		flows += s.flows
		bytes += s.bytes
	}
	slices.Sort(kinds)
	m.track.Span(fmt.Sprintf("iteration %d layer %d dispatch", it, layer), "dispatch", start, end,
		timeline.Arg{Key: "iteration", Value: it}, timeline.Arg{Key: "layer", Value: layer},
		timeline.Arg{Key: "flows", Value: flows}, timeline.Arg{Key: "bytes", Value: bytes})
	for _, k := range kinds {
		s := m.kinds[k]
		m.track.Comm(fmt.Sprintf("L%d %s", layer, k), "comm", s.first, s.last,
			timeline.Arg{Key: "kind", Value: k.String()}, timeline.Arg{Key: "flows", Value: s.flows}, timeline.Arg{Key: "bytes", Value: s.bytes})
	}
	clear(m.kinds)
}

// TraceRanks is the observer of a Chakra trace's nodes (TraceInputs.Observer): a process named
// name with one track per rank (ranks whose spans are identical share one, unless the timeline
// keeps all ranks), each node a span named by the trace ("compute" nodes on the track, the
// others on its communication lanes). With an event run, AttachLinks adds the link counters.
func (tl *Timeline) TraceRanks(name string, ranks int) chakra.Observer {
	p := tl.trace.Process(name)
	tr := &traceLine{tracks: make([]*timeline.Track, ranks)}
	for r := range tr.tracks {
		tr.tracks[r] = p.Track("", []int32{int32(r)})
	}
	return tr
}

// AttachLinks returns att with the link sampler added for the timeline's counters (a trace
// run; Attach does it for workload runs).
func (tl *Timeline) AttachLinks(att Attachments) Attachments {
	attach, ended := att.Attach, att.Ended
	att.Attach = func(m *netmodel.Simulator) error {
		if attach != nil {
			if err := attach(m); err != nil {
				return err
			}
		}
		var err error
		tl.links, err = m.SampleLinks(netmodel.LinkSamplerOptions{})
		return err
	}
	att.Ended = func() {
		if tl.links != nil {
			tl.links.Finish()
		}
		if ended != nil {
			ended()
		}
	}
	return att
}

// traceLine records a trace's nodes on their ranks' tracks.
type traceLine struct{ tracks []*timeline.Track }

// NodeDone implements chakra.Observer.
func (tr *traceLine) NodeDone(rank int, n *chakra.Node, compute bool, start, end engine.Time) {
	name := n.Name
	if name == "" {
		name = n.Type.String()
	}
	if compute {
		tr.tracks[rank].Span(name, "compute", start, end, timeline.Arg{Key: "node", Value: n.ID})
		return
	}
	args := []timeline.Arg{{Key: "node", Value: n.ID}, {Key: "type", Value: n.Type.String()}}
	tr.tracks[rank].Comm(name, "comm", start, end, args...)
}

// counters adds the link sampler's counters to a "network" process: per link class, the
// largest and 90th-percentile utilisation of its links in each bin (%), and for the few links
// that sent most their own utilisation.
func (tl *Timeline) counters() {
	ls := tl.links
	if ls == nil {
		return
	}
	ls.Finish()
	width, n := ls.Bins()
	if n == 0 {
		return
	}
	p := tl.trace.Process("network")
	pct := func(x float64) float64 { return math.Round(x*1e5) / 1e3 }
	var classes []string // in the order of their first bin
	for _, b := range ls.ClassBins() {
		name := "util " + b.Class.String() + " %"
		if !slices.Contains(classes, name) {
			classes = append(classes, name)
		}
		p.Counter(name, b.Start, timeline.Arg{Key: "max", Value: pct(b.Max)}, timeline.Arg{Key: "p90", Value: pct(b.P90)})
	}
	for _, name := range classes { // the run's end: nothing after it
		p.Counter(name, ls.End(), timeline.Arg{Key: "max", Value: 0.0}, timeline.Arg{Key: "p90", Value: 0.0})
	}
	stats := ls.Stats()
	slices.SortStableFunc(stats, func(a, b netmodel.LinkStat) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return int(a.Link - b.Link)
	})
	for _, s := range stats[:min(tl.BusiestLinks, len(stats))] {
		name := "link " + s.Name + " %"
		for i, v := range ls.BinBytes(s.Link) {
			a := engine.Time(i) * width
			b := min(a+width, ls.End())
			u := 0.0
			if b > a && s.Rate > 0 {
				u = float64(v) * 8 / (s.Rate * (b - a).Seconds())
			}
			p.Counter(name, a, timeline.Arg{Key: "util", Value: pct(u)})
		}
		p.Counter(name, ls.End(), timeline.Arg{Key: "util", Value: 0.0})
	}
}

// Write writes the trace to path, under a temporary name renamed into place.
func (tl *Timeline) Write(path string) error {
	tl.counters()
	return writeReport(path, tl.trace.WriteJSON)
}

// Finish writes the trace to path (Write) at the end of a run whose stop note is note: a run
// that was stopped (note not "") is marked incomplete in the file's otherData, with the note.
func (tl *Timeline) Finish(path, note string) error {
	if note != "" {
		tl.Meta("incomplete", note)
	}
	return tl.Write(path)
}

// finishInto writes the timeline to path as Finish does and adds path to the files written; a nil
// timeline (no -trace) writes nothing and returns files as they are.
func (tl *Timeline) finishInto(files []string, path, note string) ([]string, error) {
	if tl == nil {
		return files, nil
	}
	if err := tl.Finish(path, note); err != nil {
		return nil, err
	}
	return append(files, path), nil
}
