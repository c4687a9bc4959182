package sim

import (
	"strconv"
	"strings"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/ccl/analytical"
	"simd/ccl/nccl"
	"simd/configs"
	"simd/engine"
	"simd/topo"
	"simd/workloads"
	"simd/workloads/moe"
)

// Cluster is the machine a workload runs on: its GPUs and the bandwidths the analytical model
// prices collectives with, and the topology the event mode routes flows over.
type Cluster struct {
	GPUs, GPUsPerServer, NICsPerServer int
	NVLinkGBps, NICGBps                float32 // GB/s
	GPUType                            string  // A100, H100, ... (SimAI's names)
	Topology                           *topo.Topology
	// Fabric names the topology in messages and reports: its file, or how it was built.
	Fabric string
}

// Inputs are what a workload run reads: the parsed workload, the cluster and SimAI.conf.
type Inputs struct {
	Workload *workloads.Workload
	// WorkloadName is how the user named the workload (a file, or a shipped example's name).
	WorkloadName string
	Cluster      Cluster
	Conf         configs.SimAIConf
	// ConfPath is SimAI.conf's file, for messages that name its lines; "" for the shipped one.
	ConfPath string
	// Log receives warnings and debug figures; nil logs nothing.
	Log *zap.Logger
}

// Options are how a workload's iteration is priced and reported, in both modes.
type Options struct {
	// Overlap is SimAI_analytical's -dp_o, -ep_o, -tp_o, -pp_o (each 0 to 1).
	Overlap workloads.Overlap
	// BusBW, when not nil, prices collectives with fixed bandwidths (SimAI's busbw.yaml) instead
	// of SimAI's computed busbw.
	BusBW *configs.BusBW
	// FileName is EndToEnd.csv's "File name" field.
	FileName string
	// Placement runs the workload on some of the topology's GPUs: rank r on GPU Placement[r]
	// (ccl.Layout.Placement); Cluster.GPUs is then the job's GPU count. nil: rank r on GPU r.
	Placement []int32
}

// EventOptions are the settings of an event run. The zero value is SimAI's behaviour, but for
// SendLatency, whose 0 is no latency (-1 is SimAI's table).
type EventOptions struct {
	// Algorithms chooses the collective algorithms (its GPUType is the cluster's).
	Algorithms algo.Options
	// Chunks is the number of chunks per channel of tree, NVLS and NVLS-Tree collectives (0:
	// their default).
	Chunks int
	// SendLatency is every flow's start latency; negative: SimAI's per-algorithm table.
	SendLatency engine.Time
	// EPDispatch runs the EP all-to-alls as DeepEP or FAST dispatches of tokens drawn with
	// DispatchModel (seeded with Seed); 0 is SimCCL's all-to-all.
	EPDispatch    moe.Kind
	DispatchModel moe.DispatchModel
	// Seed seeds every random choice of the run (DCQCN's marking, dispatch routing).
	Seed uint64
	// AtArrival completes a flow when its last byte arrives instead of when its last packet's
	// ACK is back (SimAI's rule).
	AtArrival bool
	// PaceAtOnce applies a DCQCN rate change at once instead of after the packet gap of the
	// rate before it (SimAI's NIC; ParsePacing).
	PaceAtOnce bool
	// MarkOnEnqueue makes ports ECN-mark what arrives at them instead of what they send
	// (SimAI's switches; ParseECNMarking).
	MarkOnEnqueue bool
	// WindowCapFromStart caps a windowed flow at window/RTT from its start instead of sending
	// its first window at its rate before any ACK (SimAI's NIC; ParseFirstWindow).
	WindowCapFromStart bool
	// ArrivalsAtInjection lets every link of a flow's path receive the flow's injection at once
	// (the classic fluid model) instead of what leaves the queues before it, in the proportions
	// the queued bytes arrived in (SimAI's switches forward what they dequeue; ParseForwarding).
	ArrivalsAtInjection bool
	// AckWait is what an ACK waits for behind data at the links of its route after the first
	// that sends (ParseAckWait): the zero value is SimAI's.
	AckWait AckWaitRule
	// ExactPacketTimes sends a packet in bits/rate instead of the whole nanoseconds, rounded
	// down, of ns-3's clock (SimAI; ParsePacketTime, fluid.Transport.NanosecondClock).
	ExactPacketTimes bool
	// ChunksOnArrival has a rank pass each chunk of a ring's channel on as soon as it has
	// arrived, instead of in the channel's order, as astra-sim does (ParseChunkOrder,
	// netmodel.Simulator.SetIssueInOrder).
	ChunksOnArrival bool
	// StartInIssueOrder makes the queue pairs of the sends ranks issue before any flow of theirs
	// is done in the order the sends were issued, instead of the order SimAI's multithreaded
	// ns-3 delivers them through a server's mailbox (ParseStartOrder,
	// netmodel.Simulator.SetStartMailbox).
	StartInIssueOrder bool
	// RanksInLockstep runs a workload's pass as one program whose collectives are done when
	// done everywhere, and reports that, instead of every rank running its own copy and the
	// report being rank 0's, as SimAI does (ParseRanks, workloads.Ranks). A pipelined pass
	// runs a program per stage unless StageRanksOnTheirOwn.
	RanksInLockstep bool
	// StageRanksOnTheirOwn runs a pipelined pass rank by rank too, every rank of a stage on
	// its own copy of the stage's plan (workloads.NewRankPipeline), where by default each stage
	// is one program (SimAI has no pipeline to follow; docs/models.md, "Rank by rank", has
	// what it costs). Without effect with RanksInLockstep.
	StageRanksOnTheirOwn bool
	// NICFairShare has a NIC port share its rate as a fluid (processor sharing) among the flows
	// that ask for more than their share, instead of serving them in turn, a packet each, as
	// SimAI's NIC does (ParseNICSharing, ccfluid.Config.Turns).
	NICFairShare bool
	// RegularMarks places a port's ECN marks evenly, one each time the expected count of
	// marked packets reaches a whole number, instead of as a Poisson process of that rate as
	// ns-3's per-packet draws fall (ParseECNDraws, ccfluid.Config.PoissonMarks).
	RegularMarks bool
	// BoundedPFCChecks looks at the ports of a PFC switch only when a bound on their
	// occupancies comes near a pause, instead of whenever one of its queues changes
	// (ParsePFCChecks, ccfluid.Config.BoundedPFCChecks).
	BoundedPFCChecks bool
	// FlowsApart keeps every flow on its own in the ideal model (CC off) instead of bundling
	// the flows in flight on one path (ParseSamePath, netmodel.Options.Bundles). The rates
	// are the same; times differ by rounding.
	FlowsApart bool
	// NVLink is how the flows inside a server cross its NVLink under congestion control
	// (ParseNVLink, ccfluid.Config.NVLink): the zero value, NVLinkAuto, goes packet by packet
	// where a server's NVLink goes busy with a short flow, as SimAI's ns-3 does, and as a fluid
	// where with a long one. Packets are never used where NVLS may run (an NVSwitch that
	// reduces is not modelled as packets) or where LINK_DOWN takes down an NVLink.
	NVLink NVLinkModel
	// LookAhead says whether the scheduler looks one event ahead, the network asking for the
	// records the next event will read while the one before runs (ParseLookAhead,
	// netmodel.Simulator.SetLookAhead): LookAheadAuto (by the size of the network's link
	// tables, netmodel.LookAheadBytes), LookAheadOn or LookAheadOff. The results are the same.
	LookAhead LookAheadMode
	// MaxEvents stops the run cleanly after that many events (0: no limit); the result is
	// then incomplete and Result.Stopped is an EventLimitError.
	MaxEvents uint64
	// MaxMemory refuses a run whose estimated peak memory is above it; 0: the memory the
	// machine has available.
	MaxMemory int64
	// QPsPerConnection splits each flow between two servers into that many QPs, hashed
	// independently onto the fabric and taking the NIC's ports in turn
	// (netmodel.Simulator.SetQPsPerConnection); 0 or 1: one QP per flow, SimAI's behaviour.
	QPsPerConnection int
}

// SetFromEnv fills the options a caller left unset from SimAI's and NCCL's environment
// variables, as lookup (os.LookupEnv) gives them: a negative SendLatency from AS_SEND_LAT (µs, as
// SimAI's code reads it; without it SimAI's table stays), and a QPsPerConnection of 0 from
// NCCL_IB_QPS_PER_CONNECTION (nccl.ParseQPsPerConnection; without it 1). A value that does not
// parse is an input error naming the variable.
func (o *EventOptions) SetFromEnv(lookup func(string) (string, bool)) error {
	if v, ok := lookup("AS_SEND_LAT"); ok && o.SendLatency < 0 {
		us, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || us < 0 {
			return BadInputf("AS_SEND_LAT=%q: expected a whole number of microseconds", v)
		}
		o.SendLatency = engine.Time(us) * engine.Microsecond
	}
	if o.QPsPerConnection == 0 {
		o.QPsPerConnection = 1
		if v, ok := lookup("NCCL_IB_QPS_PER_CONNECTION"); ok {
			k, err := nccl.ParseQPsPerConnection(v)
			if err != nil {
				return BadInputf("NCCL_IB_QPS_PER_CONNECTION=%q: %v", v, err)
			}
			o.QPsPerConnection = k
		}
	}
	return nil
}

// orNop is log, or a logger that drops everything.
func orNop(log *zap.Logger) *zap.Logger {
	if log == nil {
		return zap.NewNop()
	}
	return log
}

// Simulation is a workload on a cluster, checked and laid out, ready to run in either mode.
type Simulation struct {
	in     Inputs
	opt    Options
	log    *zap.Logger
	layout ccl.Layout
	cost   workloads.CostModel
	ppGBps float32
}

// New checks that the workload fits the cluster (its TP, PP and EP divide the GPUs) and builds
// the analytical cost model.
func New(in Inputs, opt Options) (*Simulation, error) {
	s := &Simulation{in: in, opt: opt, log: orNop(in.Log)}
	cl := in.Cluster
	if err := in.Workload.CheckLayout(cl.GPUs); err != nil {
		return nil, BadInput(err)
	}
	s.layout = in.Workload.Layout(cl.GPUs, cl.GPUsPerServer)
	s.layout.Placement = opt.Placement
	if err := s.layout.Validate(); err != nil {
		return nil, BadInputf("%s on %d GPUs: %v", in.WorkloadName, cl.GPUs, err)
	}
	if t := cl.Topology; t != nil && opt.Placement != nil {
		for r, g := range opt.Placement {
			if int(g) >= t.NumGPUs() {
				return nil, BadInputf("%s: rank %d is placed on GPU %d, beyond the topology's %d GPUs (%s)", in.WorkloadName, r, g, t.NumGPUs(), cl.Fabric)
			}
		}
	}
	var err error
	if s.cost, s.ppGBps, err = costModel(opt.BusBW, s.layout, cl); err != nil {
		return nil, err
	}
	return s, nil
}

// Layout is how the workload's parallelism maps onto the cluster's GPUs.
func (s *Simulation) Layout() ccl.Layout { return s.layout }

// Inputs are the simulation's inputs.
func (s *Simulation) Inputs() *Inputs { return &s.in }

// reportOptions are the options of the per-layer reports.
func (s *Simulation) reportOptions() workloads.AnalyticalOptions {
	return workloads.AnalyticalOptions{Layout: s.layout, Overlap: s.opt.Overlap, PipelineGBps: s.ppGBps, FileName: s.opt.FileName}
}

// Analytical runs the compute-only iteration and prices its collectives in closed form, as
// SimAI_analytical does.
func (s *Simulation) Analytical() (*workloads.AnalyticalReport, error) {
	runRes, err := workloads.NewRunner(s.in.Workload, s.layout, engine.NewScheduler(), nil).Run()
	if err != nil {
		return nil, err
	}
	rep, err := workloads.AnalyticalEndToEnd(s.in.Workload, runRes, s.cost, s.reportOptions())
	if err != nil {
		return nil, BadInput(err)
	}
	return rep, nil
}

// costModel is SimAI's computed-busbw model, or the fixed bandwidths of busbw. It also returns
// the bandwidth pipeline-parallel traffic crosses: the busbw file's PP entry, else one GPU's
// share of its server's NICs.
func costModel(busbw *configs.BusBW, l ccl.Layout, cl Cluster) (workloads.CostModel, float32, error) {
	perGPU := float32(cl.NICGBps * float32(cl.NICsPerServer) / float32(cl.GPUsPerServer))
	if busbw != nil {
		m := analytical.NewFileModel(*busbw)
		if pp := m.PipelineGBps(); pp > 0 {
			return m, pp, nil
		}
		return m, perGPU, nil
	}
	nic, nv, ata, err := configs.ShippedRatioTables()
	if err != nil {
		return nil, 0, err
	}
	m, err := analytical.New(analytical.Params{
		Layout: l, NICsPerServer: cl.NICsPerServer, NVLinkGBps: cl.NVLinkGBps, NICGBps: cl.NICGBps,
		Ratios: analytical.Ratios{NIC: nic, NVLink: nv, AllToAll: ata},
	})
	if err != nil {
		return nil, 0, BadInput(err)
	}
	return m, perGPU, nil
}
