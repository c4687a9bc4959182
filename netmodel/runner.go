package netmodel

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"simd/ccl"
	"simd/engine"
	"simd/netmodel/ccfluid"
	"simd/netmodel/fluid"
	"simd/topo/route"
)

// Latency is the start delay of a flow once its parents have arrived at its sender: SimAI's
// send latency, which differs inside a server and across servers.
type Latency struct {
	Intra, Inter engine.Time
}

// FlowRecord describes a flow that has arrived, for FCT logs and reports. Times are simulated.
type FlowRecord struct {
	Run                  RunID
	Flow                 ccl.FlowID
	Kind                 ccl.FlowKind
	Src, Dst             int32 // nodes
	Sport, Dport         uint16
	Bytes                int64
	Start, Sent, Arrived engine.Time
	Path                 []int32 // directed links (the last path, for a flow LinkDown moved); valid during the call only
}

// Observer receives every flow that arrives, in arrival order.
type Observer interface {
	FlowDone(r *FlowRecord)
}

// BottleneckObserver receives, for a simulator built with TrackBottlenecks, the bytes each flow
// sent while a link was its max-min bottleneck, as each such stretch ends. Run is rawRun (-1)
// for raw flows.
type BottleneckObserver interface {
	FlowBottleneck(run RunID, flow ccl.FlowID, link int32, bytes float64)
}

// Options are the simulator's optional features.
type Options struct {
	// TrackBottlenecks reports to BottleneckObservers which link limited each flow's bytes
	// (it costs a few float operations per re-rated flow).
	TrackBottlenecks bool
	// Transport is how flows cross the network as packets and when a flow is done (the zero
	// value: a pure fluid, done at the last byte's arrival). With congestion control it is
	// ccfluid.Config's.
	Transport fluid.Transport
	// Bundles has the flows in flight on one path share it as one bundle (fluid.Options.Bundles):
	// the same rates, less work where a collective keeps several flows on a path.
	Bundles bool
}

// RunID names a DAG run of a Simulator.
type RunID int32

// DPort is the destination port of every flow, as SimAI's QPs (entry.h).
const DPort = 100

// Simulator runs collectives' flow DAGs over a fluid network: a flow is released once every one
// of its parents has arrived at its sender, plus the send latency, routed by the fabric's
// router with its own source port, and handed to the network; a run is done when its last flow
// arrives. Many runs may be active at once and share the network.
type Simulator struct {
	s   *engine.Scheduler
	fab *Fabric
	// sampler is the link sampler started on it, nil for none (SampleLinks).
	sampler *LinkSampler
	net     flowNetwork
	// ideal is the max-min model (congestion control off), ccnet the fluid queue model with
	// congestion control; exactly one is set, and net is it.
	ideal *fluid.Network
	ccnet *ccfluid.Network
	hid   engine.HandlerID
	// tableBytes is the size of the network's link tables (LookAheadBytes).
	tableBytes int64

	runs     []dagRun
	freeRuns []RunID // finished runs' slots, reused so memory follows the runs in progress
	obs      []Observer
	bobs     []BottleneckObserver
	err      error
	track    bool // keep each in-flight flow's endpoints and ports (for observers, monitors and LinkDown)

	// Per in-flight flow, indexed by the network's FlowID slot.
	inflight []inflightFlow

	// released holds the flows waiting out their send latency, so that a flow is described
	// once: one FIFO queue per delay from release to start, in the order the scheduler's delay
	// lines deliver them (the release event's Arg is the queue), so the records are read in
	// the order they were written.
	released    []releaseQueue
	lastRelease int32
	slab        []releasedFlow // released flows whose delay has no queue (maxReleaseQueues)
	slabFree    []int32

	// pairs holds, per (src, dst) node pair, the next source port and, for pairs with a single
	// path (inside a server, on one rail: their route does not depend on the ports), the path.
	pairs     pairTable[pairState]
	pathArena []int32
	pathBuf   []int32
	kids      []ccl.FlowID
	parents   []ccl.FlowID
	roots     []ccl.FlowID // scratch: the roots of a DAG being started

	flows   uint64
	arrived uint64 // flows done
	// sent is the flows' worth of bytes sent at the last Progress, for ProgressCounted.
	sent    float64
	records FlowRecord
	raw     []RawFlow

	// tr is the transport (Options.Transport, or the congestion-controlled network's);
	// ackBuf holds the route of a flow's ACKs while the flow starts.
	tr fluid.Transport
	// ackSecs, in the ideal model on ns-3's clock: an ACK's whole nanoseconds on each directed
	// link (Transport.PacketSecs), which doneDelay sums over a route back.
	ackSecs []float64
	ackBuf  []int32

	// failed holds the links taken down so far (LinkDown), moved the flows to reroute.
	failed []failedLink
	moved  []fluid.FlowID

	// qpsPerConn is the number of QPs a flow between servers is split into (SetQPsPerConnection);
	// parts holds, per split flow in flight (by tag), its QPs still to finish and the latest
	// done time among those finished.
	qpsPerConn int
	parts      map[int64]splitFlow

	inOrder bool // SetIssueInOrder

	// rankFlows is, per DAG run with its ranks joining one by one (RunRanks), how many of its
	// flows each rank of its group sends or receives. Its keys are the DAGs themselves: every
	// DAG type of ccl is a pointer, so they compare (a DAG of a type that does not compare
	// would panic here).
	rankFlows map[ccl.DAG][]int32

	// The start's mailboxes (SetStartMailbox, mailbox.go): settled[rank] once a flow it sent
	// or received is done (unsettled: the ranks not yet), mail the sends of this instant,
	// mailStarts those scheduled to start (mailFree: free slots), and flushMail's scratch.
	mailbox    bool
	settled    []bool
	unsettled  int
	mail       []mailFlow
	mailStarts []mailStart
	mailFree   []int32
	mailSports []int32
	mailOrder  []int
}

// splitFlow is a flow split over several QPs, in flight: n QPs, left of them not done.
type splitFlow struct {
	n, left int32
	at      engine.Time
}

// SetQPsPerConnection splits every flow of a collective between two servers into n QPs, as
// NCCL does with NCCL_IB_QPS_PER_CONNECTION=n and NCCL_IB_SPLIT_DATA_ON_QPS=1: QP k of a flow
// carries bytes/n (the first bytes mod n QPs one byte more; never a QP without bytes), has its
// own source port (the pair's next ones) and so its own ECMP hash at every switch, and leaves
// the sending NIC on its port k places after the first QP's (route.Router.RouteQP), so that
// the QPs of a flow take a multi-port NIC's ports in turn. The flow is done, and its children
// released, when its last QP is done; each QP is reported to observers as a flow of its own
// (one fct.txt line per QP, as ns-3 logs QPs). Flows inside a server (NVLink) and raw flows
// are not split. n = 1, the default, is SimAI's: one QP per flow. It must be called before the
// first flow starts.
func (m *Simulator) SetQPsPerConnection(n int) error {
	if n < 1 {
		return fmt.Errorf("QPs per connection %d: at least 1", n)
	}
	if m.flows > 0 {
		return errors.New("SetQPsPerConnection must come before the first flow starts")
	}
	m.qpsPerConn = n
	return nil
}

// SetIssueInOrder sets whether a sender passes a channel's chunks on in order (true), as SimAI
// does, or each as soon as it has arrived (false, the Simulator's default), for the DAGs that
// say in which order their senders issue their flows (ccl.SequencedDAG: rings). astra-sim's
// NcclTreeFlowModel posts a rank's receive of a channel's next chunk only when its send of the
// chunk before is ready, so a chunk that overtook an earlier one on its way (SimAI makes every
// flow a queue pair of its own, with its own source port and so its own ECMP path) waits until
// the earlier one has arrived and been passed on, and follows it IssueGap later. Runs started
// afterwards use it.
func (m *Simulator) SetIssueInOrder(on bool) { m.inOrder = on }

// failedLink is a link LinkDown took down, and when.
type failedLink struct {
	a, b int32
	at   engine.Time
}

// RawFlow is a point-to-point transfer that belongs to no collective, as a flow file lists them.
type RawFlow struct {
	Src, Dst     int32 // nodes
	Bytes        int64
	Sport, DPort uint16 // the ports its packets carry (the ECMP hash's input)
	Start        engine.Time
}

// rawRun marks raw flows in event targets and flow tags.
const rawRun RunID = -1

// StartRaw schedules raw flows at their start times (which must not be in the past), each with
// its own ports; its FlowRecord has Run -1 and Flow its index in flows.
func (m *Simulator) StartRaw(flows []RawFlow) {
	base := len(m.raw)
	m.raw = append(m.raw, flows...)
	for i, f := range flows {
		m.s.At(f.Start, m.hid, int32(rawRun), int64(base+i))
	}
}

type pairState struct {
	qps uint32 // flows started between the pair: the next QP's index
	// The path: in short when it has at most shortPath links, else in pathArena at off; n < 0:
	// several equal-cost paths, route every flow.
	off, n int32
	// The route of the pair's ACKs (from dst back to src), likewise (always in pathArena), and
	// when it is cached, its time (ackTime: its propagation and an ACK's serialisation on
	// every hop) once known (ackTime ≥ 0).
	ackOff, ackN int32
	known        bool // the path count has been looked up
	ackKnown     bool
	delay        engine.Time
	ackTime      engine.Time
	short        [shortPath]int32
}

// shortPath is the longest path a pair keeps in its own record: a flow between servers of one
// rail, or through one spine, finds its path with the pair (one cache miss, the pair table's
// flat slot is 64 bytes), where a path in pathArena was a second miss, after the pair's and
// before the links'.
const shortPath = 4

// releasedFlow is what starting a released flow needs, 24 bytes: the DAG describes the rest.
type releasedFlow struct {
	run      RunID
	id       ccl.FlowID
	src, dst int32 // endpoints
	bytes    int64
}

// releaseQueue is the FIFO of released flows that start a delay d after their release, in a
// ring buffer whose length is a power of two.
type releaseQueue struct {
	d       engine.Time
	buf     []releasedFlow
	head, n int
}

func (q *releaseQueue) push(r releasedFlow) {
	if q.n == len(q.buf) {
		grown := make([]releasedFlow, max(2*len(q.buf), 64))
		for i := range q.n {
			grown[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = r
	q.n++
}

// pop moves the queue's oldest flow into *r. It writes through r rather than returning the
// record: a returned 24-byte record went through a temporary whose two overlapping 16-byte
// stores the copy into the caller's variable could not forward from, a stall on every release
// until the stores left the store buffer, behind whatever cache misses were ahead of them.
func (q *releaseQueue) pop(r *releasedFlow) {
	*r = q.buf[q.head]
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
}

// maxReleaseQueues bounds the release queues: the delays from release to start are a few
// recurring values in most runs (a parent's path and the send latency), but with packets and
// queues every flow's done time differs, and one queue per distinct delay would grow without
// end. A release whose delay has no queue takes an empty queue (its old delay has nothing
// pending, so no order is broken) or, when all are busy, a slot of the slab, scheduled on the
// engine's heap.
const maxReleaseQueues = 16

// releaseQueueFor returns the index of the release queue for delay d, creating or reusing one,
// or -1 when every queue holds flows of other delays.
func (m *Simulator) releaseQueueFor(d engine.Time) int32 {
	if k := m.lastRelease; int(k) < len(m.released) && m.released[k].d == d {
		return k
	}
	free := int32(-1)
	for i := range m.released {
		if q := &m.released[i]; q.d == d {
			m.lastRelease = int32(i)
			return int32(i)
		} else if q.n == 0 && free < 0 {
			free = int32(i)
		}
	}
	if free < 0 && len(m.released) < maxReleaseQueues {
		free = int32(len(m.released))
		m.released = append(m.released, releaseQueue{})
	}
	if free >= 0 {
		m.released[free].d = d
		m.lastRelease = free
	}
	return free
}

type inflightFlow struct {
	start, sent  engine.Time
	src, dst     int32
	sport, dport uint16
	first        uint16 // with shift, how the flow leaves its NIC (startPath)
	shift        int32
}

type dagRun struct {
	dag       ccl.DAG
	single    bool // no flow has two parents: release children without counting
	coll      *ccl.Collective
	lat       Latency
	pending   map[ccl.FlowID]arrivedParents // for flows with several parents
	remaining int
	// end is the latest arrival of its flows so far: the network reports arrivals in the order
	// the flows are sent, and a flow sent later may arrive earlier (a shorter path or tail).
	end  engine.Time
	done func()
	// gpsShift is log2 of the collective's GPUs per server when that is a power of two, else -1.
	gpsShift int
	// seq, when set, is the order in which the DAG's senders issue their flows (see
	// SetIssueInOrder); issued holds, per sequence, the next place to release and when the flow
	// before it was released; held the flows whose parents arrived before the flow ahead of
	// them in their sequence was released, by place, with their parents' arrival.
	seq    ccl.SequencedDAG
	issued []issuePoint
	held   map[uint64]heldFlow
	// gate, for a run whose ranks join one by one (RunRanks), holds the flows of ranks that
	// have not and counts each rank's flows; nil for a run of the collective at once.
	gate *rankGate
}

// issuePoint is where a sequence of a run stands: the next place to release, and the release
// time of the flow before it.
type issuePoint struct {
	next int32
	at   engine.Time
}

// heldFlow is a flow waiting for the flow ahead of it in its sequence, and when its parents
// arrived.
type heldFlow struct {
	f  ccl.FlowID
	at engine.Time
}

// arrivedParents is how many of a flow's parents have arrived, and the latest arrival among
// them: the flow is released from that, not from the last one reported.
type arrivedParents struct {
	n  int32
	at engine.Time
}

// NewSimulator builds the network over fab's graph; flows are scheduled on s.
func NewSimulator(s *engine.Scheduler, fab *Fabric, opt Options) *Simulator {
	m := &Simulator{s: s, fab: fab, tr: opt.Transport}
	if tr := opt.Transport; tr.NanosecondClock && tr.AtAck {
		g := fab.Graph
		m.ackSecs = make([]float64, g.NumDirLinks())
		for l := range m.ackSecs {
			m.ackSecs[l] = tr.PacketSecs(tr.Ack, g.Rate(int32(l)))
		}
	}
	m.ideal = fluid.NewWithOptions(s, fab.Graph, m, fluid.Options{TrackBottlenecks: opt.TrackBottlenecks, ArrivalAtSend: true, Transport: opt.Transport, Bundles: opt.Bundles})
	m.net = m.ideal
	m.hid = s.Register(m)
	m.tableBytes = m.ideal.LinkTableBytes()
	m.SetLookAhead(m.tableBytes >= LookAheadBytes)
	return m
}

// NewCCSimulator is NewSimulator over the fluid queue model with congestion control cfg
// (package ccfluid) instead of ideal max-min sharing; PFC frames go to pfc (may be nil).
// Bottleneck tracking is a feature of the ideal model only.
func NewCCSimulator(s *engine.Scheduler, fab *Fabric, cfg ccfluid.Config, pfc ccfluid.PFCObserver) (*Simulator, error) {
	m := &Simulator{s: s, fab: fab, tr: cfg.Transport}
	n, err := ccfluid.New(s, fab.Graph, m, pfc, cfg)
	if err != nil {
		return nil, err
	}
	m.ccnet, m.net = n, n
	m.hid = s.Register(m)
	m.tableBytes = n.LinkTableBytes()
	m.SetLookAhead(m.tableBytes >= LookAheadBytes)
	return m, nil
}

// LookAheadBytes is the size of a network model's link tables from which a new Simulator has
// its scheduler look ahead (engine.Scheduler.LookAhead): the network and the simulator ask for
// the records the next event will read while the one before runs. Below it the tables stay
// in the processor's caches and the look costs more than it saves; measured side by side
// (docs/performance.md, "Looking one event ahead"): the 16,384-GPU data-parallel all-reduce
// with ideal sharing (8 MiB of links) and the 4,096-GPU one under DCQCN (13 MiB) gain, the
// 1,024-GPU all-to-all under DCQCN (3.3 MiB) neither gains nor loses, the 9,216-GPU MoE
// workload with ideal sharing (5.5 MiB) loses up to 2%, the 4,096-GPU all-reduce with ideal
// sharing (1.5 MiB), the 1,024-GPU ring (0.4 MiB) and the 128-GPU ring under DCQCN (0.8 MiB)
// 6–7%.
const LookAheadBytes = 6 << 20

// SetLookAhead turns looking ahead on or off (a new Simulator chooses by LookAheadBytes). The
// results are the same either way, byte for byte: only the time to reach them changes.
func (m *Simulator) SetLookAhead(on bool) { m.s.LookAhead(on) }

// LookingAhead reports whether the scheduler looks ahead, and the size of the network's link
// tables the choice weighed.
func (m *Simulator) LookingAhead() (on bool, linkTableBytes int64) {
	return m.s.LookingAhead(), m.tableBytes
}

// flowNetwork is what the simulator needs of a network model besides starting flows (which
// the two models do differently: see startPath).
type flowNetwork interface {
	InFlightProgress() float64
	InFlightProgressWeighted(weight func(tag int64) float64) float64
	Reserve(flows int)
	Tag(f fluid.FlowID) int64
	Bytes(f fluid.FlowID) int64
	Path(f fluid.FlowID) []int32
}

// ObserveBottlenecks adds an observer of bottleneck bytes (see Options.TrackBottlenecks).
func (m *Simulator) ObserveBottlenecks(o BottleneckObserver) { m.bobs = append(m.bobs, o) }

// FlowBottleneck implements fluid.BottleneckObserver.
func (m *Simulator) FlowBottleneck(f fluid.FlowID, link int32, bytes float64, now engine.Time) {
	tag := m.net.Tag(f)
	for _, o := range m.bobs {
		o.FlowBottleneck(RunID(tag>>32), ccl.FlowID(uint32(tag)), link, bytes)
	}
}

// Network is the ideal max-min network the flows run on; nil with congestion control.
func (m *Simulator) Network() *fluid.Network { return m.ideal }

// CCNetwork is the congestion-controlled network the flows run on; nil without.
func (m *Simulator) CCNetwork() *ccfluid.Network { return m.ccnet }

// Observe adds an observer of arriving flows. Observers must be added before the first flow
// starts: the simulator keeps what a record needs (start time, ports) only while someone
// observes.
func (m *Simulator) Observe(o Observer) {
	m.obs = append(m.obs, o)
	m.track = true
}

// SwitchesWithoutPFC is the number of packet switches the congestion-controlled model runs
// without PFC because BUFFER_SIZE leaves them no shared pool (ccfluid.Network.SwitchesWithoutPFC);
// 0 for the ideal model.
func (m *Simulator) SwitchesWithoutPFC() int {
	if m.ccnet == nil {
		return 0
	}
	return m.ccnet.SwitchesWithoutPFC()
}

// Err is the first error met while running (a flow that cannot be routed); the scheduler is
// stopped when it happens.
func (m *Simulator) Err() error { return m.err }

// Flows is the number of flows started so far.
func (m *Simulator) Flows() uint64 { return m.flows }

// FlowsDone is the number of flows done so far (arrived, or at the ACK with ACK completion).
func (m *Simulator) FlowsDone() uint64 { return m.arrived }

// Progress is how much of its work the simulation has done, in flows: each flow counts a part
// when it starts, a part as its bytes are sent, in proportion, and the rest when it is done, so
// that an all-to-all, whose flows all end at the end, shows its progress all along. The parts
// are what the three cost, measured on the all-to-all of 256 MiB over 1,024 GPUs, which starts
// its million flows in one instant, sends them, and ends them in another: with ideal sharing
// 2.7–3.1 s of starts (the instant's last recompute, of all million flows, 0.6 s of it, and the
// first touch of every page of the flow tables), 0.1 s of sending and 1.3–1.4 s of ends (each
// end releases the flow's links and reports it) over three runs, so ⅔, 1/30 and 3/10 (½, ⅒ and
// ⅖ from an earlier measurement, 2.5, 0.2 and 1.6 s, put the starts' recompute in no part: the
// first estimate after the starts read 1.7–2.4 times the truth); under congestion control ½, ⅕
// and 3/10, the mean of the two sizes' shares: over 1,024 GPUs 3.2–7.8 s of starts (the spread
// is theirs alone: the first touch of the flow tables, whose page faults and system time varied
// from run to run), 3.1–3.5 s of sending and 3.3–3.7 s of ends over three runs, 0.45, 0.27 and
// 0.29 of the mean run; over 256 GPUs 0.20–0.24, 0.03–0.06 and 0.12–0.14 s, 0.54, 0.11 and
// 0.35. (They were ⅓, ⅙ and ½, measured before the last ACKs and the ports' sharing got
// cheaper; with those the 1,024-GPU all-to-all's time left strayed 2.6–2.7 times from the truth
// between a tenth and nine tenths of its run, with these 1.4–1.6 times, three runs each:
// docs/performance.md, "The progress line's parts under congestion control".) (With two parts,
// start and bytes, a run's ends counted for nothing: the report said "0s left" through the
// all-to-all's last third and then "?".) While an all-to-all starts its flows the rest is a
// guess from these parts.
// For progress reports: O(1) under congestion control, whose model keeps its flows' progress as
// a line (ccfluid.Network.InFlightProgress), O(flow slots) with ideal sharing and with QPs;
// ProgressCounted is its O(1) bound between two.
//
// A flow split into QPs (SetQPsPerConnection) counts once: each of its n QPs counts 1/n.
func (m *Simulator) Progress() float64 {
	inFlight := m.net.InFlightProgress
	if len(m.parts) > 0 {
		inFlight = func() float64 {
			done := 0.0 // the QPs done of flows still in flight
			for _, p := range m.parts {
				done += float64(p.n-p.left) / float64(p.n)
			}
			return done + m.net.InFlightProgressWeighted(func(tag int64) float64 {
				if p, ok := m.parts[tag]; ok {
					return 1 / float64(p.n)
				}
				return 1
			})
		}
	}
	m.sent = float64(m.arrived) + inFlight()
	return m.work(m.sent)
}

// ProgressCounted is Progress from the flows started and done now and the bytes sent at the
// last Progress (or the flows done, if more: a flow done has sent its bytes), without visiting
// the flows: O(1), so a progress report can read the starts and ends at every look while the
// bytes, a thirtieth of the work with ideal sharing and a fifth under congestion control, are
// measured now and then. It is at most Progress, and never less than at the call before.
func (m *Simulator) ProgressCounted() float64 { return m.work(max(m.sent, float64(m.arrived))) }

// work is the flows' worth of work done with sent flows' worth of bytes sent (Progress).
func (m *Simulator) work(sent float64) float64 {
	started, done := float64(m.flows), float64(m.arrived)
	// Each product apart: no fused multiply-add.
	if m.ccnet != nil {
		return float64(started/2) + float64(sent/5) + float64(0.3*done)
	}
	return float64(started*2/3) + float64(sent/30) + float64(0.3*done)
}

// Run starts DAG d now; done is called (from an engine event) when its last flow has arrived.
// The run's id is reused once it is done.
func (m *Simulator) Run(d ccl.DAG, lat Latency, done func()) RunID {
	return m.run(d, lat, done, nil)
}

// run starts d's run: done when every flow has arrived, rankDone (when not nil) for each rank
// of a run whose ranks join one by one (RunRanks).
func (m *Simulator) run(d ccl.DAG, lat Latency, done func(), rankDone func(int32)) RunID {
	run := dagRun{dag: d, coll: d.Collective(), lat: lat, remaining: d.NumFlows(), done: done, gpsShift: -1}
	if rankDone != nil {
		if m.rankFlows == nil {
			m.rankFlows = map[ccl.DAG][]int32{}
		}
		run.gate = newRankGate(d, run.coll, rankDone, m.rankFlows)
	}
	if g := run.coll.GPUsPerServer; g > 0 && g&(g-1) == 0 {
		run.gpsShift = bits.TrailingZeros(uint(g))
	}
	if sp, ok := d.(ccl.SingleParentDAG); ok && sp.SingleParent() {
		run.single = true
	}
	if sd, ok := d.(ccl.SequencedDAG); ok && m.inOrder {
		run.seq, run.issued = sd, make([]issuePoint, sd.Sequences())
	}
	var id RunID
	if n := len(m.freeRuns); n > 0 {
		id = m.freeRuns[n-1]
		m.freeRuns = m.freeRuns[:n-1]
		m.runs[id] = run
	} else {
		id = RunID(len(m.runs))
		m.runs = append(m.runs, run)
	}
	r := &m.runs[id]
	if r.remaining == 0 {
		if r.gate == nil { // else the last rank's join finishes it
			m.s.AtFunc(m.s.Now(), func() { m.finishRun(id, m.s.Now()) })
		}
		return id
	}
	m.roots = m.roots[:0]
	if rl, ok := d.(ccl.RootsDAG); ok {
		m.roots = rl.Roots(m.roots)
	} else {
		for f := range d.NumFlows() {
			m.parents = d.Parents(ccl.FlowID(f), m.parents[:0])
			if len(m.parents) == 0 {
				m.roots = append(m.roots, ccl.FlowID(f))
			}
		}
	}
	// The roots are in flight together: their flow slots, and the timers each will hold, are
	// made in one go rather than by doubling (a million-flow all-to-all would copy its flow
	// table twice over).
	m.net.Reserve(len(m.roots))
	m.s.Reserve(len(m.roots))
	if len(m.roots) >= reservePairsFrom {
		m.reservePairs(d)
	}
	if m.unsettled > 0 {
		// So are their places in the start's mailbox, where they wait for the instant's end:
		// append would grow them a quarter at a time, copying a million sends a dozen times.
		m.mail = fluid.Grow(m.mail, len(m.roots))
		m.mailStarts = fluid.Grow(m.mailStarts, len(m.roots)-len(m.mailFree))
	}
	if r.gate != nil {
		// Each rank's roots wait for its join (rankGate.holdRoots); a root sent from outside
		// the group waits for no one.
		for _, f := range r.gate.holdRoots(r.dag, m.roots) {
			m.ready(id, f, m.s.Now())
		}
		return id
	}
	for _, f := range m.roots {
		m.ready(id, f, m.s.Now())
	}
	return id
}

// reservePairsFrom is the number of roots from which a DAG's start reserves its sources' pair
// lists (reservePairs): below it a pass over the roots costs more than the lists' growth.
const reservePairsFrom = 1 << 14

// reservePairs makes room in the pair table for the roots' pairs, a count per source node: the
// roots start together, an all-to-all's every source with a thousand destinations.
func (m *Simulator) reservePairs(d ccl.DAG) {
	count := make([]int, m.fab.Graph.NumNodes())
	for _, f := range m.roots {
		if src, err := m.fab.Node(d.Flow(f).Src); err == nil {
			count[src]++
		}
	}
	for src, n := range count {
		if n > 0 {
			m.pairs.reserve(int32(src), n)
		}
	}
}

// Runs is the number of runs in progress.
func (m *Simulator) Runs() int { return len(m.runs) - len(m.freeRuns) }

// finishRun frees run id's slot and calls its done function at time at (now or later).
func (m *Simulator) finishRun(id RunID, at engine.Time) {
	done := m.runs[id].done
	m.runs[id] = dagRun{}
	m.freeRuns = append(m.freeRuns, id)
	if done == nil {
		return
	}
	if at > m.s.Now() {
		m.s.AtFunc(at, done)
		return
	}
	done()
}

// IssueGap is astra-sim's memory-bus delay: it hands a rank's send to the network 10 ns after
// the data that releases it is taken, and, for a channel's chunks in order (SetIssueInOrder),
// no earlier than 10 ns after the channel's send before it (40 ns when it processes the chunk
// first, which is not modelled). SimAI's ns-3 shows it on every flow: a ring's flow starts
// 6,010 ns after its parent's last ACK, the first step's at 6,011 ns (6 µs of send latency, 1
// ns of update time). Without the order, the chunks that waited behind a late one left at one
// instant, as flows identical in every respect, and stayed together as no ns-3 flows do: the
// 128 MiB ring over four AlibabaHPN servers took 1,687–2,418 µs over ±4 ns of send latency
// against ns-3's 1,461 (1,379–1,458 with it); without the 10 ns after the data, simd's starts
// ran 10 ns a step ahead of ns-3's (docs/models.md, "Chunks in order").
const IssueGap = 10 * engine.Nanosecond

// ready releases flow f of run id, whose parents have all arrived at time at, unless the flow
// ahead of it in its sequence (SetIssueInOrder) has not been released: then f waits for it,
// and is released no earlier than IssueGap after it; the flows that waited behind f follow.
func (m *Simulator) ready(id RunID, f ccl.FlowID, at engine.Time) {
	r := &m.runs[id]
	if r.gate != nil {
		var held bool
		if held, at = r.gate.gated(r, f, at); held {
			return
		}
	}
	if r.seq == nil {
		m.release(id, f, at)
		return
	}
	key, pos, ok := r.seq.Sequence(f)
	if !ok {
		m.release(id, f, at)
		return
	}
	q := &r.issued[key]
	if pos < q.next { // its place has passed (a DAG that repeats one): nothing to wait for
		m.release(id, f, max(at, q.at+IssueGap))
		return
	}
	if pos > q.next {
		if r.held == nil {
			r.held = map[uint64]heldFlow{}
		}
		r.held[uint64(key)<<32|uint64(pos)] = heldFlow{f, at}
		return
	}
	for {
		if q.next > 0 {
			at = max(at, q.at+IssueGap)
		}
		m.release(id, f, at)
		q.next++
		q.at = at
		k := uint64(key)<<32 | uint64(q.next)
		h, ok := r.held[k]
		if !ok {
			return
		}
		delete(r.held, k)
		f, at = h.f, h.at
	}
}

// release schedules flow f of run id to start after IssueGap and the send latency, counted from
// when it is ready (at, which may be later than now: arrivals are reported when a flow is
// sent).
func (m *Simulator) release(id RunID, f ccl.FlowID, at engine.Time) {
	r := &m.runs[id]
	fl := r.dag.Flow(f)
	lat := r.lat.Inter
	if r.server(fl.Src) == r.server(fl.Dst) {
		lat = r.lat.Intra
	}
	// The delay from now is the flow's parent's path delay plus the hand-over (astra-sim's
	// memory-bus delay after the data) and the send latency: a few distinct values, which the
	// scheduler's delay lines handle without its heap.
	at += IssueGap
	d := at + lat - m.s.Now()
	rel := releasedFlow{run: id, id: f, src: fl.Src, dst: fl.Dst, bytes: fl.Bytes}
	if m.inStartContext(fl.Src) {
		m.post(rel, at+lat)
		return
	}
	if k := m.releaseQueueFor(d); k >= 0 {
		m.released[k].push(rel)
		m.s.AfterFixed(d, m.hid, releaseTarget, int64(k))
		return
	}
	var k int
	if n := len(m.slabFree); n > 0 {
		k = int(m.slabFree[n-1])
		m.slabFree = m.slabFree[:n-1]
		m.slab[k] = rel
	} else {
		k = len(m.slab)
		m.slab = append(m.slab, rel)
	}
	m.s.At(at+lat, m.hid, slabTarget, int64(k))
}

// releaseTarget marks release events whose Arg is a queue of Simulator.released, slabTarget
// those whose Arg is a slot of Simulator.slab; raw flows' events carry rawRun.
const (
	releaseTarget int32 = 0
	slabTarget    int32 = 1
)

func (m *Simulator) server(c *ccl.Collective, endpoint int32) int {
	if int(endpoint) >= c.TotalGPUs {
		return int(endpoint) - c.TotalGPUs
	}
	return int(endpoint) / c.GPUsPerServer
}

// server is Simulator.server for the run's collective, with a shift in place of the division
// when its servers' GPU count is a power of two (release asks it of every flow).
func (r *dagRun) server(endpoint int32) int {
	if int(endpoint) < r.coll.TotalGPUs && r.gpsShift >= 0 {
		return int(endpoint) >> r.gpsShift
	}
	if int(endpoint) >= r.coll.TotalGPUs {
		return int(endpoint) - r.coll.TotalGPUs
	}
	return int(endpoint) / r.coll.GPUsPerServer
}

var _ engine.Prefetcher = (*Simulator)(nil)

// Prefetch asks for what a release event's start will read (engine.Prefetcher), two deep
// along the event's release queue, whose flows start in turn: for the flow after it, the pair
// record (its source's flat slot in the pair table, where a ring's rank finds its one peer);
// for its own, asked for that way one release before, the links of the pair's path when the
// pair has one short path (a rail's ring), read from that record.
func (m *Simulator) Prefetch(target int32, arg int64) {
	if target != releaseTarget {
		return
	}
	q := &m.released[arg]
	if q.n == 0 {
		return
	}
	g := m.fab.gpus
	if q.n > 1 {
		if next := &q.buf[(q.head+1)&(len(q.buf)-1)]; uint(next.src) < uint(len(g)) {
			m.pairs.prefetch(g[next.src])
		}
	}
	rel := &q.buf[q.head]
	if uint(rel.src) >= uint(len(g)) || uint(rel.dst) >= uint(len(g)) {
		return
	}
	ps := m.pairs.peek(g[rel.src], g[rel.dst])
	if ps == nil || !ps.known || ps.n < 0 || ps.n > shortPath {
		return
	}
	if m.ideal != nil {
		m.ideal.PrefetchLinks(ps.short[:ps.n])
	} else {
		m.ccnet.PrefetchLinks(ps.short[:ps.n])
	}
}

// HandleEvent starts a released flow.
func (m *Simulator) HandleEvent(s *engine.Scheduler, ev engine.Event) {
	if RunID(ev.Target) == rawRun {
		rf := m.raw[ev.Arg]
		if err := m.startPath(m.pairs.get(rf.Src, rf.Dst), rf.Src, rf.Dst, rf.Sport, rf.DPort, 0, 0, rf.Bytes, int64(rawRun)<<32|ev.Arg); err != nil && m.err == nil {
			m.fail(fmt.Sprintf("flow %d (node %d → %d)", ev.Arg, rf.Src, rf.Dst), err)
		}
		return
	}
	var rel releasedFlow
	sport := int32(-1)
	switch ev.Target {
	case slabTarget:
		rel = m.slab[ev.Arg]
		m.slabFree = append(m.slabFree, int32(ev.Arg))
	case mailFlushTarget:
		m.flushMail()
		return
	case mailStartTarget:
		ms := m.mailStarts[ev.Arg]
		m.mailFree = append(m.mailFree, int32(ev.Arg))
		rel, sport = ms.rel, ms.sport
	default:
		m.released[ev.Arg].pop(&rel)
	}
	src, err := m.fab.Node(rel.src)
	if err == nil {
		var dst int32
		dst, err = m.fab.Node(rel.dst)
		if err == nil {
			ps := m.pairs.get(src, dst)
			tag := int64(rel.run)<<32 | int64(rel.id)
			if m.splits(&rel) {
				err = m.startSplit(ps, src, dst, rel.bytes, tag)
			} else {
				if sport < 0 {
					sport = int32(ps.nextSport())
				}
				err = m.startPath(ps, src, dst, uint16(sport), DPort, 0, 0, rel.bytes, tag)
			}
		}
	}
	if err != nil && m.err == nil {
		kind := m.runs[rel.run].dag.Flow(rel.id).Kind
		m.fail(fmt.Sprintf("flow %d (%s, %d → %d)", rel.id, kind, rel.src, rel.dst), err)
	}
}

// splits reports whether released flow rel starts as several QPs (SetQPsPerConnection): a
// flow of more than a byte between two servers. It takes the record by pointer: a copy for
// the call read it back in one 16-byte load across the two stores that had just written it
// (pop), which the processor cannot forward: 1.8 s of a 34 s run of the 16,384-GPU all-reduce.
func (m *Simulator) splits(rel *releasedFlow) bool {
	return m.qpsPerConn > 1 && rel.bytes > 1 && m.acrossServers(rel)
}

// nextSport is the source port of the pair's next QP, which it takes.
func (ps *pairState) nextSport() uint16 {
	sport := route.QPSport(int(ps.qps))
	ps.qps++
	return sport
}

// acrossServers reports whether a released flow goes from one server to another.
func (m *Simulator) acrossServers(rel *releasedFlow) bool {
	c := m.runs[rel.run].coll
	return m.server(c, rel.src) != m.server(c, rel.dst)
}

// startSplit starts a flow of a collective as QPs (SetQPsPerConnection).
func (m *Simulator) startSplit(ps *pairState, src, dst int32, bytes int64, tag int64) error {
	n := int64(m.qpsPerConn)
	if bytes < n {
		n = bytes
	}
	if m.parts == nil {
		m.parts = map[int64]splitFlow{}
	}
	m.parts[tag] = splitFlow{n: int32(n), left: int32(n)}
	first := route.QPSport(int(ps.qps))
	for k := range n {
		sport := ps.nextSport()
		b := bytes / n
		if k < bytes%n {
			b++
		}
		if err := m.startPath(ps, src, dst, sport, DPort, first, int(k), b, tag); err != nil {
			return err
		}
	}
	m.flows -= uint64(n - 1) // one flow of the collective
	return nil
}

// fail stops the run with the error of flow (described as errors name flows): a LinkDownError
// when a failed link left it without a route, else "flow: err".
func (m *Simulator) fail(flow string, err error) {
	if k := len(m.failed); k > 0 && errors.Is(err, route.ErrNoRoute) {
		fl := m.failed[k-1]
		m.err = &LinkDownError{A: fl.a, B: fl.b, At: fl.at, Flow: flow, Err: err}
	} else {
		m.err = fmt.Errorf("%s: %w", flow, err)
	}
	m.s.Stop()
}

// startPath routes a flow with source port sport (a collective's flow: the next QP of its node
// pair ps) and hands it to the network. With the transport's ACKs it also routes the ACKs
// back, as the receiver's switches forward them: from dst to src with the flow's ports swapped
// (SimAI's ACK carries sport = the flow's dport and dport = its sport, rdma-hw.cc ReceiveUdp).
// The ideal model is given the time from the last byte leaving the sender to the flow being
// done; the congestion-controlled model follows the last packet and the ACK through its queues
// itself.
//
// first and shift place a flow that is the QP shift places after its connection's first QP,
// whose source port is first, on the sending NIC's ports (route.Router.RouteQP); shift 0 routes
// as Router.Route.
func (m *Simulator) startPath(ps *pairState, src, dst int32, sport, dport, first uint16, shift int, bytes int64, tag int64) error {
	path, delay, err := m.route(ps, src, dst, sport, dport, first, shift)
	if err != nil {
		return err
	}
	var ack []int32
	if m.needAcks() {
		if ack, err = m.ackRoute(ps, src, dst, sport, dport); err != nil {
			return err
		}
	}
	var nf fluid.FlowID
	if m.ccnet != nil {
		if m.ccnet.PacketConflict(path, ack) {
			return fmt.Errorf("node %d → %d: its route uses NVLink links that go packet by packet but it does not run from one GPU to another (an NVSwitch sends or receives it); run with -nvlink fluid", src, dst)
		}
		nf = m.ccnet.Start(path, ack, bytes, tag)
	} else {
		nf = m.ideal.Start(path, bytes, m.doneDelay(ps, delay, ack), tag)
	}
	if m.track {
		for int(nf) >= len(m.inflight) {
			m.inflight = append(m.inflight, inflightFlow{})
		}
		m.inflight[nf] = inflightFlow{start: m.s.Now(), src: src, dst: dst, sport: sport, dport: dport, first: first, shift: int32(shift)}
	}
	m.flows++
	return nil
}

// doneDelay is, in the ideal model, the time from a flow's last byte leaving its sender to the
// flow being done besides its last packet's store-and-forward, which the network adds
// (Transport.Tail): the path's propagation delay, and with ACK completion the ACK's
// propagation and serialisation on its route back. No queue delays anything: the ideal model
// has none. The ACK's time is kept in ps when its route is (a pair whose way back has one
// path): a ring sends thousands of flows between the same two GPUs, and the sum reads every
// link of the route back.
func (m *Simulator) doneDelay(ps *pairState, delay engine.Time, ack []int32) engine.Time {
	if !m.tr.AtAck {
		return delay
	}
	cached := ps.ackKnown && ps.ackN >= 0
	if cached && ps.ackTime >= 0 {
		return delay + ps.ackTime
	}
	g := m.fab.Graph
	var back engine.Time
	var inv, secs float64
	for _, l := range ack {
		back += g.Delay(l)
		if m.ackSecs != nil {
			secs += m.ackSecs[l]
		} else {
			inv += 1 / g.Rate(l)
		}
	}
	if m.ackSecs == nil {
		secs = float64(float64(m.tr.Ack*8) * inv)
	}
	back += ceilSeconds(secs)
	if cached {
		ps.ackTime = back
	}
	return delay + back
}

// ceilSeconds converts seconds to picoseconds, rounded up.
func ceilSeconds(s float64) engine.Time {
	return engine.Time(math.Ceil(s * 1e12))
}

// needAcks reports whether flows need their ACKs' route: to add its time to the done time
// (ACK completion), or for the congestion-controlled model's round trips.
func (m *Simulator) needAcks() bool { return m.tr.AtAck || m.ccnet != nil && m.tr.Payload > 0 }

// ackRoute is the route of the ACKs of a flow from src to dst with ports sport and dport (ps is
// the pair's state): cached in ps when the way back has a single path, routed into ackBuf
// otherwise. path stays valid: the arena only grows and pathBuf is not used.
func (m *Simulator) ackRoute(ps *pairState, src, dst int32, sport, dport uint16) ([]int32, error) {
	if ps.ackKnown && ps.ackN >= 0 {
		return m.pathArena[ps.ackOff : ps.ackOff+ps.ackN], nil
	}
	path, err := m.fab.Router.Route(m.ackBuf, dst, src, dport, sport)
	if err != nil {
		return nil, err
	}
	m.ackBuf = path
	if !ps.ackKnown {
		ps.ackKnown, ps.ackN, ps.ackTime = true, -1, -1
		if one, err := m.fab.Router.SinglePath(dst, src); err == nil && one {
			ps.ackOff, ps.ackN = int32(len(m.pathArena)), int32(len(path))
			m.pathArena = append(m.pathArena, path...)
		}
	}
	return path, nil
}

// route is the path and propagation delay of a flow: cached for pairs with a single path,
// routed hop by hop with the flow's ports into pathBuf otherwise (shift > 0: as the QP shift
// places after the one with source port first, route.Router.RouteQP).
func (m *Simulator) route(ps *pairState, src, dst int32, sport, dport, first uint16, shift int) ([]int32, engine.Time, error) {
	if ps.known && ps.n >= 0 {
		if ps.n <= shortPath {
			// Copied: the pointer ps is valid only until the next lookup of the table.
			m.pathBuf = append(m.pathBuf[:0], ps.short[:ps.n]...)
			return m.pathBuf, ps.delay, nil
		}
		return m.pathArena[ps.off : ps.off+ps.n], ps.delay, nil
	}
	var path []int32
	var err error
	if shift > 0 {
		path, err = m.fab.Router.RouteQP(m.pathBuf, src, dst, sport, dport, first, shift)
	} else {
		path, err = m.fab.Router.Route(m.pathBuf, src, dst, sport, dport)
	}
	if err != nil {
		return nil, 0, err
	}
	m.pathBuf = path
	delay := m.fab.Graph.Stats(path).Delay
	if !ps.known {
		ps.known, ps.n = true, -1
		if one, err := m.fab.Router.SinglePath(src, dst); err == nil && one {
			ps.n, ps.delay = int32(len(path)), delay
			if len(path) <= shortPath {
				copy(ps.short[:], path)
			} else {
				ps.off = int32(len(m.pathArena))
				m.pathArena = append(m.pathArena, path...)
			}
		}
	}
	return path, delay, nil
}

// FlowSent implements fluid.Observer.
func (m *Simulator) FlowSent(f fluid.FlowID, now engine.Time) {
	if len(m.obs) > 0 {
		m.inflight[f].sent = now
	}
}

// FlowArrived implements fluid.Observer: report the flow, then release the children whose
// parents have now all arrived. The network reports an arrival when the flow is sent, with the
// arrival time as now; everything that follows is scheduled from that time.
func (m *Simulator) FlowArrived(nf fluid.FlowID, now engine.Time) {
	tag := m.net.Tag(nf)
	id, f := RunID(tag>>32), ccl.FlowID(uint32(tag))
	if len(m.obs) > 0 {
		in := &m.inflight[nf]
		rec := &m.records
		*rec = FlowRecord{Run: id, Flow: f, Src: in.src, Dst: in.dst, Sport: in.sport, Dport: in.dport,
			Bytes: m.net.Bytes(nf), Start: in.start, Sent: in.sent, Arrived: now, Path: m.net.Path(nf)}
		if id != rawRun {
			rec.Kind = m.runs[id].dag.Flow(f).Kind
		}
		for _, o := range m.obs {
			o.FlowDone(rec)
		}
	}
	if id != rawRun && m.parts != nil {
		if p, ok := m.parts[tag]; ok {
			p.at = max(p.at, now)
			if p.left--; p.left > 0 {
				m.parts[tag] = p
				return
			}
			delete(m.parts, tag)
			now = p.at
		}
	}
	m.arrived++
	if id == rawRun {
		return
	}
	r := &m.runs[id]
	if m.unsettled > 0 {
		fl := r.dag.Flow(f)
		m.settle(fl.Src)
		m.settle(fl.Dst)
	}
	m.kids = r.dag.Children(f, m.kids[:0])
	for _, c := range m.kids {
		if r.single {
			m.ready(id, c, now)
			continue
		}
		m.parents = r.dag.Parents(c, m.parents[:0])
		if np := len(m.parents); np > 1 {
			if r.pending == nil {
				r.pending = map[ccl.FlowID]arrivedParents{}
			}
			got := r.pending[c]
			got.n++
			got.at = max(got.at, now)
			if got.n < int32(np) {
				r.pending[c] = got
				continue
			}
			delete(r.pending, c)
			m.ready(id, c, got.at)
			continue
		}
		m.ready(id, c, now)
	}
	r.end = max(r.end, now)
	r.remaining--
	if g := r.gate; g != nil {
		m.rankArrived(g, r, f, now)
		if r.remaining == 0 && g.unjoined == 0 {
			m.finishRun(id, r.end)
		}
		return
	}
	if r.remaining == 0 {
		m.finishRun(id, r.end)
	}
}

// Fabric is the fabric the simulator routes over.
func (m *Simulator) Fabric() *Fabric { return m.fab }

// linkFlows returns the function that appends the flows transmitting on a directed link to a
// buffer, nil if the network cannot list them.
func (m *Simulator) linkFlows() func(l int32, buf []fluid.FlowID) []fluid.FlowID {
	switch n := m.net.(type) {
	case *fluid.Network:
		return n.LinkFlowIDs
	case *ccfluid.Network:
		return n.LinkFlows
	}
	return nil
}

// LinkDownError is the error of a run in which a failed link (LinkDown) left a flow without a
// route: one in flight when the link failed, or one started later. It wraps the router's error,
// which wraps route.ErrNoRoute.
type LinkDownError struct {
	A, B int32       // the nodes of the link that failed last
	At   engine.Time // when it failed
	Flow string      // the flow, as the simulator's errors name flows
	Err  error
}

func (e *LinkDownError) Error() string {
	return fmt.Sprintf("link %d–%d went down at %v and %s has no route left: %v", e.A, e.B, e.At, e.Flow, e.Err)
}

func (e *LinkDownError) Unwrap() error { return e.Err }

// LinkDown schedules the failure of the link between nodes a and b (both directions; every
// link between them if the topology lists several) at time at, as SimAI.conf's LINK_DOWN does.
// At that time the router takes the link down, the cached routes are forgotten, and every flow
// transmitting on the link is routed again with its own ports and moves to its new path with
// the bytes it has left (the network's Reroute: fluid.Network.Reroute, ccfluid.Network.Reroute);
// flows started from then on are routed around the link. A flow already sent keeps its
// arrival. A flow left without a route stops the run with a LinkDownError (Err). The
// FlowRecord of a moved flow gives the path it finished on.
//
// It is an error if a and b are not linked, if at is in the past, if the network model cannot
// move flows, or if flows have already started without the simulator keeping their ports
// (LinkDown, like Observe, comes before the first flow). A failure at engine.Never is checked
// and never happens. Without a LinkDown nothing of this costs anything: the ports of flows in
// flight are kept only once one is scheduled.
func (m *Simulator) LinkDown(at engine.Time, a, b int32) error {
	g := m.fab.Graph
	if n := int32(g.NumNodes()); a < 0 || a >= n || b < 0 || b >= n {
		return fmt.Errorf("link %d–%d: the fabric's nodes are 0 to %d", a, b, n-1)
	}
	if a == b || len(g.Links(nil, a, b)) == 0 {
		return fmt.Errorf("nodes %d and %d are not linked", a, b)
	}
	if m.linkFlows() == nil {
		return errors.New("this network model cannot move flows off a failed link")
	}
	if at < m.s.Now() {
		return fmt.Errorf("link %d–%d down at %v: that is in the past (now %v)", a, b, at, m.s.Now())
	}
	if !m.track && m.flows > 0 {
		return errors.New("LinkDown must come before the first flow starts")
	}
	if at == engine.Never {
		return nil
	}
	m.track = true
	m.s.AtFunc(at, func() { m.linkDown(a, b) })
	return nil
}

// linkDown takes the link a–b down now and moves the flows on it.
func (m *Simulator) linkDown(a, b int32) {
	if m.err != nil {
		return
	}
	now := m.s.Now()
	if err := m.fab.Router.SetLinkDown(a, b); err != nil { // checked by LinkDown
		panic(err)
	}
	m.failed = append(m.failed, failedLink{a, b, now})
	m.forgetPaths()
	list := m.linkFlows()
	ids := m.moved[:0]
	for _, l := range m.fab.Graph.Links(nil, a, b) {
		ids = list(route.Reverse(l), list(l, ids))
	}
	// In flow order (the lists' order depends on the history of removals), once each.
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, f := range ids {
		in := &m.inflight[f]
		ps := m.pairs.get(in.src, in.dst)
		path, delay, err := m.route(ps, in.src, in.dst, in.sport, in.dport, in.first, int(in.shift))
		var ack []int32
		if err == nil && m.needAcks() {
			ack, err = m.ackRoute(ps, in.src, in.dst, in.sport, in.dport)
		}
		if err != nil {
			m.fail(m.describe(f), err)
			break
		}
		if m.ccnet != nil {
			m.ccnet.Reroute(f, path, ack)
		} else {
			m.ideal.Reroute(f, path, m.doneDelay(ps, delay, ack))
		}
	}
	m.moved = ids[:0]
}

// forgetPaths drops every cached path: the router's answers changed. The source ports go on.
func (m *Simulator) forgetPaths() {
	m.pairs.each(func(st *pairState) {
		st.known, st.n = false, 0
		st.ackKnown, st.ackN = false, 0
	})
	m.pathArena = m.pathArena[:0]
}

// describe names in-flight flow f as the simulator's errors do.
func (m *Simulator) describe(f fluid.FlowID) string {
	in := &m.inflight[f]
	tag := m.net.Tag(f)
	id, fl := RunID(tag>>32), ccl.FlowID(uint32(tag))
	if id == rawRun {
		return fmt.Sprintf("flow %d (node %d → %d)", fl, in.src, in.dst)
	}
	return fmt.Sprintf("flow %d (%s, node %d → %d)", fl, m.runs[id].dag.Flow(fl).Kind, in.src, in.dst)
}
