package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"simd/ccl/nccl"
	"simd/cmd/simd/flagtable"
	"simd/configs/units"
	"simd/workloads"
	"simd/workloads/moe"
	"simd/workloads/sim"
)

// options are the command line of a simulation run: the run's request, its flags bound to its
// fields as sim.Execute reads them, and what the command line does around the run.
type options struct {
	req sim.Request // completed by request with what follows from several flags
	// The cluster's figures, which the request takes only when their flags are given.
	gpus                         int // -g: if repeated, the first counts (flagtable.First)
	gpusPerServer, nicsPerServer int
	nvlink, nic                  float32
	nicType, gpuType             string
	visual                       int // -v: N ≠ 0 asks for the chart
	logLevel                     string
	quiet                        bool
	progressEvery                time.Duration
	plot, report                 bool
	cpuProfile, memProfile       string // profiling

	set map[string]bool // canonical names of the flags given explicitly
}

// pxnVariantUsage is -pxn-variant's help, shared by simd and simd dag.
const pxnVariantUsage = "how PXN decomposes collectives: simccl (SimAI v1.6's SimCCL, flow for flow: every server-crossing step of an all-reduce or reduce-scatter relayed through NVLink, also chunks the receivers already hold; all-gather and all-to-all without PXN) or nccl (NCCL-like: no rank sent what it holds; all-gather and all-to-all pairs relayed too)"

// chunkBytesUsage is -chunk-bytes' help, shared by simd and simd dag.
const chunkBytesUsage = "how a collective cuts its data into flows: simccl (SimAI's SimCCL divides in integers: every ring flow carries ⌊size/(ranks·channels)⌋ bytes, the remainder is never sent, and a ring collective smaller than ranks·channels bytes sends nothing and takes no time) or exact (every byte sent: the first pieces one byte larger)"

// protocolFlags are the flags of the event model's protocol rules, on fs and bound to p, shared
// by simd and simd moe run: each is SimAI's rule by default.
func protocolFlags(fs *flag.FlagSet, p *sim.ProtocolRules) []flagtable.Spec {
	rule := func(name, usage, def string, to *string) flagtable.Spec {
		return flagtable.Spec{Names: []string{name}, Arg: "RULE", Usage: usage, Default: def, Define: func(n, u string) { fs.StringVar(to, n, def, u) }}
	}
	return []flagtable.Spec{
		rule("-completion", "when a flow is done, and its receiver may go on: ack (SimAI's ns-3: the sender has the ACK of its last packet, and the receiving rank is told then) or arrival (its last byte reaches the receiver)", "ack", &p.Completion),
		rule("-first-window", "how a windowed flow (HAS_WIN) starts: burst (SimAI's ns-3: its first window at its rate, then nothing until its first ACK) or cap (at most a window per round trip from the start)", "burst", &p.FirstWindow),
		rule("-forwarding", "what a switch port passes on under congestion control: dequeue (SimAI's ns-3: what leaves its queue, in the proportions its bytes arrived in, so a queue reshapes the flows it holds) or injection (every link of a flow's path receives the sender's rate at once: the classic fluid model)", "dequeue", &p.Forwarding),
		rule("-ack-wait", "what an ACK waits for behind data under congestion control, at the links of its route that send: locked (SimAI's ns-3: at the first such link half a data packet, or, where the receiver's own data started with its flow, the rest of the packet in service when it arrives on that locked grid, T − (propagation mod T); at each later one a whole packet where the packets are in step with those it waited behind — its flow and the data at both links started together, within its flow's one-way time — and half elsewhere), aligned (a whole packet at each later link, as if every flow had started together) or mean (half a packet at each: the mean over random phases)", "locked", &p.AckWait),
		rule("-packet-time", "how long a link takes to send a packet: ns (SimAI's ns-3: whole nanoseconds, rounded down, so a 2,880 Gb/s NVLink sends a 9,052-byte packet in 25 ns, not 25.14, and a 60-byte ACK in 0; a NIC paces by the same clock) or exact (bits / rate)", "ns", &p.PacketTime),
		rule("-pacing", "when a DCQCN rate change takes effect: packet (SimAI's ns-3: once the packet sent at the old rate has had its gap, up to 724 µs at MIN_RATE) or rate (at once)", "packet", &p.Pacing),
		rule("-ecn-marking", "which packets a congested port ECN-marks: dequeue (SimAI's ns-3: those it sends, which arrived a queue's delay earlier) or enqueue (those arriving now)", "dequeue", &p.ECNMarking),
		rule("-ecn-draws", "where a switch port's ECN marks fall in time under DCQCN: poisson (as ns-3's per-packet draws: a Poisson process of the port's marking rate, so marks bunch and thin by chance and a flow's marks within one RATE_DECREASE_INTERVAL cut it once; docs/models.md, \"ECN marks by chance\") or regular (one each time the expected count of marked packets reaches a whole number)", "poisson", &p.ECNDraws),
		rule("-chunk-order", "when a rank passes a chunk of a ring's channel on: channel (SimAI's astra-sim: in the channel's order, 10 ns after the one before at the earliest, so a chunk that overtook an earlier one on its own ECMP path waits for it; docs/models.md, \"Chunks in order\") or arrival (as soon as it has it)", "channel", &p.ChunkOrder),
		rule("-start-order", "in what order the queue pairs of the sends ranks issue before any flow of theirs is done are made, which decides which flow of a port ends first when the port serves them in turn (-nic-sharing turns): mailbox (SimAI's ns-3: as its multithreaded scheduler delivers them through each server's mailbox, sorted with libstdc++'s std::sort and taken from the back, so mostly in reverse; docs/models.md, \"The start's mailbox\") or issue (in the order they were issued)", "mailbox", &p.StartOrder),
		rule("-ranks", "how the ranks go through a workload's iteration: own (SimAI: every rank runs its own copy, starts a collective's flows when it reaches it and goes on to its next step as soon as its own flows, sent and received, are done; the per-layer report is rank 0's; docs/models.md, \"Rank by rank\") a pipelined pass runs a program per stage), own-stages (the same, and every rank of a pipelined pass's stages runs its own copy of its stage's plan, its own messages to and from the neighbouring stages included; slower) or lockstep (one program: a collective is done when done everywhere, and the report is of all ranks)", "own", &p.Ranks),
		rule("-nic-sharing", "how a NIC port under congestion control shares its rate among the flows that ask for more than their share: turns (SimAI's ns-3 NIC: in turn, a packet each, so of flows that end together the first ends a packet time per flow before the last, and one that joins is served within the round under way; up to 64 such flows, past that fair; docs/models.md, \"Turns at a port\") or fair (a fluid's processor sharing: flows that would end together end at their mean)", "turns", &p.NICSharing),
		rule("-nvlink-model", "how the flows inside a server cross its NVLink under congestion control: auto (packet by packet, as SimAI's ns-3 — each GPU's NVLink port sending its ACKs first and then its queue pairs in turn, a packet each, the NVSwitch's ports first in first out — each time a server's NVLink goes busy with a flow of at most 4 packets, and as a fluid when with a longer one, whose packets would cost more than its fluid; docs/models.md, \"The NVLink packet by packet\"), packets (always) or fluid (never); packets are not used where NVLS may run or LINK_DOWN takes an NVLink down", "auto", &p.NVLink),
		rule("-same-path", "how the ideal model (CC off) holds the flows in flight on one path, which max-min fairness gives one rate: bundled (one entry of the solver and one timer for them all, their progress shared as in processor sharing: the same rates, far less work where a collective keeps several flows on a path, as a ring's channels do) or apart (each on its own; times differ by rounding, docs/performance.md, \"Flows of one path\")", "bundled", &p.SamePath),
		rule("-pfc-checks", "when a PFC switch looks at its ports for pauses and resumes under congestion control: exact (at every change of its queues and every crossing of a port's reserve) or bounded (only when a bound on their occupancies comes near a pause, or while a port is paused: faster in congestion storms, but the looks' timing is part of the model: in a burst of the 9,216-GPU MoE storm ports pause about half as often; docs/performance.md, \"MoE storms\")", "exact", &p.PFCChecks),
	}
}

func newFlagSet(o *options) (*flag.FlagSet, []flagtable.Group) {
	fs := flag.NewFlagSet("simd", flag.ContinueOnError)
	*o = options{logLevel: "info", req: sim.Request{Mode: "event", OutDir: "results", Lang: "en", Overlap: workloads.Overlap{PP: 1},
		Cluster: sim.ClusterRequest{Names: sim.SimAIFlags}, Event: sim.EventRequest{AlgoPolicy: "simccl", SendLatencyNs: -1,
			EPDispatch: "nccl", NVLS: os.Getenv("AS_NVLS_ENABLE") == "1",
			PXN: os.Getenv("AS_PXN_ENABLE") == "1", DispatchModel: moe.DispatchModel{Hidden: 7168, DtypeBytes: 2, TopK: 8, ExpertsPerGPU: 1}}}}
	r, e := &o.req, &o.req.Event
	str := func(p *string) func(string, string) {
		return func(n, u string) { fs.StringVar(p, n, *p, u) }
	}
	num := func(p *int) func(string, string) {
		return func(n, u string) { fs.IntVar(p, n, *p, u) }
	}
	val := func(v flag.Value) func(string, string) {
		return func(n, u string) { fs.Var(v, n, u) }
	}
	boolean := func(p *bool) func(string, string) {
		return func(n, u string) { fs.BoolVar(p, n, *p, u) }
	}
	groups := []flagtable.Group{
		{Title: "Inputs", Flags: []flagtable.Spec{
			{Names: []string{"-w", "--workload"}, Arg: "FILE", Usage: "workload file (SimAI/AICB format); example:NAME runs a shipped example (microAllReduce.txt, workload_analytical.txt)", Default: "the shipped microAllReduce.txt", Define: str(&r.Workload)},
			{Names: []string{"-n"}, Arg: "FILE", Usage: "topology file (SimAI format); gives the GPU count, GPUs per server, GPU type and NVLink/NIC bandwidths unless flags override them", Default: "a Spectrum-X fabric for the GPU count", Define: str(&r.Cluster.TopologyFile)},
			{Names: []string{"-c"}, Arg: "FILE", Usage: "SimAI.conf (network settings of the event mode; checked in every mode)", Default: "the shipped SimAI.conf", Define: str(&r.Conf)},
			{Names: []string{"-busbw"}, Arg: "FILE", Usage: "busbw.yaml of fixed bus bandwidths (SimAI's historical input) instead of the computed ones", Define: str(&r.BusBW)},
			{Names: []string{"-allow-short-workload"}, Usage: "accept a workload whose count line promises more records than the file holds, using the records it holds",
				Define: func(n, u string) { fs.BoolVar(&r.Parse.AllowShortCount, n, false, u) }},
			{Names: []string{"-comm-groups"}, Arg: "FILE", Usage: "Chakra trace (-w PREFIX.%d.et or ASTRA-sim's bare PREFIX): ASTRA-sim's communicator-group file, {\"1\": [0, 1], ...}; a node's pg_name picks its group", Default: "none (or PyTorch's process groups from a METADATA_NODE)", Define: str(&r.Chakra.CommGroups)},
			{Names: []string{"-chakra-deps"}, Arg: "DEPS", Usage: "Chakra trace: both (ctrl_deps and data_deps, as ASTRA-sim) or data (data_deps only, as MLCommons' feeder; for older PyTorch traces)", Default: "both", Define: str(&r.Chakra.Deps)},
			{Names: []string{"-roofline-tflops"}, Arg: "X", Usage: "Chakra trace: peak compute, TFLOPS: GPU COMP nodes with num_ops take the roofline time instead of duration_micros", Default: "0: duration_micros", Define: func(n, u string) { fs.Float64Var(&r.Chakra.RooflineTFLOPS, n, 0, u) }},
			{Names: []string{"-roofline-gbps"}, Arg: "Y", Usage: "Chakra trace: local memory bandwidth, GB/s: the roofline's memory bound, and the time of MEM_LOAD/MEM_STORE nodes (tensor_size / Y)", Default: "0: no memory bound, memory nodes take no time", Define: func(n, u string) { fs.Float64Var(&r.Chakra.RooflineGBps, n, 0, u) }},
		}},
		{Title: "Mode and outputs", Flags: []flagtable.Spec{
			{Names: []string{"-mode"}, Arg: "MODE", Usage: "event (every flow over the fabric: max-min fair sharing, or DCQCN/HPCC/DCTCP with fluid queues, ECN and PFC when SimAI.conf's CC_MODE asks), analytical (SimAI_analytical's closed-form model) or compare (both, side by side in compare.csv)", Default: "event", Define: str(&r.Mode)},
			{Names: []string{"-o"}, Arg: "DIR", Usage: "output folder; in the event mode every output (EndToEnd.csv, summary.json, fct.txt, ...) goes here under its standard name and SimAI.conf's *_OUTPUT_FILE and *_MON_FILE keys only switch outputs on or off", Default: "results (event mode without -o and with -c: the paths SimAI.conf gives)", Define: str(&r.OutDir)},
			{Names: []string{"-r", "--result"}, Arg: "PREFIX", Usage: "output prefix: the report is DIR/PREFIXEndToEnd.csv (in the event mode every output gets it)", Default: "analytical mode: derived from the workload file name, as SimAI_analytical; event mode: none", Define: str(&r.Prefix)},
			{Names: []string{"-r_f", "--result_folder"}, Arg: "FOLDER", Usage: "folder inside DIR for the outputs", Define: str(&r.ResultFolder)},
			{Names: []string{"-v", "--visual"}, Arg: "N", Usage: "N ≠ 0 also writes PREFIXchart.html, a pie chart of the time breakdown (self-contained: no network needed to view it)", Default: "0", Define: num(&o.visual)},
			{Names: []string{"-plot"}, Usage: "also draw the plots (PNG and SVG: FCT slowdown CDF, link utilisation by tier, busiest links, time per layer, analytical vs event) into the output folder; simd plot DIR redraws them", Define: boolean(&o.plot)},
			{Names: []string{"-report"}, Usage: "also write PREFIXreport.html, one self-contained page (no network access) with the run's summary, exposed communication by group, plots, link and compare tables and per-layer table; simd report DIR writes it for an existing folder", Define: boolean(&o.report)},
			{Names: []string{"-trace"}, Arg: "FILE", Usage: "also write the run's timeline to FILE, a Chrome trace (JSON) that ui.perfetto.dev and chrome://tracing open: compute, waits and collectives per pipeline stage (ranks that run the same spans share a track), per job with -jobs, and link utilisation counters (docs/formats.md)", Define: str(&r.Timeline)},
			{Names: []string{"-trace-all-ranks"}, Usage: "with -trace: one track per rank instead of one per group of ranks that run the same spans (large for thousands of GPUs)", Define: boolean(&r.TimelineAllRanks)},
			{Names: []string{"-l", "--lang"}, Arg: "LANG", Usage: "language of the chart: en or ja", Default: "en", Define: str(&r.Lang)},
			{Names: []string{"-log-level"}, Arg: "LEVEL", Usage: "debug, info, warn or error (log lines go to stderr)", Default: "info", Define: str(&o.logLevel)},
			{Names: []string{"-quiet"}, Usage: "no progress report on stderr (long runs otherwise report every second on a terminal, every ten seconds elsewhere)", Define: boolean(&o.quiet)},
			{Names: []string{"-progress-every"}, Arg: "DURATION", Usage: "the progress report's interval, e.g. 500ms or 1m; the first report comes after one interval", Default: "1s on a terminal, else 10s; the first after 2s", Define: func(n, u string) { fs.DurationVar(&o.progressEvery, n, 0, u) }},
			{Names: []string{"-cpuprofile"}, Arg: "FILE", Usage: "write a CPU profile of the run (go tool pprof reads it)", Define: str(&o.cpuProfile)},
			{Names: []string{"-memprofile"}, Arg: "FILE", Usage: "write a heap profile as the simulation ends, while its model is held (where -max-wall or -max-events stopped it)", Define: str(&o.memProfile)},
		}},
		{Title: "Cluster (SimAI_analytical's flags, same meaning)", Flags: []flagtable.Spec{
			{Names: []string{"-g", "--gpus"}, Arg: "N", Usage: "number of GPUs (if repeated, the first counts)", Default: "the topology's, else the workload's all_gpus", Define: val(flagtable.First(&o.gpus))},
			{Names: []string{"-g_p_s", "--gpus-per-server"}, Arg: "N", Usage: "GPUs per server (scale-up domain)", Default: "the topology's, else 8", Define: num(&o.gpusPerServer)},
			{Names: []string{"-nv", "--nvlink"}, Arg: "GBPS", Usage: "NVLink bus bandwidth per GPU, GB/s", Default: "the topology's NVLink rate / 8, else from -g_type", Define: val(flagtable.Single(&o.nvlink))},
			{Names: []string{"-nic", "--nic_busbw"}, Arg: "GBPS", Usage: "bandwidth of one NIC, GB/s", Default: "the topology's NIC rate / 8, else from -nic_t", Define: val(flagtable.Single(&o.nic))},
			{Names: []string{"-n_p_s", "--nic_per_server"}, Arg: "N", Usage: "NICs per server", Default: "the topology's, else GPUs per server", Define: num(&o.nicsPerServer)},
			{Names: []string{"-nic_t", "--nic_type"}, Arg: "TYPE", Usage: "cx6 (23.5 GB/s), cx7 or bf3 (48.5 GB/s); used when -nic is not given", Default: "cx7 without a NIC in the topology", Define: str(&o.nicType)},
			{Names: []string{"-g_type", "--gpu_type"}, Arg: "TYPE", Usage: "A100, A800, H100, H800 or H20; gives -nv (240, 160, 370.8, 164.8, 370.8) when -nv is not given", Default: "the topology's", Define: str(&o.gpuType)},
		}},
		{Title: "Event mode", Flags: []flagtable.Spec{
			{Names: []string{"-flows"}, Arg: "FILE", Usage: "run a flow file (ns-3/HPCC format: a count, then \"src dst pg dport size start_s\" per flow) instead of a workload", Define: str(&r.Flows)},
			{Names: []string{"-jobs"}, Arg: "FILE", Usage: "run several jobs on one fabric instead of a workload: a YAML list of jobs, each a workload on explicit GPUs (gpus: \"0-31\") or a count placed packed, spread or at random, with a start time and an iteration count (docs/formats.md); writes jobs.csv with each job's iteration time together and alone and the slowdown, and JOB/EndToEnd.csv and JOB/summary.json per job", Define: str(&r.Jobs)},
			{Names: []string{"-jobs-alone"}, Arg: "HOW", Usage: "with -jobs, the alone figures: run (simulate each job alone on its GPUs after the run together), none (leave them out), or an earlier run's jobs.csv to read them from", Default: "run", Define: str(&r.JobsAlone)},
			{Names: []string{"-nvls"}, Usage: "NVLS for TP all-reduces of 8 or more Hopper GPUs (SimAI's AS_NVLS_ENABLE=1)", Default: "from AS_NVLS_ENABLE", Define: boolean(&e.NVLS)},
			{Names: []string{"-pxn"}, Usage: "PXN relays for rings (and, with -pxn-variant nccl, all-to-alls) across servers (SimAI's AS_PXN_ENABLE=1)", Default: "from AS_PXN_ENABLE", Define: boolean(&e.PXN)},
			{Names: []string{"-pxn-variant"}, Arg: "VARIANT", Usage: pxnVariantUsage, Default: "simccl", Define: val(flagtable.NewValue(&e.PXNVariant, nccl.ParsePXNVariant))},
			{Names: []string{"-chunk-bytes"}, Arg: "RULE", Usage: chunkBytesUsage, Default: "simccl; exact for a Chakra trace", Define: str(&e.ChunkBytes)},
			{Names: []string{"-algo-policy"}, Arg: "POLICY", Usage: "how collectives choose their algorithm: simccl (SimAI's rule) or nccl (NCCL 2.30's tuning model)", Default: "simccl; nccl for a Chakra trace", Define: str(&e.AlgoPolicy)},
			{Names: []string{"-force-algo"}, Arg: "LIST", Usage: "algorithms forced per group kind, e.g. TP=nvls,DP=rhd,EP=pairwise (ring, tree, nvls, nvlstree, pxn, multiring, rhd, direct, pairwise)", Define: str(&e.ForceAlgo)},
			{Names: []string{"-send-lat"}, Arg: "NS", Usage: "start latency of every flow, ns (SimAI's AS_SEND_LAT, which is in µs, also works)", Default: "SimAI's per-algorithm table, in ns", Define: func(n, u string) { fs.Int64Var(&e.SendLatencyNs, n, -1, u) }},
			{Names: []string{"-chunks"}, Arg: "N", Usage: "chunks per channel of tree, NVLS and NVLS-Tree collectives (0: their default)", Default: "0", Define: num(&e.Chunks)},
			{Names: []string{"-ep-dispatch"}, Arg: "PLAN", Usage: "how EP all-to-alls run: nccl (SimCCL's all-to-all), deepep or fast (a DeepEP or FAST dispatch of tokens drawn with the -moe-* model)", Default: "nccl", Define: str(&e.EPDispatch)},
			{Names: []string{"-moe-hidden"}, Arg: "H", Usage: "-ep-dispatch token model: elements per token", Default: "7168", Define: num(&e.DispatchModel.Hidden)},
			{Names: []string{"-moe-dtype-bytes"}, Arg: "D", Usage: "-ep-dispatch token model: bytes per element (a token is H × D bytes)", Default: "2", Define: num(&e.DispatchModel.DtypeBytes)},
			{Names: []string{"-moe-top-k"}, Arg: "K", Usage: "-ep-dispatch token model: experts per token", Default: "8", Define: num(&e.DispatchModel.TopK)},
			{Names: []string{"-moe-experts-per-gpu"}, Arg: "E", Usage: "-ep-dispatch token model: experts on each GPU of the EP group", Default: "1", Define: num(&e.DispatchModel.ExpertsPerGPU)},
			{Names: []string{"-moe-chunks"}, Arg: "N", Usage: "-ep-dispatch deepep: pieces each transfer is streamed in (forwards overlap the copies they wait for)", Default: "1", Define: num(&e.DispatchModel.Chunks)},
			{Names: []string{"-moe-zipf"}, Arg: "S", Usage: "-ep-dispatch token model: Zipf exponent of expert popularity (0: uniform)", Default: "0", Define: func(n, u string) { fs.Float64Var(&e.DispatchModel.Zipf, n, 0, u) }},
			{Names: []string{"-threads"}, Arg: "N", Usage: "cores a run may use: 1 runs everything on one; 2 also formats and writes the FCT log (fct.txt) on a second one; the outputs are the same byte for byte", Default: "2 when Go may use 2 cores (GOMAXPROCS), else 1",
				Define: func(n, u string) {
					fs.Func(n, u, func(v string) error {
						k, err := strconv.Atoi(v)
						if err != nil || k < 1 {
							return errors.New("expected a count of cores, 1 or more")
						}
						e.Threads = k
						return nil
					})
				}},
			{Names: []string{"-lookahead"}, Arg: "WHEN", Usage: "whether the event loop asks for the records of the next event while the one before runs, which pays where the network's tables outgrow the processor's caches: auto (when its link tables are 6 MiB or more), on or off; the outputs are the same byte for byte", Default: "auto", Define: str(&e.LookAhead)},
			{Names: []string{"-qps-per-conn"}, Arg: "N", Usage: "QPs each flow between servers is split into (NCCL_IB_QPS_PER_CONNECTION with NCCL_IB_SPLIT_DATA_ON_QPS=1): each QP has its own ECMP hash, and a flow's QPs take a multi-port NIC's ports in turn; 1 is SimAI's one QP per flow", Default: "NCCL_IB_QPS_PER_CONNECTION, else 1",
				Define: func(n, u string) {
					fs.Func(n, u, func(v string) error {
						k, err := nccl.ParseQPsPerConnection(v)
						e.QPsPerConn = k
						return err
					})
				}},
			{Names: []string{"-seed"}, Arg: "N", Usage: "seed of the random choices of the congestion-control model (when a port's ECN marks fall, which flow a marked packet belongs to); same inputs and seed, same outputs", Default: "1", Define: func(n, u string) { fs.Uint64Var(&e.Seed, n, 1, u) }},
		}},
		{Title: "Protocol rules (SimAI's ns-3 by default; the other values are the physical or classic models of docs/models.md)", Flags: protocolFlags(fs, &e.ProtocolRules)},
		{Title: "Limits (a stopped run writes what it computed, marked incomplete, and exits with 3; SIGINT or SIGTERM does the same with 130 or 143)", Flags: []flagtable.Spec{
			{Names: []string{"-max-events"}, Arg: "N", Usage: "stop the event mode after N engine events (0: no limit)", Default: "0", Define: func(n, u string) { fs.Uint64Var(&e.MaxEvents, n, 0, u) }},
			{Names: []string{"-max-wall"}, Arg: "DURATION", Usage: "stop the event mode after this much wall-clock time, e.g. 90s or 2h (0: no limit)", Default: "0", Define: func(n, u string) { fs.DurationVar(&e.MaxWall, n, 0, u) }},
			{Names: []string{"-max-memory"}, Arg: "BYTES", Usage: "refuse, before simulating, an event run whose estimated peak memory exceeds this, and have the garbage collector keep the heap under it, e.g. 16GiB", Default: "the memory available to simd (MemAvailable, or the cgroup's limit if lower)", Define: val(flagtable.NewValue(&e.MaxMemory, units.ParseBytes))},
		}},
		{Title: "Overlap ratios (share of a group's communication hidden behind compute, 0 to 1)", Flags: []flagtable.Spec{
			{Names: []string{"-dp_o", "--dp_overlap"}, Arg: "R", Usage: "DP and DP_EP", Default: "0", Define: val(flagtable.Single(&r.Overlap.DP))},
			{Names: []string{"-ep_o", "--ep_overlap"}, Arg: "R", Usage: "EP", Default: "0", Define: val(flagtable.Single(&r.Overlap.EP))},
			{Names: []string{"-tp_o", "--tp_overlap"}, Arg: "R", Usage: "TP", Default: "0", Define: val(flagtable.Single(&r.Overlap.TP))},
			{Names: []string{"-pp_o", "--pp_overlap"}, Arg: "R", Usage: "PP", Default: "1", Define: val(flagtable.Single(&r.Overlap.PP))},
		}},
	}
	flagtable.Define(fs, groups)
	return fs, groups
}

// usage writes -h: every flag with its aliases, meaning and default.
func usage(w io.Writer) {
	flagtable.WriteUsage(w, "simd [-w WORKLOAD] [-n TOPO] [-c SimAI.conf] [-mode event|analytical|compare] [-o DIR] [-r PREFIX] [flags]",
		"simd -flows FLOWFILE -n TOPO [-c SimAI.conf] [-o DIR]",
		"simd topo|dag|moe|sweep|plot ... (see Subcommands)")
	fmt.Fprint(w, `
simd is a fast network simulator for AI training clusters that reads SimAI's files. With no
flags it runs a shipped example and prints where the results are.

Subcommands:
  simd topo [flags]    generate a topology file with SimAI's generator flags (simd topo -h)
  simd dag [flags]     decompose one collective into its flow DAG (simd dag -h)
  simd moe gen|run     token-routing workloads and DeepEP/FAST dispatch plans (simd moe -h)
  simd sweep SPEC      run a grid of configurations, sharded for job arrays (simd sweep -h)
  simd plot DIR        redraw the plots of an output folder (simd plot -h)
  simd report DIR      write the HTML report of an output folder (simd report -h)
  simd -version        the version, source revision and Go toolchain simd was built from

Flags take one dash or two (-g or --gpus). Exit status: 0 success, 2 bad input or usage, 1 other failures.
`)
	_, groups := newFlagSet(new(options))
	flagtable.WriteGroups(w, groups)
}

// defaultOptions are the options of a command line that gives no flag.
func defaultOptions() *options {
	o := new(options)
	newFlagSet(o)
	o.set = map[string]bool{}
	return o
}

// parseFlags reads the command line. flag.ErrHelp is returned for -h.
func parseFlags(args []string) (*options, error) {
	o := new(options)
	fs, groups := newFlagSet(o)
	if err := parseArgs(fs, args, " (simd -h lists the flags)", " (simd -h lists the flags)"); err != nil {
		return nil, err
	}
	if o.progressEvery < 0 {
		return nil, badInputf("-progress-every %v: expected a positive duration (0: the default)", o.progressEvery)
	}
	if e := o.req.Event; e.MaxWall < 0 {
		return nil, badInputf("-max-wall %v: expected a duration of 0 (no limit) or more", e.MaxWall)
	}
	o.set = map[string]bool{}
	for _, s := range flagtable.Given(fs, groups) {
		o.set[strings.TrimLeft(s.Names[0], "-")] = true
	}
	return o, nil
}

// request is the run o's flags ask for: their values, as sim.Execute reads them.
func (o *options) request() sim.Request {
	r := o.req
	r.OutDirGiven, r.PrefixGiven, r.Event.AlgoPolicyGiven = o.set["o"], o.set["r"], o.set["algo-policy"]
	r.Chart, r.Links = o.visual != 0, o.plot || o.report
	c := &r.Cluster
	if o.set["g"] {
		c.GPUs = &o.gpus
	}
	if o.set["g_p_s"] {
		c.GPUsPerServer = &o.gpusPerServer
	}
	if o.set["g_type"] {
		c.GPUType = &o.gpuType
	}
	if o.set["nv"] {
		c.NVLinkGBps = &o.nvlink
	}
	if o.set["nic"] {
		c.NICGBps = &o.nic
	}
	if o.set["nic_t"] {
		c.NICType = &o.nicType
	}
	if o.set["n_p_s"] {
		c.NICsPerServer = &o.nicsPerServer
	}
	return r
}
