package fluid

import (
	"math"
	"slices"
	"strconv"
	"unsafe"

	"simd/engine"
	"simd/topo/route"
)

// FlowID names a flow: an index into the network's flow table. A slot is reused once its flow
// has arrived (after Observer.FlowArrived returns); the accessors (Tag, Rate, Path, ...) are
// meaningful from Start until then.
type FlowID int32

// Observer gets the network's flow events. Both calls come from engine events, at the event's
// time (the scheduler's Now) — except FlowArrived with Options.ArrivalAtSend, which comes at
// the send time with the (later) arrival time. They may call Start; a flow started from a
// callback joins the batch of the current instant.
type Observer interface {
	FlowSent(f FlowID, now engine.Time)    // the last byte left the sender
	FlowArrived(f FlowID, now engine.Time) // the last byte reached the receiver; the slot is freed after this returns
}

// BottleneckObserver may be implemented by the Observer of a network built with
// Options.TrackBottlenecks. FlowBottleneck is called each time a flow's bottleneck segment ends
// — its rate or its bottleneck link changes, or it is sent — with the bytes the flow sent while
// link was its bottleneck (fractional: the fluid model moves fractions of bytes). The bytes of
// a flow over all its calls add up to its size, up to rounding. It is called in the middle of
// the network's bookkeeping and must not call Start.
type BottleneckObserver interface {
	FlowBottleneck(f FlowID, link int32, bytes float64, now engine.Time)
}

// Options are the network's optional features. The zero value is the default: everything off,
// so the hot path pays for nothing it does not use.
type Options struct {
	// TrackBottlenecks attributes every transmitted byte to the link that was its flow's
	// bottleneck while it was sent: per directed link (BottleneckBytes) and, when the
	// Observer implements BottleneckObserver, per flow segment. It costs a few float
	// operations per re-rated flow.
	TrackBottlenecks bool
	// ArrivalAtSend reports each arrival when the flow is sent, with the arrival time (the
	// send time plus the path's delay) as FlowArrived's time, instead of from an engine event
	// at that time: nothing changes in the network when a flow arrives, so an observer that
	// schedules what follows for the given time (the DAG runner) saves one event per flow.
	// FlowArrived then comes right after FlowSent, from the send event.
	ArrivalAtSend bool
	// Transport cuts flows into packets: a flow puts its payload and every packet's headers
	// on its links (Transport.Wire), and its last packet reaches the receiver Transport.Tail
	// after its last byte left the sender, plus the delay given to Start. The zero value is a
	// pure fluid.
	Transport Transport
	// Bundles puts a flow that starts on the path of a flow in flight into one bundle with
	// it (bundle.go): max-min fairness gives flows of one path one rate, so the solver sees
	// the bundle as one flow that counts as its members, and one timer, for the member that
	// finishes first, follows their common progress (processor sharing). The rates are
	// those of the flows apart, up to rounding. Ignored with TrackBottlenecks, whose
	// observer is told each flow's bytes.
	Bundles bool
}

// Tol is the relative tolerance of every floating-point comparison of rates and loads: a link
// counts as saturated when its load is at least capacity·(1−Tol), and a flow counts as the
// fastest on a link when its rate is at least the others'·(1−Tol). Rates are sums and
// quotients of a few dozen float64 values of order 1e9–1e13 bits/s, whose rounding errors are
// of order 1e-15 relative, so 1e-9 separates rounding noise from real differences by six
// orders of magnitude while still resolving rates that differ by one part in a billion.
const Tol = 1e-9

// Stats are the network's counters since New.
type Stats struct {
	Started uint64 // flows started
	Sent    uint64 // flows whose last byte left the sender
	Arrived uint64 // flows whose last byte reached the receiver

	Recomputes  uint64 // batches: one per instant with changes, plus one per change queued after it ran (see doc)
	Solves      uint64 // water-filling passes; Solves − Recomputes is the number of widenings
	Expansions  uint64 // links at which the boundary check pulled flows into a region
	SolvedFlows uint64 // flows water-filled, summed over all passes (the solver's work)
	SolvedLinks uint64 // links water-filled, summed over all passes (shadows not counted)
	Shadows     uint64 // links left out of a fill as another's twin (markShadows), summed over all passes

	RegionFlows uint64 // flows in the final regions, summed over Recomputes
	RegionLinks uint64 // directed links in the final regions, summed over Recomputes
	MaxRegion   int    // flows in the largest final region
	// RecomputesByLinks and RegionFlowsByLinks count the recomputes, and the flows of their
	// final regions, by how many directed links the solver held (RegionLinks less the links
	// of flows fixed alone): entry 0 for none, entry k ≥ 1 for 2^(k−1) to 2^k − 1 links, the
	// last entry for all above. Where the solver's work goes: a collective's NVLink ports are
	// regions of a few links, ECMP-coupled fabric crossings of tens to hundreds.
	RecomputesByLinks  [SizeClasses]uint64
	RegionFlowsByLinks [SizeClasses]uint64
	Rerated            uint64 // flows whose rate changed in a recompute (remaining bytes updated, timer moved)
	Bundled            uint64 // flows started into a bundle (Options.Bundles)

	Events uint64 // engine events handled by the network (recomputes, sends, arrivals)

	Rerouted uint64 // Reroute calls that moved a transmitting flow
}

// SizeClasses is the number of entries of Stats.RecomputesByLinks.
const SizeClasses = 12

// Event kinds, in the low two bits of Event.Arg.
const (
	evSent int64 = iota
	evArrive
	evRecompute
)

// sentArg is the Event.Arg of a "sent" timer of a flow whose path is arena[off : off+hops]:
// the kind, the hops in the next 31 bits and off above them. sent reads the path from the
// event, so the loads of the path and its links are issued with those of the flow's records
// instead of waiting for them: the flow's first touch of each in the run's working set is a
// cache miss, and a chain of three (record, path, link) cost more than the records and the
// links side by side. A reroute, the only change of a path, cancels the timer; the recompute
// makes a new one.
func sentArg(off, hops int32) int64 {
	return int64(uint64(uint32(off))<<33 | uint64(uint32(hops))<<2 | uint64(evSent))
}

// Flow states.
const (
	stateFree   uint8 = iota
	stateActive       // transmitting, on the links of its path
	stateSent
	stateMember // transmitting in a bundle (bundle.go): its bundle is on the links for it
	stateBundle // a bundle of flows of one path: on the links, no caller's flow (bundle.go)
)

// flowHot is the part of a flow the solver reads: 32 bytes, two flows per cache line.
type flowHot struct {
	rate  float64 // current rate, bits/s
	mark  uint32  // the region epoch it was last added to a region in
	ridx  int32   // index in the region when mark == the network's epoch
	bn    int32   // bottleneck link, -1 when none
	off   int32   // the path: arena[off : off+hops]
	hops  int32
	state uint8
	// alone: every link of its path was idle when it started (or moved) and nothing joined
	// since; addFresh then takes its rate from Network.fresh. While it is set, the flow is counted
	// in its lone bottleneck's bnCnt (flow.loneBn, when ≥ 0) though bn is still -1: join
	// counts it there while that link's record is in the cache, and apply, which sets bn, or
	// the join that clears the mark, settles it. Cleared by apply.
	alone bool
	// room is the capacity of the arena chunk at off (a chunk of more than 255 links counts
	// as 255: only paths that fit that reuse it). Kept here because Start reads it: in
	// a record Start only writes it would cost a load that misses on every flow.
	room uint8
	// w is how many flows the record stands for on its links, each at rate: 1 for a flow of
	// its own (stateActive), its members for a bundle (stateBundle), 0 off the links.
	w uint8
}

// flow is the rest of a flow besides flowHot, what re-rating and sending it read first: one
// 64-byte cache line (the table's backing array is page-aligned once it outgrows 32 KiB). A
// 48-byte record with the start in a third table straddled two lines for every other slot, and
// made Start write three records.
type flow struct {
	rem   float64     // bits left to send at time at
	at    engine.Time // when rem was last brought up to date
	bytes int64
	tag   int64
	delay engine.Time
	timer engine.Timer // the "sent" event while transmitting, then the "arrived" event
	start engine.Time
	// The bottleneck of a flow alone on its path (flowHot.alone): the link of the smallest
	// capacity, the lowest id among equals. Read only when another flow joins its path
	// before its first rate, or when it moves.
	loneBn int32
	// bund is, for a member of a bundle, the bundle's slot, and for a bundle its entry of
	// Network.bundles (bundle.go).
	bund int32
}

// freshFlow is a flow of Network.fresh with what join found: when the flow is alone on its
// path, the rate and bottleneck it has there. addFresh reads them from this list, which it
// walks in order, rather than from the flow's slot, which the instant's other starts have
// pushed out of the cache by then.
type freshFlow struct {
	rate float64
	id   int32
	bn   int32
}

// entry is one flow on a link: the flow and the position of the link in the arena (the flow's
// path offset plus the hop), where apos records the entry's index in the link's list. Keeping
// the arena position rather than the hop lets a removal fix the moved entry's apos without
// reading that flow's slot.
type entry struct {
	f  int32
	ai int32
}

// linkState is what the network keeps per directed link, in one 64-byte record: a link a
// recompute touches costs one cache line instead of one per field in separate arrays.
type linkState struct {
	on     []entry // the transmitting flows
	capa   float64 // bits/s
	sent   float64 // bytes of the flows sent over it, and of rerouted flows while they crossed it
	bnBits float64 // bits sent while it was the bottleneck (TrackBottlenecks)
	mark   uint32  // region epoch
	idx    int32   // index in rl when mark == epoch
	bnCnt  int32   // transmitting flows whose bottleneck it is
	dirty  bool    // in Network.dirty
}

// rlink is the solver's state of one link of the region. After a widening the region's links
// are partitioned into parts, the connected components of "some region flow crosses both
// links", in a union-find forest (parent); parts are independent water-filling problems, so
// the next pass re-solves only the parts that gained flows (dirty roots). The first pass
// solves everything and needs no parts. Only link is set when a link joins the region: solve
// sets every other field of the links it solves before reading it.
type rlink struct {
	link   int32
	parent int32 // union-find parent (an index into rl); the root's part
	dirty  bool  // at a root: the part gained flows and must be solved again
	solve  bool  // in a part being solved in the current pass
	frozen bool  // popped from the heap: the bottleneck of some region flows, at level
	// shadow: another link of the part carries the same region flows with the same residual
	// and has a lower id, so it fixes them all first and this one never fixes a flow; solve
	// leaves it out of its queue (markShadows).
	shadow bool
	hash   uint64 // a sum of flowHash over its region flows: markShadows' first test

	cnt      int32 // region flows on the link not yet fixed
	outCnt   int32 // flows outside the region on the link
	resid    float64
	level    float64
	outLoad  float64 // sum of the rates of the outside flows
	outMax   float64 // largest outside rate
	outBnMin float64 // smallest rate of an outside flow whose bottleneck is this link, +Inf if none
	regLoad  float64 // sum of the new rates of the region flows
	regMax   float64 // largest new region rate
}

// Network is the fluid model of the flows crossing a route.Graph, driven by an
// engine.Scheduler. It is not safe for concurrent use; all its methods run on the scheduler's
// goroutine.
type Network struct {
	s    *engine.Scheduler
	g    *route.Graph
	obs  Observer
	bobs BottleneckObserver
	h    engine.HandlerID
	opt  Options

	hot   []flowHot     // per flow slot
	flows []flow        // per flow slot
	segAt []engine.Time // per flow slot with TrackBottlenecks (else nil): start of its current bottleneck segment
	free  []int32       // free flow slots (a stack)
	arena []int32       // paths: directed link ids
	apos  []int32       // parallel to arena: the flow's position in that link's list

	links []linkState // per directed link

	dirty   []int32     // links whose flow set changed since the last recompute
	fresh   []freshFlow // flows started since the last recompute, not rated yet
	pending bool        // a recompute event is queued

	epoch  uint32
	region []int32 // flows of the region
	twins  []int32 // markShadows' open-addressed table of rl indices, by hash
	solved int     // region flows before the last widening: region[solved:] joined since
	rNew   []float64
	rBn    []int32
	rl     []rlink
	heap   []hent
	rLone  []bool // fixed by addFresh: alone on its path, its links not in rl
	// lone counts the flows of the region fixed by addFresh, loneLinks their links.
	lone, loneLinks int

	active, inflight int
	stats            Stats
	rates            []float64 // scratch: the rates of a path's links (Transport.Tail)
	tailMemo         struct {  // the last Transport.Tail computed (tail)
		bytes int64
		rate  float64
		rates []float64
		t     engine.Time
	}
	wireOf int64 // the size of the last flow sent, whose Transport.Wire is wire
	wire   float64

	bundles    []bundle     // by flow.bund of a bundle's slot (bundle.go)
	bundleFree []int32      // entries of bundles to reuse
	due        []sentMember // memberSent's scratch

	chkLoad, chkMax []float64 // Check scratch
	chkCnt          []int32

	afterRecompute func() // test hook, called at the end of every recompute
	fullSolve      bool   // benchmark baseline: every recompute solves every transmitting flow
}

// handler receives the network's engine events.
type handler struct{ n *Network }

func (h handler) HandleEvent(s *engine.Scheduler, ev engine.Event) {
	n := h.n
	n.stats.Events++
	switch ev.Arg & 3 {
	case evSent:
		a := uint64(ev.Arg)
		n.sent(ev.Target, int32(a>>33), int32(a>>2)&math.MaxInt32)
	case evArrive:
		n.arrive(ev.Target, ev.At)
	case evRecompute:
		n.recompute()
	}
}

// LinkTableBytes is the size of the network's table of directed links: what its events read
// at random in a large fabric, as the caller weighs whether looking ahead
// (engine.Scheduler.LookAhead) pays.
func (n *Network) LinkTableBytes() int64 {
	return int64(len(n.links)) * int64(unsafe.Sizeof(linkState{}))
}

var _ engine.Prefetcher = handler{}

// PrefetchLinks asks for the records of path's links (engine.Prefetch): a flow about to start
// on it.
func (n *Network) PrefetchLinks(path []int32) {
	engine.PrefetchEach(unsafe.Pointer(unsafe.SliceData(n.links)), unsafe.Sizeof(linkState{}), path)
}

// Prefetch asks for what the network's event of target and arg will read (engine.Prefetcher):
// for a "sent" event the flow's records and its path's links (the path's offset and length
// are in arg, and the path in the arena, which the flows in flight keep in the cache), for an
// arrival the flow's record. Sending is where a flow first touches its links again since its
// start: in a fabric of 16,384 GPUs most of the time of a send was waiting for them.
func (h handler) Prefetch(target int32, arg int64) {
	n := h.n
	switch arg & 3 {
	case evSent:
		a := uint64(arg)
		off, hops := int32(a>>33), int32(a>>2)&math.MaxInt32
		engine.Prefetch(unsafe.Pointer(&n.flows[target]))
		engine.Prefetch(unsafe.Pointer(&n.hot[target]))
		n.PrefetchLinks(n.arena[off : off+hops])
	case evArrive:
		engine.Prefetch(unsafe.Pointer(&n.flows[target]))
	}
}

type nopObserver struct{}

func (nopObserver) FlowSent(FlowID, engine.Time)    {}
func (nopObserver) FlowArrived(FlowID, engine.Time) {}

// New returns a network over g scheduled by s, reporting to obs (nil: nobody), with the
// default Options. It registers one handler with s.
func New(s *engine.Scheduler, g *route.Graph, obs Observer) *Network {
	return NewWithOptions(s, g, obs, Options{})
}

// NewWithOptions is New with options.
func NewWithOptions(s *engine.Scheduler, g *route.Graph, obs Observer, opt Options) *Network {
	if obs == nil {
		obs = nopObserver{}
	}
	nl := g.NumDirLinks()
	n := &Network{
		s:     s,
		g:     g,
		obs:   obs,
		opt:   opt,
		links: make([]linkState, nl),
	}
	for l := range nl {
		// With Transport.NanosecondClock, what full packets sent back to back make of the rate.
		n.links[l].capa = opt.Transport.PacketRate(g.Rate(int32(l)))
	}
	if opt.TrackBottlenecks {
		n.bobs, _ = obs.(BottleneckObserver)
		n.opt.Bundles = false // the observer is told each flow's bytes
	}
	n.h = s.Register(handler{n})
	return n
}

// Start begins a flow now over path (directed link ids, no link twice; copied), of bytes
// (0 is treated as 1 byte, as SimAI does; negative panics; with Options.Transport the links
// also carry the packets' headers), whose last byte arrives delay after it is sent (plus the
// last packet's Transport.Tail). tag is the caller's, returned by Tag.
//
// The flow's rate is set by the recompute that runs later at the same instant, after every
// event already queued for it: until then Rate reports 0. A flow with an empty path is sent
// by an event at the current instant, queued after those already there.
func (n *Network) Start(path []int32, bytes int64, delay engine.Time, tag int64) FlowID {
	if bytes < 0 {
		panic("fluid: Start with negative size " + strconv.FormatInt(bytes, 10))
	}
	if bytes == 0 {
		bytes = 1
	}
	if delay < 0 {
		panic("fluid: Start with negative delay " + delay.String())
	}
	n.checkPath("Start", path)
	h := int32(len(path))
	b := int32(-1)
	if n.opt.Bundles && h > 0 {
		b = n.bundleFor(path)
	}
	id := n.newSlot()
	if b >= 0 {
		n.joinBundle(b, id, bytes, delay, tag)
		return FlowID(id)
	}
	f, fh := &n.flows[id], &n.hot[id]
	if h > int32(fh.room) {
		n.newChunk(fh, h)
	}
	now := n.s.Now()
	f.rem, f.at, f.start = float64(n.opt.Transport.Wire(bytes))*8, now, now
	if n.opt.TrackBottlenecks {
		n.segAt[id] = now
	}
	f.bytes, f.tag, f.delay = bytes, tag, delay
	f.timer = engine.Timer{}
	fh.rate, fh.hops, fh.bn, fh.state, fh.w = 0, h, -1, stateActive, 1
	off := fh.off
	copy(n.arena[off:off+h], path)
	s, bn := n.join(id, off, path)
	n.active++
	n.inflight++
	n.stats.Started++
	if h == 0 {
		// Nothing limits it: sent at once (after the events already queued for now).
		f.timer = n.s.At(now, n.h, id, sentArg(off, 0))
		return FlowID(id)
	}
	n.fresh = append(n.fresh, freshFlow{rate: s, id: id, bn: bn})
	n.wake()
	return FlowID(id)
}

// newSlot takes a flow slot off the free list, or adds one.
func (n *Network) newSlot() int32 {
	if k := len(n.free); k > 0 {
		id := n.free[k-1]
		n.free = n.free[:k-1]
		return id
	}
	id := int32(len(n.flows))
	n.flows = append(n.flows, flow{})
	n.hot = append(n.hot, flowHot{bn: -1})
	if n.opt.TrackBottlenecks {
		n.segAt = append(n.segAt, 0)
	}
	return id
}

// newChunk gives flow fh a new arena chunk for a path of h links.
func (n *Network) newChunk(fh *flowHot, h int32) {
	room := max(h, 8)
	fh.off, fh.room = int32(len(n.arena)), uint8(min(room, math.MaxUint8))
	for range room {
		n.arena = append(n.arena, 0)
		n.apos = append(n.apos, 0)
	}
}

// join puts flow id, whose path is at arena offset off, on the links of path, and notes whether
// it is alone on all of them (flowHot.alone). It returns the rate and bottleneck the flow has
// if it is (for Network.fresh).
func (n *Network) join(id, off int32, path []int32) (rate float64, bottleneck int32) {
	alone, s, bn := true, math.Inf(1), int32(-1)
	for k, l := range path {
		lk := &n.links[l]
		switch len(lk.on) {
		case 0:
			// An idle link: no flow is bottlenecked here, nothing to seed (the new flow is
			// seeded anyway, as fresh).
		case 1:
			// The flow already here is no longer alone; if it has not been rated yet, it
			// no longer counts at its lone bottleneck either.
			if o := lk.on[0].f; n.hot[o].alone {
				n.hot[o].alone = false
				if b := n.flows[o].loneBn; b >= 0 {
					n.links[b].bnCnt--
				}
			}
			fallthrough
		default:
			// Flows bottlenecked here may have to slow down.
			n.markDirty(l)
			alone = false
		}
		if alone {
			// As solve would: the link's capacity less an outside load of 0.
			if c := max(lk.capa, 0); c < s || (c == s && l < bn) {
				s, bn = c, l
			}
		}
		n.apos[off+int32(k)] = int32(len(lk.on))
		lk.on = append(lk.on, entry{id, off + int32(k)})
	}
	n.hot[id].alone = alone
	if alone {
		n.flows[id].loneBn = bn
		if bn >= 0 {
			// Counted now, while the link's record is in the cache: apply would count it
			// after every other flow of the instant has started, a cache miss per flow
			// in a synchronised step.
			n.links[bn].bnCnt++
		}
	}
	return s, bn
}

// checkPath panics unless every link of path is a directed link of the graph and none repeats;
// op names the caller in the message.
func (n *Network) checkPath(op string, path []int32) {
	nl := int32(len(n.links))
	for i, l := range path {
		if l < 0 || l >= nl {
			panic("fluid: " + op + " with link " + strconv.Itoa(int(l)) + " out of range [0," + strconv.Itoa(int(nl)) + ")")
		}
		for _, m := range path[:i] {
			if m == l {
				panic("fluid: " + op + " with link " + strconv.Itoa(int(l)) + " twice in the path")
			}
		}
	}
}

func (n *Network) markDirty(l int32) {
	if !n.links[l].dirty {
		n.links[l].dirty = true
		n.dirty = append(n.dirty, l)
	}
}

// wake asks for the recompute of the current instant unless it is already asked for. It runs at
// the end of the instant (engine.AtInstantEnd), after every other event of this time, so all the
// changes of an instant are solved together once.
func (n *Network) wake() {
	if !n.pending {
		n.pending = true
		n.s.AtInstantEnd(n.h, 0, evRecompute)
	}
}

// sent handles the "sent" timer of flow id, whose path is arena[off : off+hops] (sentArg):
// the flow leaves every link of its path.
func (n *Network) sent(id, off, hops int32) {
	tailed := n.opt.Transport.Payload > 0 && hops > 1
	if tailed {
		// Read before the flow's records, on purpose (sentArg).
		n.rates = n.rates[:0]
		for _, l := range n.arena[off : off+hops] {
			n.rates = append(n.rates, n.links[l].capa)
		}
	}
	f, fh := &n.flows[id], &n.hot[id]
	if fh.state == stateBundle {
		n.memberSent(id, off, hops, tailed)
		return
	}
	if checkInvariants && (off != fh.off || hops != fh.hops) {
		panic("fluid: a sent event names another path than its flow's")
	}
	now := n.s.Now()
	if n.opt.TrackBottlenecks {
		n.closeSegment(id, now)
	}
	f.rem, f.at = 0, now
	if fh.bn >= 0 {
		n.links[fh.bn].bnCnt--
	}
	done := now + f.delay
	if tailed {
		done += n.tail(f.bytes, fh.rate)
	}
	if f.bytes != n.wireOf {
		n.wireOf, n.wire = f.bytes, float64(n.opt.Transport.Wire(f.bytes))
	}
	fh.rate, fh.bn, fh.state, fh.w = 0, -1, stateSent, 0
	n.leave(off, hops, n.wire)
	n.active--
	n.stats.Sent++
	n.reportSent(id, done, now)
}

// leave takes the flow or bundle whose path is arena[off : off+hops] off its links, which
// carried wire bytes of a flow that was sent.
func (n *Network) leave(off, hops int32, wire float64) {
	for k := range hops {
		l := n.arena[off+k]
		p := n.apos[off+k]
		list := n.links[l].on
		last := len(list) - 1
		if int(p) != last {
			e := list[last]
			list[p] = e
			n.apos[e.ai] = p
		}
		n.links[l].on = list[:last]
		n.links[l].sent += wire
		if last > 0 {
			// The flows left may speed up; a link left idle has nobody to seed.
			n.markDirty(l)
		}
	}
	if hops > 0 {
		n.wake()
	}
}

// reportSent tells the observer that flow id was sent now and schedules its arrival at done.
func (n *Network) reportSent(id int32, done, now engine.Time) {
	f := &n.flows[id]
	if n.opt.ArrivalAtSend {
		f.timer = engine.Timer{}
		n.obs.FlowSent(FlowID(id), now)
		n.arrive(id, done)
		return
	}
	f.timer = n.s.At(done, n.h, id, evArrive)
	n.obs.FlowSent(FlowID(id), now)
}

// tail is Transport.Tail(bytes, rate, n.rates), kept for the last arguments: the flows of a
// collective's step have one size, their rate is their first link's and their paths have a few
// shapes, so most sends ask for the tail just asked for. Tail uses the rate only up to the
// first link's; the kept one is cut the same way, so that rates above it share the entry.
func (n *Network) tail(bytes int64, rate float64) engine.Time {
	if !(rate > 0) || rate > n.rates[0] {
		rate = n.rates[0]
	}
	m := &n.tailMemo
	if bytes == m.bytes && rate == m.rate && slices.Equal(n.rates, m.rates) {
		return m.t
	}
	m.t = n.opt.Transport.Tail(bytes, rate, n.rates)
	m.bytes, m.rate, m.rates = bytes, rate, append(m.rates[:0], n.rates...)
	return m.t
}

// arrive reports the arrival of flow id at time at and frees its slot.
func (n *Network) arrive(id int32, at engine.Time) {
	n.inflight--
	n.stats.Arrived++
	n.obs.FlowArrived(FlowID(id), at)
	n.hot[id].state, n.flows[id].timer = stateFree, engine.Timer{}
	n.free = append(n.free, id)
}

// closeSegment ends flow id's current bottleneck segment at now (TrackBottlenecks).
func (n *Network) closeSegment(id int32, now engine.Time) {
	fh, at := &n.hot[id], &n.segAt[id]
	if fh.bn >= 0 && now > *at {
		bits := float64(fh.rate*float64(now-*at)) / 1e12
		n.links[fh.bn].bnBits += bits
		if n.bobs != nil {
			n.bobs.FlowBottleneck(FlowID(id), fh.bn, bits/8, now)
		}
	}
	*at = now
}

// sendDelay is the time to send rem bits at rate bits/s, rounded up to whole picoseconds, or
// Never when the flow cannot finish (rate 0) or not within the range of Time.
func sendDelay(rem, rate float64) engine.Time {
	if rem <= 0 {
		return 0
	}
	if !(rate > 0) {
		return engine.Never
	}
	d := math.Ceil(float64(rem*1e12) / rate)
	if !(d < 1<<62) {
		// Converting NaN or a value beyond the range of int64 to an integer gives a
		// different result on each platform.
		return engine.Never
	}
	return engine.Time(d)
}

// Tag is the caller's tag of flow f.
func (n *Network) Tag(f FlowID) int64 { return n.flows[f].tag }

// Rate is flow f's current rate in bits/s: 0 before its first recompute and once sent.
func (n *Network) Rate(f FlowID) float64 { return n.hot[n.carrier(int32(f))].rate }

// Bottleneck is the directed link that limits flow f now: a saturated link of its path on
// which no flow is faster. -1 before its first recompute and once sent.
func (n *Network) Bottleneck(f FlowID) int32 { return n.hot[n.carrier(int32(f))].bn }

// Path is flow f's path. The slice aliases the network's storage: do not modify or keep it.
func (n *Network) Path(f FlowID) []int32 {
	fh := &n.hot[n.carrier(int32(f))]
	return n.arena[fh.off : fh.off+fh.hops : fh.off+fh.hops]
}

// Bytes is flow f's size (1 for a flow started with 0).
func (n *Network) Bytes(f FlowID) int64 { return n.flows[f].bytes }

// StartTime is when flow f was started.
func (n *Network) StartTime(f FlowID) engine.Time { return n.flows[f].start }

// Remaining is the number of bytes of flow f not yet sent, now (fractional; 0 once sent; with
// Options.Transport, bytes on the wire: headers included).
func (n *Network) Remaining(f FlowID) float64 {
	fl, fh := &n.flows[f], &n.hot[f]
	if fh.state == stateMember {
		return n.memberRem(int32(f), n.s.Now()) / 8
	}
	if fh.state != stateActive {
		return 0
	}
	rem := fl.rem - float64(fh.rate*float64(n.s.Now()-fl.at))/1e12
	return max(rem, 0) / 8
}

// Reserve makes room for flows more flows in flight than the free slots hold, with their path
// room: a caller about to start many flows at once (an all-to-all's million) saves the flow
// table's growth by doubling, which copies it twice over. Flows started at once are also rated
// at once: the instant's list of new flows and the region its recompute solves get room for
// all of them too (their growth by doubling was 0.7 s of a 5 s all-to-all over 1,024 GPUs).
func (n *Network) Reserve(flows int) {
	if more := flows - len(n.free); more > 0 {
		n.flows = Grow(n.flows, more)
		n.hot = Grow(n.hot, more)
		if n.opt.TrackBottlenecks {
			n.segAt = Grow(n.segAt, more)
		}
		n.arena = Grow(n.arena, 8*more)
		n.apos = Grow(n.apos, 8*more)
	}
	n.fresh = Grow(n.fresh, flows)
	n.region = Grow(n.region, flows)
	n.rNew = Grow(n.rNew, flows)
	n.rBn = Grow(n.rBn, flows)
	n.rLone = Grow(n.rLone, flows)
}

// InFlightProgress counts the flows started and not yet arrived, each as the share of its
// bytes sent so far (1 once the last is out). It visits every flow slot: it is for progress
// reports, not for the event loop.
func (n *Network) InFlightProgress() float64 { return n.InFlightProgressWeighted(nil) }

// InFlightProgressWeighted is InFlightProgress with each flow's part multiplied by weight of
// its tag (nil: 1 for every flow), for callers whose unit of work is several flows.
func (n *Network) InFlightProgressWeighted(weight func(tag int64) float64) float64 {
	now, sum := n.s.Now(), 0.0
	for i := range n.hot {
		var part float64
		switch fh := &n.hot[i]; fh.state {
		case stateActive:
			fl := &n.flows[i]
			rem := fl.rem - float64(fh.rate*float64(now-fl.at))/1e12
			part = 1 - max(rem, 0)/(float64(n.opt.Transport.Wire(fl.bytes))*8)
		case stateMember:
			part = 1 - n.memberRem(int32(i), now)/(float64(n.opt.Transport.Wire(n.flows[i].bytes))*8)
		case stateSent:
			part = 1
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

// Active is the number of flows transmitting.
func (n *Network) Active() int { return n.active }

// InFlight is the number of flows started and not yet arrived.
func (n *Network) InFlight() int { return n.inflight }

// LinkLoad is the sum of the rates of the flows on directed link l, bits/s. O(flows on l).
func (n *Network) LinkLoad(l int32) float64 {
	sum := 0.0
	for _, e := range n.links[l].on {
		fh := &n.hot[e.f]
		sum += float64(fh.rate * float64(fh.w))
	}
	return sum
}

// LinkFlows is the number of flows transmitting on directed link l.
func (n *Network) LinkFlows(l int32) int {
	k := 0
	for _, e := range n.links[l].on {
		k += int(n.hot[e.f].w)
	}
	return k
}

// LinkBytes is the number of bytes directed link l has carried up to now (fractional: the
// transmitting flows contribute what they have sent so far). O(flows on l); the running total
// costs one addition per link of each sent flow.
func (n *Network) LinkBytes(l int32) float64 { return n.LinkBytesAt(l, n.s.Now()) }

// LinkBytesAt is what LinkBytes will be at time t ≥ Now if no event comes before t: the flows
// on l keep their rates until then. Samplers that read between events (engine's AtAdvance)
// use it to read the links at their own times. It changes nothing.
func (n *Network) LinkBytesAt(l int32, t engine.Time) float64 {
	sum := n.links[l].sent
	now := t
	for _, e := range n.links[l].on {
		if n.hot[e.f].state == stateBundle {
			b := &n.bundles[n.flows[e.f].bund]
			for _, m := range b.fin[b.head:] {
				rem := n.memberRem(m.id, now)
				sum += float64(n.opt.Transport.Wire(n.flows[m.id].bytes)) - float64(rem/8)
			}
			continue
		}
		f := &n.flows[e.f]
		rem := f.rem - float64(n.hot[e.f].rate*float64(now-f.at))/1e12
		sum += float64(n.opt.Transport.Wire(f.bytes)) - float64(max(rem, 0)/8)
	}
	return sum
}

// BottleneckBytes is the number of bytes sent over all flows while directed link l was their
// bottleneck, counted at the ends of their segments (see BottleneckObserver). It is 0 unless
// the network was built with Options.TrackBottlenecks.
func (n *Network) BottleneckBytes(l int32) float64 {
	return n.links[l].bnBits / 8
}

// Stats returns the network's counters.
func (n *Network) Stats() Stats { return n.stats }

// Graph is the graph the network runs over.
func (n *Network) Graph() *route.Graph { return n.g }

// keptRoom is the least capacity DropTaken leaves a queue it shrinks; a queue with no more room
// than this keeps it.
const keptRoom = 64

// DropTaken drops the entries that a queue kept as a slice and the index of its head has taken,
// once they are half of it (or all of it), and returns the queue and its new head: a queue that
// never drains (a bundle's members, a congested link's markers in package ccfluid) then holds
// what is queued, not everything ever queued. Each entry is moved at most once per entry taken.
//
// When what is left is an eighth of the queue's capacity or less, it moves to a new slice of
// twice its length (keptRoom at least): a queue that once held a long backlog does not keep
// that room for the rest of the run. The congestion model's links kept the room of their
// longest backlog: SimAI's example on 9,216 GPUs under the shipped SimAI.conf held 56 MB of
// weight changes' lists at 169 ms of its iteration (its first 30 M events), 24 MB now, and
// more as more links met longer backlogs. The bounds are loose on purpose: shrinking at a
// quarter with 16 entries kept took 45 MB off the live heap at 169 ms but added 60–75 MB to
// the peak resident memory, because the lists then shrank and grew again with every backlog,
// and the garbage of that churn is what the collector lets the heap grow by
// (docs/performance.md, "Memory").
func DropTaken[T any, I ~int | ~int32](q []T, head I) ([]T, I) {
	if head == 0 || int(head)*2 < len(q) {
		return q, head
	}
	rest := len(q) - int(head)
	if c := cap(q); c > keptRoom && rest*8 <= c {
		t := make([]T, rest, max(2*rest, keptRoom))
		copy(t, q[head:])
		return t, 0
	}
	return q[:copy(q, q[head:])], 0
}

// Grow returns s with room for n more elements, as slices.Grow does, but without writing zeros
// over the room: slices.Grow appends n zeros, which touches every page of a fresh allocation at
// once, while make takes memory the allocator knows is already zero as it is. For the tables a
// million-flow all-to-all reserves at once (Reserve: 100 MB and more) that writing cost more
// than the rest of their start, and the garbage collector, which the allocation starts, signals
// the writing thread over and over to stop it for a stack scan (alltoall-1024 with ideal
// sharing: 5.9–6.1 s against 5.1–5.2 s, docs/performance.md).
func Grow[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	t := make([]T, len(s), len(s)+n)
	copy(t, s)
	return t
}
