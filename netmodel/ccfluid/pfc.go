package ccfluid

import (
	"errors"
	"math"
	"slices"

	"simd/cc"
	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// pfcSwitch is the PFC state of one switch: its shared buffer (cc.SwitchBuffer) and, per port,
// the egress link (port p sends on egress[p] and receives on its reverse).
type pfcSwitch struct {
	node   int32
	buf    *cc.SwitchBuffer
	egress []int32
	ports  []pfcPortState
	res    float64 // reserve per port
	off    float64 // resume offset
	bound  float64 // total backlog below which no port can reach its pause threshold
	flip   []int32 // scratch: ports whose pause state changes
	active []int32 // ports some feed counts in, or paused
	stale  []int32 // egress links whose feeds' slopes are to be set again (refreshFeeds)
	// backlogged lists the egress links whose queue holds or gains bytes, pausedPorts the
	// ports paused now: a check visits only those, not every port.
	backlogged  []int32
	pausedPorts []int32
	paused      int // ports paused now
	// The switch's total backlog as a line, kept up to date by every change of an egress
	// queue's slope (linkDirty), so that a quiet switch is checked in O(1): tot at totAt,
	// growing at totSlope bytes/s. A full check sets it again from the queues' own lines.
	tot, totSlope float64
	totAt         engine.Time
	// totSlack is how far below the queues the total's line may have fallen since it was last
	// set from them, bytes (linkDirty; the bound of pfcbound.go adds it).
	totSlack float64
	checkT   engine.Timer
	dirty    bool
	// The occupancy bound (pfcbound.go): no port holds more than mub bytes at mubAt, and none
	// gains faster than arrB bytes/s, what the switch's backlogged queues receive, nor, where
	// queues pass on what leaves them, than inB, the fastest link into the switch; pool is
	// its buffer's shared pool and maxMul its ports' largest 2^shift.
	mub, arrB, inB float64
	mubAt          engine.Time
	pool, maxMul   float64
}

// pfcPortState is what a check reads and writes of one port, together in one cache line: a
// switch under load has tens of active ports, and a check walks them several times.
type pfcPortState struct {
	u, du  float64 // ingress occupancy at time at, and its slope (bytes/s): its feeds' sum
	told   float64 // the occupancy the buffer was last told (cc.SwitchBuffer.SetIngress)
	invMul float64 // 2^−shift (exact: a power of two)
	mul    float64 // 2^shift
	// cap is a paused port's shared use when it paused: above it its occupancy is headroom,
	// which the switch's shared use does not count (cc.SwitchBuffer.SetPaused).
	cap    float64
	at     engine.Time
	feeds  int32 // the feeds counted in u and du (feeder.counted)
	act    bool  // in active
	paused bool  // as the buffer has it
}

// sharedUse is the port's use of the shared pool, its occupancy above the reserve less its
// headroom use, and that use's slope (cc.SwitchBuffer's GetSharedUsed): while a paused port
// holds more than its cap, the shared use stays at the cap, what comes in fills the headroom
// and what leaves empties it first. Counting headroom as shared would lower every other port's
// threshold below what the buffer's decisions use, and a check would be armed for a crossing
// that has already passed, or for none.
func (ps *pfcPortState) sharedUse(res float64) (y, dy float64) {
	y, dy = ps.u-res, ps.du
	if y <= 0 {
		return 0, 0
	}
	if ps.paused && (y > ps.cap || y == ps.cap && dy > 0) {
		return ps.cap, 0
	}
	return y, dy
}

// advance brings the port's occupancy line to now.
func (ps *pfcPortState) advance(now engine.Time) {
	if now > ps.at {
		ps.u += float64(ps.du * secs(now-ps.at))
		ps.at = now
	}
}

// feedMoved adds d bytes and ds bytes/s to the line of feed fd's port at now, counting the
// feed there if it was not.
func (sw *pfcSwitch) feedMoved(fd *feeder, now engine.Time, d, ds float64) {
	ps := &sw.ports[fd.port]
	ps.advance(now)
	ps.u += d
	ps.du += ds
	if d > 0 {
		sw.mub += d // a port's line set up to its holdings (advanceFeeds) rises at once: so may the largest
	}
	if !fd.counted {
		fd.counted = true
		ps.feeds++
	}
	sw.activate(fd.port)
}

// feedGone takes feed fd, whose holding and slope are now 0 and were taken off its port's
// line, off the port's count; a port no feed counts in holds nothing and gains nothing,
// exactly.
func (sw *pfcSwitch) feedGone(fd *feeder) {
	if !fd.counted {
		return
	}
	fd.counted = false
	ps := &sw.ports[fd.port]
	if ps.feeds--; ps.feeds == 0 {
		ps.u, ps.du = 0, 0
	}
}

// buildSwitches gives every packet switch a shared buffer. NVSwitches get none: SimAI's
// NVSwitches never send PFC frames. Nor does a switch whose buffer is not larger than its
// ports' headroom and reserve: SimAI's ns-3 never pauses it (cc.ErrNoSharedPool); such
// switches are counted (SwitchesWithoutPFC).
func (n *Network) buildSwitches() error {
	for x := range int32(n.g.NumNodes()) {
		if n.g.Kind(x) != topo.Switch {
			continue
		}
		_, dl := n.g.Adjacent(x)
		rates := make([]float64, len(dl))
		delays := make([]engine.Time, len(dl))
		for p, l := range dl {
			rates[p], delays[p] = n.g.Rate(l), n.g.Delay(l)
		}
		cfg := cc.DefaultSwitchBuffer(n.cfg.BufferBytes, rates, delays, n.cfg.NICRate)
		if err := cfg.Validate(); errors.Is(err, cc.ErrNoSharedPool) {
			n.noPool++
			continue
		} else if err != nil {
			return err
		}
		w := &pfcSwitch{node: x, buf: cc.NewSwitchBuffer(&cfg), egress: slices.Clone(dl),
			res: cfg.ReserveBytes, off: cfg.ResumeOffset, bound: math.Inf(1), ports: make([]pfcPortState, len(dl))}
		w.pool = w.buf.SharedPool()
		for p := range dl {
			mul := math.Ldexp(1, int(w.buf.Shift(p)))
			w.ports[p].mul, w.ports[p].invMul = mul, 1/mul
			// A port pauses when its own shared use U−res reaches (pool − shared)/mul, and
			// U ≤ total, shared ≤ total: so the total must reach (pool + mul·res)/(mul + 1).
			w.bound = min(w.bound, (w.pool+float64(mul*w.res))/(mul+1))
			w.maxMul = max(w.maxMul, mul)
			w.inB = max(w.inB, n.g.Rate(route.Reverse(dl[p]))/8)
		}
		id := int32(len(n.sw))
		for p, l := range dl {
			n.links[l].outSw = id
			in := route.Reverse(l)
			n.links[in].inSw, n.links[in].inPort = id, int32(p)
		}
		n.sw = append(n.sw, *w)
	}
	return nil
}

// setBacklogged adds egress link l to or removes it from the backlogged list.
func (sw *pfcSwitch) setBacklogged(l int32, links *[]link, on bool) {
	ls := *links
	if on {
		ls[l].blIdx = int32(len(sw.backlogged))
		sw.backlogged = append(sw.backlogged, l)
		return
	}
	i := ls[l].blIdx
	last := sw.backlogged[len(sw.backlogged)-1]
	sw.backlogged[i] = last
	ls[last].blIdx = i
	sw.backlogged = sw.backlogged[:len(sw.backlogged)-1]
}

// activate adds port p to the active list.
func (sw *pfcSwitch) activate(p int32) {
	if ps := &sw.ports[p]; !ps.act {
		ps.act = true
		sw.active = append(sw.active, p)
	}
}

// advanceTotal brings the switch's total-backlog line to now.
func (sw *pfcSwitch) advanceTotal(now engine.Time) {
	if now > sw.totAt {
		sw.tot = max(sw.tot+float64(sw.totSlope*secs(now-sw.totAt)), 0)
		sw.totAt = now
	}
}

// SwitchesWithoutPFC is the number of packet switches that never pause a port because
// BUFFER_SIZE is not larger than their ports' headroom and reserve, as in SimAI's ns-3
// (cc.ErrNoSharedPool); 0 without PFC.
func (n *Network) SwitchesWithoutPFC() int { return n.noPool }

func (n *Network) swDirty(w int32) {
	if !n.sw[w].dirty {
		n.sw[w].dirty = true
		n.dirtySw = append(n.dirtySw, w)
	}
	n.wake()
}

// checkSwitch decides PFC frames for switch w now and arms its next check.
//
// The ingress occupancy of port p is the part of the switch's egress queues that came in
// through p, as advanceFeeds keeps it, summed in the port's line. Between events arrivals and
// departure shares are constant, so occupancies are linear and the next threshold crossing is
// solved, not polled.
func (n *Network) checkSwitch(w int32, now engine.Time) {
	sw := &n.sw[w]
	sw.advanceTotal(now)
	if sw.paused == 0 && sw.tot < sw.bound {
		d := engine.Never
		if sw.totSlope > 0 {
			d = max(ceilPs((sw.bound-sw.tot)/sw.totSlope), 1)
		}
		n.setTimer(&sw.checkT, d, w, evSwitch)
		return
	}
	n.stats.SwitchChecks++
	// Weights a port no flow goes on from has not applied yet (reshape.go) change what its
	// feeds lose; links whose feeds changed since the last check get their slopes again
	// (keepFeeds). The total-backlog line is set again from the queues, each on its own line.
	n.keepFeeds(sw, now)
	total := 0.0
	for _, l := range sw.backlogged {
		lk := &n.links[l]
		_, slope := rates(lk.qs.q, lk.arr, n.capOf(l))
		total += max(lk.qs.q+float64(slope*secs(now-lk.qs.at)), 0)
	}
	sw.tot, sw.totSlack = total, 0
	for _, p := range sw.pausedPorts {
		sw.activate(p)
	}
	// The shared use (occupancy above the reserve) summed, with its slope, and the largest of
	// them times its port's 2^shift: what CannotPauseGiven and nextCrossing need. A port no
	// feed counts in leaves the active list (and the buffer is told it holds nothing).
	shared, dshared, most, umax := 0.0, 0.0, 0.0, 0.0
	for i := 0; i < len(sw.active); i++ {
		p := sw.active[i]
		ps := &sw.ports[p]
		if ps.feeds == 0 && !ps.paused {
			ps.act = false
			if ps.told != 0 {
				ps.told = 0
				sw.buf.SetIngress(int(p), 0)
			}
			last := len(sw.active) - 1
			sw.active[i] = sw.active[last]
			sw.active = sw.active[:last]
			i--
			continue
		}
		ps.advance(now)
		u := ps.u
		umax = max(umax, u)
		if y, dy := ps.sharedUse(sw.res); y > 0 {
			shared += y
			dshared += dy
			most = max(most, float64(y*ps.mul))
		}
	}
	// Decide every port on the same state, then apply: the decisions of one instant are
	// simultaneous (and asking every port before changing any keeps this O(ports)). Where no
	// port is paused and none is near its level, as in a switch that only queues, the buffer
	// says so without asking each port.
	sw.flip = sw.flip[:0]
	decide := sw.active
	if sw.paused == 0 && sw.buf.CannotPauseGiven(shared, most) {
		decide = nil
	}
	// The buffer is told the occupancies that changed only when it is asked: its answers
	// read every port's (summed in port order, so whatever the order they were told in), and
	// most checks ask none. Telling it at every check was about 5% of the 9,216-GPU run's profile
	// (docs/performance.md, "MoE storms").
	for _, p := range decide {
		ps := &sw.ports[p]
		if told := max(ps.u, 0); ps.told != told {
			ps.told = told
			sw.buf.SetIngress(int(p), ps.u)
		}
	}
	for _, p := range decide {
		if sw.buf.ShouldPause(int(p)) || sw.buf.ShouldResume(int(p)) {
			sw.flip = append(sw.flip, p)
		}
	}
	for _, p := range sw.flip {
		in := route.Reverse(sw.egress[p])
		pause := !sw.buf.Paused(int(p))
		if pause && pauseCheck != nil {
			pauseCheck(n, w, p, now)
		}
		sw.buf.SetPaused(int(p), pause)
		sw.ports[p].paused = pause
		if pause {
			sw.ports[p].cap = max(sw.ports[p].u-sw.res, 0) // as SetPaused freezes it from what it was told
			sw.pausedPorts = append(sw.pausedPorts, p)
		} else if i := slices.Index(sw.pausedPorts, p); i >= 0 {
			sw.pausedPorts = slices.Delete(sw.pausedPorts, i, i+1)
		}
		if pause {
			sw.paused++
			n.stats.Pauses++
			n.s.At(now+n.frameLag(in), n.h, in, evPause|1<<8)
		} else {
			sw.paused--
			n.stats.Resumes++
			n.s.At(now+n.frameLag(in), n.h, in, evPause)
		}
	}
	next := n.nextCrossing(sw, shared, dshared)
	if n.pfcArr != nil {
		next = n.boundFrom(w, umax, now, next)
	}
	n.setTimer(&sw.checkT, next, w, evSwitch)
}

// frameLag is how long after a switch decides a PFC frame for the port that receives on link in
// the link's arrivals at the switch stop or start again, in the fluid's time (the senders'
// frame, in which what a link sends reaches the queue behind it at once): the frame's way to
// the sender, d, and the way of the sender's last (or first) bytes back, d — the fluid has no
// propagation between queues, so the second d is added here — and one packet time on the
// link: ns-3 counts a packet at a port when it has been received whole, so its switch sees a
// crossing half a packet after the fluid does, and the sender finishes the packet it is
// sending (half a packet on average); on resume the port's first packet counts a packet time
// after the sender starts it. The headroom a pause fills is the sender's rate times that lag
// (SetupNetwork sizes it as 3 one-way bandwidth-delay products), and the pause lasts until it
// has drained: with one d, pauses were half as long and twice as many as ns-3's
// (docs/congestion-model.md, "PFC").
func (n *Network) frameLag(in int32) engine.Time {
	tr := n.cfg.Transport
	pkt := tr.Full()
	if pkt == 0 {
		pkt = int64(n.cfg.PacketBytes)
	}
	return 2*n.kin[in].delay + ceilPs(tr.PacketSecs(pkt, n.g.Rate(in)))
}

// pauseCheck, when set (by tests), is called at every pause a check decides, before the port
// is paused.
var pauseCheck func(n *Network, w, p int32, now engine.Time)

// nextCrossing is the time until the next PFC decision of sw can change, with every ingress
// occupancy moving on its line (shared and dshared: the active ports' use above the reserve,
// summed, and its slope): a port reaching its pause or resume level, or an occupancy
// crossing the reserve (which changes the shared use's slope).
func (n *Network) nextCrossing(sw *pfcSwitch, shared, dshared float64) engine.Time {
	best := math.Inf(1)
	// The time for v to rise through 0 at rate dv. A check weighs some 300 such times and
	// keeps the least, so a candidate is divided out only if it may beat the best so far:
	// −v ≤ best·dv with a relative slack of 10⁻⁹, far above the rounding of either side, so
	// that no quotient below best is ever skipped and the result is the plain minimum's.
	consider := func(v, dv float64) {
		if v < 0 && dv > 0 && -v <= float64(float64(best*dv)*(1+1e-9)) {
			best = min(best, -v/dv)
		}
	}
	const eps = 1e-3 // bytes past the level, so the check lands on the far side
	// Ports outside the active list hold nothing and gain nothing: they cannot reach a level.
	for _, p := range sw.active {
		ps := &sw.ports[p]
		u, du := ps.u, ps.du
		if u < sw.res {
			consider(u-sw.res-eps, du)
		} else {
			consider(sw.res-u-eps, -du)
		}
		// A paused port's headroom drains before its shared use falls: the shared use's
		// slope changes where the occupancy comes down to the reserve plus its cap.
		if ps.paused && u-sw.res > ps.cap {
			consider(ps.cap-(u-sw.res)-eps, -du)
		}
		// Multiplying by 2^−shift is dividing by 2^shift, exactly.
		g := (u - sw.res) - float64((sw.pool-shared)*ps.invMul)
		dg := du + float64(dshared*ps.invMul)
		if ps.paused {
			consider(-(g+sw.off)-eps, -dg)
		} else {
			consider(g-eps, dg)
		}
	}
	if math.IsInf(best, 1) {
		return engine.Never
	}
	return max(ceilPs(best), 1)
}

// applyPause: a PFC frame reaches the sender of link l. Paused, the link sends nothing; its
// queue keeps receiving, and every flow behind it stops at it (head-of-line blocking).
func (n *Network) applyPause(l int32, pause bool, now engine.Time) {
	lk := &n.links[l]
	if lk.paused == pause {
		return
	}
	n.advanceLink(l, now)
	n.feedsChanging(l)
	if pause && n.departures {
		n.noteArrivals(l, now, lk.arr, 0) // its queue may start to grow here
	}
	lk.paused = pause
	if n.reshape() {
		n.sharesDirty(l) // what it sends its flows' next hops moves with its rate
	} else {
		for _, e := range lk.on {
			n.applyFlow(e.f, now)
		}
	}
	n.nicDirty(l)
	n.linkDirty(l)
	if n.pfc != nil {
		from := n.g.From(l)
		n.pfc.PFC(now, from, n.g.Kind(from), n.ifIndex(l), pause)
	}
}

// ifIndex is the ns-3 device index of directed link l at its sending node: devices are added
// in the order of the topology file's links, after the loopback device 0.
func (n *Network) ifIndex(l int32) int {
	if n.ifidx == nil {
		n.ifidx = make([]int32, len(n.links))
	}
	if v := n.ifidx[l]; v > 0 {
		return int(v)
	}
	x := n.g.From(l)
	_, dl := n.g.Adjacent(x)
	order := slices.Clone(dl)
	slices.SortFunc(order, func(a, b int32) int { return route.LinkIndex(a) - route.LinkIndex(b) })
	for i, m := range order {
		n.ifidx[m] = int32(i + 1)
	}
	return int(n.ifidx[l])
}

// departureShares is how egress link l of a PFC switch shares what it sends among the ports its
// bytes came in through: with reshaping, by its flows' departure weights (what each brought in
// when the bytes now leaving arrived: the queue is FIFO, reshape.go); otherwise by the ports'
// arrivals, or, with none, by what each holds.
type departureShares struct {
	by  int8 // 0 weights, 1 arrivals, 2 held bytes
	sum float64
}

func (n *Network) departureShares(l int32) departureShares {
	lk := &n.links[l]
	if n.reshape() && n.weighted(l) && n.weights[l].wsum > 0 {
		return departureShares{0, n.weights[l].wsum}
	}
	if lk.arr > 0 {
		return departureShares{1, lk.arr}
	}
	held := 0.0
	for i := range lk.feeds {
		held += lk.feeds[i].held
	}
	return departureShares{2, held}
}

// of is feed fd's share.
func (s departureShares) of(fd *feeder) float64 {
	var x float64
	switch s.by {
	case 0:
		x = fd.w
	case 1:
		x = fd.arr
	default:
		x = fd.held
	}
	if s.sum <= 0 {
		return 0
	}
	return x / s.sum
}

// advanceFeeds brings to the queue's time what each ingress port of a PFC switch holds of
// egress link l's queue: it received the port's arrivals and sent the port's share of what the
// link sends (departureShares), so that a port's occupancy moves continuously, as the bytes that
// came in through it arrive and leave. Sharing the queue by the current shares instead (every
// port owning the part of the queue its flows' shares give it) jumped whenever a flow's rate or
// weight changed, by up to the whole queue times the change of share; with a switch's ports
// near their dynamic thresholds those jumps paused and resumed them many times a nanosecond,
// each frame changing the rates that moved the shares again (a 9,216-GPU AlibabaHPN fabric
// under SimAI's DCQCN and PFC stalled at 58.8 ms that way). The holdings are scaled to sum to
// the queue, which the shares' rounding and weights applied late (reshape.go) would otherwise
// let drift; an empty queue holds nothing.
//
// The holdings are kept at n.feedAt[l] and brought forward only where what they move by is
// about to change — the link's arrivals (setArrival), its pause (applyPause), its weights
// (setWeight, weightsAreArrivals), its queue emptying — each time after the queue itself was
// brought to now: between two of those, arrivals, capacity and shares are constant and the
// queue does not empty, so the holdings move linearly. Each such change marks the link stale,
// and the switch's next check sets its feeds' slopes again (refreshFeeds).
//
// The switch keeps each port's occupancy as a line, the sum of what its feeds count there
// (feeder.line and feeder.slope), so that a check reads the ports without visiting every
// queue: what a holding moved other than along the slope its port counts for it — the
// scaling, the floor at 0, a slope not yet set again — is added to the port's line here, once
// it is more than rounding (feedSlack).
func (n *Network) advanceFeeds(l int32) {
	lk, fc := &n.links[l], &n.feedAt[l]
	now := lk.qs.at
	if now <= fc.at {
		return
	}
	dt := secs(now - fc.at)
	if lk.qs.q < emptyEps {
		if fc.held {
			n.emptyFeeds(l)
		}
		fc.at = now
		return
	}
	fc.at, fc.held = now, true
	sw := &n.sw[lk.outSw]
	out, _ := rates(lk.qs.q, lk.arr, n.capOf(l))
	sh := n.departureShares(l)
	sum := 0.0
	for i := range lk.feeds {
		fd := &lk.feeds[i]
		sent := float64(out * sh.of(fd))
		gain := float64(float64((fd.arr-sent)*dt) / 8)
		fd.held = max(fd.held+gain, 0)
		sum += fd.held
	}
	k := 1.0
	if sum > 0 && sum != lk.qs.q {
		k = lk.qs.q / sum
	}
	for i := range lk.feeds {
		fd := &lk.feeds[i]
		fd.held = float64(fd.held * k)
		fd.line += float64(fd.slope * dt)
		if d := fd.held - fd.line; d > feedSlack || d < -feedSlack {
			sw.feedMoved(fd, now, d, 0)
			fd.line = fd.held
		}
	}
}

// feedSlack is how far, in bytes, a feed's holding may drift from what its port's line counts
// for it before the line is told: the scaling of the holdings moves them by rounding errors
// at every step, which need not cost a visit to the port.
const feedSlack = 1e-3

// refreshFeeds sets the slopes of egress link l's feeds, whose queue is at now, to what its
// arrivals, capacity and departure shares give them now, and its switch's port lines with them.
func (n *Network) refreshFeeds(l int32) {
	lk := &n.links[l]
	n.advanceFeeds(l) // (which may empty them, and mark them stale again)
	n.feedAt[l].stale = false
	now := lk.qs.at
	sw := &n.sw[lk.outSw]
	out, slope := rates(lk.qs.q, lk.arr, n.capOf(l))
	shaping := lk.qs.q >= emptyEps || slope > 0
	sh := n.departureShares(l)
	for i := range lk.feeds {
		fd := &lk.feeds[i]
		s := 0.0
		if shaping {
			s = float64((fd.arr - float64(out*sh.of(fd))) / 8)
		}
		if s != fd.slope {
			sw.feedMoved(fd, now, 0, s-fd.slope)
			fd.slope = s
		}
	}
}

// feedsChanging is called where what egress link l's feeds gain per second is about to change
// (its arrivals, pause or weights), its queue already at now: their holdings are brought to now
// and their slopes set again at the switch's next check. A link without feeds does nothing.
func (n *Network) feedsChanging(l int32) {
	if len(n.links[l].feeds) > 0 {
		n.advanceFeeds(l)
		n.feedsStale(l)
	}
}

// feedsStale records that what egress link l's feeds gain per second is about to change: its
// switch sets their slopes again at its next check.
func (n *Network) feedsStale(l int32) {
	if fc := &n.feedAt[l]; !fc.stale {
		fc.stale = true
		sw := &n.sw[n.links[l].outSw]
		sw.stale = append(sw.stale, l)
	}
}

// feedClock is when egress link l's feeders' holdings were last brought forward, whether any
// of them may hold bytes, and whether their slopes are to be set again.
type feedClock struct {
	at          engine.Time
	held, stale bool
}

// emptyFeeds records that egress link l's queue is empty at the queue's time: no port holds any
// of it, its feeds gain nothing until its slopes are set again, and the ports that neither send
// to it nor weigh in its departures leave its list.
func (n *Network) emptyFeeds(l int32) {
	lk, fc := &n.links[l], &n.feedAt[l]
	now := lk.qs.at
	dt := secs(now - fc.at)
	fc.at, fc.held = now, false
	sw := &n.sw[lk.outSw]
	for i := len(lk.feeds) - 1; i >= 0; i-- {
		fd := &lk.feeds[i]
		if fd.counted {
			sw.feedMoved(fd, now, -(fd.line + float64(fd.slope*dt)), -fd.slope)
		}
		fd.held, fd.line, fd.slope = 0, 0, 0
		sw.feedGone(fd)
		if fd.arr < 1e-9*lk.capa && fd.w < 1e-9*lk.capa {
			n.dropFeed(l, i)
		}
	}
	n.feedsStale(l)
}

// dropFeed takes feed i off egress link l's list, with what its port counts for it.
func (n *Network) dropFeed(l int32, i int) {
	lk := &n.links[l]
	sw := &n.sw[lk.outSw]
	fd := &lk.feeds[i]
	if fd.counted {
		sw.feedMoved(fd, lk.qs.at, -fd.line, -fd.slope)
		sw.feedGone(fd)
	}
	last := len(lk.feeds) - 1
	lk.feeds[i] = lk.feeds[last]
	lk.feeds = lk.feeds[:last]
}
