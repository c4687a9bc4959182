package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/ccl/nccl"
	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/netmodel/ccfluid"
	"simd/workloads"
	"simd/workloads/moe"
)

// The event mode runs the training iteration on the engine with every collective decomposed
// into flows (ccl/algo) that cross the fabric in the fluid network model (netmodel). This file
// only wires them together and writes the outputs.

// collectiveRecord is one collective of the run, for summary.json and compare.csv.
type collectiveRecord struct {
	Layer      int     `json:"layer"`
	Name       string  `json:"name"`
	Phase      string  `json:"phase"`
	Op         string  `json:"op"`
	Group      string  `json:"group"`
	Groups     int     `json:"groups"`
	GroupSize  int     `json:"group_size"`
	Algorithm  string  `json:"algorithm"`
	Bytes      uint64  `json:"bytes"`
	StartUs    float64 `json:"start_us"`
	EndUs      float64 `json:"end_us"`
	Flows      int64   `json:"flows"`
	bottleneck map[int32]float64
	done       bool // finished (a stopped run has collectives that did not)
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
	records   []collectiveRecord
	runRec    []int // collective record of each simulator run
}

func (n *collectiveNetwork) Start(c workloads.Collective, done func()) error {
	plans, err := n.plans(c)
	if err != nil {
		return err
	}
	idx := len(n.records)
	rec := collectiveRecord{
		Layer: c.Layer, Name: n.w.Layers[c.Layer].Name, Phase: c.Phase.String(), Op: c.Op.String(), Group: c.Group.String(),
		Groups: len(plans), GroupSize: c.GroupSize, Bytes: c.Bytes, StartUs: n.s.Now().Microseconds(),
	}
	var names []string
	for _, p := range plans {
		rec.Flows += int64(p.DAG.NumFlows())
		if a := string(p.Choice.Algorithm); !containsString(names, a) {
			names = append(names, a)
		}
	}
	rec.Algorithm = strings.Join(names, "+")
	n.records = append(n.records, rec)
	left := len(plans)
	finish := func() {
		n.records[idx].EndUs = n.s.Now().Microseconds()
		n.records[idx].done = true
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
		for int(id) >= len(n.runRec) {
			n.runRec = append(n.runRec, 0)
		}
		n.runRec[id] = idx
	}
	return nil
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
				return badInputf("-ep-dispatch %s: EP group of rank %d: %v", n.dispatch, k.first, err)
			}
			n.dispatchs[k] = d
		}
		p.DAG = d
		p.Choice = algo.Choice{Algorithm: algo.Name(strings.ToLower(n.dispatch.String())), Reason: "-ep-dispatch"}
	}
	return nil
}

// finished is the records of the collectives that finished, in start order.
func (n *collectiveNetwork) finished() []collectiveRecord {
	out := make([]collectiveRecord, 0, len(n.records))
	for _, r := range n.records {
		if r.done {
			out = append(out, r)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bottleneckTally charges the bytes of each collective's flows to the links that were their
// max-min bottleneck while they were sent, for compare.csv's "bottleneck links" column.
type bottleneckTally struct{ n *collectiveNetwork }

func (b bottleneckTally) FlowBottleneck(run netmodel.RunID, _ ccl.FlowID, link int32, bytes float64) {
	if run < 0 || int(run) >= len(b.n.runRec) {
		return
	}
	rec := &b.n.records[b.n.runRec[run]]
	if rec.bottleneck == nil {
		rec.bottleneck = map[int32]float64{}
	}
	rec.bottleneck[link] += bytes
}

// sendLatency is -send-lat (ns), else SimAI's AS_SEND_LAT (µs, as SimAI's code reads it), else
// SimAI's per-algorithm table in ns.
func (s *session) sendLatency() (func(algo.Choice) netmodel.Latency, error) {
	fixed := engine.Time(-1)
	if s.o.sendLatNs >= 0 {
		fixed = engine.Time(s.o.sendLatNs) * engine.Nanosecond
	} else if v, ok := os.LookupEnv("AS_SEND_LAT"); ok {
		us, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || us < 0 {
			return nil, badInputf("AS_SEND_LAT=%q: expected a whole number of microseconds", v)
		}
		fixed = engine.Time(us) * engine.Microsecond
	}
	if fixed >= 0 {
		return func(algo.Choice) netmodel.Latency { return netmodel.Latency{Intra: fixed, Inter: fixed} }, nil
	}
	return func(c algo.Choice) netmodel.Latency {
		return netmodel.Latency{
			Intra: engine.Time(c.SendLatencyNs(true)) * engine.Nanosecond,
			Inter: engine.Time(c.SendLatencyNs(false)) * engine.Nanosecond,
		}
	}, nil
}

// selector builds the algorithm selector from the flags.
func (s *session) selector() (*algo.Selector, error) {
	force, err := algo.ParseForce(s.o.forceAlgo)
	if err != nil {
		return nil, badInputf("-force-algo: %v", err)
	}
	sel, err := algo.NewSelector(algo.Options{Policy: algo.Policy(s.o.algoPolicy), GPUType: s.cl.gpuType, NVLS: s.o.nvls, PXN: s.o.pxn,
		PXNVariant: nccl.PXNVariant(s.o.pxnVariant), Force: force})
	if err != nil {
		return nil, badInputf("-algo-policy: %v", err)
	}
	return sel, nil
}

// eventRun is one simulated iteration and what it produced.
type eventRun struct {
	res     *workloads.RunResult
	net     *collectiveNetwork
	sim     *netmodel.Simulator
	events  uint64
	wall    time.Duration
	outputs []string
	stopped *stopCause // why the run stopped before its end, nil if it did not
	note    string     // what a stopped run's outputs say about it ("" for a complete run)
}

// layersNote is the note of a stopped workload run: why and where it stopped and how much of the
// iteration it finished.
func (r *eventRun) layersNote(layers int) string {
	if r.stopped == nil {
		return ""
	}
	done := 0
	for i := range layers {
		if r.res.Done(i) {
			done++
		}
	}
	return fmt.Sprintf("stopped by %s after %d events at %s us simulated; %d of %d layers finished; totals are up to the stop",
		r.stopped.reason, r.events, strconv.FormatFloat(r.res.End.Microseconds(), 'f', 3, 64), done, layers)
}

// stoppedErr is the error a mode returns after writing a stopped run's outputs.
func (r *eventRun) stoppedErr(what string) error {
	if r.stopped == nil {
		return nil
	}
	return stoppedError{cause: r.stopped, at: r.res.End, note: what}
}

// simulate runs the iteration in the event mode, writing the FCT log where outputs says.
func (s *session) simulate(out *eventOutputs, tally bool) (*eventRun, error) {
	if s.cl.topology.NumGPUs() < s.layout.GPUs {
		return nil, badInputf("the workload runs on %d GPUs but the topology (%s) has %d", s.layout.GPUs, s.cl.fabric, s.cl.topology.NumGPUs())
	}
	fab, err := netmodel.NewFabric(s.cl.topology)
	if err != nil {
		return nil, badInputf("%s: %v", s.cl.fabric, err)
	}
	sel, err := s.selector()
	if err != nil {
		return nil, err
	}
	lat, err := s.sendLatency()
	if err != nil {
		return nil, err
	}
	ccOn := netmodel.CCOn(&s.conf) // errors are reported by newSimulator
	est, err := s.estimateMemory(sel, s.cl.topology.NumLinks(), fab.TotalGPUs(), ccOn)
	if err != nil {
		return nil, badInput(err)
	}
	if err := s.checkMemory(est); err != nil {
		return nil, err
	}
	s.log.Debug("memory estimate", zap.Int64("bytes", est.bytes), zap.String("largest", est.what))
	sched := engine.NewScheduler()
	pfc, err := out.open("PFC_OUTPUT_FILE", "pfc.txt")
	if err != nil {
		return nil, err
	}
	defer pfc.abort()
	sim, pfcLog, err := newSimulator(&s.conf, s.o.conf, sched, fab, tally, s.o.seed, s.o.completion, pfc)
	if err != nil {
		return nil, err
	}
	net := &collectiveNetwork{s: sched, sim: sim, sel: sel, w: s.w, layout: s.layout, total: fab.TotalGPUs(), chunks: s.o.chunks, latency: lat,
		model: s.o.moeModel}
	switch s.o.epDispatch {
	case "nccl":
	case "deepep", "fast":
		net.dispatch, _ = moe.ParseKind(s.o.epDispatch)
		net.model.Seed ^= s.o.seed
	default:
		return nil, badInputf("-ep-dispatch %q: expected nccl, deepep or fast", s.o.epDispatch)
	}
	if tally {
		sim.ObserveBottlenecks(bottleneckTally{net})
	}
	fct, err := out.open("FCT_OUTPUT_FILE", "fct.txt")
	if err != nil {
		return nil, err
	}
	defer fct.abort()
	var fctLog *netmodel.FCTLog
	if fct != nil {
		fctLog = netmodel.NewFCTLog(fct.f, fab, s.conf.PacketPayloadSize)
		if secondCore(s.o.threads) {
			fctLog.Concurrent()
			defer fctLog.Stop()
		}
		sim.Observe(fctLog)
	}
	mons, err := startMonitors(out, sim, &s.conf, s.o.conf, s.log)
	if err != nil {
		return nil, err
	}
	defer mons.abort()
	began := time.Now()
	runner := workloads.NewRunner(s.w, s.layout, sched, net)
	prog := newProgress(s.stderr, s.o.quiet, s.o.progressEvery, sched, "steps", runner.Progress)
	if prog != nil {
		if est.flows > 0 {
			prog.flows = func() (float64, int64) { return sim.Progress(), est.flows }
			prog.started = func() bool { return sim.Flows() > 0 }
		}
		// The analytical mode prices the same iteration in milliseconds; its total is the
		// progress report's yardstick for the time left.
		if rep, err := s.analyticalReport(); err == nil && rep.Summary.Total > 0 {
			prog.expect = engine.Time(rep.Summary.Total * float64(engine.Microsecond))
		}
	}
	guard := guardRun(sched, s.o.limits, prog)
	res, err := runner.Run()
	stopped := guard.finish()
	wall := time.Since(began)
	if stopped != nil {
		// The guard stopped the scheduler between two events: the iteration is unfinished, not
		// broken (an error of the run would have stopped it before the guard's look).
		res, err = runner.Partial(), nil
	}
	if simErr := sim.Err(); simErr != nil {
		err = simErr // the cause of a stopped iteration
	}
	var end engine.Time
	if res != nil {
		end = res.End
	}
	if err := linkDownResult(&s.conf, s.o.conf, err, end, s.log); err != nil {
		return nil, err
	}
	r := &eventRun{res: res, net: net, sim: sim, events: sched.Processed(), wall: wall, stopped: stopped}
	r.note = r.layersNote(len(s.w.Layers))
	if fct != nil {
		if err := fctLog.Flush(); err != nil {
			return nil, err
		}
		path, err := fct.commit()
		if err != nil {
			return nil, err
		}
		r.outputs = append(r.outputs, path)
	}
	if pfc != nil {
		path, err := commitPFC(pfc, pfcLog)
		if err != nil {
			return nil, err
		}
		r.outputs = append(r.outputs, path)
	}
	paths, err := mons.commit()
	if err != nil {
		return nil, err
	}
	r.outputs = append(r.outputs, paths...)
	return r, nil
}

// secondCore says whether the FCT log is formatted and written on a second core (-threads N;
// 0: when Go may use two).
func secondCore(threads int) bool {
	return threads >= 2 || threads == 0 && runtime.GOMAXPROCS(0) >= 2
}

// newSimulator builds the simulator SimAI.conf asks for: ideal max-min sharing when CC_MODE
// asks for no rate control, the fluid queue model with DCQCN, ECN and PFC for CC_MODE 1; flows
// are packets of PACKET_PAYLOAD_SIZE with SimAI's headers, done by the completion rule (-completion:
// "ack" or "arrival"). PFC frames go to pfc when it is not nil (the returned log, to be flushed).
func newSimulator(conf *configs.SimAIConf, confPath string, sched *engine.Scheduler, fab *netmodel.Fabric, tally bool, seed uint64, completion string, pfc *streamFile) (*netmodel.Simulator, *netmodel.PFCLog, error) {
	where := func(key string) string { return confWhere(conf, confPath, key) }
	var atArrival bool
	switch completion {
	case "ack", "":
	case "arrival":
		atArrival = true
	default:
		return nil, nil, badInputf("-completion %q: expected ack or arrival", completion)
	}
	cfg, on, err := netmodel.CCConfig(conf, fab, seed)
	if err != nil {
		return nil, nil, badInputf("%s: CC_MODE: %v", where("CC_MODE"), err)
	}
	tr := netmodel.TransportFor(conf, atArrival)
	if !on {
		sim := netmodel.NewSimulator(sched, fab, netmodel.Options{TrackBottlenecks: tally, Transport: tr})
		if err := scheduleLinkDown(sim, conf, confPath); err != nil {
			return nil, nil, err
		}
		return sim, nil, nil
	}
	var log *netmodel.PFCLog
	var obs ccfluid.PFCObserver
	if pfc != nil {
		log = netmodel.NewPFCLog(pfc.f)
		obs = log
	}
	cfg.Transport = tr
	sim, err := netmodel.NewCCSimulator(sched, fab, cfg, obs)
	if err != nil {
		return nil, nil, badInputf("%s: %v", where("CC_MODE"), err)
	}
	if err := scheduleLinkDown(sim, conf, confPath); err != nil {
		return nil, nil, err
	}
	return sim, log, nil
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
		return badInputf("%s: %v", linkDownWhere(conf, confPath), err)
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
		return badInputf("%s: %v", linkDownWhere(conf, confPath), err)
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

// monitorOutputs are SimAI.conf's monitor keys, the standard names of their files and the key
// of each one's sampling period, in the order of monitors.files.
var monitorOutputs = [...]struct{ key, std, interval string }{
	{"QLEN_MON_FILE", "qlen.txt", "QLEN_MON_INTERVAL"},
	{"BW_MON_FILE", "bw.txt", "BW_MON_INTERVAL"},
	{"RATE_MON_FILE", "rate.txt", "QP_MON_INTERVAL"},
	{"CNP_MON_FILE", "cnp.txt", "QP_MON_INTERVAL"},
}

// monitors are the monitor files of a run (netmodel/monitorlog.go), nil where off.
type monitors struct {
	files [len(monitorOutputs)]*streamFile
	logs  [len(monitorOutputs)]interface{ Flush() error }
}

// startMonitors opens the monitor files SimAI.conf switches on (QLEN_MON_FILE, BW_MON_FILE,
// RATE_MON_FILE, CNP_MON_FILE; qlen.txt, bw.txt, rate.txt, cnp.txt under -o) and starts their
// samplers, between MON_START and MON_END. They sample the congestion-controlled model's queues
// and rates: when CC_MODE asks for no rate control there is nothing to sample, and a warning
// says so instead of writing files.
func startMonitors(out *eventOutputs, sim *netmodel.Simulator, conf *configs.SimAIConf, confPath string, log *zap.Logger) (*monitors, error) {
	mons := &monitors{}
	var keys []string
	for _, m := range monitorOutputs {
		if conf.Present[m.key] {
			keys = append(keys, m.key)
		}
	}
	if len(keys) == 0 {
		return mons, nil
	}
	if sim.CCNetwork() == nil {
		log.Warn("SimAI.conf asks for monitors, but its CC_MODE runs the ideal model, which has no queues or rates to sample: no monitor file is written (CC_MODE 1 has them)",
			zap.Strings("keys", keys))
		return mons, nil
	}
	mon := netmodel.MonitorTimes(conf)
	periods := map[string]engine.Time{"QLEN_MON_INTERVAL": mon.QlenInterval, "BW_MON_INTERVAL": mon.BWInterval, "QP_MON_INTERVAL": mon.QPInterval}
	for _, m := range monitorOutputs {
		if conf.Present[m.key] && periods[m.interval] <= 0 {
			return nil, badInputf("%s: %s 0: %s needs a positive period (µs)", confWhere(conf, confPath, m.interval), m.interval, m.key)
		}
	}
	for i, m := range monitorOutputs {
		f, err := out.open(m.key, m.std)
		if err != nil {
			mons.abort()
			return nil, err
		}
		if f == nil {
			continue
		}
		mons.files[i] = f
		switch m.key {
		case "QLEN_MON_FILE":
			l := netmodel.NewQlenLog(f.f)
			mon.Qlen, mons.logs[i] = l, l
		case "BW_MON_FILE":
			l := netmodel.NewBWLog(f.f)
			mon.BW, mons.logs[i] = l, l
		case "RATE_MON_FILE":
			l := netmodel.NewRateLog(f.f, sim)
			mon.Rate, mons.logs[i] = l, l
		case "CNP_MON_FILE":
			l := netmodel.NewCNPLog(f.f, sim)
			mon.CNP, mons.logs[i] = l, l
		}
	}
	if err := sim.Monitor(mon); err != nil {
		mons.abort()
		return nil, err
	}
	return mons, nil
}

// commit finishes the monitor files and returns their paths.
func (m *monitors) commit() ([]string, error) {
	var paths []string
	for i, f := range m.files {
		if f == nil {
			continue
		}
		if err := m.logs[i].Flush(); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.path, err)
		}
		p, err := f.commit()
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// abort removes the monitor files not committed.
func (m *monitors) abort() {
	for _, f := range m.files {
		f.abort()
	}
}

// commitPFC finishes pfc.txt: the frames logged, or nothing when congestion control is off
// (no PFC frame is ever sent then).
func commitPFC(pfc *streamFile, log *netmodel.PFCLog) (string, error) {
	if log != nil {
		if err := log.Flush(); err != nil {
			return "", fmt.Errorf("writing %s: %w", pfc.path, err)
		}
	}
	return pfc.commit()
}

func runEvent(s *session) error {
	out := s.eventOutputs()
	if err := out.check(); err != nil {
		return err
	}
	r, err := s.simulate(out, false)
	if err != nil {
		return err
	}
	rep, err := workloads.EventEndToEnd(s.w, r.res, workloads.AnalyticalOptions{Layout: s.layout, Overlap: s.ov, PipelineGBps: s.ppGBps, FileName: s.fileName()})
	if err != nil {
		return badInput(err)
	}
	rep.Incomplete = r.note
	var csv bytes.Buffer
	if err := rep.WriteCSV(&csv); err != nil {
		return err
	}
	path, err := out.write("EndToEnd.csv", csv.Bytes())
	if err != nil {
		return err
	}
	files := append(r.outputs, path)
	if path, err = s.writeSummaryJSON(out, r, &rep.Summary); err != nil {
		return err
	}
	files = append(files, path)
	if s.o.visual != 0 {
		var b bytes.Buffer
		if err := writeChart(&b, rep.FileName, rep.Summary, s.o.lang); err != nil {
			return err
		}
		if path, err = out.write("chart.html", b.Bytes()); err != nil {
			return err
		}
		files = append(files, path)
	}
	sm := rep.Summary
	f0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	fmt.Fprintf(s.stdout, "simd event: %s, %d layers, %s\n", s.wname, len(s.w.Layers), s.w.Header.Policy)
	fmt.Fprintf(s.stdout, "  cluster: %d GPUs, %d per server, TP %d PP %d EP %d DP %d on %s\n",
		s.layout.GPUs, s.layout.GPUsPerServer, s.layout.TP, s.layout.PP, s.layout.EP, s.layout.DP(), s.cl.fabric)
	iteration := "iteration"
	if r.stopped != nil {
		iteration = "iteration up to the stop"
	}
	fmt.Fprintf(s.stdout, "  %s: %s us = compute %s + exposed comm %s + bubble %s + PP comm %d\n",
		iteration, f0(sm.Total), f0(sm.Compute), f0(sm.Exposed), f0(sm.Bubble), sm.PPComm)
	g := sm.WholeGroupsUs() // DP, DP_EP, TP, EP, adding up to the exposed comm printed above
	fmt.Fprintf(s.stdout, "  exposed comm by group (us): TP %s, DP %s, DP_EP %s, EP %s\n", f0(g[2]), f0(g[0]), f0(g[1]), f0(g[3]))
	fmt.Fprintf(s.stdout, "  simulated %d flows, %d events in %.2f s\n", r.sim.Flows(), r.events, r.wall.Seconds())
	for _, p := range files {
		fmt.Fprintf(s.stdout, "results: %s\n", p)
	}
	if r.stopped != nil {
		fmt.Fprintf(s.stdout, "  incomplete: %s\n", rep.Incomplete)
	}
	if n := r.sim.Network(); n != nil {
		st := n.Stats()
		s.log.Debug("event run", zap.Uint64("flows", r.sim.Flows()), zap.Uint64("events", r.events),
			zap.Uint64("recomputes", st.Recomputes), zap.Uint64("solves", st.Solves), zap.Uint64("rerated", st.Rerated),
			zap.Uint64("region_flows", st.RegionFlows), zap.Uint64("solved_flows", st.SolvedFlows), zap.Uint64("expansions", st.Expansions))
	}
	if n := r.sim.CCNetwork(); n != nil {
		st := n.Stats()
		s.log.Info("congestion control", zap.Uint64("marks", st.Marks), zap.Uint64("cnps", st.CNPs), zap.Uint64("rate_changes", st.RateChanges),
			zap.Uint64("pfc_pauses", st.Pauses), zap.Uint64("pfc_resumes", st.Resumes), zap.Uint64("switch_checks", st.SwitchChecks),
			zap.Uint64("port_shares", st.Shares), zap.Uint64("demands", st.Demands), zap.Uint64("window_targets", st.WindowTargets),
			zap.Uint64("events", st.Events))
	}
	if r.stopped != nil {
		return r.stoppedErr("the outputs hold what was computed and are marked incomplete")
	}
	return s.plotRun(out.dir, out.prefix)
}

// breakdownJSON is summary.json's breakdown of a workload's iteration: EndToEnd.csv's summary
// line in µs, unrounded. The exposed time by group adds up to exposed_comm_us; PP communication
// and the bubble are outside it.
type breakdownJSON struct {
	IterationUs   float64 `json:"iteration_us"`
	ComputeUs     float64 `json:"compute_us"`
	ExposedCommUs float64 `json:"exposed_comm_us"`
	TPUs          float64 `json:"exposed_tp_us"`
	DPUs          float64 `json:"exposed_dp_us"`
	DPEPUs        float64 `json:"exposed_dp_ep_us"`
	EPUs          float64 `json:"exposed_ep_us"`
	PPUs          float64 `json:"exposed_pp_us"`
	BubbleUs      float64 `json:"bubble_us"`
}

// writeSummaryJSON writes summary.json: every collective (group, algorithm, bytes, start, end,
// flows), the breakdown of the iteration's time when sm is not nil (a workload run), and the
// run's totals. wall_clock_seconds is the one field that differs between two runs of the same
// inputs.
func (s *session) writeSummaryJSON(out *eventOutputs, r *eventRun, sm *workloads.EndToEndSummary) (string, error) {
	mode := "event"
	if s.o.flows != "" {
		mode = "flows"
	}
	summary := struct {
		Mode        string             `json:"mode"`
		Workload    string             `json:"workload"`
		Topology    string             `json:"topology"`
		GPUs        int                `json:"gpus"`
		Collectives []collectiveRecord `json:"collectives"`
		Breakdown   *breakdownJSON     `json:"breakdown,omitempty"`
		Run         struct {
			Complete         bool    `json:"complete"`
			Incomplete       string  `json:"incomplete,omitempty"`
			EndUs            float64 `json:"end_us"`
			Events           uint64  `json:"events"`
			Flows            uint64  `json:"flows"`
			WallClockSeconds float64 `json:"wall_clock_seconds"`
		} `json:"run"`
	}{Mode: mode, Workload: s.wname, Topology: s.cl.fabric, GPUs: s.layout.GPUs, Collectives: r.net.finished()}
	if sm != nil {
		summary.Breakdown = &breakdownJSON{IterationUs: sm.Total, ComputeUs: sm.Compute, ExposedCommUs: sm.Exposed,
			TPUs: sm.TPComm, DPUs: sm.DPComm, DPEPUs: sm.DPEPComm, EPUs: sm.EPComm, PPUs: float64(sm.PPComm), BubbleUs: sm.Bubble}
	}
	summary.Run.Complete = r.stopped == nil
	summary.Run.Incomplete = r.note
	summary.Run.EndUs = r.res.End.Microseconds()
	summary.Run.Events = r.events
	summary.Run.Flows = r.sim.Flows()
	summary.Run.WallClockSeconds = r.wall.Seconds()
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return "", err
	}
	return out.write("summary.json", append(data, '\n'))
}

// eventOutputs decides where the event mode's files go (see -o in simd -h): with -o every file
// goes into the output folder under its standard name and SimAI.conf's *_OUTPUT_FILE and
// *_MON_FILE keys only switch outputs on or off; without -o the paths a user's SimAI.conf gives
// are used as they are, and the rest goes to results/. With the shipped SimAI.conf, whose paths
// are SimAI's /etc/astra-sim ones, everything goes to the output folder.
type eventOutputs struct {
	dir         string
	prefix      string
	confPaths   bool
	conf        map[string]string // key → path as given
	confPresent map[string]bool
}

func (s *session) eventOutputs() *eventOutputs {
	o := s.o
	out := &eventOutputs{dir: filepath.Join(o.outDir, o.resultFolder), confPaths: !o.set["o"] && o.conf != "",
		conf: map[string]string{}, confPresent: s.conf.Present}
	if o.set["r"] {
		out.prefix = o.result
	}
	out.conf["FCT_OUTPUT_FILE"] = s.conf.FCTOutputFile
	out.conf["PFC_OUTPUT_FILE"] = s.conf.PFCOutputFile
	out.conf["QLEN_MON_FILE"] = s.conf.QlenMonFile
	out.conf["BW_MON_FILE"] = s.conf.BWMonFile
	out.conf["RATE_MON_FILE"] = s.conf.RateMonFile
	out.conf["CNP_MON_FILE"] = s.conf.CNPMonFile
	return out
}

// check refuses, before anything is simulated, a SimAI.conf output path whose folder does not
// exist.
func (out *eventOutputs) check() error {
	if !out.confPaths {
		return nil
	}
	for _, key := range []string{"FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "BW_MON_FILE", "RATE_MON_FILE", "CNP_MON_FILE"} {
		if !out.confPresent[key] {
			continue
		}
		dir := filepath.Dir(out.conf[key])
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return badInputf("SimAI.conf %s %s: the folder %s does not exist (create it, or give -o DIR to write every output there)", key, out.conf[key], dir)
		}
	}
	return nil
}

// path is where an output goes.
func (out *eventOutputs) path(key, std string) string {
	if out.confPaths && key != "" {
		return out.conf[key]
	}
	return filepath.Join(out.dir, out.prefix+std)
}

// write writes a whole output atomically.
func (out *eventOutputs) write(std string, data []byte) (string, error) {
	p := out.path("", std)
	return p, writeFileAtomic(p, func(f *os.File) error { _, err := f.Write(data); return err })
}

// streamFile is an output written while the simulation runs, under a temporary name until
// commit.
type streamFile struct {
	f    *os.File
	path string
}

// open starts a streamed output if its SimAI.conf key switches it on; nil if it is off.
func (out *eventOutputs) open(key, std string) (*streamFile, error) {
	if !out.confPresent[key] {
		return nil, nil
	}
	p := out.path(key, std)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating the folder of %s: %w", p, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", p, err)
	}
	return &streamFile{f: f, path: p}, nil
}

func (sf *streamFile) commit() (string, error) {
	name := sf.f.Name()
	if err := sf.f.Chmod(0o644); err != nil {
		return "", err
	}
	if err := sf.f.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", sf.path, err)
	}
	sf.f = nil
	if err := os.Rename(name, sf.path); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", sf.path, err)
	}
	return sf.path, nil
}

// abort removes an output that was not committed.
func (sf *streamFile) abort() {
	if sf == nil || sf.f == nil {
		return
	}
	sf.f.Close()
	os.Remove(sf.f.Name())
}
