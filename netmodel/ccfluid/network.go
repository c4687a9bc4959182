package ccfluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"unsafe"

	"simd/cc"
	"simd/engine"
	"simd/netmodel/fluid"
	"simd/netmodel/packets"
	"simd/topo"
	"simd/topo/route"
)

// FlowID names a flow; it is the ideal model's type, so one observer serves both models.
type FlowID = fluid.FlowID

// Observer gets the flow events: FlowSent when the sender has injected the last byte,
// FlowArrived (from an event at that time) when the last byte has crossed every queue of the
// path and reached the receiver. The slot is reused after FlowArrived returns.
type Observer = fluid.Observer

// PFCObserver receives every PFC frame as SimAI's pfc.txt logs it: at the time the frame
// reaches the port it pauses or resumes (node, and ifindex = the port's ns-3 device index).
type PFCObserver interface {
	PFC(at engine.Time, node int32, kind topo.NodeKind, ifindex int, pause bool)
}

// Mode is the reaction point every sender runs (SimAI.conf CC_MODE).
type Mode int

// The modes of SimAI.conf's CC_MODE that the model runs.
const (
	ModeDCQCN Mode = 1
	ModeHPCC  Mode = 3
	ModeDCTCP Mode = 8
)

// Config is the congestion-control setting of a network (from SimAI.conf).
type Config struct {
	// Mode picks the reaction point; 0 means DCQCN.
	Mode Mode
	// DCQCN, DCTCP and HPCC configure the reaction points; LineRate is ignored (each flow's is
	// the rate of its first link), and so are HPCC's BaseRTT and WindowBytes, which come from
	// BaseRTT and Window below.
	DCQCN cc.DCQCNConfig
	DCTCP cc.DCTCPConfig
	HPCC  cc.HPCCConfig
	// Window is every flow's window in bytes (HAS_WIN 1: SimAI's maxBdp), 0 for none; with
	// VarWin it scales with the flow's rate over its line rate (VAR_WIN). BaseRTT is SimAI's
	// maxRtt, HPCC's T.
	Window  float64
	VarWin  bool
	BaseRTT engine.Time
	// ECN gives the RED thresholds of switch egress ports by port rate (KMIN_MAP, KMAX_MAP,
	// PMAX_MAP); ok false means the port does not mark. Nil: no marking (ENABLE_QCN 0).
	ECN func(rateBps float64) (m cc.ECNMarker, ok bool)
	// PacketBytes is the payload of a packet (PACKET_PAYLOAD_SIZE): RED marks packets, so the
	// expected number of marks is the bytes sent over it times the marking probability.
	PacketBytes float64
	// CNPInterval is the notification point's minimum gap between two CNPs of a flow
	// (0: one per marked packet, as SimAI's ns-3).
	CNPInterval engine.Time
	// PFC turns priority flow control on; BufferBytes is each switch's shared buffer
	// (BUFFER_SIZE), NICRate SimAI's nic_rate for the per-port threshold shift.
	PFC         bool
	BufferBytes float64
	NICRate     float64
	// Seed picks, for each marked packet, which flow it belongs to (weighted by the flows'
	// arrival rates at the port).
	Seed uint64
	// Transport is how flows cross the network as packets and when a flow is done; Start is
	// given each flow's size with its headers and its last packet's, and its ACKs' route.
	Transport fluid.Transport
	// PaceAtOldRate holds a DCQCN rate change back until the packet gap of the rate before it
	// has passed, as SimAI's ns-3 NIC does (pacing.go); false applies it at once.
	PaceAtOldRate bool
	// MarkDepartures draws the flow whose packet a port marks from what the port sends — what
	// arrived a queue's delay earlier — as ns-3's switches mark at dequeue (departures.go);
	// false draws it from what arrives now, as a switch that marks at enqueue.
	MarkDepartures bool
	// FirstWindowBurst sends a windowed flow's first window at its rate before any ACK, then
	// waits for the first ACK, as ns-3's queue pairs do (opening.go); false caps the flow at
	// window/RTT from its start.
	FirstWindowBurst bool
	// Reshape passes on from each link what leaves its queue, in the proportions the queue's
	// bytes arrived in (reshape.go); false lets every link of a path receive the flow's
	// injection at once.
	Reshape bool
	// AckWait is what an ACK that has already waited behind a data packet on its route waits
	// for at each later link of the route that sends (window.go): half a data packet, the mean
	// over random phases (AckWaitMean, the zero value), the whole packet less its own
	// transmission (AckWaitAligned), or the whole packet where the packet grids are locked —
	// the ACK's flow and the data at the two links started within the flow's one-way time of
	// each other — and half elsewhere
	// (AckWaitLocked, as in SimAI's ns-3).
	AckWait AckWait
	// Turns has a NIC port serve the flows that ask for more than their share in turn, a
	// packet each, as ns-3's NIC does (turns.go): the fluid's rates, but each flow's last packet
	// leaves when the round robin sends it. False shares the port as a fluid (processor
	// sharing) and ends flows that would end together at their mean (turnOffset).
	Turns bool
	// PoissonMarks places a port's ECN marks as a Poisson process of its marking rate (RED's
	// probability at the queue times the packets it sends): after each mark the expected
	// count to the next is drawn from Exp(1). ns-3 draws every packet it sends against the
	// probability on its own, so its marks bunch and thin by chance, and a flow's marks that
	// bunch within one RATE_DECREASE_INTERVAL cut its rate once. False places a mark each
	// time the expected count reaches a whole number: evenly spaced marks, each of a flow's
	// landing in an interval of its own, so each a cut (docs/models.md, "ECN marks by chance").
	PoissonMarks bool
	// BoundedPFCChecks answers most of a PFC switch's checks with a bound on what any of its
	// ports can hold, and looks at the ports only when the bound comes near a pause
	// (pfcbound.go); false (the default) looks at every port whenever one of the switch's
	// queues changes.
	BoundedPFCChecks bool
	// NVLink is how the flows of every server's NVLink go — those whose path and ACK route run
	// from a GPU to its NVSwitch and on to another GPU (nvlink.go): as a fluid with the rest
	// (NVLinkFluid, the zero value), packet by packet as in SimAI's ns-3 (NVLinkPackets, package
	// packets), or packet by packet where a server's NVLink goes busy with a short flow
	// (NVLinkAuto). Packets need a Transport.Payload of 1 to packets.MaxPayload bytes and are
	// not used under HPCC, whose reaction point reads the INT the NVSwitch does not write.
	NVLink NVLinkRule
}

// Stats are the network's counters.
type Stats struct {
	Started, Sent, Arrived uint64
	Marks                  uint64 // ECN-marked packets (expected-value process)
	CNPs                   uint64 // CNPs that reached a sender while it was sending
	RateChanges            uint64 // sender rate changes from congestion control
	Pauses, Resumes        uint64 // PFC frames
	SwitchChecks           uint64 // PFC checks that computed every ingress occupancy of a switch
	SwitchChecksBounded    uint64 // changes at a switch whose check the occupancy bound answered (pfcbound.go)
	Shares                 uint64 // times a port shared its capacity among its flows
	Demands                uint64 // flows' demands those shares read (evaluated again where stale)
	SharesKept             uint64 // of those shares, the ones that found the last one still standing (shareStands)
	TargetsKept            uint64 // window targets of links whose flows' terms had not moved since the last (windowTarget)
	WindowTargets          uint64 // queues that reached the level their windowed flows settle them at
	Events                 uint64
	EventsByKind           [EventKinds]uint64 // Events by kind, named by EventKindNames
}

// Event kinds (low 8 bits of Event.Arg); flow events carry the flow's generation above them,
// so an event for a slot that was reused since is recognised and dropped.
const (
	evSent int64 = iota
	evCC
	evCNP
	evEmpty
	evMarkerOut
	evMark
	evSwitch
	evPause // Arg>>8: 1 pause, 0 resume
	evRound // the end of a DCTCP or HPCC round of a flow
	evInstant
	evWindow // a queue reached the level its windowed flows settle it at (window.go)
	evOpen   // a flow's first window is out, or its first ACK back (opening.go)
	evAck    // a flow's last packet reaches its receiver, which makes its last ACK (lastAckMade)
	evKinds  // the number of kinds above (EventKinds)
)

// EventKinds is the number of kinds of the model's events.
const EventKinds = int(evKinds)

// EventKindNames names the kinds of the model's events, in the order of Stats.EventsByKind:
// a flow's last byte out (sent), its reaction point's timer (cc), a CNP, a queue empty, a
// departure-weight marker out, an ECN mark, a switch's PFC check, a PFC frame, a DCTCP or HPCC
// round, the end of an instant's changes, a queue at its windows' level, a flow's first
// window out or first ACK back (open), a flow's last packet at its receiver (ack).
var EventKindNames = [EventKinds]string{"sent", "cc", "cnp", "empty", "marker_out", "mark", "switch", "pause", "round", "instant", "window", "open", "ack"}

const (
	stateFree uint8 = iota
	stateSending
	stateSent
	stateAck    // its last packet is on its way to the receiver, whose last ACK ends it (lastAckMade)
	statePacket // carried by the packet model (Config.NVLink, nvlink.go): none of the fluid's state is its
)

// flow is one transfer: its sender's rate (cc), what its NIC injects, and how far along the
// path its injection reaches (up to the first paused link). The fields are ordered by what is
// touched together (as link's): what a port's sharing reads and writes — the demand, the
// injection, the sent timer — in the first two 64-byte lines, the window and the reaction point
// from the third, the rest after; 384 bytes, so that every flow of the slice starts a cache line.
type flow struct {
	off    int32 // path: arena[off : off+hops], then the ACKs' route: arena[off+hops : off+hops+ack]
	hops   int32
	ack    int32
	extent int32 // hops [0, extent) hold cinj in their arrivals
	gen    uint32
	room   int32
	state  uint8
	stale  bool // dem must be computed again: its rate or its round trip moved
	// opening: its first round trip is not over (opening.go; Network.open holds the rest);
	// openShort: its window can be out before its first ACK.
	opening, openShort bool
	rgen               uint32      // its route generation: Start and Reroute move its hops (reshape.go)
	rem                float64     // bytes left to inject, at time at
	at                 engine.Time //
	inj                float64     // bits/s the NIC injects now
	cinj               float64     // the injection the links' arrival sums hold for this flow

	dem    float64 // its last demand (rounds.go), bits/s
	slack  float64 // at its last demand: how much longer its round trip could be before its window held it back, seconds (≤ 0: it does)
	rtt    float64 // its round trip at its last demand, seconds
	rtt0   float64 // the round trip of a full packet and its ACK through empty queues, seconds (the window's clock)
	lim    float64 // at the last share of its port: the most the port could give it, bits/s
	pr     float64 // the rate its NIC paces it at now (sendRate; repace): windowTarget reads it with lim
	sendT  engine.Timer
	sendAt engine.Time // when sendT fires
	// win is the flow's window (window.go) at congestion-control rate winAt (NaN: none yet),
	// on the line of the rate it is read with.
	win, winAt float64

	rp cc.DCQCN

	gate   cc.CNPGate
	lastRx engine.Time
	markAt engine.Time // when a link last marked one of its packets (0: never; mark)
	bnWait engine.Time // the wait of the last byte at bn
	// delay is the sum of the path's link delays; sf the time the switches of the path take
	// to store the last packet before sending it on (Transport.Tail, set when the flow is
	// sent; before, the time its injection reached its last packet, when that was at a rate
	// that has changed since, else 0); ackDelay the ACK's propagation and serialisation on
	// its route back.
	delay, sf, ackDelay engine.Time
	tag                 int64
	bytes               int64 // payload
	wire                int64 // bytes on the wire: payload and headers
	start               engine.Time
	line                float64 // line rate: its first link's
	ccT                 engine.Timer
	roundT              engine.Timer
	bn                  int32  // the link where the last byte waited longest, -1 when it never waited
	cnps                uint32 // CNPs that reached the sender while it was sending (monitor.go)
	marks               uint32 // DCTCP: marked packets in the current round
	hhead, hlen         uint8  // its injection history: newest entry and count (departures.go)
	// pace is the rate the NIC still paces the flow at until paceAt (0: no change held
	// back; pacing.go).
	pace   float64
	paceAt engine.Time
}

// entry is a flow on a link's list: the flow and the arena position of the hop of its path
// (or ACK route) this link is, off + hop: a list that swap-removes an entry moves the last one
// and updates its apos there without reading its flow's record (removeAt), a cache miss per
// removal in an all-to-all's lists of a thousand flows. On a link's list of flows (link.on) it
// also has a copy of the flow's markAt: a mark's draw reads it for every flow of the link
// (drawMarked), and here it is in the list it scans, not in a thousand flow records. (Lists of
// ACK routes leave it 0.)
type entry struct {
	f      int32
	ap     int32
	markAt engine.Time
}

// marker is a flow's last byte waiting in a link's queue until the link has served target.
type marker struct {
	f      int32
	hop    int32
	target float64
	at     engine.Time // when it entered
}

// feeder is the part of an egress link's arrivals that comes in through one ingress port of
// its switch, and with reshaping the part of its flows' departure weights (reshape.go); held is
// what of the link's queue came in through that port, at the queue's time (advanceFeeds).
type feeder struct {
	port    int32
	counted bool // in its port's line (pfcPortState.feeds)
	arr     float64
	w       float64
	held    float64
	line    float64 // what its port's line counts for it, at the holding's time
	slope   float64 // what it adds to its port's slope, bytes/s (refreshFeeds)
}

// link is the state of one directed link: its queue, its flows, its PFC state. The fields are
// ordered by what is touched together, in five 64-byte groups (320 bytes, so that in the links'
// slice every group is one cache line): re-arming a link reads its queue and its timers, a flow's
// start and end its flow lists; every line touched is otherwise a cache miss. Its rate and delay
// are also in Network.kin, which flows' times read.
type link struct {
	// What advancing the queue and re-arming it reads.
	capa    float64
	arr     float64 // Σ arriving injection, bits/s
	qs      queueState
	emptyT  engine.Timer
	paused  bool
	hasECN  bool
	acks    bool // a NIC port that has answered flows: it keeps room for ACKs (shareNIC)
	dirty   bool
	nicDir  bool
	backlog bool // the queue held or gained bytes at its last change (PFC relevance)
	// Reshaping (reshape.go): whether it shared what it sends by its flows' weights when their
	// next hops were last set, and whether they are to be set again this instant.
	shaped, shareDir bool

	// Its other timers, and the last bytes of flows waiting in its queue.
	mkT    engine.Timer
	winT   engine.Timer
	ecnT   engine.Timer
	mhead  int32
	inPort int32 // its port number at inSw
	mk     []marker
	arrAt  engine.Time // when arr last changed

	// The flows crossing it.
	on    []entry
	ackOn []entry // windowed flows whose ACKs cross it (hop: the ACK hop's index in the arena chunk)
	rho   float64 // its sending share (quarters) when the flows of ackOn last re-evaluated their windows
	outSw int32   // PFC switch this link leaves, -1 if none
	inSw  int32   // PFC switch this link enters, -1 if none

	ecn cc.ECNMarker
	src []int32 // flows whose first link this is (the NIC's queue pairs)
	// The flows of the NIC port sent at instant rrAt: rrK of them, rrJ sent so far (sent).
	rrAt     engine.Time
	rrK, rrJ int32

	wsol     windowSolution // its last window target (window.go)
	aggSlope float64        // the backlog slope this link contributes to its switch's total line
	feeds    []feeder       // for an egress link of a PFC switch: its arrivals (and weights) by ingress port
	blIdx    int32          // its position in its switch's backlogged list while backlog
	down     int32          // with Reshape: how many of its flows go on to another hop
}

// Network is the fluid model with congestion control: sender rates come from DCQCN, each
// egress port has a fluid queue that ECN-marks what it sends, switches pause their upstream
// ports by PFC. See the package documentation.
type Network struct {
	s    *engine.Scheduler
	g    *route.Graph
	h    engine.HandlerID
	obs  Observer
	bobs fluid.BottleneckObserver // obs, when it wants bottlenecks
	pfc  PFCObserver
	cfg  Config
	rng  *rand.Rand
	// pk and nv carry the NVLink flows packet by packet (Config.NVLink, nvlink.go); pk is nil when none can be.
	pk *packets.Network
	nv nvlinkDomains

	flows []flow
	// needs holds, with Config.PoissonMarks, each link's expected count of marked packets at
	// which its next mark falls (markNeed; 0: not drawn yet).
	needs []float64
	// noPool counts the switches built without a buffer: BUFFER_SIZE leaves them no shared
	// pool, and SimAI's ns-3 never pauses them (buildSwitches).
	noPool int
	// With MarkDepartures (departures.go): the past injections of the flows, in blocks of
	// histLen (histAt: a flow slot's block + 1, 0 for none yet), chunks of histChunk blocks.
	departures bool
	// markFIFO: with MarkDepartures and Reshape, a port draws the flow it marks by its
	// departure weights (reshape.go), and departures is off.
	markFIFO   bool
	histAt     []int32
	hist       [][]injSeg
	histBlocks int32
	mw         []float64 // markedDeparture's weights, by position in a link's flow list
	// wcache[l]: link l's last window target and whether the terms it read have moved since
	// (window.go).
	wcache []windowCache
	// wdue[l]: the target of the first weight change queued at link l, +Inf for none
	// (reshape.go): weightsOut learns that nothing is due without the change's record.
	wdue []float64
	// wkeep: windowTarget keeps its answers (keepWhenLong, after wcalls calls that read wflows
	// flows).
	wkeep          bool
	wcalls, wflows int64
	// nics[l]: what NIC port l's last sharing left (shareNIC), for links that have been one.
	nics []nicShare
	// qpSeq[f]: the order flow slot f's queue pair was made in (a port's round robin serves
	// its queue pairs in that order, turns.go); rrMark is shareInTurn's scratch.
	qpSeq    []uint64
	qpNext   uint64
	rrMark   []uint32
	rrEpoch  uint32
	stalePos []int32 // shareStands' scratch: positions of the stale flows in a port's list
	// feedAt[l]: the time of what the ingress ports of egress link l's PFC switch hold of its
	// queue (feeder.held, advanceFeeds in pfc.go), and whether any holds bytes.
	feedAt []feedClock
	// With MarkDepartures: curveLen points of each link's arrival curve, and where each
	// link's ring stands (departures.go).
	curve   []arrPoint
	curveAt []curveRing
	free    []int32
	arena   []int32
	apos    []int32 // position of each hop's entry in its link's list
	// With Reshape (reshape.go): per directed link, its flows' arrivals and departure weights
	// and their queued changes; the links whose departure shares moved this instant.
	weights     []linkWeights
	dirtyShares []int32
	links       []link
	// With AckWaitLocked (window.go): per directed link, the range of its flows' starts; the
	// longest one-way time of a flow so far, seconds.
	starts    []startRange
	maxOneWay float64
	sw        []pfcSwitch
	// pfcArr[l]: what egress link l's arrivals add to its switch's occupancy bound, bits/s —
	// its arrivals while its queue holds or gains bytes, else 0 (pfcbound.go); nil unless
	// Config.BoundedPFCChecks.
	pfcArr []float64

	dcqcn map[float64]*cc.DCQCNConfig // per line rate
	dctcp map[float64]*cc.DCTCPConfig
	hpcc  map[float64]*cc.HPCCConfig
	mode  Mode
	// Reaction points of the round-driven modes, per flow slot (only the mode's is used).
	dctcpRP []cc.DCTCP
	hpccRP  []cc.HPCC
	hpccTx  []hpccPrev
	roundB  []float64     // DCTCP, HPCC: bytes a flow slot had injected when its current round began
	open    []openState   // per flow slot, with FirstWindowBurst (opening.go)
	ackRest []float64     // per flow slot: its last ACK's waits after the receiver's port, read when it was sent (lastAckMade)
	hops    []cc.HopState // scratch

	dirtyLinks []int32
	dirtyNIC   []int32
	dirtySw    []int32
	pending    bool
	fill       []fillItem
	ifidx      []int32           // per directed link: ns-3 device index at its sending node, 0 unknown
	rates      []float64         // scratch: the rates of a path's links (Transport.Tail)
	kin        []linkKin         // per directed link: what times() reads, kept apart from the link's state
	lastSent   []engine.Time     // per directed link (a NIC port): when a flow last sent its last byte over it, 0 before any
	lastNext   []int32           // per directed link (a NIC port): that flow's next link
	dcqcnOf    []*cc.DCQCNConfig // per directed link: the DCQCN configuration of flows starting on it
	wterms     []wterm           // scratch: windowTarget's flows
	ackShare   float64           // ACK bytes per data byte on the wire: Transport Ack/Full
	// ackDiv, per directed link: what a NIC port that keeps room for ACKs divides its rate by
	// for its data, 1 + ackShare, or with Transport.NanosecondClock (full + ack)/full of their
	// whole-nanosecond times (shareNIC).
	ackDiv []float64

	// The flows' progress as a line (InFlightProgress in O(1)): progSum parts at progAt, a
	// sending flow's part the share of its wire bytes injected and a sent flow's 1, rising at
	// progRate parts a second, the sum of the sending flows' inj/(8·wire), moved wherever an
	// injection moves (setInjection) and a flow is sent; progSending counts the sending flows,
	// so that the rate is 0 exactly, without the sum's rounding, when none is.
	progSum, progRate float64
	progAt            engine.Time
	progSending       int
	// pkFlows are the flows the NVLink's packet model carries (statePacket), whose parts
	// InFlightProgress reads from it; pkPos is each one's position there, by flow slot.
	pkFlows, pkPos []int32

	stats Stats

	mon *monitor // SimAI.conf's monitors (monitor.go), nil when none is on
}

type handler struct{ n *Network }

func (h handler) HandleEvent(s *engine.Scheduler, ev engine.Event) { h.n.handle(ev) }

var _ engine.Prefetcher = handler{}

// PrefetchLinks asks for the first line of the records of path's links (engine.Prefetch): a
// flow about to start on it.
func (n *Network) PrefetchLinks(path []int32) {
	engine.PrefetchEach(unsafe.Pointer(unsafe.SliceData(n.links)), unsafe.Sizeof(link{}), path)
}

// LinkTableBytes is the size of the network's tables indexed by directed link: what its
// events read at random in a large fabric, as the caller weighs whether looking ahead
// (engine.Scheduler.LookAhead) pays.
func (n *Network) LinkTableBytes() int64 {
	return tableBytes(n.links) + tableBytes(n.needs) + tableBytes(n.feedAt) + tableBytes(n.wcache) +
		tableBytes(n.wdue) + tableBytes(n.kin) + tableBytes(n.lastSent) + tableBytes(n.lastNext) +
		tableBytes(n.ackDiv) + tableBytes(n.curve) + tableBytes(n.curveAt) + tableBytes(n.dcqcnOf) +
		tableBytes(n.weights) + tableBytes(n.starts) + tableBytes(n.pfcArr) + tableBytes(n.nics)
}

// tableBytes is the size of s's elements.
func tableBytes[T any](s []T) int64 {
	var z T
	return int64(len(s)) * int64(unsafe.Sizeof(z))
}

// Prefetch asks for the record an event of the network will read first (engine.Prefetcher): a
// flow's for its events, a link's for its queue's. Every event begins with a miss on one of
// them in a large fabric (the flow's generation, the link's queue), and most of the event reads
// the rest of the record.
func (h handler) Prefetch(target int32, arg int64) {
	n := h.n
	switch arg & 0xff {
	case evSent, evCC, evCNP, evOpen, evAck, evRound:
		engine.PrefetchSpan(unsafe.Pointer(&n.flows[target]), unsafe.Sizeof(flow{}))
	case evEmpty, evWindow, evMarkerOut, evMark:
		engine.PrefetchSpan(unsafe.Pointer(&n.links[target]), unsafe.Sizeof(link{}))
	}
}

// New returns a congestion-controlled network over g, scheduled by s, reporting flows to obs
// and PFC frames to pfc (either may be nil).
func New(s *engine.Scheduler, g *route.Graph, obs Observer, pfc PFCObserver, cfg Config) (*Network, error) {
	if obs == nil {
		obs = nopObserver{}
	}
	if !(cfg.PacketBytes > 0) {
		return nil, fmt.Errorf("packet payload size %v must be positive", cfg.PacketBytes)
	}
	n := &Network{s: s, g: g, obs: obs, pfc: pfc, cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), dcqcn: map[float64]*cc.DCQCNConfig{}}
	nl := g.NumDirLinks()
	n.links = make([]link, nl)
	if cfg.PoissonMarks {
		n.needs = make([]float64, nl)
	}
	n.feedAt = make([]feedClock, nl)
	n.wcache = make([]windowCache, nl)
	n.wdue = make([]float64, nl)
	for l := range n.wdue {
		n.wdue[l] = math.Inf(1)
	}
	n.kin = make([]linkKin, nl)
	n.lastSent = make([]engine.Time, nl)
	n.lastNext = make([]int32, nl)
	n.ackDiv = make([]float64, nl)
	tr := cfg.Transport
	if tr.Payload > 0 {
		n.ackShare = float64(tr.Ack) / float64(tr.Full())
	}
	for l := range n.links {
		k := &n.links[l]
		// The link's nominal rate keys its configurations (KMIN_MAP, DCQCN's line rate); what
		// it sends is what full packets back to back make of it (Transport.PacketRate).
		nominal := g.Rate(int32(l))
		k.capa = tr.PacketRate(nominal)
		n.kin[l] = linkKin{capa: k.capa, inv: 1 / k.capa, delay: g.Delay(int32(l))}
		n.ackDiv[l] = 1 + n.ackShare
		if tr.Payload > 0 {
			n.kin[l].ackSecs = tr.PacketSecs(tr.Ack, nominal)
			if tr.NanosecondClock {
				// A port that answers as many packets as it sends spends an ACK's time per
				// data packet: its data gets full/(full + ack) of its time.
				if full := tr.PacketSecs(tr.Full(), nominal); full > 0 {
					n.ackDiv[l] = (full + n.kin[l].ackSecs) / full
				}
			}
		}
		k.outSw, k.inSw = -1, -1
		if cfg.ECN != nil && g.Kind(g.From(int32(l))) == topo.Switch {
			k.ecn, k.hasECN = cfg.ECN(nominal)
		}
	}
	n.mode = cfg.Mode
	if n.mode == 0 {
		n.mode = ModeDCQCN
	}
	n.dctcp, n.hpcc = map[float64]*cc.DCTCPConfig{}, map[float64]*cc.HPCCConfig{}
	for _, rate := range g.Rates() {
		var err error
		switch n.mode {
		case ModeDCQCN:
			c := cfg.DCQCN
			c.LineRate = rate
			err = c.Validate()
			n.dcqcn[rate] = &c
		case ModeDCTCP:
			c := cfg.DCTCP
			c.LineRate = rate
			err = c.Validate()
			n.dctcp[rate] = &c
		case ModeHPCC:
			c := cfg.HPCC
			c.LineRate, c.BaseRTT, c.WindowBytes, c.VarWin = rate, cfg.BaseRTT, cfg.Window, cfg.VarWin
			err = c.Validate()
			n.hpcc[rate] = &c
		default:
			err = fmt.Errorf("congestion-control mode %d is not modelled", n.mode)
		}
		if err != nil {
			return nil, err
		}
	}
	if cfg.MarkDepartures && cfg.ECN != nil && cfg.Reshape {
		n.markFIFO = true // the departure weights of reshape.go say what a port sends
	} else if cfg.MarkDepartures && cfg.ECN != nil {
		n.departures = true
		n.curve = make([]arrPoint, nl*curveLen)
		n.curveAt = make([]curveRing, nl)
	}
	if n.mode == ModeDCQCN {
		n.dcqcnOf = make([]*cc.DCQCNConfig, nl)
		for l := range n.dcqcnOf {
			n.dcqcnOf[l] = n.dcqcn[g.Rate(int32(l))]
		}
	}
	if cfg.Reshape {
		n.weights = make([]linkWeights, nl)
	}
	if cfg.AckWait == AckWaitLocked {
		n.starts = make([]startRange, nl)
	}
	if cfg.PFC {
		if err := n.buildSwitches(); err != nil {
			return nil, err
		}
		if cfg.BoundedPFCChecks {
			n.pfcArr = make([]float64, nl)
		}
	}
	n.bobs, _ = obs.(fluid.BottleneckObserver)
	n.h = s.Register(handler{n})
	if err := n.newPackets(); err != nil {
		return nil, err
	}
	return n, nil
}

type nopObserver struct{}

func (nopObserver) FlowSent(FlowID, engine.Time)    {}
func (nopObserver) FlowArrived(FlowID, engine.Time) {}

// Start begins a flow now over path (directed links, copied) of bytes (0 counts as 1; the
// links also carry the headers of Config.Transport's packets), at its line rate until
// congestion control says otherwise. ack is the route of its ACKs back to the sender (copied;
// nil without ACKs). The flow is sent when its NIC has injected the last byte; its last byte
// then follows the queues of the path, the switches store its last packet before sending it
// on (Transport.Tail), and with Transport.AtAck the ACK follows the queues of its own route
// back, behind the data queued there, before the flow is done.
func (n *Network) Start(path, ack []int32, bytes int64, tag int64) FlowID {
	if bytes < 0 {
		panic("ccfluid: Start with negative size " + strconv.FormatInt(bytes, 10))
	}
	if bytes == 0 {
		bytes = 1
	}
	n.checkPath(path)
	n.checkPath(ack)
	var id int32
	if k := len(n.free); k > 0 {
		id = n.free[k-1]
		n.free = n.free[:k-1]
	} else {
		id = int32(len(n.flows))
		n.flows = append(n.flows, flow{})
	}
	f := &n.flows[id]
	h, ah := int32(len(path)), int32(len(ack))
	if h+ah > f.room {
		f.room = max(h+ah, 8)
		f.off = int32(len(n.arena))
		n.growArena(f.room)
	}
	now := n.s.Now()
	f.tag, f.bytes, f.hops, f.start = tag, bytes, h, now
	for int(id) >= len(n.qpSeq) {
		n.qpSeq = append(n.qpSeq, 0)
	}
	n.qpNext++
	n.qpSeq[id] = n.qpNext
	f.wire = n.cfg.Transport.Wire(bytes)
	f.rem, f.at, f.inj, f.cinj, f.extent = float64(f.wire), now, 0, 0, 0
	f.gen++
	f.rgen++
	f.state = stateSending
	f.sendT, f.ccT = engine.Timer{}, engine.Timer{}
	f.gate, f.lastRx, f.markAt = cc.CNPGate{}, 0, 0
	f.bn, f.bnWait = -1, 0
	f.cnps = 0
	f.win, f.winAt = 0, math.NaN()
	f.pace, f.paceAt = 0, 0
	f.hhead, f.hlen = 0, 0
	copy(n.arena[f.off:f.off+h], path)
	copy(n.arena[f.off+h:f.off+h+ah], ack)
	f.ack = ah
	if n.pk != nil && n.nvlinkStart(id, path, ack, bytes) {
		n.stats.Started++
		if n.mon != nil {
			n.mon.wake()
		}
		return FlowID(id)
	}
	for k, l := range path {
		n.joinList(l, id, int32(k))
	}
	if n.reshape() {
		n.joinHops(id)
	}
	n.times(f)
	f.lim, f.slack, f.rtt = math.Inf(1), math.Inf(1), 0
	f.dem, f.stale = 0, true
	if n.windowed() {
		n.joinAckLinks(id)
	}
	n.stats.Started++
	if n.mon != nil {
		n.mon.wake()
	}
	if h == 0 {
		f.state = stateSent
		n.progSum++
		n.stats.Sent++
		n.obs.FlowSent(FlowID(id), now)
		n.arrive(id, now)
		return FlowID(id)
	}
	first := path[0]
	n.progSending++
	f.marks, f.roundT = 0, engine.Timer{}
	switch n.mode {
	case ModeDCQCN:
		// Its line rate is its first link's nominal one (capa may be Transport.PacketRate's),
		// which keys the link's DCQCN configuration.
		c := n.dcqcnOf[first]
		f.line, f.rp = c.LineRate, cc.NewDCQCN(c, now)
	case ModeDCTCP:
		f.line = n.g.Rate(first)
		for int(id) >= len(n.dctcpRP) {
			n.dctcpRP = append(n.dctcpRP, cc.DCTCP{})
			n.roundB = append(n.roundB, 0)
		}
		n.dctcpRP[id] = cc.NewDCTCP(n.dctcp[f.line])
		n.armRound(id)
	case ModeHPCC:
		f.line = n.g.Rate(first)
		for int(id) >= len(n.hpccRP) {
			n.hpccRP = append(n.hpccRP, cc.HPCC{})
			n.hpccTx = append(n.hpccTx, hpccPrev{})
			n.roundB = append(n.roundB, 0)
		}
		n.hpccRP[id] = cc.NewHPCC(n.hpcc[f.line])
		n.hpccTx[id] = hpccPrev{}
		n.armRound(id)
	}
	n.repace(id)
	n.beginOpening(id, now)
	f.extent = n.extentOf(f)
	n.links[first].src = append(n.links[first].src, id)
	n.nicMembers(first)
	n.nicDirty(first)
	return FlowID(id)
}

// times sets flow f's delays from its path and ACK route (in the arena): the path's
// propagation delay, the ACK's propagation and serialisation back, and the base round trip of
// a full packet and its ACK, the window's clock. Without packets a flow's round trip is twice
// its path's delay.
func (n *Network) times(f *flow) {
	tr := &n.cfg.Transport
	f.delay, f.sf, f.ackDelay = 0, 0, 0
	var inv, ackInv float64
	for _, l := range n.arena[f.off : f.off+f.hops] {
		f.delay += n.kin[l].delay
		inv += n.kin[l].inv
	}
	var ackProp engine.Time
	var ackSecs float64 // the ACK's serialisation in whole nanoseconds (Transport.NanosecondClock)
	for _, l := range n.arena[f.off+f.hops : f.off+f.hops+f.ack] {
		ackProp += n.kin[l].delay
		ackInv += n.kin[l].inv
		ackSecs += n.kin[l].ackSecs
	}
	if tr.Payload <= 0 {
		f.rtt0 = 2 * secs(f.delay)
		return
	}
	if !tr.NanosecondClock {
		ackSecs = float64(float64(tr.Ack*8) * ackInv)
	}
	f.ackDelay = ackProp + ceilPs(ackSecs)
	if f.ack == 0 {
		ackProp = f.delay // no route given: the ACK comes back as the data went
	}
	f.rtt0 = secs(f.delay+ackProp) + float64(float64(tr.Full()*8)*inv) + ackSecs
	n.maxOneWay = max(n.maxOneWay, f.oneWay())
}

// linkKin is what a flow's times and its last packet's tail need of a directed link: its
// rate, 1/rate (seconds per bit) and delay. Kept apart from the link's state, whose first touch
// at a flow's start or end is a cache miss per hop.
type linkKin struct {
	capa  float64
	inv   float64
	delay engine.Time
	// ackSecs is the time an ACK takes on it (Transport.PacketSecs at its nominal rate; capa
	// is what it sends: Transport.PacketRate).
	ackSecs float64
}

// extentOf is the number of hops the flow's injection reaches: up to and including the first
// paused link (its queue still receives), all of them when none is paused.
func (n *Network) extentOf(f *flow) int32 {
	for k := range f.hops {
		if n.links[n.arena[f.off+k]].paused {
			return k + 1
		}
	}
	return f.hops
}

func (n *Network) wake() {
	if !n.pending {
		n.pending = true
		n.s.AtInstantEnd(n.h, 0, evInstant)
	}
}

// flowStale asks flow id's port to share again with the flow's demand computed anew (its rate
// or its round trip moved); the others' demands stand.
func (n *Network) flowStale(id int32) {
	f := &n.flows[id]
	first := n.arena[f.off]
	if !f.stale && f.state == stateSending {
		ns := n.nicOf(first)
		ns.stale = append(ns.stale, id)
	}
	f.stale = true
	n.nicDirty(first)
}

func (n *Network) nicDirty(l int32) {
	if !n.links[l].nicDir {
		n.links[l].nicDir = true
		n.dirtyNIC = append(n.dirtyNIC, l)
	}
	n.wake()
}

// linkDirty records that link l's state changed now (its queue already brought to now): its
// timers are re-armed at the end of the instant, and the switch it leaves updates its
// total-backlog line and checks PFC.
func (n *Network) linkDirty(l int32) {
	lk := &n.links[l]
	if !lk.dirty {
		lk.dirty = true
		n.dirtyLinks = append(n.dirtyLinks, l)
	}
	if lk.outSw >= 0 {
		_, slope := rates(lk.qs.q, lk.arr, n.capOf(l))
		if slope != lk.aggSlope {
			sw := &n.sw[lk.outSw]
			sw.advanceTotal(n.s.Now())
			sw.totSlope += slope - lk.aggSlope
			if n.pfcArr != nil {
				// A queue's line runs past 0 for up to the picosecond its empty event is
				// rounded to, where the queue itself stops at 0: the total's line may fall
				// short by that much (pfcbound.go).
				sw.totSlack += float64(max(-lk.aggSlope, 0)*1e-12) + 1e-9
			}
			lk.aggSlope = slope
		}
		// Only a queue that holds or gains bytes weighs in the ingress occupancies: a change
		// on a link that stays empty leaves every PFC decision of its switch as it was.
		backlog := lk.qs.q > emptyEps || slope > 0
		if backlog || lk.backlog {
			n.swDirty(lk.outSw)
		}
		if n.pfcArr != nil {
			a := 0.0
			if backlog {
				a = lk.arr
			}
			n.boundArrivals(l, a)
		}
		if backlog != lk.backlog {
			n.sw[lk.outSw].setBacklogged(l, &n.links, backlog)
		}
		lk.backlog = backlog
	}
	n.wake()
}

// capOf is what link l may send now: 0 while paused.
func (n *Network) capOf(l int32) float64 {
	if n.links[l].paused {
		return 0
	}
	return n.links[l].capa
}

// advanceLink brings link l's queue to now.
func (n *Network) advanceLink(l int32, now engine.Time) {
	lk := &n.links[l]
	var m *cc.ECNMarker
	if lk.hasECN {
		m = &lk.ecn
	}
	lk.qs.advance(now, lk.arr, n.capOf(l), m, n.cfg.PacketBytes)
}

// setArrival changes link l's arrival sum by d bits/s at now.
func (n *Network) setArrival(l int32, d float64, now engine.Time) {
	n.advanceLink(l, now)
	lk := &n.links[l]
	n.feedsChanging(l)
	if n.departures {
		n.noteArrivals(l, now, lk.arr+d, n.capOf(l))
	}
	lk.arr += d
	lk.arrAt = now
	if lk.arr < 1e-6*lk.capa {
		lk.arr = max(lk.arr, 0)
		if len(lk.on) == 0 {
			lk.arr = 0
		}
	}
	n.linkDirty(l)
}

// applyFlow brings the links' arrival sums in line with flow id's injection and extent.
func (n *Network) applyFlow(id int32, now engine.Time) {
	if n.reshape() {
		n.applyInjection(id, now)
		return
	}
	f := &n.flows[id]
	ext := int32(0)
	inj := 0.0
	if f.state == stateSending {
		ext, inj = n.extentOf(f), f.inj
	}
	if ext == f.extent && inj == f.cinj {
		return
	}
	for k := range f.hops {
		var old, nw float64
		if k < f.extent {
			old = f.cinj
		}
		if k < ext {
			nw = inj
		}
		if old != nw {
			n.arrivalBy(f.off+k, k, nw-old, now)
		}
	}
	if n.departures && inj != f.cinj {
		n.recordInjection(id, f.cinj, now)
	}
	f.extent, f.cinj = ext, inj
	n.termsMoved(id)
	n.ackRoom(id, inj)
}

// applyInjection is applyFlow with reshaping: the flow's injection is its arrival at its first
// link, and runs on from there (reshape.go).
func (n *Network) applyInjection(id int32, now engine.Time) {
	f := &n.flows[id]
	inj := 0.0
	if f.state == stateSending {
		inj = f.inj
	}
	if inj == f.cinj {
		return
	}
	if f.hops > 0 {
		n.propagate(id, 0, inj, now)
	}
	was := f.cinj
	f.cinj = inj
	n.injectionMoved(id, was)
	n.ackRoom(id, inj)
}

// ackRoom makes the port that answers flow id keep room for its ACKs once the flow injects.
func (n *Network) ackRoom(id int32, inj float64) {
	f := &n.flows[id]
	if f.ack > 0 && n.ackShare > 0 && inj > 0 {
		// Its receiver answers every packet, ahead of its own data (ns-3's NIC sends ACKs
		// first): an ACK stream of ackShare of what it receives. The receiver's NIC keeps room
		// for that from then on, as if it received as much as it sends, as it does in the
		// rings and all-to-alls that make it answer. Kept exact, the room would follow every
		// incoming flow's start and end: a port's share would move by a few parts in a
		// thousand at instants set by another flow's path, and the flows of a ring, which
		// finish together, would finish at as many different instants as they have senders.
		// A sender that never receives keeps all of its rate.
		if lk := &n.links[n.arena[f.off+f.hops]]; !lk.acks {
			lk.acks = true
			if len(lk.src) > 0 {
				n.nicDirty(n.arena[f.off+f.hops])
			}
		}
	}
}

// arrivalBy changes by d the arrivals of the link at arena position p, hop k of its flow, with
// the part its switch receives through the previous hop's port.
func (n *Network) arrivalBy(p, k int32, d float64, now engine.Time) {
	l := n.arena[p]
	n.setArrival(l, d, now)
	if k > 0 && n.links[l].outSw >= 0 {
		n.feed(l, n.links[n.arena[p-1]].inPort, d)
	}
}

// feed changes by d the arrivals that egress link l of a PFC switch receives from the
// switch's ingress port port.
func (n *Network) feed(l, port int32, d float64) { n.feedBy(l, port, d, 0) }

// feedBy changes by da the arrivals and by dw the departure weights (reshape.go) of the flows
// that egress link l of a PFC switch receives from the switch's ingress port port.
func (n *Network) feedBy(l, port int32, da, dw float64) {
	lk := &n.links[l]
	for i := range lk.feeds {
		if fd := &lk.feeds[i]; fd.port == port {
			fd.arr += da
			fd.w += dw
			if fd.arr < 1e-9*lk.capa && fd.w < 1e-9*lk.capa && fd.held <= emptyEps {
				n.dropFeed(l, i)
			}
			n.feedsStale(l)
			return
		}
	}
	if da > 0 || dw > 0 {
		lk.feeds = append(lk.feeds, feeder{port: port, arr: da, w: dw})
		n.feedsStale(l)
	}
}

// setInjection changes what flow id's NIC injects and moves its "sent" timer.
func (n *Network) setInjection(id int32, inj float64, now engine.Time) {
	f := &n.flows[id]
	if inj == f.inj && f.sendT != (engine.Timer{}) {
		return
	}
	if f.state == stateSending {
		n.progressTo(now)
		n.progRate += (inj - f.inj) / float64(8*float64(f.wire))
	}
	was := f.rem
	f.rem = n.remNow(id, now)
	if last := float64(n.cfg.Transport.Last(f.bytes)); f.sf == 0 && n.cfg.Transport.Payload > 0 && was > last && f.rem <= last {
		// The flow's last packet began at the rate that ends now (see sf).
		f.sf = max(f.at+ceilPs((was-last)*8/f.inj), 1)
	}
	f.at, f.inj = now, inj
	d := engine.Never
	if f.rem <= 0 {
		d = 0
	} else if inj > 0 {
		d = ceilPs(f.rem * 8 / inj)
	}
	n.setTimer(&f.sendT, d, id, evSent|int64(f.gen)<<24)
	f.sendAt = engine.Never
	if d != engine.Never {
		f.sendAt = now + d
	}
	if f.opening {
		n.armOpening(id, now)
	}
	n.applyFlow(id, now)
}

// setTimer moves t to now+d (Never: cancels it).
func (n *Network) setTimer(t *engine.Timer, d engine.Time, target int32, arg int64) {
	if d == engine.Never {
		n.s.Cancel(*t)
		*t = engine.Timer{}
		return
	}
	at := n.s.Now() + d
	if !n.s.Reschedule(*t, at) {
		*t = n.s.At(at, n.h, target, arg)
	}
}

// fillItem is one queue pair in the NIC's fair sharing.
type fillItem struct {
	demand float64
	f      int32
}

func fillCmp(a, b fillItem) int {
	switch {
	case a.demand < b.demand:
		return -1
	case a.demand > b.demand:
		return 1
	}
	return int(a.f - b.f)
}

// sortFill sorts a port's demands by (demand, flow). They come in the order of the port's
// last sharing, in which most are still in place (a congestion-control step changes one
// flow's rate), so insertion sort takes O(k + displacements); past 8k moves it hands over to
// pdqsort, O(k log k). A port of an all-to-all over 1,024 GPUs shares 1,023 flows at every
// rate change of one of them.
func sortFill(fill []fillItem) {
	moves, limit := 0, 8*len(fill)
	for i := 1; i < len(fill); i++ {
		x := fill[i]
		j := i
		for j > 0 && fillCmp(x, fill[j-1]) < 0 {
			fill[j] = fill[j-1]
			j--
		}
		fill[j] = x
		if moves += i - j; moves > limit {
			slices.SortFunc(fill, fillCmp)
			return
		}
	}
}

// shareNIC splits the capacity of first link l among the flows that start there: each gets
// its congestion-control rate, and when they ask for more than the port can send, the port
// serves them round-robin, i.e. max-min fair with their rates as caps (ns-3's NIC schedules
// its queue pairs in turn, each paced at its own rate).
func (n *Network) shareNIC(l int32, now engine.Time) {
	n.stats.Shares++
	lk := &n.links[l]
	c := n.capOf(l)
	if lk.acks {
		// The NIC sends its ACKs first: receiving as much as it sends, it answers ackShare of
		// its data rate, d·(1 + ackShare) = c (with Transport.NanosecondClock, an ACK's whole
		// nanoseconds per data packet's: ackDiv).
		c /= n.ackDiv[l]
	}
	ns := n.nicOf(l)
	if shareSkips && ns.valid && ns.c == c && n.shareStands(l, ns, now) {
		n.stats.SharesKept++
		return
	}
	ns.valid = false
	ns.stale = ns.stale[:0] // every stale demand is computed below; flows made stale later join
	n.stats.Demands += uint64(len(lk.src))
	n.fill = n.fill[:0]
	total := 0.0
	for _, id := range lk.src {
		d := n.flows[id].dem
		if n.flows[id].stale {
			d = n.demand(id, now)
		}
		n.fill = append(n.fill, fillItem{d, id})
		total += d
	}
	if total <= c {
		n.endTurns(l, now)
		for _, it := range n.fill {
			// What the port could give it if the others kept theirs.
			n.setLim(it.f, float64(c-total+it.demand))
			n.setInjection(it.f, it.demand, now)
		}
		return
	}
	sortFill(n.fill)
	// The port's flows are kept in this order, so that the next sharing, after a few of them
	// changed their demands, finds them nearly sorted.
	for i, it := range n.fill {
		lk.src[i] = it.f
	}
	left, k := c, len(n.fill)
	level, brk := 0.0, -1
	for i, it := range n.fill {
		if share := left / float64(k-i); it.demand > share {
			level, brk = share, i
			break
		}
		left -= it.demand
	}
	if brk >= 0 {
		ns.dem = ns.dem[:0]
		for _, it := range n.fill {
			ns.dem = append(ns.dem, it.demand)
		}
		ns.c, ns.level, ns.brk, ns.valid = c, level, int32(brk), true
	}
	left = c
	for i, it := range n.fill {
		n.setLim(it.f, level)
		share := left / float64(k-i)
		if it.demand <= share {
			n.setInjection(it.f, it.demand, now)
			left -= it.demand
			continue
		}
		for _, rest := range n.fill[i:] {
			n.setLim(rest.f, level)
		}
		if n.shareInTurn(l, n.fill[i:], left, now) {
			return
		}
		for _, rest := range n.fill[i:] {
			n.setInjection(rest.f, share, now)
		}
		return
	}
}

// shareSkips lets shareNIC keep a sharing that cannot change (shareStands); off, every
// sharing is done in full (TestShareStandsIsTheFullSharing compares the two).
var shareSkips = true

// nicShare is what a NIC port's last sharing left when its flows asked for more than the
// port can send: their demands in the port's order (by demand, then flow), the level the
// flows above it were cut to, and the flows whose demands went stale since. In an all-to-all
// over 1,024 GPUs a port has 1,023 flows, nearly every one asking for more than a 1,023rd of
// the port, and a DCQCN cut of one of them (from 400 Gb/s to 200, say) moves nothing: the
// sharing would read all 1,023 flows' records to find that out.
type nicShare struct {
	dem   []float64 // the demands of the port's flows (link.src), by position
	stale []int32   // flows of the port whose demands went stale since (flowStale)
	c     float64   // the capacity shared
	level float64   // what every flow from position brk on was given
	brk   int32     // the flows before it asked for at most the level, and got what they asked
	valid bool      // a sharing above the port's capacity, and the same flows in the same order since
	rr    turnState // its round robin over the flows at the level (turns.go)
}

// nicOf is port l's sharing record.
func (n *Network) nicOf(l int32) *nicShare {
	if int(l) >= len(n.nics) {
		n.nics = append(n.nics, make([]nicShare, int(l)+1-len(n.nics))...)
	}
	return &n.nics[l]
}

// nicMembers records that port l's flows changed (one started or was sent there): its next
// sharing is done in full.
func (n *Network) nicMembers(l int32) {
	if int(l) < len(n.nics) {
		n.nics[l].valid = false
	}
}

// maxStale is the most stale flows shareStands looks at; past it the port shares in full.
const maxStale = 16

// shareStands reports whether port l's last sharing (ns, valid, on the same capacity) still
// stands: every flow whose demand went stale asked for more than the level then and does now.
// The flows below the level then keep their demands, so the level is the same value, and every
// flow gets what it got; shareNIC would find that out reading every flow. It computes the
// stale demands (in the port's order, as shareNIC would: when it answers false, shareNIC goes
// on with those computed), moves those flows to their places in the port's order, and gives the
// flows below the level their demands again, as shareNIC does, in the same order (that is no
// change unless a flow's injection has no timer, one of rate 0). The flows above the level
// get the level again, which is no change: setInjection would return at once.
func (n *Network) shareStands(l int32, ns *nicShare, now engine.Time) bool {
	lk := &n.links[l]
	if len(ns.stale) > maxStale || len(ns.dem) != len(lk.src) {
		return false
	}
	n.stalePos = n.stalePos[:0]
	for _, id := range ns.stale {
		p := slices.Index(lk.src, id)
		if p < 0 || int32(p) < ns.brk || !(ns.dem[p] > ns.level) {
			return false
		}
		n.stalePos = append(n.stalePos, int32(p))
	}
	slices.Sort(n.stalePos)
	for k := 1; k < len(n.stalePos); k++ {
		if n.stalePos[k] == n.stalePos[k-1] {
			return false // listed twice (not expected: a flow is listed as it goes stale)
		}
	}
	for _, p := range n.stalePos {
		id := lk.src[p]
		if !n.flows[id].stale {
			continue
		}
		n.stats.Demands++
		if d := n.demand(id, now); !(d > ns.level) {
			return false
		}
	}
	// Out of their old places (the rest stays in order), then each into its new one in the
	// sharing's order (fillCmp), past brk.
	m := len(lk.src)
	for k := len(n.stalePos) - 1; k >= 0; k-- {
		p := n.stalePos[k]
		copy(lk.src[p:m], lk.src[p+1:m])
		copy(ns.dem[p:m], ns.dem[p+1:m])
		m--
	}
	for _, id := range ns.stale {
		d := n.flows[id].dem
		q := int(ns.brk) + sort.Search(m-int(ns.brk), func(i int) bool {
			j := int(ns.brk) + i
			return fillCmp(fillItem{ns.dem[j], lk.src[j]}, fillItem{d, id}) > 0
		})
		copy(lk.src[q+1:m+1], lk.src[q:m])
		copy(ns.dem[q+1:m+1], ns.dem[q:m])
		lk.src[q], ns.dem[q] = id, d
		m++
	}
	ns.stale = ns.stale[:0]
	for i := range ns.brk {
		n.setInjection(lk.src[i], ns.dem[i], now)
	}
	return true
}

// instantEnd runs once per instant with changes: re-share the NICs whose flows or rates
// changed, then re-arm the timers of the links whose queues changed, then let the switches
// whose queues changed check PFC.
//
// The request stays pending while it runs: the changes it makes (a port shared anew moves the
// arrivals at its flows' links) are acted on in its own rounds, so a wake they make would only
// queue another pass that finds nothing to do. Such passes were 37% of the instants of a
// ring under DCQCN without a mark (302,796 of 814,623 on the 128-GPU Spectrum-X ring of 64 MiB).
// What is left when it ends — what the switches' checks changed, or what the last round left —
// asks for the next pass then.
func (n *Network) instantEnd() {
	now := n.s.Now()
	if instantCheck && len(n.dirtyNIC) == 0 && len(n.dirtyLinks) == 0 && len(n.dirtyShares) == 0 && len(n.dirtySw) == 0 {
		panic(fmt.Sprintf("ccfluid: a pass at the end of instant %d with nothing to act on", now))
	}
	// With windows, a link re-armed may send the ports of the flows whose ACKs cross it
	// sharing again (window.go): a few rounds reach the instant's fixed point.
	for round := 0; round < winRounds && (len(n.dirtyNIC) > 0 || len(n.dirtyLinks) > 0 || len(n.dirtyShares) > 0); round++ {
		for i := 0; i < len(n.dirtyNIC); i++ {
			l := n.dirtyNIC[i]
			n.links[l].nicDir = false
			n.shareNIC(l, now)
		}
		n.dirtyNIC = n.dirtyNIC[:0]
		n.settleShares(now)
		for i := 0; i < len(n.dirtyLinks); i++ {
			l := n.dirtyLinks[i]
			n.links[l].dirty = false
			n.armLink(l, now)
		}
		n.dirtyLinks = n.dirtyLinks[:0]
	}
	// What the last round left: the ports are shared once more, at the next instant with
	// changes (the flags stay set, so nothing is lost).
	for _, l := range n.dirtyNIC {
		n.links[l].nicDir = false
	}
	n.dirtyNIC = n.dirtyNIC[:0]
	for i := 0; i < len(n.dirtySw); i++ {
		w := n.dirtySw[i]
		n.sw[w].dirty = false
		n.switchChanged(w, now)
	}
	n.dirtySw = n.dirtySw[:0]
	n.pending = false
	if len(n.dirtyNIC) > 0 || len(n.dirtyLinks) > 0 || len(n.dirtyShares) > 0 {
		n.wake()
	}
}

// instantCheck makes instantEnd panic when it finds nothing to act on (for tests).
var instantCheck = false

// armLink re-arms link l's timers from its current line: queue empty, head marker out, next
// ECN mark.
func (n *Network) armLink(l int32, now engine.Time) {
	n.advanceLink(l, now)
	lk := &n.links[l]
	c := n.capOf(l)
	n.setTimer(&lk.emptyT, lk.qs.emptyIn(lk.arr, c), l, evEmpty)
	n.armMarker(l)
	if lk.hasECN {
		out, slope := rates(lk.qs.q, lk.arr, c)
		n.setTimer(&lk.ecnT, markIn(&lk.ecn, lk.qs.q, slope, out, n.cfg.PacketBytes, n.markNeed(l)-lk.qs.credit), l, evMark)
	}
	if n.windowed() {
		n.armWindow(l, now)
		n.checkShare(l)
	}
}

// armMarker schedules the departure of link l's head marker.
func (n *Network) armMarker(l int32) {
	lk := &n.links[l]
	d := engine.Never
	target := math.Inf(1)
	if int(lk.mhead) < len(lk.mk) {
		target = lk.mk[lk.mhead].target
	}
	if lk.down > 0 && n.weights[l].pending() {
		// A link no flow goes on from applies its weights when they are asked for (reweigh,
		// markedFlow, checkSwitch), without events.
		lw := &n.weights[l]
		target = min(target, lw.wm[lw.whead].target)
	}
	if !math.IsInf(target, 1) {
		c := n.capOf(l)
		if c > 0 {
			d = ceilPs(max(target-lk.qs.served, 0) * 8 / c)
		}
	}
	n.setTimer(&lk.mkT, d, l, evMarkerOut)
}

func (n *Network) handle(ev engine.Event) {
	n.stats.Events++
	kind := ev.Arg & 0xff
	if kind < int64(EventKinds) {
		n.stats.EventsByKind[kind]++
	}
	now := ev.At
	switch kind {
	case evInstant:
		n.instantEnd()
		return
	case evEmpty:
		n.advanceLink(ev.Target, now)
		n.links[ev.Target].qs.q = 0
		if len(n.links[ev.Target].feeds) > 0 {
			n.emptyFeeds(ev.Target)
		}
		n.links[ev.Target].emptyT = engine.Timer{}
		n.linkDirty(ev.Target)
		if n.reshape() && n.links[ev.Target].shaped {
			n.sharesDirty(ev.Target)
		}
		if n.windowed() {
			n.windowsShorter(ev.Target, now)
		}
		return
	case evWindow:
		n.stats.WindowTargets++
		n.advanceLink(ev.Target, now)
		lk := &n.links[ev.Target]
		lk.winT = engine.Timer{}
		n.linkDirty(ev.Target)
		n.windowsDirty(ev.Target, float64(lk.qs.q*8)/lk.capa)
		return
	case evMarkerOut:
		n.links[ev.Target].mkT = engine.Timer{}
		n.markerOut(ev.Target, now)
		return
	case evMark:
		n.links[ev.Target].ecnT = engine.Timer{}
		n.mark(ev.Target, now)
		return
	case evSwitch:
		n.sw[ev.Target].checkT = engine.Timer{}
		n.checkSwitch(ev.Target, now)
		return
	case evPause:
		n.applyPause(ev.Target, ev.Arg>>8 == 1, now)
		return
	}
	id := ev.Target
	f := &n.flows[id]
	if uint32(ev.Arg>>24) != f.gen || f.state == stateFree {
		return // an event of an earlier flow in this slot
	}
	switch kind {
	case evSent:
		f.sendT = engine.Timer{}
		n.sent(id, now)
	case evCC:
		f.ccT = engine.Timer{}
		if f.state == stateSending {
			n.paceDue(id, now)
			if old := f.rp.Rate(); f.rp.Advance(now) {
				n.stats.RateChanges++
				n.windowMoved(id)
				n.rateChanged(id, old, now)
			}
			n.armCC(id)
		}
	case evOpen:
		n.openingDue(id, now)
	case evAck:
		n.lastAckMade(id, now)
	case evRound:
		f.roundT = engine.Timer{}
		if f.state == stateSending {
			n.round(id, now)
		}
	case evCNP:
		if f.state == stateSending {
			n.stats.CNPs++
			f.cnps++
			if old := f.rp.Rate(); f.rp.OnCNP(now) {
				n.stats.RateChanges++
				n.windowMoved(id)
				n.rateChanged(id, old, now)
			}
			n.armCC(id)
		}
	}
}

// armCC schedules flow id's next reaction-point timer that can change its rate.
func (n *Network) armCC(id int32) {
	f := &n.flows[id]
	next := f.rp.Next()
	if f.paceAt != 0 {
		next = min(next, f.paceAt)
	}
	d := engine.Never
	if next != engine.Never {
		d = max(next-n.s.Now(), 0)
	}
	n.setTimer(&f.ccT, d, id, evCC|int64(f.gen)<<24)
}

// sent: flow id has injected its last byte. It leaves its links' arrival sums and the NIC's
// sharing, and its last byte starts through the queues.
func (n *Network) sent(id int32, now engine.Time) {
	f := &n.flows[id]
	n.progressSent(id, now)
	// The rate the last packet left at: the current one, or, when that changed while the
	// packet was leaving (a queue pair joining the port as it ends), its mean over the packet —
	// a NIC sends a packet whole at its line rate, and the fluid's rates are means over packets.
	rate := f.inj
	turned, mean := false, false
	if r, ok := n.turnEnd(id); ok {
		rate, turned = r, true
	} else if f.sf > 0 && now > f.sf {
		rate, mean = float64(n.cfg.Transport.Last(f.bytes)*8)/secs(now-f.sf), true
	}
	f.sf = 0
	if n.cfg.Transport.Payload > 0 && f.hops > 1 {
		n.rates = n.rates[:0]
		for _, l := range n.arena[f.off : f.off+f.hops] {
			n.rates = append(n.rates, n.kin[l].capa)
		}
		if n.portBusy(id, now, mean) {
			// The last packet leaves whole at the port's rate, right after another flow's
			// packet (its own, at a share of the port, left a round of turns before).
			rate = n.rates[0]
		}
		f.sf = n.cfg.Transport.Tail(f.bytes, rate, n.rates)
	}
	if f.hops > 1 {
		n.lastSent[n.arena[f.off]], n.lastNext[n.arena[f.off]] = now, n.arena[f.off+1]
	}
	if !turned {
		f.sf -= n.turnOffset(id, now)
	}
	f.rem, f.at = 0, now
	f.state = stateSent
	n.termsMoved(id)
	n.applyFlow(id, now)
	n.s.Cancel(f.ccT)
	n.s.Cancel(f.roundT)
	f.ccT, f.roundT = engine.Timer{}, engine.Timer{}
	n.endOpening(id)
	first := n.arena[f.off]
	src := n.links[first].src
	if i := slices.Index(src, id); i >= 0 {
		src[i] = src[len(src)-1]
		n.links[first].src = src[:len(src)-1]
	}
	n.nicMembers(first)
	n.nicDirty(first)
	if !n.reshape() {
		n.leaveLinks(id) // with reshaping it leaves each link after its last byte
	}
	if n.windowed() {
		n.leaveAckLinks(id)
	}
	n.stats.Sent++
	n.obs.FlowSent(FlowID(id), now)
	n.enter(id, 0, now)
}

// portBusy reports whether flow id's NIC port sent another packet on the flow's way just before
// the flow's last one, its last byte leaving now: another flow to the same next link sent its
// last byte there within a last packet's time (and half a full one, for the fluid's rounding)
// before, or, unless the flow's rate changed while its last packet left (joined: a flow that
// joins the port then comes after it), other flows to the same next link still send there. (A
// packet the switch sends out of another port does not hold the last one up.) The packet
// before the last on the wire is then another flow's, back to back with it, and a switch that
// stores and forwards packets holds the last one until that one is out (Transport.Tail with the
// port's rate): in SimAI's ns-3, 7 flows of 256 KiB from one GPU to another over an NVSwitch
// end 22 ns later than the last packets' own store and forward makes them, 25 ns for the full
// packet before the first of them less 3 for that one's own, and the rest follow it (traced:
// the NVSwitch queues the first last packet from 6,103 to 6,125 ns).
func (n *Network) portBusy(id int32, now engine.Time, joined bool) bool {
	f := &n.flows[id]
	port, next := n.arena[f.off], n.arena[f.off+1]
	if !joined {
		for _, o := range n.links[port].src {
			if g := &n.flows[o]; o != id && g.hops > 1 && n.arena[g.off+1] == next {
				return true
			}
		}
	}
	if n.lastSent[port] <= 0 || n.lastNext[port] != next {
		return false
	}
	c := n.kin[port].capa
	within := float64(n.cfg.Transport.Last(f.bytes)*8)/c + float64(n.fullSecs(c)/2)
	return secs(now-n.lastSent[port]) <= within
}

// turnOffset is how much earlier than the fluid says flow id's last packet leaves its NIC port
// when other flows of the port are sent at the same instant. A port serves its queue pairs in
// turn, a packet each (ns-3's RdmaEgressQueue round robin), so flows that share it equally
// and would all send their last byte at once send their last packets one after another: of k
// such flows the first is done k−1 last packets before the fluid's instant and the last at it.
// Which flow goes first depends on where the turn stands, which ns-3's round robin carries
// from packet to packet and the fluid model does not know; every flow of the k is given the
// mean, (k−1)/2 last packets, so that the port's flows stay together and none of the
// collective's chains is favoured.
func (n *Network) turnOffset(id int32, now engine.Time) engine.Time {
	f := &n.flows[id]
	if f.hops == 0 || n.cfg.Transport.Payload <= 0 {
		return 0
	}
	first := n.arena[f.off]
	lk := &n.links[first]
	if lk.rrAt != now || lk.rrJ >= lk.rrK {
		// The first of the instant: count the port's flows that send their last byte now.
		k := int32(0)
		for _, o := range lk.src {
			if n.flows[o].sendAt == now && n.flows[o].state == stateSending {
				k++
			}
		}
		lk.rrAt, lk.rrK, lk.rrJ = now, k, 0
	}
	lk.rrJ++
	if lk.rrK < 2 {
		return 0
	}
	last := float64(n.cfg.Transport.Last(f.bytes) * 8)
	return ceilPs(float64(float64(lk.rrK-1)*last) / lk.capa / 2)
}

// enter: flow id's last byte reaches the queue of its hop-th link. It leaves once the link has
// sent everything queued before it (FIFO), then crosses the link's delay.
func (n *Network) enter(id int32, hop int32, now engine.Time) {
	f := &n.flows[id]
	l := n.arena[f.off+hop]
	lk := &n.links[l]
	if int(lk.mhead) == len(lk.mk) && !lk.paused && n.queueAt(l, now) <= emptyEps {
		n.forward(id, hop, now, now)
		return
	}
	n.advanceLink(l, now)
	// Taken markers go once they are half the list, and the room of a long backlog once little
	// of it is used (fluid.DropTaken): a link whose backlog never drains (a port held through a
	// PFC storm) kept every marker and weight change it ever queued, and SimAI's example on
	// 9,216 GPUs under the shipped SimAI.conf grew to 993 MiB by 865 ms of its iteration
	// (docs/performance.md, "Memory").
	lk.mk, lk.mhead = fluid.DropTaken(lk.mk, lk.mhead)
	lk.mk = append(lk.mk, marker{id, hop, lk.qs.served + lk.qs.q, now})
	if int(lk.mhead) == len(lk.mk)-1 {
		n.armMarker(l)
	}
}

// forward passes flow id's last byte from its hop-th queue to the next one, or to the receiver
// one path delay later. Queues are followed in the senders' time frame, the one in which
// what a link sends reaches the next at once (see the package doc), so the byte moves on at
// once and the path's delay is added at the end, as in the ideal model. With reshaping the
// flow leaves the link's list here: none of its bytes are left in the queue.
func (n *Network) forward(id int32, hop int32, entered, now engine.Time) {
	f := &n.flows[id]
	if w := now - entered; w > f.bnWait && hop < f.hops {
		f.bnWait, f.bn = w, n.arena[f.off+hop]
	}
	if hop < f.hops && n.reshape() {
		n.leaveHop(id, hop, now)
		f = &n.flows[id]
	}
	end := f.hops
	if n.cfg.Transport.AtAck {
		end += f.ack
	}
	switch {
	case hop+1 < end:
		n.enter(id, hop+1, now)
	case end > f.hops:
		// The ACK has left the last queue of its route: the path's and the route's delays,
		// the last packet's store-and-forward, the ACK's serialisation and its waits behind
		// the data packets in service on its way remain.
		// Its waits are read now, looking ahead to when the ACK passes, but the one at the
		// receiver's port again when the ACK is made there (evAck): on a route of
		// microseconds, that port may have started flows of its own since (a ring's next
		// steps without send latency).
		w, first := n.lastAckWait(id, now)
		made := now + f.delay + f.sf
		if made <= now || f.ack == 0 {
			n.arrive(id, max(made+f.ackDelay+ceilPs(w), now))
			break
		}
		for int(id) >= len(n.ackRest) {
			n.ackRest = appendDoubling(n.ackRest, 0)
		}
		n.ackRest[id] = w - first
		f.state = stateAck
		n.s.AfterFixed(made-now, n.h, id, evAck|int64(f.gen)<<24)
	default:
		n.arrive(id, max(now+f.delay+f.sf, now))
	}
}

// markerOut: link l's head marker has been served.
func (n *Network) markerOut(l int32, now engine.Time) {
	n.advanceLink(l, now)
	if n.reshape() {
		n.weightsOut(l)
	}
	lk := &n.links[l]
	for int(lk.mhead) < len(lk.mk) {
		m := lk.mk[lk.mhead]
		if m.target > lk.qs.served+emptyEps*8 && !(lk.qs.q <= emptyEps && !lk.paused) {
			break
		}
		lk.mhead++
		n.forward(m.f, m.hop, m.at, now)
		lk = &n.links[l]
	}
	n.armMarker(l)
}

// arrive reports flow id's arrival at time at and frees its slot.
func (n *Network) arrive(id int32, at engine.Time) {
	if n.pk != nil {
		n.nvlinkDone(id)
	}
	n.stats.Arrived++
	if n.bobs != nil {
		f := &n.flows[id]
		bn := f.bn
		if bn < 0 && f.hops > 0 {
			// It never queued: its path's slowest link limited it (the first, on a tie).
			for k := range f.hops {
				if l := n.arena[f.off+k]; bn < 0 || n.links[l].capa < n.links[bn].capa {
					bn = l
				}
			}
		}
		if bn >= 0 {
			n.bobs.FlowBottleneck(FlowID(id), bn, float64(f.bytes), at)
		}
	}
	n.obs.FlowArrived(FlowID(id), at)
	f := &n.flows[id]
	if f.state == stateSent || f.state == stateAck {
		n.progSum--
	}
	f.state = stateFree
	n.free = append(n.free, id)
}

// lastAckMade: flow id's last packet has reached its receiver, which sends the last ACK back
// now. The flow arrives when it is at the sender: after the route's delays, the ACK's
// serialisation, and its waits behind the data packets in service on its way, the one at the
// receiver's port read now (lastAckFirst), those after it when its last byte left its sender
// (ackRest).
func (n *Network) lastAckMade(id int32, now engine.Time) {
	f := &n.flows[id]
	n.arrive(id, now+f.ackDelay+ceilPs(n.lastAckFirst(id, now)+n.ackRest[id]))
}

// mark: link l marks a packet now. It belongs to one of the flows arriving at the link,
// chosen with probability proportional to its arrival rate; the receiver's notification point
// answers with a CNP, which reaches the sender one path delay later.
func (n *Network) mark(l int32, now engine.Time) {
	n.advanceLink(l, now)
	lk := &n.links[l]
	lk.qs.credit = max(lk.qs.credit-n.markNeed(l), 0)
	if n.cfg.PoissonMarks {
		n.needs[l] = 0 // the next mark's count is drawn when the link is next armed
	}
	n.stats.Marks++
	n.linkDirty(l)
	if lk.arr <= 0 && !(n.cfg.MarkDepartures && lk.qs.q > 0) {
		return
	}
	pick, hop := n.markedFlow(l, now)
	if pick < 0 {
		return
	}
	f := &n.flows[pick]
	n.setMarkAt(pick, now)
	if n.mode != ModeDCQCN {
		// DCTCP echoes every mark in an ACK and reacts once per round; HPCC ignores ECN.
		f.marks++
		return
	}
	rx := now
	for k := hop; k < f.hops; k++ {
		rx += n.kin[n.arena[f.off+k]].delay
	}
	rx = max(rx, f.lastRx)
	f.lastRx = rx
	if f.gate.OnMarked(rx, n.cfg.CNPInterval) {
		// The CNP is the ACK of the marked packet (SimAI's ns-3 sets a flag on it): it comes
		// back on the ACK's route.
		back := f.delay
		if f.ack > 0 {
			back = f.ackDelay
		}
		n.s.At(rx+back, n.h, pick, evCNP|int64(f.gen)<<24)
	}
}

// markNeed is the expected count of marked packets at which link l's next mark falls: 1 for
// evenly spaced marks, an Exp(1) draw with Config.PoissonMarks, made when the link is first
// armed after a mark and kept until the next (the draws follow the order of the simulation's
// events, so a seed gives one sequence).
func (n *Network) markNeed(l int32) float64 {
	if !n.cfg.PoissonMarks {
		return 1
	}
	if n.needs[l] == 0 {
		n.needs[l] = n.rng.ExpFloat64()
	}
	return n.needs[l]
}

// setMarkAt sets when flow id was last marked, in its record and in its entries on the flow
// lists of the links it is on (with reshaping it leaves its first links as its last byte
// passes them: an entry's place is its hop's only while it holds the flow's hop).
func (n *Network) setMarkAt(id int32, at engine.Time) {
	f := &n.flows[id]
	f.markAt = at
	for k := range f.hops {
		p := f.off + k
		on := n.links[n.arena[p]].on
		if i := n.apos[p]; int(i) < len(on) && on[i].f == id && on[i].ap == p {
			on[i].markAt = at
		}
	}
}

// markedFlow draws the flow whose packet link l marks now, with probability proportional to
// its arrival rate there, among the flows that have a packet at the link: a flow's packets come
// one packet's transmission at its injection apart, 8·(P+H)/injection, and a packet carries one
// mark, so a flow marked less than that ago has no packet to mark yet and the mark falls on
// another flow's packet (as in ns-3, where a switch marks the packets it sends, so a flow's
// CNPs come at most one per packet however congested the port). Without a packet model a
// packet is PacketBytes. -1: no flow arrives, or none has a packet.
func (n *Network) markedFlow(l int32, now engine.Time) (pick, hop int32) {
	lk := &n.links[l]
	pkt := float64(n.cfg.Transport.Full() * 8)
	if n.cfg.Transport.Payload <= 0 {
		pkt = n.cfg.PacketBytes * 8
	}
	if n.markFIFO {
		// Its flows' departure weights are what each brought in when the bytes it sends now
		// arrived (reshape.go).
		n.weightsOut(l)
		lk = &n.links[l]
		n.mw = n.mw[:0]
		for _, r := range n.weights[l].rt {
			n.mw = append(n.mw, r.w)
		}
		c := 0.0
		if lk.shaped || n.shaping(l) {
			c = n.capOf(l)
		}
		return n.drawMarked(l, n.weights[l].wsum, c, pkt, now)
	}
	if n.departures && lk.qs.q > 0 {
		// What the port sends now arrived a queue's delay ago (departures.go).
		if c := n.capOf(l); c > 0 {
			if then := n.arrivedAt(l, now); then < lk.arrAt {
				return n.markedDeparture(l, then, c, pkt, now)
			}
		}
	}
	n.mw = n.mw[:0]
	for i := range lk.on {
		n.mw = append(n.mw, n.entryRate(l, i))
	}
	return n.drawMarked(l, lk.arr, 0, pkt, now)
}

// drawMarked draws the flow whose packet link l marks now among its flows, weighted by n.mw
// (by position in its flow list; 0: none of the flow's bytes there), out of total, passing
// over the flows that have no packet there since their last mark (markedFlow). A flow of
// weight w puts w bits/s through the link, or, with c > 0, its part c·w/total of what the link
// sends. -1: no flow has a weight, or none has a packet.
func (n *Network) drawMarked(l int32, total, c, pkt float64, now engine.Time) (pick, hop int32) {
	lk := &n.links[l]
	// sent is the bits a flow of weight w has put through the link since at.
	sent := func(at engine.Time, w float64) float64 {
		if c > 0 {
			w = c * w / total
		}
		return float64(w * secs(now-at))
	}
	hasPacket := func(markAt engine.Time, w float64) bool {
		return markAt == 0 || sent(markAt, w) >= pkt
	}
	// draw returns the index in lk.on of a flow drawn by weight, out of sum, among all or only
	// those with a packet there.
	draw := func(sum float64, withPacket bool) int {
		x := n.rng.Float64() * sum
		pick := -1
		for i, e := range lk.on {
			if w := n.mw[i]; w > 0 && (!withPacket || hasPacket(e.markAt, w)) {
				pick = i
				x -= w
				if x < 0 {
					break
				}
			}
		}
		return pick
	}
	i := draw(total, false)
	if i < 0 {
		return -1, 0
	}
	if !hasPacket(lk.on[i].markAt, n.mw[i]) {
		// The drawn flow has no packet here yet: draw again among those that have. If none
		// has and the port marks what it sends (Config.MarkDepartures), the packet it sends is
		// still some flow's: the one whose next packet is the most due (the largest part of its
		// packet gap gone since its last mark). The gaps are the fluid's estimate of where each
		// flow's packets stand; a port that marks every packet it sends (its queue above KMAX,
		// as in a storm) marks as many as it sends, each one a flow's, as ns-3's does. Marking
		// what arrives, no packet arrives then, and there is no mark.
		var sum float64
		due, most := -1, -1.0
		for j, e := range lk.on {
			w := n.mw[j]
			if !(w > 0) {
				continue
			}
			if hasPacket(e.markAt, w) {
				sum += w
				continue
			}
			if x := sent(e.markAt, w); x > most {
				due, most = j, x
			}
		}
		switch {
		case sum > 0:
			i = draw(sum, true)
		case n.cfg.MarkDepartures:
			i = due
		default:
			i = -1
		}
		if i < 0 {
			return -1, 0
		}
	}
	e := lk.on[i]
	return e.f, e.ap - n.flows[e.f].off
}

// Tag is the caller's tag of flow f.
func (n *Network) Tag(f FlowID) int64 { return n.flows[f].tag }

// Bytes is flow f's size.
func (n *Network) Bytes(f FlowID) int64 { return n.flows[f].bytes }

// Path is flow f's path (aliases the network's storage; valid until the slot is reused).
func (n *Network) Path(f FlowID) []int32 {
	fl := &n.flows[f]
	return n.arena[fl.off : fl.off+fl.hops]
}

// Rate is flow f's congestion-control rate, bits/s.
func (n *Network) Rate(f FlowID) float64 { return n.ccRate(int32(f)) }

// Injection is what flow f's NIC sends now, bits/s.
func (n *Network) Injection(f FlowID) float64 { return n.flows[f].inj }

// Queue is link l's backlog in bytes at the current time.
func (n *Network) Queue(l int32) float64 {
	n.advanceLink(l, n.s.Now())
	return n.links[l].qs.q
}

// LinkBytes is what link l has sent so far, bytes.
func (n *Network) LinkBytes(l int32) float64 {
	n.advanceLink(l, n.s.Now())
	return n.links[l].qs.served
}

// LinkBytesAt is what LinkBytes will be at time t ≥ Now if no event comes before t (its queue
// drains or fills linearly until then). Unlike LinkBytes it changes nothing, not even the
// point the link's state was last brought up to: samplers that read between events (engine's
// AtAdvance) must not move the model's arithmetic.
func (n *Network) LinkBytesAt(l int32, t engine.Time) float64 {
	_, served := n.peekLink(l, t)
	return served
}

// Paused reports whether link l's sender is paused by PFC now.
func (n *Network) Paused(l int32) bool { return n.links[l].paused }

// Stats returns the counters.
func (n *Network) Stats() Stats { return n.stats }

// Graph is the network's graph.
func (n *Network) Graph() *route.Graph { return n.g }

// Reserve makes room for flows more flows in flight than the free slots hold, with their path
// room: a caller about to start many flows at once (an all-to-all's million) saves the flow
// table's growth by doubling, which copies it (384 bytes a flow) twice over.
func (n *Network) Reserve(flows int) {
	if more := flows - len(n.free); more > 0 {
		n.flows = fluid.Grow(n.flows, more)
		n.arena = fluid.Grow(n.arena, 8*more)
		n.apos = fluid.Grow(n.apos, 8*more)
	}
}

// InFlightProgress counts the flows started and not yet arrived, each as the share of its
// bytes its sender has sent so far (1 once the last is out): for progress reports. It reads the
// line the fluid flows' injections keep (progSum), in O(1), and asks the NVLink's packet model
// for each flow it carries.
func (n *Network) InFlightProgress() float64 {
	sum := n.progSum + float64(n.progRate*secs(n.s.Now()-n.progAt))
	for _, id := range n.pkFlows {
		sum += n.pk.Sent(id) / float64(n.flows[id].wire)
	}
	return sum
}

// progressTo brings the progress line to now.
func (n *Network) progressTo(now engine.Time) {
	if now > n.progAt {
		n.progSum += float64(n.progRate * secs(now-n.progAt))
		n.progAt = now
	}
}

// progressSent moves sending flow id's part of the progress line to a sent flow's 1 at now: its
// line, which may have passed its last byte by the rounding of its "sent" event, is set to 1
// and its rate leaves the sum.
func (n *Network) progressSent(id int32, now engine.Time) {
	f := &n.flows[id]
	if f.state != stateSending {
		return
	}
	n.progressTo(now)
	wire := float64(f.wire)
	n.progSum += float64(f.rem-float64(float64(f.inj*secs(now-f.at))/8)) / wire
	if n.progSending--; n.progSending == 0 {
		n.progRate = 0
	} else {
		n.progRate -= f.inj / float64(8*wire)
	}
}

// InFlightProgressWeighted is InFlightProgress with each flow's part multiplied by weight of
// its tag (nil: 1 for every flow), for callers whose unit of work is several flows.
func (n *Network) InFlightProgressWeighted(weight func(tag int64) float64) float64 {
	sum := 0.0
	for i := range n.flows {
		var part float64
		switch n.flows[i].state {
		case stateSending:
			part = n.Injected(FlowID(i)) / float64(n.flows[i].wire)
		case stateSent, stateAck:
			part = 1
		case statePacket:
			part = n.pk.Sent(int32(i)) / float64(n.flows[i].wire)
		default:
			continue
		}
		if weight != nil {
			part *= weight(n.flows[i].tag)
		}
		sum += part
	}
	return sum
}

// Injected is how many bytes flow f's sender has sent so far.
func (n *Network) Injected(f FlowID) float64 {
	fl := &n.flows[f]
	if fl.state == statePacket {
		return n.pk.Sent(int32(f))
	}
	if fl.state != stateSending {
		return float64(fl.wire)
	}
	rem := fl.rem - float64(float64(fl.inj*secs(n.s.Now()-fl.at))/8)
	return float64(fl.wire) - max(rem, 0)
}
