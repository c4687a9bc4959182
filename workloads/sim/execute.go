package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"go.uber.org/zap"

	"simd/ccl/algo"
	"simd/ccl/nccl"
	"simd/configs/atomicfile"
	"simd/engine"
	"simd/workloads"
	"simd/workloads/chakra"
	"simd/workloads/moe"
)

// Request is one run of simd's main command as a value: the inputs named by their files, the
// mode and where the outputs go, with the flags' values as they were given. Execute does the
// whole run from it: it reads and checks the inputs, builds the run, runs it with the output
// files attached, commits or aborts them, writes the reports and the human-readable summary.
//
// A Request mirrors the command line rather than the typed Inputs and Options of New because
// the command line's order of checks is part of what its users see: a flag's value is read
// where the mode needs it (a -force-algo that the analytical mode never reads is no error
// there), after the inputs read before it, so its errors come in the same order however the
// run is started (simd, or simd sweep's runs in-process). Its errors are input errors naming
// the flag that gave the value, as simd prints them.
type Request struct {
	// Mode is analytical, event or compare (-mode). A flow file runs in the event mode whatever
	// it says, several jobs in the analytical mode or else the event mode, a Chakra trace in the
	// analytical or the event mode.
	Mode string
	// Workload is the workload (-w): a SimAI/AICB file, configs.ExamplePrefix+NAME for a
	// shipped one, or a Chakra trace (PREFIX.%d.et, or ASTRA-sim's bare prefix); "" runs
	// DefaultExample and says so on Hooks.Stdout.
	Workload string
	// Flows is a flow file (-flows) to run instead of a workload, on Cluster.TopologyFile.
	Flows string
	// Jobs is a jobs file (-jobs) to run instead of a workload; JobsAlone (-jobs-alone) says
	// where the alone figures come from: run ("" too), none, or an earlier run's jobs.csv.
	Jobs, JobsAlone string
	// Cluster is what is said of the cluster: the topology file (-n) and the figures given.
	Cluster ClusterRequest
	// Conf is SimAI.conf (-c; "": the shipped one), BusBW a busbw.yaml (-busbw; "": none).
	Conf, BusBW string
	// Parse are the workload parser's options (-allow-short-workload).
	Parse workloads.ParseOptions
	// Overlap are the overlap ratios (-dp_o, -ep_o, -tp_o, -pp_o), each from 0 to 1.
	Overlap workloads.Overlap
	// Chakra are a Chakra trace's options.
	Chakra ChakraRequest

	// OutDir is the output folder (-o) and OutDirGiven whether it was given: without it, an
	// event run with a SimAI.conf of its own writes where that file's paths say.
	OutDir      string
	OutDirGiven bool
	// ResultFolder is the folder inside OutDir for the outputs (-r_f).
	ResultFolder string
	// Prefix is the output prefix (-r) and PrefixGiven whether it was given: the analytical
	// mode derives one from the workload's name otherwise, as SimAI_analytical does.
	Prefix      string
	PrefixGiven bool
	// Chart asks for the pie chart of the time breakdown (-v) in the language Lang (-l: en or
	// ja, checked for a workload run even without Chart).
	Chart bool
	Lang  string
	// Links adds links.csv and link_classes.csv to an event run's files (what -plot and -report
	// read).
	Links bool
	// Timeline is the Chrome trace to write (-trace; "": none), TimelineAllRanks its one
	// track per rank (-trace-all-ranks).
	Timeline         string
	TimelineAllRanks bool

	// Event are the event mode's settings.
	Event EventRequest
}

// ChakraRequest are a Chakra trace's options as the command line gives them.
type ChakraRequest struct {
	CommGroups     string  // ASTRA-sim's communicator-group file (-comm-groups)
	Deps           string  // both or data (-chakra-deps; chakra.ParseDeps)
	RooflineTFLOPS float64 // peak compute for the roofline (-roofline-tflops; 0: none)
	RooflineGBps   float64 // memory bandwidth for the roofline (-roofline-gbps; 0: none)
}

// EventRequest are the event mode's settings as the command line gives them; Execute turns
// them into EventOptions when the run needs them.
type EventRequest struct {
	NVLS, PXN  bool            // -nvls, -pxn
	PXNVariant nccl.PXNVariant // -pxn-variant
	// ChunkBytes is how collectives cut their data (-chunk-bytes): simccl, SimCCL's integer
	// chunks (ccl.Request.Truncate), or exact, every byte sent; "" is simccl, and exact for a
	// Chakra trace, whose collectives no SimCCL divided.
	ChunkBytes string
	// AlgoPolicy is the selector's policy (-algo-policy); without AlgoPolicyGiven a Chakra trace
	// takes nccl instead, since NCCL's tuning chose the algorithms of the collectives it records.
	AlgoPolicy      string
	AlgoPolicyGiven bool
	ForceAlgo       string            // -force-algo (algo.ParseForce)
	SendLatencyNs   int64             // -send-lat, ns; below 0: SimAI's table (or AS_SEND_LAT)
	Chunks          int               // -chunks
	EPDispatch      string            // nccl, deepep or fast (-ep-dispatch)
	DispatchModel   moe.DispatchModel // the -moe-* token model
	Threads         int               // -threads (UseSecondCore)
	LookAhead       string            // -lookahead: auto, on or off (ParseLookAhead; "" is auto)
	ProtocolRules                     // -completion, -pacing, ... (SimAI's where "")
	QPsPerConn      int               // -qps-per-conn; 0: NCCL_IB_QPS_PER_CONNECTION, else 1
	Seed            uint64            // -seed
	MaxEvents       uint64            // -max-events; 0: no limit
	MaxWall         time.Duration     // -max-wall; 0: no limit (WallLimit)
	MaxMemory       int64             // -max-memory; 0: the memory available
	// LookupEnv reads the environment (AS_SEND_LAT, NCCL_IB_QPS_PER_CONNECTION); nil:
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Hooks are what Execute's caller hears of a run while it goes on.
type Hooks struct {
	// Log receives the inputs' warnings and the run's counters; nil logs nothing.
	Log *zap.Logger
	// Stdout receives the human-readable summary and the files written ("results: PATH");
	// nil: none. The same figures come back as values in the Outcome.
	Stdout io.Writer
	// Progress, if not nil, is called as a simulation starts: unit names what Status.Done and
	// Total count, and expect, if not nil, gives the simulated time the run is expected to take
	// (from the analytical mode; it costs a closed-form pricing, so call it only when reporting).
	// It returns the run's Watch (nil: none) and the function that ends the report, called as
	// the simulation ends, before anything is written.
	Progress func(unit string, expect func() engine.Time) (watch func(Status), finish func())
}

// Outcome is what a run leaves for its caller: its results as values, the files it wrote and
// the folders they are in. The summary Execute prints on Hooks.Stdout is made from these
// values, so a program that runs simulations reads them here rather than parsing the text or
// the files. A stopped run returns its Outcome too, holding what was computed, with the
// StoppedError; a run that failed otherwise returns none.
type Outcome struct {
	// The results of the run, each nil when the run has none: Analytical for the analytical
	// mode (and compare's analytical side); Event for the event mode, compare's event side and a
	// flow file; Comparison for compare; Jobs and JobRows (jobs.csv's rows) for several jobs;
	// Trace for a Chakra trace.
	Analytical *workloads.AnalyticalReport
	Event      *Result
	Comparison *Comparison
	Jobs       *JobsResult
	JobRows    []JobRow
	Trace      *TraceResult
	// Files are the files written, in the order of the summary's "results:" lines.
	Files []string
	// Folders are the folders holding the run's reports, each with the prefix of its files, for
	// what reads them afterwards (simd's -plot and -report): the run's folder, then each job's
	// for several jobs. A flow file's, a Chakra trace's and analytical jobs' runs have none.
	Folders []Folder
}

// Folder is an output folder of a run and the prefix of its files (which may name a
// sub-folder, as SimAI_analytical's -r does).
type Folder struct {
	Dir, Prefix string
	// Job marks a job's folder of a multi-job run: it holds the job's layers, and the network's
	// files are the shared run's, in the run's folder.
	Job bool
}

// Files is where the folder's files are: the folder that holds them and the prefix of their
// names, with the sub-folder a prefix such as "a/b_" names moved into the folder ("DIR/a", "b_").
func (f Folder) Files() (dir, prefix string) {
	dir, prefix = filepath.Split(filepath.Join(f.Dir, f.Prefix+"x"))
	return filepath.Clean(dir), strings.TrimSuffix(prefix, "x") // "." for an empty folder
}

// DefaultExample is the shipped workload a Request without a workload runs.
const DefaultExample = "microAllReduce.txt"

// Execute does the run r asks for: a flow file, several jobs, a Chakra trace or a workload in
// the analytical, event or compare mode. It returns the run's results and the files it wrote
// (Outcome); the summary it prints on Hooks.Stdout is made from them. Cancelling ctx stops the
// simulation cleanly: the outputs are written with what was computed, marked incomplete, and
// the Outcome comes with a StoppedError. Errors caused by the request are InputErrors.
func Execute(ctx context.Context, r Request, h Hooks) (Outcome, error) {
	h.Log = orNop(h.Log)
	if h.Stdout == nil {
		h.Stdout = io.Discard
	}
	if err := CheckTimeline(r.Timeline, r.TimelineAllRanks); err != nil {
		return Outcome{}, err
	}
	if r.Timeline != "" && r.Flows != "" && r.Jobs == "" {
		return Outcome{}, BadInputf("-trace: not for -flows (a flow file has no compute or collectives to draw)")
	}
	switch {
	case r.Jobs != "":
		return r.runJobs(ctx, h)
	case r.Flows != "":
		return r.runFlows(ctx, h)
	case r.Workload != "" && chakra.IsPattern(r.Workload):
		return r.runTrace(ctx, h)
	case r.Mode == "analytical" || r.Mode == "event" || r.Mode == "compare":
		s, err := r.newSession(h)
		if err != nil {
			return Outcome{}, err
		}
		switch r.Mode {
		case "analytical":
			return s.analytical()
		case "event":
			return s.event(ctx)
		}
		return s.compare(ctx)
	}
	return Outcome{}, BadInputf("-mode %q: expected analytical, event or compare", r.Mode)
}

// CheckTimeline refuses, before anything is simulated, a -trace naming a folder or a
// -trace-all-ranks without -trace.
func CheckTimeline(path string, allRanks bool) error {
	if path == "" {
		if allRanks {
			return BadInputf("-trace-all-ranks: only with -trace FILE")
		}
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return BadInputf("-trace %s: a folder; expected the file to write, e.g. trace.json", path)
	}
	return nil
}

// newTimeline is the recorder path asks for (nil without it), with the run's description in
// the file's otherData.
func newTimeline(path string, allRanks bool, meta ...string) *Timeline {
	if path == "" {
		return nil
	}
	tl := NewTimeline(allRanks)
	for i := 0; i+1 < len(meta); i += 2 {
		tl.Meta(meta[i], meta[i+1])
	}
	return tl
}

// progress starts h's progress report of a simulation; the watch may be nil, finish is not.
func (h Hooks) progress(unit string, expect func() engine.Time) (watch func(Status), finish func()) {
	if h.Progress != nil {
		watch, finish = h.Progress(unit, expect)
	}
	if finish == nil {
		finish = func() {}
	}
	return watch, finish
}

// eventOptions are the event run's options from r's settings and the environment; trace says
// the run is a Chakra trace's.
func (r *Request) eventOptions(trace bool) (EventOptions, error) {
	e := r.Event
	opt := EventOptions{Chunks: e.Chunks, Seed: e.Seed, MaxEvents: e.MaxEvents, MaxMemory: e.MaxMemory, DispatchModel: e.DispatchModel}
	force, err := algo.ParseForce(e.ForceAlgo)
	if err != nil {
		return opt, BadInputf("-force-algo: %v", err)
	}
	policy := e.AlgoPolicy
	if trace && !e.AlgoPolicyGiven {
		policy = "nccl"
	}
	opt.Algorithms = algo.Options{Policy: algo.Policy(policy), NVLS: e.NVLS, PXN: e.PXN, PXNVariant: e.PXNVariant, Force: force}
	exact, err := algo.ParseChunkBytes(e.ChunkBytes, trace)
	if err != nil {
		return opt, BadInputf("%v", err)
	}
	opt.Algorithms.ExactBytes = exact
	opt.SendLatency, opt.QPsPerConnection = -1, e.QPsPerConn // -1: SimAI's table, unless AS_SEND_LAT
	if e.SendLatencyNs >= 0 {
		opt.SendLatency = engine.Time(e.SendLatencyNs) * engine.Nanosecond
	}
	if err = e.ProtocolRules.apply(&opt); err != nil {
		return opt, err
	}
	if opt.LookAhead, err = ParseLookAhead(e.LookAhead); err != nil {
		return opt, err
	}
	lookup := e.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if err := opt.SetFromEnv(lookup); err != nil {
		return opt, err
	}
	switch e.EPDispatch {
	case "nccl":
	case "deepep", "fast":
		opt.EPDispatch, _ = moe.ParseKind(e.EPDispatch)
	default:
		return opt, BadInputf("-ep-dispatch %q: expected nccl, deepep or fast", e.EPDispatch)
	}
	return opt, nil
}

// ProtocolRules are the event model's protocol rules as their flags give them; "" (or the
// first value each Parse function names) is SimAI's rule, the other the physical or classic
// one (docs/models.md).
type ProtocolRules struct {
	Completion  string // ack or arrival (-completion; ParseCompletion)
	Pacing      string // packet or rate (-pacing; ParsePacing)
	ECNMarking  string // dequeue or enqueue (-ecn-marking; ParseECNMarking)
	FirstWindow string // burst or cap (-first-window; ParseFirstWindow)
	Forwarding  string // dequeue or injection (-forwarding; ParseForwarding)
	AckWait     string // locked, aligned or mean (-ack-wait; ParseAckWait)
	PacketTime  string // ns or exact (-packet-time; ParsePacketTime)
	PFCChecks   string // exact or bounded (-pfc-checks; ParsePFCChecks)
	NICSharing  string // turns or fair (-nic-sharing; ParseNICSharing)
	ChunkOrder  string // channel or arrival (-chunk-order; ParseChunkOrder)
	StartOrder  string // mailbox or issue (-start-order; ParseStartOrder)
	Ranks       string // own, own-stages or lockstep (-ranks; ParseRanks)
	ECNDraws    string // poisson or regular (-ecn-draws; ParseECNDraws)
	SamePath    string // bundled or apart (-same-path; ParseSamePath)
	NVLink      string // auto, packets or fluid (-nvlink-model; ParseNVLink)
}

// apply sets opt's protocol rules from r, or returns the first bad value.
func (r ProtocolRules) apply(opt *EventOptions) error {
	for _, rule := range []struct {
		value string
		parse func(string) (bool, error)
		to    *bool
	}{
		{r.Completion, ParseCompletion, &opt.AtArrival},
		{r.Pacing, ParsePacing, &opt.PaceAtOnce},
		{r.ECNMarking, ParseECNMarking, &opt.MarkOnEnqueue},
		{r.FirstWindow, ParseFirstWindow, &opt.WindowCapFromStart},
		{r.Forwarding, ParseForwarding, &opt.ArrivalsAtInjection},
		{r.PacketTime, ParsePacketTime, &opt.ExactPacketTimes},
		{r.PFCChecks, ParsePFCChecks, &opt.BoundedPFCChecks},
		{r.NICSharing, ParseNICSharing, &opt.NICFairShare},
		{r.ChunkOrder, ParseChunkOrder, &opt.ChunksOnArrival},
		{r.StartOrder, ParseStartOrder, &opt.StartInIssueOrder},
		{r.ECNDraws, ParseECNDraws, &opt.RegularMarks},
		{r.SamePath, ParseSamePath, &opt.FlowsApart},
	} {
		v, err := rule.parse(rule.value)
		if err != nil {
			return err
		}
		*rule.to = v
	}
	var err error
	if opt.RanksInLockstep, opt.StageRanksOnTheirOwn, err = ParseRanks(r.Ranks); err != nil {
		return err
	}
	if opt.AckWait, err = ParseAckWait(r.AckWait); err != nil {
		return err
	}
	opt.NVLink, err = ParseNVLink(r.NVLink)
	return err
}

// ParseCompletion reads -completion: SimAI's "ack" (the default, also "") or "arrival"; it
// returns EventOptions.AtArrival.
func ParseCompletion(c string) (atArrival bool, err error) {
	return parseChoice("-completion", c, "ack", "arrival")
}

// ParsePacing reads -pacing: SimAI's "packet" (the default, also "": a DCQCN rate change takes
// effect when the packet sent at the old rate has had its gap) or "rate" (at once); it returns
// EventOptions.PaceAtOnce.
func ParsePacing(p string) (atOnce bool, err error) {
	return parseChoice("-pacing", p, "packet", "rate")
}

// ParseECNMarking reads -ecn-marking: SimAI's "dequeue" (the default, also "": a port marks the
// packets it sends) or "enqueue" (those that arrive); it returns EventOptions.MarkOnEnqueue.
func ParseECNMarking(m string) (onEnqueue bool, err error) {
	return parseChoice("-ecn-marking", m, "dequeue", "enqueue")
}

// ParseFirstWindow reads -first-window: SimAI's "burst" (the default, also "": a windowed flow
// sends its first window at its rate, then waits for its first ACK) or "cap" (at most a window
// per round trip from its start); it returns EventOptions.WindowCapFromStart.
func ParseFirstWindow(w string) (capFromStart bool, err error) {
	return parseChoice("-first-window", w, "burst", "cap")
}

// ParseForwarding reads -forwarding: SimAI's "dequeue" (the default, also "": a link passes
// on what leaves its queue, in the proportions its bytes arrived in) or "injection" (every link
// of a path receives the flow's injection at once); it returns EventOptions.ArrivalsAtInjection.
func ParseForwarding(f string) (atInjection bool, err error) {
	return parseChoice("-forwarding", f, "dequeue", "injection")
}

// ParseNICSharing reads -nic-sharing: SimAI's "turns" (the default, also "": a NIC port serves
// the flows that ask for more than their share in turn, a packet each; docs/models.md, "Turns
// at a port") or "fair" (it shares its rate among them as a fluid); it returns
// EventOptions.NICFairShare.
func ParseNICSharing(s string) (fair bool, err error) {
	return parseChoice("-nic-sharing", s, "turns", "fair")
}

// ParseSamePath reads -same-path: "bundled" (the default, also "": without congestion control,
// the flows in flight on one path share it as one bundle, netmodel.Options.Bundles) or "apart"
// (every flow on its own); it returns EventOptions.FlowsApart.
func ParseSamePath(p string) (apart bool, err error) {
	return parseChoice("-same-path", p, "bundled", "apart")
}

// NVLinkModel is how the flows inside a server cross its NVLink under congestion control
// (EventOptions.NVLink).
type NVLinkModel uint8

const (
	// NVLinkAuto: packet by packet each time a server's NVLink goes busy with a flow of at most
	// ccfluid.AutoPackets packets, as a fluid when with a longer one.
	NVLinkAuto NVLinkModel = iota
	// NVLinkPackets: packet by packet, as SimAI's ns-3 does.
	NVLinkPackets
	// NVLinkFluid: as a fluid, with the rest of the network.
	NVLinkFluid
)

// ParseNVLink reads -nvlink-model: "auto" (the default, also "": under congestion control a
// server's NVLink goes packet by packet, as in SimAI's ns-3, each time it goes busy with a flow
// of at most ccfluid.AutoPackets packets, and as a fluid when with a longer one), "packets"
// (always) or "fluid" (never).
func ParseNVLink(s string) (NVLinkModel, error) {
	switch s {
	case "auto", "":
		return NVLinkAuto, nil
	case "packets":
		return NVLinkPackets, nil
	case "fluid":
		return NVLinkFluid, nil
	}
	return 0, BadInputf("-nvlink-model %q: expected auto, packets or fluid", s)
}

// ParsePFCChecks reads -pfc-checks: "exact" (the default, also "": a PFC switch looks at its
// ports at every change of its queues) or "bounded" (only when a bound on their occupancies
// comes near a pause); it returns EventOptions.BoundedPFCChecks.
func ParsePFCChecks(c string) (bounded bool, err error) {
	return parseChoice("-pfc-checks", c, "exact", "bounded")
}

// LookAheadMode is whether an event run's scheduler looks one event ahead (EventOptions.LookAhead).
type LookAheadMode uint8

const (
	LookAheadAuto LookAheadMode = iota // by the size of the network's link tables
	LookAheadOn
	LookAheadOff
)

// ParseLookAhead reads -lookahead: "auto" (the default, also ""), "on" or "off".
func ParseLookAhead(v string) (LookAheadMode, error) {
	switch v {
	case "", "auto":
		return LookAheadAuto, nil
	case "on":
		return LookAheadOn, nil
	case "off":
		return LookAheadOff, nil
	}
	return 0, BadInputf("-lookahead %q: expected auto, on or off", v)
}

// AckWaitRule is what an ACK that has waited behind a data packet waits for at each later link
// of its route that sends (docs/models.md, "Window").
type AckWaitRule uint8

const (
	// AckWaitsLocked: a whole packet where the packet grids are locked (the ACK's flow and the
	// data at the two links started within the flow's one-way time of each other), half a
	// packet elsewhere; SimAI's ns-3.
	AckWaitsLocked AckWaitRule = iota
	// AckWaitsAligned: a whole packet at every later link, as if every grid were locked.
	AckWaitsAligned
	// AckWaitsAtRandom: half a packet at every link, the mean over random phases.
	AckWaitsAtRandom
)

// ParseAckWait reads -ack-wait: SimAI's "locked" (the default, also "": an ACK that has waited
// behind a data packet waits a whole packet at a later link of its route that sends where the
// packets there are in step with those it waited behind, as ns-3's packet grids make them when
// their flows start together, and half a packet elsewhere; at its first link, the receiver's
// NIC, the rest of the packet its arrival finds on a locked grid), "aligned" (a whole packet at every
// such link) or "mean" (half a packet at every such link, the mean over random phases).
func ParseAckWait(w string) (AckWaitRule, error) {
	switch w {
	case "locked", "":
		return AckWaitsLocked, nil
	case "aligned":
		return AckWaitsAligned, nil
	case "mean":
		return AckWaitsAtRandom, nil
	}
	return 0, BadInputf("-ack-wait %q: expected locked, aligned or mean", w)
}

// ParsePacketTime reads -packet-time: SimAI's "ns" (the default, also "": a link sends a packet
// in whole nanoseconds, rounded down, as ns-3 computes it) or "exact" (bits/rate); it returns
// EventOptions.ExactPacketTimes.
func ParsePacketTime(t string) (exact bool, err error) {
	return parseChoice("-packet-time", t, "ns", "exact")
}

// ParseChunkOrder reads -chunk-order: SimAI's "channel" (the default, also "": a rank passes a
// ring channel's chunks on in order, as astra-sim's NcclTreeFlowModel does, so a chunk that
// overtook an earlier one waits for it) or "arrival" (each as soon as it has arrived); it
// returns EventOptions.ChunksOnArrival.
func ParseChunkOrder(o string) (onArrival bool, err error) {
	return parseChoice("-chunk-order", o, "channel", "arrival")
}

// ParseStartOrder reads -start-order: SimAI's "mailbox" (the default, also "": the sends ranks
// issue before any flow of theirs is done make their queue pairs in the order SimAI's
// multithreaded ns-3 delivers them through a server's mailbox, mostly the reverse of the order
// they were issued in) or "issue" (in the order they were issued); it returns
// EventOptions.StartInIssueOrder.
func ParseStartOrder(o string) (inIssueOrder bool, err error) {
	return parseChoice("-start-order", o, "mailbox", "issue")
}

// ParseRanks reads -ranks: SimAI's "own" (the default, also "": every rank runs its own copy
// of the workload, goes on from a collective once its own part is done, and the report is rank
// 0's; a pipelined pass runs a program per stage), "own-stages" (the same, and the ranks of a
// pipelined pass's stages each run their own copy of their stage's plan too) or "lockstep" (one
// program: a collective is done once done everywhere, and every rank goes on then); it returns
// EventOptions.RanksInLockstep and StageRanksOnTheirOwn.
func ParseRanks(o string) (lockstep, stages bool, err error) {
	switch o {
	case "own", "":
		return false, false, nil
	case "own-stages":
		return false, true, nil
	case "lockstep":
		return true, false, nil
	}
	return false, false, BadInputf("-ranks %q: expected own, own-stages or lockstep", o)
}

// ParseECNDraws reads -ecn-draws: "poisson" (the default, also "": a port's marks fall as a
// Poisson process of its marking rate, as ns-3's per-packet draws do) or "regular" (one each
// time the expected count reaches a whole number); it returns EventOptions.RegularMarks.
func ParseECNDraws(d string) (regular bool, err error) {
	return parseChoice("-ecn-draws", d, "poisson", "regular")
}

// parseChoice reads a flag of two values: SimAI's, def (also ""), gives false, the other, alt,
// true.
func parseChoice(flag, v, def, alt string) (bool, error) {
	switch v {
	case def, "":
		return false, nil
	case alt:
		return true, nil
	}
	return false, BadInputf("%s %q: expected %s or %s", flag, v, def, alt)
}

// UseSecondCore says whether the FCT log is formatted and written on a second core
// (Files.Concurrent) for -threads N; 0: when Go may use two.
func UseSecondCore(threads int) bool {
	return threads >= 2 || threads == 0 && runtime.GOMAXPROCS(0) >= 2
}

// WallLimitError is the stop cause of a run that took WallLimit's wall-clock time.
type WallLimitError struct{ Limit time.Duration }

// Error names the limit as the command line's flag does, since it is also the reason written in
// a stopped run's outputs.
func (e WallLimitError) Error() string { return "-max-wall " + e.Limit.String() }

// WallLimit is the context of a run under parent that stops it after d of wall-clock time with
// a WallLimitError (d ≤ 0: no limit).
func WallLimit(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeoutCause(parent, d, WallLimitError{d})
}

// StoppedError is returned for a run stopped before its end (by Cause, at simulated time At)
// whose outputs are written: they hold what Note says.
type StoppedError struct {
	Cause error
	At    engine.Time
	Note  string
}

func (e StoppedError) Error() string {
	return fmt.Sprintf("stopped by %s at %.3f us simulated: %s", e.Cause, e.At.Microseconds(), e.Note)
}

// Stopped is the error to return after writing the outputs of a run stopped by cause at
// simulated time at (nil when cause is nil): the outputs hold what note says.
func Stopped(cause error, at engine.Time, note string) error {
	if cause == nil {
		return nil
	}
	return StoppedError{Cause: cause, At: at, Note: note}
}

// MoERequest is the event mode of simd moe run as a value: a token-routing workload's layers
// priced by simulating their dispatch plans on a fabric, from files, with fct.txt and the
// timeline written when asked for.
type MoERequest struct {
	Config        *moe.Config
	Iterations    []moe.Iteration
	Kind          moe.Kind
	Workload      string // the workload's folder, as the timeline names it
	Topology      string // the topology file (-n; "": MoETopology's default fabric)
	Conf          string // SimAI.conf (-c; "": the shipped one)
	ProtocolRules        // -completion, -pacing, ... (SimAI's where "")
	Chunks        int    // pieces each DeepEP transfer is streamed in (-chunks)
	Threads       int    // -threads (UseSecondCore)
	Seed          uint64 // -seed
	MaxEvents     uint64 // -max-events; 0: no limit
	MaxWall       time.Duration
	Out           string // folder of fct.txt (-o); "": none
	Timeline      string // the Chrome trace to write (-trace); "": none
	// Log receives SimAI.conf's warnings, the fabric's and the run's counters, as Hooks.Log
	// does for Execute; nil logs nothing.
	Log *zap.Logger
}

// ExecuteMoE runs r (RunMoE on MoETopology's fabric) with its files attached and commits them;
// a stopped run's files are committed too, marked incomplete, and its result says why
// (MoEResult.Stopped).
func ExecuteMoE(ctx context.Context, r MoERequest) (*MoEResult, error) {
	t, err := MoETopology(r.Topology, r.Config)
	if err != nil {
		return nil, err
	}
	conf, err := ReadConf(r.Conf, "-c", r.Log)
	if err != nil {
		return nil, err
	}
	opt := EventOptions{Seed: r.Seed, MaxEvents: r.MaxEvents}
	if err := r.ProtocolRules.apply(&opt); err != nil {
		return nil, err
	}
	var att Attachments
	var fs *Files
	if r.Out != "" {
		fs = NewFCTFiles(r.Out, &conf, r.Conf)
		fs.Concurrent = UseSecondCore(r.Threads)
		att = fs.Attachments()
		defer fs.Abort()
	}
	tl := newTimeline(r.Timeline, false, "mode", "moe event", "plan", r.Kind.String(), "workload", r.Workload, "topology", r.Topology)
	if tl != nil {
		att = tl.Attach(att, nil)
	}
	ctx, cancel := WallLimit(ctx, r.MaxWall)
	defer cancel()
	res, err := RunMoE(ctx, MoEInputs{Config: r.Config, Iterations: r.Iterations, Kind: r.Kind, Topology: t, TopologyName: r.Topology, Conf: conf, ConfPath: r.Conf, Chunks: r.Chunks, Log: r.Log},
		opt, att)
	if err != nil {
		return nil, err
	}
	if fs != nil {
		if _, err := fs.Commit(); err != nil {
			return nil, err
		}
	}
	if tl != nil {
		if err := tl.Finish(r.Timeline, res.Note); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// MoERunRequest is simd moe run as a value, with its flags' values as they were given: the
// workload folder simd moe gen wrote, the dispatch plan, and how to price it: with the closed
// forms of a model (the estimate mode, EstimateMoE) or by simulating every plan on a fabric (the
// event mode, ExecuteMoE with the embedded MoERequest's settings; its Topology also gives the
// estimates their bandwidths). ExecuteMoERun reads the folder into the MoERequest's Config,
// Iterations and Kind. Like Request it mirrors the command line, checking the values in the
// order simd moe run always has, and its errors name the flags that gave them.
type MoERunRequest struct {
	MoERequest               // Workload is the folder (-w), Out the folder of metrics.json and fct.txt (-o)
	Plan, Model, Mode string // deepep or fast (-plan); seed or exact (-model); estimate or event (-mode)
	Stages            bool   // write each layer's Birkhoff stages (-stages; FAST's estimates only)
	// Interrupt, if not nil, gives the event mode's context and the function that releases it,
	// called as soon as the simulation ends (simd: the first SIGINT or SIGTERM stops the
	// simulation cleanly). The estimates are not interrupted.
	Interrupt func() (context.Context, func())
}

// ExecuteMoERun does the run r asks for: it checks the values, reads the workload folder, prices
// every layer in r's mode, writes the summary on w and, with Out, Out/metrics.json (and, in the
// event mode, fct.txt). A stopped event run writes what it computed, marked incomplete, and
// returns a StoppedError. Errors caused by the request are InputErrors.
func ExecuteMoERun(w io.Writer, r MoERunRequest) error {
	if r.Plan == "" {
		return BadInputf("-plan: required: deepep or fast")
	}
	kind, err := moe.ParseKind(r.Plan)
	if err != nil {
		return BadInputf("-plan %v", err)
	}
	model, err := moe.ParseModel(r.Model)
	if err != nil {
		return BadInputf("-model %v", err)
	}
	if r.Stages && kind != moe.FAST {
		return BadInputf("-stages: only -plan fast has stages")
	}
	if r.Timeline != "" && r.Mode != "event" {
		return BadInputf("-trace: only with -mode event (the estimates simulate no timeline)")
	}
	if strings.TrimSpace(r.Workload) == "" {
		return BadInputf("-w: required: the workload folder written by simd moe gen")
	}
	if r.Out != "" {
		if info, err := os.Stat(r.Out); err == nil && !info.IsDir() {
			return BadInputf("-o %s: not a folder", r.Out)
		}
	}
	cfg, iters, err := moe.ReadDir(r.Workload)
	if err != nil {
		return BadInputf("-w %s: %v", r.Workload, err)
	}
	var m moe.Metrics
	var incomplete string // a stopped event run's note
	var stop error
	switch r.Mode {
	case "estimate":
		in := MoEInputs{Config: &cfg, Iterations: iters, Kind: kind, TopologyName: r.Topology}
		if r.Topology != "" {
			if in.Topology, err = MoETopology(r.Topology, &cfg); err != nil {
				return err
			}
		}
		if m, err = EstimateMoE(w, in, r.Workload, model, r.Stages); err != nil {
			return err
		}
	case "event":
		if r.Chunks < 1 {
			return BadInputf("-chunks %d: want at least 1", r.Chunks)
		}
		if r.MaxWall < 0 {
			return BadInputf("-max-wall %v: expected a duration of 0 (no limit) or more", r.MaxWall)
		}
		if r.Threads < 0 {
			return BadInputf("-threads %d: want 1 or more (0: as many as Go may use, up to 2)", r.Threads)
		}
		if r.Stages {
			return BadInputf("-stages: only with -mode estimate")
		}
		if err := CheckTimeline(r.Timeline, false); err != nil {
			return err
		}
		ctx, release := context.Background(), func() {}
		if r.Interrupt != nil {
			ctx, release = r.Interrupt()
		}
		ev := r.MoERequest
		ev.Config, ev.Iterations, ev.Kind = &cfg, iters, kind
		st, err := ExecuteMoE(ctx, ev)
		release()
		if err != nil {
			return err
		}
		if err := st.WriteText(w, kind); err != nil {
			return err
		}
		m, incomplete = st.Metrics, st.Note
		stop = Stopped(st.Stopped, st.At, "metrics.json and fct.txt hold the layers that finished and are marked incomplete")
	default:
		return BadInputf("-mode %q: expected estimate or event", r.Mode)
	}
	if r.Out != "" {
		err := atomicfile.Write(filepath.Join(r.Out, "metrics.json"), func(f *os.File) error { return m.WriteJSON(f, incomplete) })
		if err != nil {
			return err
		}
	}
	return stop
}
