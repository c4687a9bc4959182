package chakra

import (
	"fmt"
	"math"

	"simd/ccl"
	"simd/engine"
)

// Comm is a collective the executor asks the network to run: op on Ranks (ascending), Bytes as
// the trace's comm_size (the whole buffer for all-reduce, all-gather and reduce-scatter; what
// each rank sends to all for all-to-all, as ccl.Request.Bytes). Group is the pg_name ("" for
// every rank) and Name the node's name on the group's lowest rank, for records.
type Comm struct {
	Op    ccl.Op
	Ranks []int32
	Bytes int64
	Group string
	Name  string
	// Seq numbers the collectives in the order they start, from 0.
	Seq int
}

// Network runs the communication of a trace. done is called from an engine event when the
// collective (every flow of every member) or the send has arrived; it may also be called before
// the method returns. An error stops the run.
type Network interface {
	Collective(c Comm, done func()) error
	Send(src, dst int32, bytes int64, done func()) error
}

// ExecOptions are how compute and memory nodes are timed.
type ExecOptions struct {
	// PeakTFLOPS, when above 0, times GPU COMP nodes that carry num_ops with ASTRA-sim's
	// roofline: num_ops / min(MemGBps·1e9·num_ops/tensor_size, PeakTFLOPS·1e12) s (MemGBps 0:
	// compute-bound only). Nodes without num_ops, and CPU ops, take duration_micros.
	PeakTFLOPS float64
	// MemGBps, when above 0, is the local memory bandwidth: MEM_LOAD/STORE take
	// tensor_size/MemGBps; 0: they take no time.
	MemGBps float64
}

// Observer sees every node of a trace that completes: rank, the node as the file has it, and
// when it started and ended. Compute says it ran on the rank's GPU compute or CPU slot; the
// others are communication (collectives, sends, receives, memory). It is for timelines: an
// executor without one records nothing.
type Observer interface {
	NodeDone(rank int, n *Node, compute bool, start, end engine.Time)
}

// RankResult is what one rank did: ASTRA-sim's "sys[r] finished, T cycles, exposed
// communication T − compute cycles".
type RankResult struct {
	Rank int
	// Finish is when its last node completed; Compute the sum of its GPU COMP times; Exposed
	// = Finish − Compute.
	Finish, Compute, Exposed engine.Time
	// Nodes is how many of its nodes completed, of Total.
	Nodes, Total int
}

// Executor runs a checked trace on a scheduler. Per rank, dependency-free nodes issue in
// ascending id order when the hardware they need is free: one CPU op, one GPU compute and one
// communication node (COLL, SEND, MEM) in flight; RECV and METADATA need none.
type Executor struct {
	t    *Trace
	s    *engine.Scheduler
	net  Network
	opt  ExecOptions
	h    engine.HandlerID
	rk   []rankState
	coll [][]*collInst // per group, per occurrence
	p2p  map[p2pKey]*p2pState
	seq  int
	err  error
	// obs sees completed nodes (SetObserver); started holds, with it, each node's start per rank.
	obs     Observer
	started [][]engine.Time
	// ended is called once, from the event that completes the last node (SetEnded).
	ended func()
	// the completion queue: nodes done, handled in order without recursion
	doneQ    []ref
	draining bool
	left     int // nodes not yet done
}

type ref struct{ r, i int32 }

type rankState struct {
	left    []int32 // unfinished parents per node
	ready   [slots]idHeap
	busy    [slots]bool
	issued  []int32 // per group: collectives issued
	done    int
	finish  engine.Time
	compute engine.Time
}

// collInst is the k-th collective of a group: the members that have issued it.
type collInst struct {
	arrived int
	nodes   []ref
	first   ref
}

// p2pState matches sends with receives of one key: data arrived and not yet received, and
// receives issued and waiting.
type p2pState struct {
	arrived int
	waiting []ref
}

// NewExecutor prepares t to run on s over net.
func NewExecutor(t *Trace, s *engine.Scheduler, net Network, opt ExecOptions) *Executor {
	e := &Executor{t: t, s: s, net: net, opt: opt, p2p: map[p2pKey]*p2pState{}}
	e.h = s.Register(e)
	e.rk = make([]rankState, len(t.ranks))
	e.coll = make([][]*collInst, len(t.groupList))
	for r := range e.rk {
		p := &t.ranks[r]
		st := &e.rk[r]
		st.left = make([]int32, len(p.ops))
		st.issued = make([]int32, len(t.groupList))
		for i := range p.ops {
			st.left[i] = p.ops[i].parents
		}
		e.left += len(p.ops)
	}
	return e
}

// SetObserver hangs o on the run (before Start); nodes that take no time (METADATA, INVALID)
// are not reported.
func (e *Executor) SetObserver(o Observer) {
	e.obs = o
	e.started = make([][]engine.Time, len(e.rk))
	for r := range e.rk {
		e.started[r] = make([]engine.Time, len(e.rk[r].left))
	}
}

// SetEnded asks for f to be called, from the engine event that completes the trace's last
// node, when every node is done (not when the run stops or fails before).
func (e *Executor) SetEnded(f func()) { e.ended = f }

// Start issues every rank's dependency-free nodes at the scheduler's current time.
func (e *Executor) Start() {
	e.draining = true // completions at once wait for the loop below
	for r := range e.rk {
		st := &e.rk[r]
		st.finish = e.s.Now()
		for i, n := range st.left {
			if n == 0 {
				e.ready(int32(r), int32(i))
			}
		}
	}
	for r := range e.rk {
		e.issue(int32(r))
	}
	e.draining = false
	e.drain()
}

// Err is the error that stopped the run, if any.
func (e *Executor) Err() error { return e.err }

// Done reports whether every node of every rank completed.
func (e *Executor) Done() bool { return e.left == 0 && e.err == nil }

// Results are the per-rank figures, up to now for an unfinished run.
func (e *Executor) Results() []RankResult {
	out := make([]RankResult, len(e.rk))
	for r := range e.rk {
		st := &e.rk[r]
		out[r] = RankResult{Rank: r, Finish: st.finish, Compute: st.compute, Exposed: st.finish - st.compute,
			Nodes: st.done, Total: len(st.left)}
	}
	return out
}

// Stuck describes why an ended run did not finish: the first rank with nodes left and what
// its first unfinished node waits for.
func (e *Executor) Stuck() error {
	if e.err != nil || e.left == 0 {
		return e.err
	}
	for r := range e.rk {
		st := &e.rk[r]
		if st.done == len(st.left) {
			continue
		}
		f := e.t.Files[r]
		for i := range st.left {
			if st.left[i] >= 0 {
				n := &f.Nodes[i]
				o := &e.t.ranks[r].ops[i]
				why := fmt.Sprintf("waits for %d parents", st.left[i])
				switch {
				case st.left[i] == 0 && o.kind == kColl:
					g := &e.t.groupList[o.group]
					why = fmt.Sprintf("collective #%d of group %q %v never started: not every member issued it", st.issued[o.group], g.name, g.members)
				case st.left[i] == 0 && o.kind == kRecv:
					why = fmt.Sprintf("its data from rank %d (tag %d) never arrived", o.peer, o.tag)
				case st.left[i] == 0:
					why = "issued, never completed"
				}
				return fmt.Errorf("%s: rank %d: node %d (%s %q): the run ended with %d of the rank's %d nodes done: this node %s",
					f.Name, r, n.ID, n.Type, n.Name, st.done, len(st.left), why)
			}
		}
	}
	return nil
}

// ready queues node i of rank r for issue.
func (e *Executor) ready(r, i int32) {
	k := e.t.ranks[r].ops[i].kind
	e.rk[r].ready[k.slot()].push(i)
}

// issue starts rank r's ready nodes whose hardware is free, lowest id first per slot.
func (e *Executor) issue(r int32) {
	st := &e.rk[r]
	for sl := range slots {
		for st.ready[sl].len() > 0 && (sl == slotNone || !st.busy[sl]) {
			i := st.ready[sl].pop()
			if sl != slotNone {
				st.busy[sl] = true
			}
			e.start(r, i)
			if e.err != nil {
				return
			}
		}
	}
}

// start runs node i of rank r.
func (e *Executor) start(r, i int32) {
	o := &e.t.ranks[r].ops[i]
	st := &e.rk[r]
	st.left[i] = 0
	if e.obs != nil {
		e.started[r][i] = e.s.Now()
	}
	switch o.kind {
	case kInstant:
		e.finish(r, i)
	case kComp:
		d := o.dur
		if rt, ok := roofline(o, e.opt.PeakTFLOPS*1e12, e.opt.MemGBps*1e9); ok && e.opt.PeakTFLOPS > 0 {
			d = rt
		} else if d == 0 {
			d = int64(engine.Nanosecond) // ASTRA-sim's 1 cycle
		}
		st.compute += engine.Time(d)
		e.after(d, r, i)
	case kCPU, kReplay:
		d := o.dur
		if d == 0 {
			d = int64(engine.Nanosecond)
		}
		e.after(d, r, i)
	case kMem:
		var d int64
		if e.opt.MemGBps > 0 {
			d = int64(math.Ceil(o.tensor / (e.opt.MemGBps * 1e9) * 1e12))
		}
		e.after(d, r, i)
	case kColl:
		e.joinColl(r, i, o)
	case kSend:
		e.send(r, i, o)
	case kRecv:
		k := p2pKey{o.tag, o.peer, r, o.bytes}
		ps := e.p2pOf(k)
		if ps.arrived > 0 {
			ps.arrived--
			e.finish(r, i)
		} else {
			ps.waiting = append(ps.waiting, ref{r, i})
		}
	}
}

// after completes node i of rank r d picoseconds from now.
func (e *Executor) after(d int64, r, i int32) {
	if d == 0 {
		e.finish(r, i)
		return
	}
	e.s.After(engine.Time(d), e.h, r, int64(i))
}

// HandleEvent completes the node an event was scheduled for.
func (e *Executor) HandleEvent(_ *engine.Scheduler, ev engine.Event) {
	e.finish(ev.Target, int32(ev.Arg))
	e.drain()
}

func (e *Executor) p2pOf(k p2pKey) *p2pState {
	ps := e.p2p[k]
	if ps == nil {
		ps = &p2pState{}
		e.p2p[k] = ps
	}
	return ps
}

func (e *Executor) send(r, i int32, o *op) {
	k := p2pKey{o.tag, r, o.peer, o.bytes}
	arrived := func() {
		ps := e.p2pOf(k)
		if len(ps.waiting) > 0 {
			w := ps.waiting[0]
			ps.waiting = ps.waiting[1:]
			e.finish(w.r, w.i)
		} else {
			ps.arrived++
		}
		e.finish(r, i)
		e.drain()
	}
	if o.peer == r {
		arrived()
		return
	}
	if err := e.net.Send(r, o.peer, o.bytes, arrived); err != nil {
		e.fail(r, i, "comm_dst", err)
	}
}

// joinColl counts rank r in the collective its node i belongs to (the k-th of its group) and
// starts the collective when every member has issued it.
func (e *Executor) joinColl(r, i int32, o *op) {
	g := o.group
	st := &e.rk[r]
	k := int(st.issued[g])
	st.issued[g]++
	for len(e.coll[g]) <= k {
		e.coll[g] = append(e.coll[g], nil)
	}
	c := e.coll[g][k]
	members := e.t.groupList[g].sorted
	if c == nil {
		c = &collInst{first: ref{r, i}, nodes: make([]ref, 0, len(members))}
		e.coll[g][k] = c
	} else {
		f := &e.t.ranks[c.first.r].ops[c.first.i]
		if f.comm != o.comm || f.bytes != o.bytes {
			fn := &e.t.Files[c.first.r].Nodes[c.first.i]
			e.fail(r, i, "comm_type/comm_size", fmt.Errorf("collective #%d of group %q is %s of %d bytes here but %s of %d bytes on rank %d (node %d)",
				k+1, e.t.groupList[g].name, o.comm, o.bytes, f.comm, f.bytes, c.first.r, fn.ID))
			return
		}
	}
	c.nodes = append(c.nodes, ref{r, i})
	c.arrived++
	if c.arrived < len(members) {
		return
	}
	e.coll[g][k] = nil // every member is in: the instance is not needed past its completion
	done := func() {
		for _, m := range c.nodes {
			e.finish(m.r, m.i)
		}
		e.drain()
	}
	if len(members) == 1 {
		done()
		return
	}
	lo := c.nodes[0]
	for _, m := range c.nodes {
		if m.r < lo.r {
			lo = m
		}
	}
	comm := Comm{Op: o.coll, Ranks: members, Bytes: o.bytes, Group: e.t.groupList[g].name,
		Name: e.t.Files[lo.r].Nodes[lo.i].Name, Seq: e.seq}
	e.seq++
	if err := e.net.Collective(comm, done); err != nil {
		e.fail(r, i, "comm_type", err)
	}
}

// fail stops the run with an error about node i of rank r.
func (e *Executor) fail(r, i int32, field string, err error) {
	if e.err == nil {
		e.err = e.t.nodeErr(int(r), &e.t.Files[r].Nodes[i], field, "%v", err)
		e.s.Stop()
	}
}

// finish queues node i of rank r as done; drain handles it.
func (e *Executor) finish(r, i int32) {
	e.doneQ = append(e.doneQ, ref{r, i})
}

// drain handles completed nodes: frees their slot, releases their children and issues what
// became possible, until nothing more completes at this instant.
func (e *Executor) drain() {
	if e.draining {
		return
	}
	e.draining = true
	defer func() { e.draining = false }()
	for q := 0; q < len(e.doneQ) && e.err == nil; q++ {
		d := e.doneQ[q]
		st := &e.rk[d.r]
		o := &e.t.ranks[d.r].ops[d.i]
		st.left[d.i] = -1
		if e.obs != nil && o.kind != kInstant {
			e.obs.NodeDone(int(d.r), &e.t.Files[d.r].Nodes[d.i], o.kind == kComp || o.kind == kCPU, e.started[d.r][d.i], e.s.Now())
		}
		st.done++
		e.left--
		st.finish = e.s.Now()
		if sl := o.kind.slot(); sl != slotNone {
			st.busy[sl] = false
		}
		for _, c := range o.children {
			if st.left[c]--; st.left[c] == 0 {
				e.ready(d.r, c)
			}
		}
		e.issue(d.r)
	}
	e.doneQ = e.doneQ[:0]
	if e.left == 0 && e.err == nil && e.ended != nil {
		f := e.ended
		e.ended = nil
		f()
	}
}

// idHeap is a min-heap of node indices (index order is id order).
type idHeap struct{ a []int32 }

func (h *idHeap) len() int { return len(h.a) }

func (h *idHeap) push(x int32) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *idHeap) pop() int32 {
	top := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a = h.a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.a[l] < h.a[m] {
			m = l
		}
		if l+1 < n && h.a[l+1] < h.a[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return top
}

// Collectives calls yield with every distinct collective the trace runs on the fabric — its
// operation, its group's members (ascending) and its bytes — once each, in rank and node order
// of the group's lowest member; groups of one rank, which move nothing, are left out. It is for
// estimates made before a run (a memory guard): the run itself plans each when it starts.
func (t *Trace) Collectives(yield func(Comm)) {
	seen := map[collKey]bool{}
	for r := range t.ranks {
		for i := range t.ranks[r].ops {
			o := &t.ranks[r].ops[i]
			if o.kind != kColl {
				continue
			}
			members := t.groupList[o.group].sorted
			if len(members) < 2 || members[0] != int32(r) {
				continue
			}
			k := collKey{o.group, o.coll, o.bytes}
			if seen[k] {
				continue
			}
			seen[k] = true
			yield(Comm{Op: o.coll, Ranks: members, Bytes: o.bytes, Group: t.groupList[o.group].name, Name: t.Files[r].Nodes[i].Name})
		}
	}
}

type collKey struct {
	group int32
	op    ccl.Op
	bytes int64
}
