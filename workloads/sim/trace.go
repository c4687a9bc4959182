package sim

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/workloads/chakra"
)

// Chakra execution traces: a checked trace (chakra.Load) runs with ASTRA-sim's execution
// semantics in chakra.Executor, whose Network is implemented here — in the event mode by the
// algorithm selector and the fabric, as a workload's collectives are; in the analytical mode by
// a closed form. Rank r of the trace is GPU r of the topology.

// TraceInputs are what a trace run reads.
type TraceInputs struct {
	Trace *chakra.Trace
	// Cluster's topology carries the ranks (the event mode), its bandwidths price the
	// analytical mode.
	Cluster  Cluster
	Conf     configs.SimAIConf
	ConfPath string
	// Exec times compute and memory nodes (the roofline, the memory bandwidth).
	Exec chakra.ExecOptions
	Log  *zap.Logger
	// Observer, if not nil, sees every node that completes (a timeline: Timeline.TraceRanks).
	Observer chakra.Observer
}

// TraceResult is what a trace run produced: ASTRA-sim's per-rank report and the collectives.
type TraceResult struct {
	Mode  string // event or analytical
	Ranks []chakra.RankResult
	// Collectives are the collectives and sends in start order (Layer is their sequence number,
	// Name the node's name on the group's lowest rank, Group the pg_name or "all").
	Collectives []Collective
	Sim         *netmodel.Simulator // nil in the analytical mode
	Events      uint64
	Wall        time.Duration
	// Stopped, Note and End are as in Result.
	Stopped error
	Note    string
	End     engine.Time
}

// Finished is the collectives that finished, in start order.
func (r *TraceResult) Finished() []Collective { return finished(r.Collectives) }

// checkTrace checks that the trace fits the cluster's topology.
func (in *TraceInputs) check() error {
	if in.Trace == nil {
		return BadInputf("no trace")
	}
	if t := in.Cluster.Topology; t != nil && in.Trace.Ranks() > t.NumGPUs() {
		r := t.NumGPUs()
		return BadInputf("%s: rank %d: the trace has %d ranks but the topology (%s) has %d GPUs", in.Trace.Files[r].Name, r, in.Trace.Ranks(), in.Cluster.Fabric, t.NumGPUs())
	}
	return nil
}

// RunTrace runs a Chakra trace in the event mode: every collective is planned by the algorithm
// selector on its explicit ranks and its flows cross the fabric; sends are one flow each.
// Cancelling ctx stops the run cleanly between two events (the result then holds what was done,
// Stopped set). opt and att are as for Simulation.Event.
func RunTrace(ctx context.Context, in TraceInputs, opt EventOptions, att Attachments) (*TraceResult, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	cl := &in.Cluster
	if cl.Topology == nil {
		return nil, BadInputf("the event mode needs a topology")
	}
	fab, sel, err := cl.fabricAndSelector(opt.Algorithms)
	if err != nil {
		return nil, err
	}
	params := algo.Params{Chunks: opt.Chunks, PXN: opt.Algorithms.PXNVariant}
	est, err := estimateTraceMemory(in.Trace, sel, cl.GPUsPerServer, fab.TotalGPUs(), cl.Topology.NumLinks(), netmodel.CCOn(&in.Conf), params, opt.QPsPerConnection)
	if err != nil {
		return nil, BadInput(err)
	}
	if err := checkMemory(est, opt.MaxMemory); err != nil {
		return nil, err
	}
	sched, sim, err := att.simulator(&in.Conf, in.ConfPath, fab, false, opt, true, in.Log)
	if err != nil {
		return nil, err
	}
	net := &traceNetwork{s: sched, sim: sim, sel: sel, gps: cl.GPUsPerServer, total: fab.TotalGPUs(),
		params: params, latency: latency(opt.SendLatency)}
	ex := chakra.NewExecutor(in.Trace, sched, net, in.Exec)
	if in.Observer != nil {
		ex.SetObserver(in.Observer)
	}
	began := time.Now()
	nodes := in.Trace.Nodes()
	flowsDone := newFlowsDone(sim.Progress, sim.ProgressCounted)
	status := func() Status {
		done := 0
		for _, r := range ex.Results() {
			done += r.Nodes
		}
		return flowsDone.status(Status{Events: sched.Processed(), Now: sched.Now(), Done: done, Total: nodes,
			Started: sim.Flows() > 0})
	}
	ex.SetEnded(att.Ended) // the link sampler stops with the trace, not with the monitors
	ex.Start()
	g := watchRun(ctx, sched, opt.MaxEvents, att.Watch, status)
	sched.Run()
	stopped := g.finish()
	res := &TraceResult{Mode: "event", Ranks: ex.Results(), Collectives: net.records, Sim: sim,
		Events: sched.Processed(), Wall: time.Since(began), Stopped: stopped, End: sched.Now()}
	if err := sim.Err(); err != nil {
		return nil, err
	}
	if err := ex.Err(); err != nil {
		return nil, BadInput(err)
	}
	if stopped == nil {
		if err := ex.Stuck(); err != nil {
			return nil, BadInput(err)
		}
	} else {
		res.Note = res.stoppedNote(nodes)
	}
	res.End = lastFinish(res.Ranks)
	if stopped != nil {
		res.End = sched.Now()
	}
	if err := linkDownResult(&in.Conf, in.ConfPath, nil, res.End, orNop(in.Log)); err != nil {
		return nil, err
	}
	return res, nil
}

func lastFinish(rs []chakra.RankResult) engine.Time {
	var end engine.Time
	for _, r := range rs {
		end = max(end, r.Finish)
	}
	return end
}

func (r *TraceResult) stoppedNote(nodes int) string {
	done := 0
	for _, rr := range r.Ranks {
		done += rr.Nodes
	}
	return fmt.Sprintf("stopped by %s after %d events at %s us simulated; %d of %d nodes finished; per-rank figures are up to the stop",
		r.Stopped, r.Events, strconv.FormatFloat(r.End.Microseconds(), 'f', 3, 64), done, nodes)
}

// traceNetwork is a trace's Network in the event mode.
type traceNetwork struct {
	s       *engine.Scheduler
	sim     *netmodel.Simulator
	sel     *algo.Selector
	gps     int
	total   int
	params  algo.Params
	latency func(algo.Choice) netmodel.Latency
	planned map[string]algo.Planned
	records []Collective
}

// planKeyOf names a collective's plan: the operation, size and ranks.
func planKeyOf(op ccl.Op, bytes int64, ranks []int32) string {
	b := make([]byte, 0, 9+4*len(ranks))
	b = append(b, byte(op))
	b = binary.LittleEndian.AppendUint64(b, uint64(bytes))
	for _, r := range ranks {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	return string(b)
}

// groupKind is the kind the selector is asked about for a group of explicit ranks: TP inside
// one server (where NVLS may apply), DP across servers.
func groupKind(req *ccl.Request) ccl.GroupKind {
	if req.Servers() == 1 {
		return ccl.GroupTP
	}
	return ccl.GroupDP
}

func (n *traceNetwork) plan(op ccl.Op, ranks []int32, bytes int64) (algo.Planned, error) {
	k := planKeyOf(op, bytes, ranks)
	if p, ok := n.planned[k]; ok {
		return p, nil
	}
	req := ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: n.gps, TotalGPUs: n.total, Bytes: bytes, Truncate: n.sel.Truncates()}
	c, err := n.sel.Choose(op, groupKind(&req), &req)
	if err != nil {
		return algo.Planned{}, err
	}
	d, err := algo.Generate(c.Algorithm, req, n.params)
	if err != nil {
		return algo.Planned{}, fmt.Errorf("%s %s on ranks %v: %w", c.Algorithm, op, ranks[:min(len(ranks), 8)], err)
	}
	p := algo.Planned{Ranks: ranks, Choice: c, DAG: d}
	if n.planned == nil {
		n.planned = map[string]algo.Planned{}
	}
	n.planned[k] = p
	return p, nil
}

func (n *traceNetwork) Collective(c chakra.Comm, done func()) error {
	p, err := n.plan(c.Op, c.Ranks, c.Bytes)
	if err != nil {
		return err
	}
	n.run(p, traceRecord(c.Seq, c.Name, c.Op.String(), c.Group, len(c.Ranks), c.Bytes), done)
	return nil
}

func (n *traceNetwork) Send(src, dst int32, bytes int64, done func()) error {
	d, err := ccl.SendDAG([]int32{src}, []int32{dst}, n.gps, n.total, bytes)
	if err != nil {
		return err
	}
	p := algo.Planned{Ranks: d.Coll.Ranks, Choice: algo.Choice{Algorithm: "p2p", Reason: "Chakra send"}, DAG: d}
	n.run(p, traceRecord(len(n.records), fmt.Sprintf("send %d→%d", src, dst), ccl.OpSend.String(), "", 2, bytes), done)
	return nil
}

func traceRecord(seq int, name, op, group string, size int, bytes int64) Collective {
	if group == "" {
		group = "all"
	}
	return Collective{Layer: seq, Name: name, Op: op, Group: group, Groups: 1, GroupSize: size, Bytes: uint64(bytes)}
}

func (n *traceNetwork) run(p algo.Planned, rec Collective, done func()) {
	idx := len(n.records)
	rec.Algorithm = string(p.Choice.Algorithm)
	rec.Flows = int64(p.DAG.NumFlows())
	rec.StartUs = n.s.Now().Microseconds()
	n.records = append(n.records, rec)
	finish := func() {
		n.records[idx].EndUs = n.s.Now().Microseconds()
		n.records[idx].Done = true
		done()
	}
	if p.DAG.NumFlows() == 0 {
		n.s.AtFunc(n.s.Now(), finish)
		return
	}
	n.sim.Run(p.DAG, n.latency(p.Choice), finish)
}

// RunTraceAnalytical runs a Chakra trace in the analytical mode: the same executor, with every
// collective priced by nccl-tests' bus-bandwidth form, time = BusFactor(op, n) · bytes / B,
// where B is the NVLink bandwidth for a group inside one server and otherwise a GPU's share of
// its server's NICs (capped by NVLink); a send takes bytes / B of its pair. No flows, no
// sharing: collectives that overlap do not slow each other.
func RunTraceAnalytical(in TraceInputs) (*TraceResult, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	cl := &in.Cluster
	if cl.GPUsPerServer < 1 || !(cl.NVLinkGBps > 0) || !(cl.NICGBps > 0) || cl.NICsPerServer < 1 {
		return nil, BadInputf("the analytical mode needs GPUs per server, NVLink and NIC bandwidths and NICs per server (got %d, %g, %g, %d)",
			cl.GPUsPerServer, cl.NVLinkGBps, cl.NICGBps, cl.NICsPerServer)
	}
	sched := engine.NewScheduler()
	net := &closedFormNetwork{s: sched, cl: cl}
	ex := chakra.NewExecutor(in.Trace, sched, net, in.Exec)
	if in.Observer != nil {
		ex.SetObserver(in.Observer)
	}
	began := time.Now()
	ex.Start()
	sched.Run()
	if err := ex.Err(); err != nil {
		return nil, BadInput(err)
	}
	if err := ex.Stuck(); err != nil {
		return nil, BadInput(err)
	}
	res := &TraceResult{Mode: "analytical", Ranks: ex.Results(), Collectives: net.records, Events: sched.Processed(), Wall: time.Since(began)}
	res.End = lastFinish(res.Ranks)
	return res, nil
}

// closedFormNetwork prices a trace's communication in closed form (RunTraceAnalytical).
type closedFormNetwork struct {
	s       *engine.Scheduler
	cl      *Cluster
	records []Collective
}

// gbps is the bandwidth of a group: NVLink inside a server, else a GPU's share of the NICs.
func (n *closedFormNetwork) gbps(ranks []int32) float64 {
	gps := int32(n.cl.GPUsPerServer)
	for _, r := range ranks[1:] {
		if r/gps != ranks[0]/gps {
			nic := float64(n.cl.NICGBps) * float64(n.cl.NICsPerServer) / float64(gps)
			return min(nic, float64(n.cl.NVLinkGBps))
		}
	}
	return float64(n.cl.NVLinkGBps)
}

func (n *closedFormNetwork) after(bytes float64, gbps float64, rec Collective, done func()) {
	d := engine.Time(bytes / (gbps * 1e9) * 1e12)
	rec.StartUs = n.s.Now().Microseconds()
	rec.Algorithm = "closed-form"
	idx := len(n.records)
	n.records = append(n.records, rec)
	n.s.AfterFunc(d, func() {
		n.records[idx].EndUs = n.s.Now().Microseconds()
		n.records[idx].Done = true
		done()
	})
}

func (n *closedFormNetwork) Collective(c chakra.Comm, done func()) error {
	f := ccl.BusFactor(c.Op, len(c.Ranks))
	n.after(f*float64(c.Bytes), n.gbps(c.Ranks), traceRecord(c.Seq, c.Name, c.Op.String(), c.Group, len(c.Ranks), c.Bytes), done)
	return nil
}

func (n *closedFormNetwork) Send(src, dst int32, bytes int64, done func()) error {
	n.after(float64(bytes), n.gbps([]int32{src, dst}), traceRecord(len(n.records), fmt.Sprintf("send %d→%d", src, dst), ccl.OpSend.String(), "", 2, bytes), done)
	return nil
}

// rankJSON is one rank in summary.json: ASTRA-sim's report, in µs.
type rankJSON struct {
	Rank      int     `json:"rank"`
	FinishUs  float64 `json:"finish_us"`
	ComputeUs float64 `json:"compute_us"`
	ExposedUs float64 `json:"exposed_comm_us"`
	Nodes     int     `json:"nodes"`
}

// SummaryJSON is a trace run's summary.json: every finished collective and send, each rank's
// finish, compute and exposed communication time (ASTRA-sim's report), and the run's totals.
func (r *TraceResult) SummaryJSON(h SummaryHeader) ([]byte, error) {
	ranks := make([]rankJSON, len(r.Ranks))
	for i, rr := range r.Ranks {
		ranks[i] = rankJSON{Rank: rr.Rank, FinishUs: rr.Finish.Microseconds(), ComputeUs: rr.Compute.Microseconds(),
			ExposedUs: rr.Exposed.Microseconds(), Nodes: rr.Nodes}
	}
	run := runJSON{Complete: r.Stopped == nil, Incomplete: r.Note, EndUs: r.End.Microseconds(), Events: r.Events, WallClockSeconds: r.Wall.Seconds()}
	if r.Sim != nil {
		run.Flows = r.Sim.Flows()
	}
	summary := struct {
		Mode        string       `json:"mode"`
		Workload    string       `json:"workload"`
		Topology    string       `json:"topology"`
		GPUs        int          `json:"gpus"`
		Ranks       []rankJSON   `json:"ranks"`
		Collectives []Collective `json:"collectives"`
		Run         runJSON      `json:"run"`
	}{Mode: h.Mode, Workload: h.Workload, Topology: h.Topology, GPUs: h.GPUs, Ranks: ranks, Collectives: r.Finished(), Run: run}
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteRanksCSV writes ranks.csv: per rank, ASTRA-sim's "finished, T cycles, exposed
// communication" report in ns (its cycle), with the compute time and the nodes done.
func (r *TraceResult) WriteRanksCSV(w io.Writer) error {
	var b strings.Builder
	b.WriteString("rank,finish_ns,compute_ns,exposed_comm_ns,nodes,total_nodes\n")
	ns := func(t engine.Time) string {
		return strconv.FormatFloat(float64(t)/float64(engine.Nanosecond), 'f', -1, 64)
	}
	for _, rr := range r.Ranks {
		fmt.Fprintf(&b, "%d,%s,%s,%s,%d,%d\n", rr.Rank, ns(rr.Finish), ns(rr.Compute), ns(rr.Exposed), rr.Nodes, rr.Total)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Slowest is the rank that finished last (the lowest such rank).
func (r *TraceResult) Slowest() chakra.RankResult {
	i := 0
	for j, rr := range r.Ranks {
		if rr.Finish > r.Ranks[i].Finish {
			i = j
		}
	}
	return r.Ranks[i]
}
