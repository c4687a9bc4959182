package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/netmodel/ccfluid"
	"simd/topo"
	"simd/workloads"
	"simd/workloads/moe"
)

// Collective is one collective of an event run: its place in the workload, how it was run and
// when; summary.json lists them.
type Collective struct {
	Layer     int     `json:"layer"`
	Name      string  `json:"name"`
	Phase     string  `json:"phase"`
	Op        string  `json:"op"`
	Group     string  `json:"group"`
	Groups    int     `json:"groups"`
	GroupSize int     `json:"group_size"`
	Algorithm string  `json:"algorithm"`
	Bytes     uint64  `json:"bytes"`
	StartUs   float64 `json:"start_us"`
	EndUs     float64 `json:"end_us"`
	Flows     int64   `json:"flows"`
	// Stage is the pipeline stage that ran it when the pipeline is simulated (PP > 1), and
	// ToStage the stage a pipeline send (op "send", phase pp_fwd or pp_bwd) went to.
	Stage   *int `json:"stage,omitempty"`
	ToStage *int `json:"to_stage,omitempty"`
	// Bottlenecks are the bytes of the collective's flows per directed link that was their
	// max-min bottleneck while they were sent (Compare only).
	Bottlenecks map[int32]float64 `json:"-"`
	// Done says the collective finished (a stopped run has collectives that did not).
	Done bool `json:"-"`
}

// Status is how far a running simulation has come, reported to Attachments.Watch.
type Status struct {
	Events uint64      // engine events processed
	Now    engine.Time // simulated time
	// Done and Total are the work done and to do in the run's own unit: the plan steps of a
	// workload's iteration, the flows of a flow file.
	Done, Total int
	// FlowsDone is the flows' worth of work done (netmodel.Simulator.Progress: a flow counts a
	// part when it starts, a part as its bytes are sent and the rest when it is done) and Flows
	// the flows of the whole run, 0 when unknown. Measuring the bytes sent visits every flow
	// slot, so a look measures them only when the last measurement is a hundred times its own
	// cost in the past, and otherwise counts the starts and ends of now with the bytes of the
	// last measurement (netmodel.Simulator.ProgressCounted).
	FlowsDone float64
	Flows     int64
	// Started says the run has started flows.
	Started bool
}

// Attachments are what a caller hangs on an event run: the observers that write its files and
// the look at its progress. The run itself writes nothing.
type Attachments struct {
	// Open is called once the run's inputs are checked, just before the simulator is built
	// (so a refused run opens nothing); it returns the observer of every PFC pause and resume
	// (congestion control on), nil for none.
	Open func() (ccfluid.PFCObserver, error)
	// Attach is called with the simulator once it is built, before the first event: the place
	// to add flow observers (netmodel.FCTLog) and monitors (Simulator.Monitor).
	Attach func(*netmodel.Simulator) error
	// Watch is called between two events every few thousand events.
	Watch func(Status)
	// Ended is called, from an engine event, when the workload's iteration has ended (every
	// job's last, for several jobs): the simulator may go on past it (the monitors sample up
	// to MON_END), but what the run did is over. A stopped run does not call it.
	Ended func()
	// Observe, when not nil, is called before each pass of a workload starts (job is the
	// job's index in RunJobs, 0 otherwise; iteration counts from 0) and returns the observer of
	// its compute, collectives and waits (nil: none). Timeline uses it.
	Observe func(job, iteration int) workloads.Observer
	// Dispatched, when not nil, is called by RunMoE after each layer's dispatch with the
	// simulated time it ran from and to.
	Dispatched func(iteration, layer int, start, end engine.Time)
}

// observe hangs att's observer of pass iteration of job on it.
func (a *Attachments) observe(it iteration, job, iteration int) {
	if a.Observe != nil {
		if o := a.Observe(job, iteration); o != nil {
			it.Observe(o)
		}
	}
}

// simulator builds a run's scheduler and the simulator SimAI.conf conf asks for over fab (see
// newSimulator), with the attachments: Open first (its PFC observer is used when pfc is true),
// then Attach.
func (a *Attachments) simulator(conf *configs.SimAIConf, confPath string, fab *netmodel.Fabric, tally bool, opt EventOptions, pfc bool, log *zap.Logger) (*engine.Scheduler, *netmodel.Simulator, error) {
	var obs ccfluid.PFCObserver
	if a.Open != nil {
		o, err := a.Open()
		if err != nil {
			return nil, nil, err
		}
		if pfc {
			obs = o
		}
	}
	sched := engine.NewScheduler()
	sim, err := newSimulator(conf, confPath, sched, fab, tally, opt, obs)
	if err != nil {
		return nil, nil, err
	}
	if k := sim.SwitchesWithoutPFC(); k > 0 {
		orNop(log).Warn(confWhere(conf, confPath, "BUFFER_SIZE")+": BUFFER_SIZE is not larger than the ports' headroom and reserve of "+
			"some switches; SimAI's ns-3 never pauses them (its threshold wraps around), and neither does simd",
			zap.Int("switches", k), zap.Int64("buffer_bytes", conf.BufferSizeBytes))
	}
	switch opt.LookAhead {
	case LookAheadOn:
		sim.SetLookAhead(true)
	case LookAheadOff:
		sim.SetLookAhead(false)
	}
	on, bytes := sim.LookingAhead()
	orNop(log).Debug("look ahead", zap.Bool("on", on), zap.Int64("link_table_bytes", bytes))
	sim.SetIssueInOrder(!opt.ChunksOnArrival)
	// Only a NIC port that serves its queue pairs in turn reads the order they were made in.
	sim.SetStartMailbox(sim.CCNetwork() != nil && !opt.NICFairShare && !opt.StartInIssueOrder)
	if opt.QPsPerConnection > 1 {
		if err := sim.SetQPsPerConnection(opt.QPsPerConnection); err != nil {
			return nil, nil, BadInput(err)
		}
	}
	if a.Attach != nil {
		if err := a.Attach(sim); err != nil {
			return nil, nil, err
		}
	}
	return sched, sim, nil
}

// Result is what an event run produced.
type Result struct {
	// Run holds the iteration's per-layer times: up to the stop for a stopped run.
	Run         *workloads.RunResult
	Report      *workloads.EventReport // EndToEnd.csv's rows; nil for a flow file
	Collectives []Collective           // in start order, finished or not
	// Sim is the simulator the run used: its counters, fabric and network.
	Sim    *netmodel.Simulator
	Events uint64
	Wall   time.Duration
	// Stopped is why the run stopped before its end (the context's cause, or an
	// EventLimitError); nil for a complete run. Note then says where it stopped and what it
	// finished, as the outputs say it.
	Stopped error
	Note    string
	// End is the simulated time the run reached.
	End engine.Time
}

// Finished is the collectives that finished, in start order.
func (r *Result) Finished() []Collective { return finished(r.Collectives) }

// finished is the collectives of cs that finished, in their order.
func finished(cs []Collective) []Collective {
	out := make([]Collective, 0, len(cs))
	for _, c := range cs {
		if c.Done {
			out = append(out, c)
		}
	}
	return out
}

// Event runs the iteration with every collective decomposed into flows that cross the fabric in
// the network model SimAI.conf asks for. Cancelling ctx stops the run cleanly between two
// events: the result then holds what was computed, with Stopped set to the context's cause.
func (s *Simulation) Event(ctx context.Context, opt EventOptions, att Attachments) (*Result, error) {
	return s.event(ctx, opt, att, false)
}

// event runs the iteration; tally charges every collective's bytes to its bottleneck links.
func (s *Simulation) event(ctx context.Context, opt EventOptions, att Attachments, tally bool) (*Result, error) {
	cl := &s.in.Cluster
	if cl.Topology.NumGPUs() < s.layout.GPUs {
		return nil, BadInputf("the workload runs on %d GPUs but the topology (%s) has %d", s.layout.GPUs, cl.Fabric, cl.Topology.NumGPUs())
	}
	fab, sel, err := cl.fabricAndSelector(opt.Algorithms)
	if err != nil {
		return nil, err
	}
	ccOn := netmodel.CCOn(&s.in.Conf) // errors are reported by newSimulator
	est, err := s.estimateMemory(sel, cl.Topology.NumLinks(), fab.TotalGPUs(), ccOn, opt.Chunks, opt.QPsPerConnection)
	if err != nil {
		return nil, BadInput(err)
	}
	if err := checkMemory(est, opt.MaxMemory); err != nil {
		return nil, err
	}
	s.log.Debug("memory estimate", zap.Int64("bytes", est.Bytes), zap.String("largest", est.What), zap.Int64("flows", est.Flows))
	sched, sim, err := att.simulator(&s.in.Conf, s.in.ConfPath, fab, tally, opt, true, s.log)
	if err != nil {
		return nil, err
	}
	net := &collectiveNetwork{s: sched, sim: sim, sel: sel, w: s.in.Workload, layout: s.layout, total: fab.TotalGPUs(), chunks: opt.Chunks,
		latency: latency(opt.SendLatency), dispatch: opt.EPDispatch, model: opt.DispatchModel, ranked: !opt.RanksInLockstep,
		stageRanks: opt.StageRanksOnTheirOwn}
	if net.dispatch != 0 {
		net.model.Seed ^= opt.Seed
	}
	if tally {
		sim.ObserveBottlenecks(bottleneckTally{net})
	}
	began := time.Now()
	runner, err := s.newIteration(sched, net)
	if err != nil {
		return nil, err
	}
	att.observe(runner, 0, 0)
	runner.Start(sched.Now(), att.Ended)
	flowsDone := newFlowsDone(sim.Progress, sim.ProgressCounted)
	status := func() Status {
		done, total := runner.Progress()
		return flowsDone.status(Status{Events: sched.Processed(), Now: sched.Now(), Done: done, Total: total,
			Flows: est.Flows, Started: sim.Flows() > 0})
	}
	g := watchRun(ctx, sched, opt.MaxEvents, att.Watch, status)
	sched.Run()
	res, err := runner.Result()
	stopped := g.finish()
	wall := time.Since(began)
	if stopped != nil {
		// The run was stopped between two events: the iteration is unfinished, not broken (an
		// error of the run would have stopped it before the look).
		res, err = runner.Partial(), nil
	}
	if simErr := sim.Err(); simErr != nil {
		err = simErr // the cause of a stopped iteration
	}
	var end engine.Time
	if res != nil {
		end = res.End
	}
	if err := linkDownResult(&s.in.Conf, s.in.ConfPath, err, end, s.log); err != nil {
		return nil, err
	}
	r := &Result{Run: res, Collectives: net.records, Sim: sim, Events: sched.Processed(), Wall: wall, Stopped: stopped, End: end}
	r.Note = r.layersNote(len(s.in.Workload.Layers))
	rep, err := workloads.EventEndToEnd(s.in.Workload, res, s.reportOptions())
	if err != nil {
		return nil, BadInput(err)
	}
	rep.Incomplete = r.Note
	r.Report = rep
	return r, nil
}

// iteration is one pass of a workload: a Runner, or a Pipeline of them.
type iteration interface {
	Start(at engine.Time, ended func())
	Result() (*workloads.RunResult, error)
	Err() error
	Partial() *workloads.RunResult
	Progress() (done, total int)
	Observe(workloads.Observer)
}

// newIteration prepares one pass of s's workload on sched against net: a Pipeline when the
// workload's pipeline is simulated, a Runner otherwise.
func (s *Simulation) newIteration(sched *engine.Scheduler, net workloads.Network) (iteration, error) {
	pipelined := s.in.Workload.Pipelined(s.layout)
	if cn, ok := net.(*collectiveNetwork); ok && cn.ranked && (!pipelined || cn.stageRanks) {
		if pipelined {
			p, err := workloads.NewRankPipeline(s.in.Workload, s.layout, sched, cn)
			if err != nil {
				return nil, BadInput(err)
			}
			return p, nil
		}
		rs, err := workloads.NewRanks(s.in.Workload, s.layout, sched, cn)
		if err != nil {
			return nil, BadInput(err)
		}
		return rs, nil
	}
	if pipelined {
		p, err := workloads.NewPipeline(s.in.Workload, s.layout, sched, net)
		if err != nil {
			return nil, BadInput(err)
		}
		return p, nil
	}
	return workloads.NewRunner(s.in.Workload, s.layout, sched, net), nil
}

// layersNote is the note of a stopped workload run: why and where it stopped and how much of the
// iteration it finished.
func (r *Result) layersNote(layers int) string {
	if r.Stopped == nil {
		return ""
	}
	done := 0
	for i := range layers {
		if r.Run.Done(i) {
			done++
		}
	}
	return fmt.Sprintf("stopped by %s after %d events at %s us simulated; %d of %d layers finished; totals are up to the stop",
		r.Stopped, r.Events, strconv.FormatFloat(r.Run.End.Microseconds(), 'f', 3, 64), done, layers)
}

// latency is every flow's send latency: fixed, or when it is negative SimAI's per-algorithm
// table.
func latency(fixed engine.Time) func(algo.Choice) netmodel.Latency {
	if fixed >= 0 {
		return func(algo.Choice) netmodel.Latency { return netmodel.Latency{Intra: fixed, Inter: fixed} }
	}
	return func(c algo.Choice) netmodel.Latency {
		return netmodel.Latency{
			Intra: engine.Time(c.SendLatencyNs(true)) * engine.Nanosecond,
			Inter: engine.Time(c.SendLatencyNs(false)) * engine.Nanosecond,
		}
	}
}

// collectiveNetwork is the workload runner's Network in the event mode: every group of the
// collective's kind runs its DAG at once, and the collective is done when the last one is.
type collectiveNetwork struct {
	s       *engine.Scheduler
	sim     *netmodel.Simulator
	sel     *algo.Selector
	w       *workloads.Workload
	layout  ccl.Layout
	total   int
	chunks  int
	latency func(algo.Choice) netmodel.Latency
	// dispatch runs EP all-to-alls as DeepEP or FAST dispatches of tokens drawn with model
	// (0: SimCCL's all-to-all); built DAGs are kept per (group, size).
	dispatch  moe.Kind
	model     moe.DispatchModel
	dispatchs map[dispatchKey]*ccl.FlowDAG
	planned   map[planKey][]algo.Planned
	sends     map[[2]int]*ccl.FlowDAG // pipeline sends by (from stage, to stage)
	records   []Collective
	runRec    []int // collective record of each simulator run
	// ranked runs a pass rank by rank (workloads.Ranks; EventOptions.RanksInLockstep unset),
	// open the collectives some of whose ranks have not reached them yet.
	// stageRanks runs a pipelined pass rank by rank too (EventOptions.StageRanksOnTheirOwn).
	ranked, stageRanks bool
	open               map[rankKey][]*rankedCollective
	spare              []*rankedCollective // finished ones, for rankedOf
	ranks              []int32             // the job's rank on each cluster GPU (rankOf), for a placed job
}

func (n *collectiveNetwork) Start(c workloads.Collective, done func()) error {
	plans, idx, err := n.begin(c)
	if err != nil {
		return err
	}
	left := len(plans)
	finish := func() {
		n.finished(idx)
		done()
	}
	if left == 0 {
		n.s.AtFunc(n.s.Now(), finish)
		return nil
	}
	for _, p := range plans {
		id := n.sim.Run(p.DAG, n.latency(p.Choice), func() {
			if left--; left == 0 {
				finish()
			}
		})
		n.recordRun(id, idx)
	}
	return nil
}

// begin plans collective c and records it (started now); it returns the plans of its groups
// and the record's index.
func (n *collectiveNetwork) begin(c workloads.Collective) ([]algo.Planned, int, error) {
	var plans []algo.Planned
	var err error
	if c.Op == ccl.OpSend {
		plans, err = n.sendPlans(c)
	} else {
		plans, err = n.plans(c)
	}
	if err != nil {
		return nil, 0, err
	}
	phase := c.Phase.String()
	if c.Stage >= 0 && n.layout.PP > 1 && c.Op != ccl.OpSend {
		k := len(plans) / n.layout.PP // the groups of a kind go stage by stage
		plans = plans[c.Stage*k : (c.Stage+1)*k]
	}
	idx := len(n.records)
	rec := Collective{
		Layer: c.Layer, Name: n.w.Layers[c.Layer].Name, Phase: phase, Op: c.Op.String(), Group: c.Group.String(),
		Groups: len(plans), GroupSize: c.GroupSize, Bytes: c.Bytes, StartUs: n.s.Now().Microseconds(),
	}
	if c.Stage >= 0 {
		st := c.Stage
		rec.Stage = &st
	}
	if c.Op == ccl.OpSend {
		rec.Phase = "pp_fwd"
		if c.Phase != workloads.Fwd {
			rec.Phase = "pp_bwd"
		}
		peer := c.Peer
		rec.ToStage = &peer
	}
	var names []string
	for _, p := range plans {
		rec.Flows += int64(p.DAG.NumFlows())
		if a := string(p.Choice.Algorithm); !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	rec.Algorithm = strings.Join(names, "+")
	n.records = append(n.records, rec)
	return plans, idx, nil
}

// finished marks collective record idx done, now.
func (n *collectiveNetwork) finished(idx int) {
	n.records[idx].EndUs = n.s.Now().Microseconds()
	n.records[idx].Done = true
}

// recordRun notes that simulator run id belongs to collective record idx.
func (n *collectiveNetwork) recordRun(id netmodel.RunID, idx int) {
	for int(id) >= len(n.runRec) {
		n.runRec = append(n.runRec, 0)
	}
	n.runRec[id] = idx
}

// sendPlans is the plan of a pipeline send: every rank of stage c.Stage sends c.Bytes to the
// rank in the same place of stage c.Peer, one flow each (ccl.SendDAG) between the GPUs the
// ranks run on, started with the default send latency. The DAG of a pair of stages is built
// once.
func (n *collectiveNetwork) sendPlans(c workloads.Collective) ([]algo.Planned, error) {
	k := [2]int{c.Stage, c.Peer}
	d, ok := n.sends[k]
	if !ok {
		var err error
		d, err = ccl.SendDAG(n.stageGPUs(c.Stage), n.stageGPUs(c.Peer), n.layout.GPUsPerServer, n.total, int64(c.Bytes))
		if err != nil {
			return nil, err
		}
		if n.sends == nil {
			n.sends = map[[2]int]*ccl.FlowDAG{}
		}
		n.sends[k] = d
	}
	return []algo.Planned{{Ranks: d.Coll.Ranks, Choice: algo.Choice{Algorithm: "p2p", Reason: "pipeline send"}, DAG: d}}, nil
}

// stageGPUs is the cluster GPUs of pipeline stage st's ranks, in order (a placed job's ranks
// run on the GPUs of its placement).
func (n *collectiveNetwork) stageGPUs(st int) []int32 {
	gpus := n.layout.StageRanks(st)
	for i, r := range gpus {
		gpus[i] = n.layout.GPU(int(r))
	}
	return gpus
}

// planKey names the plans of a collective: the groups of a kind run the same operation on the
// same size, whatever the layer.
type planKey struct {
	op    ccl.Op
	group ccl.GroupKind
	bytes uint64
}

// plans returns the per-group plans of collective c. A workload repeats the same collectives
// layer after layer (1,789 layers of workload_analytical.txt use a handful of distinct ones),
// and a DAG is only read while it runs, so the plans of a (operation, group kind, size) are
// generated once and shared by every collective like it, concurrent ones included.
func (n *collectiveNetwork) plans(c workloads.Collective) ([]algo.Planned, error) {
	k := planKey{c.Op, c.Group, c.Bytes}
	if p, ok := n.planned[k]; ok {
		return p, nil
	}
	plans, err := n.sel.Plan(n.layout, n.total, c.Op, c.Group, int64(c.Bytes), n.chunks)
	if err != nil {
		return nil, err
	}
	if n.dispatch != 0 && c.Op == ccl.OpAllToAll && c.Group == ccl.GroupEP {
		if err := n.dispatchPlans(plans, int64(c.Bytes)); err != nil {
			return nil, err
		}
	}
	if n.planned == nil {
		n.planned = map[planKey][]algo.Planned{}
	}
	n.planned[k] = plans
	return plans, nil
}

// dispatchKey names a dispatch DAG: the group (by its first rank) and the bytes per rank.
type dispatchKey struct {
	first int32
	bytes int64
}

// dispatchPlans replaces every group's all-to-all by a DeepEP or FAST dispatch of the tokens
// the model draws for its size (moe.DispatchDAG). The routing depends only on the group and the
// size, so the DAG of a (group, size) is built once.
func (n *collectiveNetwork) dispatchPlans(plans []algo.Planned, bytes int64) error {
	if n.dispatchs == nil {
		n.dispatchs = map[dispatchKey]*ccl.FlowDAG{}
	}
	for i := range plans {
		p := &plans[i]
		k := dispatchKey{slices.Min(p.Ranks), bytes}
		d, ok := n.dispatchs[k]
		if !ok {
			m := n.model
			m.Seed ^= uint64(k.first)<<32 ^ uint64(bytes)
			var err error
			if d, err = moe.DispatchDAG(n.dispatch, m, p.Ranks, n.layout.GPUsPerServer, n.total, bytes); err != nil {
				return BadInputf("-ep-dispatch %s: EP group of rank %d: %v", n.dispatch, k.first, err)
			}
			n.dispatchs[k] = d
		}
		p.DAG = d
		p.Choice = algo.Choice{Algorithm: algo.Name(strings.ToLower(n.dispatch.String())), Reason: "-ep-dispatch"}
	}
	return nil
}

// bottleneckTally charges the bytes of each collective's flows to the links that were their
// max-min bottleneck while they were sent, for compare.csv's "bottleneck links" column.
type bottleneckTally struct{ n *collectiveNetwork }

func (b bottleneckTally) FlowBottleneck(run netmodel.RunID, _ ccl.FlowID, link int32, bytes float64) {
	if run < 0 || int(run) >= len(b.n.runRec) {
		return
	}
	rec := &b.n.records[b.n.runRec[run]]
	if rec.Bottlenecks == nil {
		rec.Bottlenecks = map[int32]float64{}
	}
	rec.Bottlenecks[link] += bytes
}

// newSimulator builds the simulator SimAI.conf asks for: ideal max-min sharing when CC_MODE
// asks for no rate control, the fluid queue model with DCQCN, ECN and PFC for CC_MODE 1; flows
// are packets of PACKET_PAYLOAD_SIZE with SimAI's headers, done when their last ACK is back (or
// opt.AtArrival, when their last byte arrives); with congestion control, a NIC paces a flow
// and the switches mark as opt says. PFC frames go to pfc when it is not nil.
func newSimulator(conf *configs.SimAIConf, confPath string, sched *engine.Scheduler, fab *netmodel.Fabric, tally bool, opt EventOptions, pfc ccfluid.PFCObserver) (*netmodel.Simulator, error) {
	where := func(key string) string { return confWhere(conf, confPath, key) }
	cfg, on, err := netmodel.CCConfig(conf, fab, opt.Seed)
	if err != nil {
		return nil, BadInputf("%s: CC_MODE: %v", where("CC_MODE"), err)
	}
	cfg.PaceAtOldRate, cfg.MarkDepartures = !opt.PaceAtOnce, !opt.MarkOnEnqueue
	cfg.FirstWindowBurst = !opt.WindowCapFromStart
	cfg.Reshape = !opt.ArrivalsAtInjection
	cfg.BoundedPFCChecks = opt.BoundedPFCChecks
	cfg.Turns = !opt.NICFairShare
	cfg.PoissonMarks = !opt.RegularMarks
	if !nvlsMayRun(opt.Algorithms) && !nvlinkGoesDown(conf, fab) {
		cfg.NVLink = [...]ccfluid.NVLinkRule{NVLinkAuto: ccfluid.NVLinkAuto, NVLinkPackets: ccfluid.NVLinkPackets, NVLinkFluid: ccfluid.NVLinkFluid}[opt.NVLink]
	}
	cfg.AckWait = [...]ccfluid.AckWait{AckWaitsLocked: ccfluid.AckWaitLocked, AckWaitsAligned: ccfluid.AckWaitAligned, AckWaitsAtRandom: ccfluid.AckWaitMean}[opt.AckWait]
	tr := netmodel.TransportFor(conf, opt.AtArrival)
	tr.NanosecondClock = !opt.ExactPacketTimes
	var sim *netmodel.Simulator
	if !on {
		sim = netmodel.NewSimulator(sched, fab, netmodel.Options{TrackBottlenecks: tally, Transport: tr, Bundles: !opt.FlowsApart})
	} else {
		cfg.Transport = tr
		if sim, err = netmodel.NewCCSimulator(sched, fab, cfg, pfc); err != nil {
			return nil, BadInputf("%s: %v", where("CC_MODE"), err)
		}
	}
	if err := scheduleLinkDown(sim, conf, confPath); err != nil {
		return nil, err
	}
	return sim, nil
}

// nvlsMayRun reports whether a collective may run as NVLS or NVLS-Tree, whose flows start or end
// at an NVSwitch: the packet model of the NVLink carries flows from GPU to GPU only.
func nvlsMayRun(a algo.Options) bool {
	if a.NVLS {
		return true
	}
	for _, name := range a.Force {
		if name == algo.NVLS || name == algo.NVLSTree {
			return true
		}
	}
	return false
}

// nvlinkGoesDown reports whether SimAI.conf's LINK_DOWN takes down a link of an NVSwitch, which
// the packet model of the NVLink does not reroute.
func nvlinkGoesDown(conf *configs.SimAIConf, fab *netmodel.Fabric) bool {
	ld := conf.LinkDown
	if !ld.Active() {
		return false
	}
	kinds := fab.Topo.Kinds
	for _, x := range []int{ld.A, ld.B} {
		if x >= 0 && x < len(kinds) && kinds[x] == topo.NVSwitch {
			return true
		}
	}
	return false
}

// linkDownOffset is where SimAI's clock puts LINK_DOWN's time origin. Its ns-3 frontend fires
// the workload at simulated time 0 and schedules LINK_DOWN t a b for 2 s + t µs (code it shares
// with ns-3's RDMA flow-file driver), so the failure hits only iterations longer than 2 s.
// simd's clock is SimAI's: the iteration starts at 0 and a flow file's times are absolute, so
// the link goes down at the same simulated time.
const linkDownOffset = 2 * engine.Second

// linkDownTime is when SimAI.conf's LINK_DOWN takes its link down, engine.Never if that is
// beyond the range of simd's clock.
func linkDownTime(ld configs.LinkDown) engine.Time {
	if ld.At >= engine.Never-linkDownOffset {
		return engine.Never
	}
	return linkDownOffset + ld.At
}

// scheduleLinkDown schedules SimAI.conf's LINK_DOWN, if it is active (t > 0), on sim. Nodes
// that are not linked in the topology are bad input naming the file, line and key.
func scheduleLinkDown(sim *netmodel.Simulator, conf *configs.SimAIConf, confPath string) error {
	ld := conf.LinkDown
	if !ld.Active() {
		return nil
	}
	a, b := int32(min(ld.A, math.MaxInt32)), int32(min(ld.B, math.MaxInt32))
	if err := sim.LinkDown(linkDownTime(ld), a, b); err != nil {
		return BadInputf("%s: %v", linkDownWhere(conf, confPath), err)
	}
	return nil
}

// linkDownWhere names SimAI.conf's LINK_DOWN line: file:line: LINK_DOWN t a b.
func linkDownWhere(conf *configs.SimAIConf, confPath string) string {
	return confWhere(conf, confPath, "LINK_DOWN") + ": LINK_DOWN " + strings.Join(conf.Raw["LINK_DOWN"], " ")
}

// linkDownResult turns the error of a run that LINK_DOWN left without a route for a flow into
// bad input naming the key, and warns when the link went down after everything had arrived.
func linkDownResult(conf *configs.SimAIConf, confPath string, err error, end engine.Time, log *zap.Logger) error {
	var lde *netmodel.LinkDownError
	if errors.As(err, &lde) {
		return BadInputf("%s: %v", linkDownWhere(conf, confPath), err)
	}
	if err == nil && conf.LinkDown.Active() && end < linkDownTime(conf.LinkDown) {
		log.Warn("SimAI.conf's LINK_DOWN takes its link down 2 s after the start plus t µs, as SimAI does; the run was over by then, so it changed nothing",
			zap.String("where", linkDownWhere(conf, confPath)), zap.Float64("down_us", linkDownTime(conf.LinkDown).Microseconds()),
			zap.Float64("end_us", end.Microseconds()))
	}
	return err
}

// confWhere names where SimAI.conf sets key: file:line, or the file when the key is absent.
func confWhere(conf *configs.SimAIConf, confPath, key string) string {
	name := confPath
	if name == "" {
		name = "SimAI.conf (built in)"
	}
	if line, ok := conf.Lines[key]; ok {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return name
}
