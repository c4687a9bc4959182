package chakra

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"simd/ccl"
)

// kind is what executing a node does.
type kind uint8

const (
	kInstant kind = iota // METADATA, INVALID: done at once
	kComp                // GPU compute: the GPU compute slot for its time
	kCPU                 // CPU op (is_cpu_op): the CPU slot for its duration
	kColl                // collective: the comm slot until its group's flows are done
	kReplay              // collective replayed as its duration (BROADCAST): the comm slot
	kSend                // the comm slot until its flow has arrived
	kRecv                // no slot; done when issued and its data has arrived
	kMem                 // MEM_LOAD/STORE: the comm slot for its local memory time
)

// slot is the hardware a node occupies while it runs.
type slot uint8

const (
	slotNone slot = iota
	slotCPU
	slotComp
	slotComm
	slots
)

func (k kind) slot() slot {
	switch k {
	case kComp:
		return slotComp
	case kCPU:
		return slotCPU
	case kColl, kReplay, kSend, kMem:
		return slotComm
	}
	return slotNone
}

// op is a compiled node.
type op struct {
	kind kind
	// dur is the recorded duration in ps (COMP, CPU, BROADCAST replay).
	dur int64
	// flops and tensor are num_ops and tensor_size (roofline, MEM); hasOps says num_ops is set.
	flops, tensor float64
	hasOps        bool
	coll          ccl.Op
	comm          CommType
	bytes         int64
	group         int32 // collective: index in Trace.groupList
	peer          int32 // SEND: destination; RECV: source
	tag           int64
	children      []int32
	parents       int32
}

// rankProg is one rank's compiled trace: ops in node-id order (index i is Files[r].Nodes[i]).
type rankProg struct {
	ops []op
}

// group is a communicator group: its pg_name and members as listed.
type group struct {
	name    string
	members []int32
	sorted  []int32
}

// Supported lists the collectives simd runs.
const Supported = "ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER and ALL_TO_ALL (run on the network), BROADCAST (replayed as its duration_micros, as ASTRA-sim does)"

// maxMicros bounds durations so that picoseconds fit simd's clock with room for a whole run.
const maxMicros = 1 << 40

// intAttr reads an integer attribute by name with FeederV3's conversions; ok is false when the
// node has none.
func (t *Trace) intAttr(r int, n *Node, name string) (v int64, ok bool, err error) {
	a := n.Attr(name)
	if a == nil {
		return 0, false, nil
	}
	v, err = a.AsInt64()
	if err != nil {
		return 0, true, t.nodeErr(r, n, name, "%v", err)
	}
	return v, true, nil
}

func (t *Trace) floatAttr(r int, n *Node, name string) (v float64, ok bool, err error) {
	a := n.Attr(name)
	if a == nil {
		return 0, false, nil
	}
	v, err = a.AsFloat()
	if err != nil {
		return 0, true, t.nodeErr(r, n, name, "%v", err)
	}
	return v, true, nil
}

// isCPU reads is_cpu_op (bool, or any integer as STG writes it); default false.
func (t *Trace) isCPU(r int, n *Node) (bool, error) {
	v, _, err := t.intAttr(r, n, "is_cpu_op")
	return v != 0, err
}

// compile checks rank r's file and builds its program: ids unique, dependencies inside the
// file and acyclic, the attributes each node type needs.
func (t *Trace) compile(r int) error {
	if err := t.sortNodes(r); err != nil {
		return err
	}
	f := t.Files[r]
	p := &t.ranks[r]
	p.ops = make([]op, len(f.Nodes))
	index := make(map[uint64]int32, len(f.Nodes))
	for i := range f.Nodes {
		index[f.Nodes[i].ID] = int32(i)
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		o := &p.ops[i]
		if err := t.compileNode(r, n, o); err != nil {
			return err
		}
		deps := [][]uint64{n.DataDeps}
		fields := []string{"data_deps"}
		if t.Deps == DepsBoth {
			deps = append(deps, n.CtrlDeps)
			fields = append(fields, "ctrl_deps")
		}
		for k, ds := range deps {
			for _, d := range ds {
				j, ok := index[d]
				if !ok {
					hint := ""
					if fields[k] == "ctrl_deps" {
						hint = " (older PyTorch traces do this; -chakra-deps data honours data_deps only)"
					}
					return t.nodeErr(r, n, fields[k], "depends on node %d, which is not in the file%s", d, hint)
				}
				if int(j) == i {
					return t.nodeErr(r, n, fields[k], "depends on itself (a dependency cycle)")
				}
				pj := &p.ops[j]
				if slices.Contains(pj.children, int32(i)) {
					continue // listed twice, or in both fields
				}
				pj.children = append(pj.children, int32(i))
				o.parents++
			}
		}
	}
	return t.checkCycle(r)
}

// checkCycle finds a dependency cycle of rank r with Kahn's algorithm and names a node on it.
func (t *Trace) checkCycle(r int) error {
	p := &t.ranks[r]
	left := make([]int32, len(p.ops))
	var q []int32
	for i := range p.ops {
		left[i] = p.ops[i].parents
		if left[i] == 0 {
			q = append(q, int32(i))
		}
	}
	done := 0
	for len(q) > 0 {
		i := q[len(q)-1]
		q = q[:len(q)-1]
		done++
		for _, c := range p.ops[i].children {
			if left[c]--; left[c] == 0 {
				q = append(q, c)
			}
		}
	}
	if done == len(p.ops) {
		return nil
	}
	// Walk back along unfinished parents until a node repeats: it is on a cycle.
	parent := make([]int32, len(p.ops))
	for i := range parent {
		parent[i] = -1
	}
	for i := range p.ops {
		if left[i] == 0 {
			continue
		}
		for _, c := range p.ops[i].children {
			if left[c] > 0 && parent[c] < 0 {
				parent[c] = int32(i)
			}
		}
	}
	start := int32(-1)
	for i := range p.ops {
		if left[i] > 0 {
			start = int32(i)
			break
		}
	}
	seen := map[int32]bool{}
	for !seen[start] {
		seen[start] = true
		start = parent[start]
	}
	var ids []string
	for i := start; ; {
		ids = append(ids, strconv.FormatUint(t.Files[r].Nodes[i].ID, 10))
		if i = parent[i]; i == start || len(ids) > 8 {
			break
		}
	}
	slices.Reverse(ids)
	field := "data_deps"
	if t.Deps == DepsBoth {
		field = "ctrl_deps/data_deps"
	}
	return t.nodeErr(r, &t.Files[r].Nodes[start], field, "dependency cycle through nodes %s", strings.Join(ids, " → "))
}

func (t *Trace) compileNode(r int, n *Node, o *op) error {
	if n.DurationMicros > maxMicros {
		return t.nodeErr(r, n, "duration_micros", "%d µs is beyond simd's clock", n.DurationMicros)
	}
	o.dur = int64(n.DurationMicros) * 1_000_000
	cpu, err := t.isCPU(r, n)
	if err != nil {
		return err
	}
	if v, ok, err := t.floatAttr(r, n, "tensor_size"); err != nil {
		return err
	} else if ok {
		o.tensor = v
	}
	switch n.Type {
	case MetadataNode, InvalidNode:
		o.kind = kInstant
	case CompNode:
		o.kind = kComp
		if cpu {
			o.kind = kCPU
		}
		v, ok, err := t.floatAttr(r, n, "num_ops")
		if err != nil {
			return err
		}
		o.flops, o.hasOps = v, ok
	case MemLoadNode, MemStoreNode:
		o.kind = kMem
	case CommCollNode:
		return t.compileColl(r, n, o, cpu)
	case CommSendNode, CommRecvNode:
		return t.compileP2P(r, n, o)
	default:
		return t.nodeErr(r, n, "type", "unknown node type %d", int32(n.Type))
	}
	return nil
}

func (t *Trace) compileColl(r int, n *Node, o *op, cpu bool) error {
	ct, okT, err := t.intAttr(r, n, "comm_type")
	if err != nil {
		return err
	}
	if cpu && !okT {
		// PyTorch's host-side launch of a collective (c10d::allreduce_ ...): the GPU kernel is
		// a node of its own, so this one is a CPU op.
		o.kind = kCPU
		return nil
	}
	if !okT {
		return t.nodeErr(r, n, "comm_type", "a COMM_COLL_NODE needs comm_type (the CollectiveCommType)")
	}
	sz, okS, err := t.intAttr(r, n, "comm_size")
	if err != nil {
		return err
	}
	if !okS {
		return t.nodeErr(r, n, "comm_size", "a COMM_COLL_NODE needs comm_size (bytes)")
	}
	if sz <= 0 {
		return t.nodeErr(r, n, "comm_size", "%d bytes: need at least 1", sz)
	}
	o.comm, o.bytes = CommType(ct), sz
	switch CommType(ct) {
	case AllReduce:
		o.coll = ccl.OpAllReduce
	case AllGather:
		o.coll = ccl.OpAllGather
	case ReduceScatter:
		o.coll = ccl.OpReduceScatter
	case AllToAll:
		o.coll = ccl.OpAllToAll
	case Broadcast:
		o.kind = kReplay
		return nil
	default:
		return t.nodeErr(r, n, "comm_type", "%s is not supported; simd supports %s", CommType(ct), Supported)
	}
	o.kind = kColl
	g, err := t.groupOf(r, n)
	if err != nil {
		return err
	}
	if !slices.Contains(t.groupList[g].members, int32(r)) {
		return t.nodeErr(r, n, "pg_name", "rank %d is not a member of group %q %v", r, t.groupList[g].name, t.groupList[g].members)
	}
	o.group = g
	return nil
}

// groupOf is the index in groupList of the node's pg_name ("" and "0" are every rank).
func (t *Trace) groupOf(r int, n *Node) (int32, error) {
	a := n.Attr("pg_name")
	if a == nil {
		return 0, nil
	}
	s, err := a.AsString()
	if err != nil {
		if v, err2 := a.AsInt64(); err2 == nil {
			s = strconv.FormatInt(v, 10)
		} else {
			return 0, t.nodeErr(r, n, "pg_name", "%v", err)
		}
	}
	if s == "" || s == "0" {
		return 0, nil
	}
	for i, g := range t.groupList {
		if g.name == s {
			return int32(i), nil
		}
	}
	from := "no communicator groups were given (-comm-groups FILE, or a METADATA_NODE with PyTorch's process groups)"
	if t.GroupsFrom != "" {
		from = "the groups of " + t.GroupsFrom + " are " + strings.Join(t.groupNames(), ", ")
	}
	return 0, t.nodeErr(r, n, "pg_name", "group %q is not defined: %s", s, from)
}

func (t *Trace) groupNames() []string {
	var out []string
	for _, g := range t.groupList[1:] {
		out = append(out, strconv.Quote(g.name))
	}
	return out
}

func (t *Trace) compileP2P(r int, n *Node, o *op) error {
	send := n.Type == CommSendNode
	o.kind = kRecv
	if send {
		o.kind = kSend
	}
	sz, ok, err := t.intAttr(r, n, "comm_size")
	if err != nil {
		return err
	}
	if !ok {
		return t.nodeErr(r, n, "comm_size", "a %s needs comm_size (bytes)", n.Type)
	}
	if sz <= 0 {
		return t.nodeErr(r, n, "comm_size", "%d bytes: need at least 1", sz)
	}
	o.bytes = sz
	tag, ok, err := t.intAttr(r, n, "comm_tag")
	if err != nil {
		return err
	}
	if !ok {
		return t.nodeErr(r, n, "comm_tag", "a %s needs comm_tag (it matches sends with receives)", n.Type)
	}
	o.tag = tag
	src, okS, err := t.intAttr(r, n, "comm_src")
	if err != nil {
		return err
	}
	dst, okD, err := t.intAttr(r, n, "comm_dst")
	if err != nil {
		return err
	}
	self, peer, field := src, dst, "comm_dst"
	okPeer := okD
	selfField := "comm_src"
	if !send {
		self, peer, field, okPeer, selfField = dst, src, "comm_src", okS, "comm_dst"
		if !okD {
			self = int64(r)
		}
	} else if !okS {
		self = int64(r)
	}
	if self != int64(r) {
		return t.nodeErr(r, n, selfField, "%d, but this is rank %d's trace", self, r)
	}
	if !okPeer {
		return t.nodeErr(r, n, field, "a %s needs %s", n.Type, field)
	}
	if peer < 0 || peer >= int64(len(t.Files)) {
		return t.nodeErr(r, n, field, "rank %d is not one of the trace's %d ranks", peer, len(t.Files))
	}
	o.peer = int32(peer)
	return nil
}

// p2pKey matches a send with a receive, as ASTRA-sim's analytical network does: tag, source,
// destination and size; the k-th send of a key goes to the k-th receive.
type p2pKey struct {
	tag      int64
	src, dst int32
	bytes    int64
}

// checkP2P checks that every SEND has its RECV and every RECV its SEND.
func (t *Trace) checkP2P() error {
	type ref struct{ r, i int32 }
	sends := map[p2pKey][]ref{}
	recvs := map[p2pKey][]ref{}
	for r := range t.ranks {
		for i, o := range t.ranks[r].ops {
			switch o.kind {
			case kSend:
				k := p2pKey{o.tag, int32(r), o.peer, o.bytes}
				sends[k] = append(sends[k], ref{int32(r), int32(i)})
			case kRecv:
				k := p2pKey{o.tag, o.peer, int32(r), o.bytes}
				recvs[k] = append(recvs[k], ref{int32(r), int32(i)})
			}
		}
	}
	// Report the first unmatched node in (rank, id) order, whichever side it is on.
	var bad *ref
	var badKey p2pKey
	var sendSide bool
	note := func(k p2pKey, a, b []ref, isSend bool) {
		if len(a) > len(b) {
			x := a[len(b)]
			if bad == nil || x.r < bad.r || (x.r == bad.r && x.i < bad.i) {
				bad, badKey, sendSide = &x, k, isSend
			}
		}
	}
	for k, s := range sends {
		note(k, s, recvs[k], true)
	}
	for k, v := range recvs {
		note(k, v, sends[k], false)
	}
	if bad == nil {
		return nil
	}
	n := &t.Files[bad.r].Nodes[bad.i]
	k := badKey
	if sendSide {
		return t.nodeErr(int(bad.r), n, "comm_tag", "no COMM_RECV_NODE in rank %d's trace matches this send (tag %d, %d → %d, %d bytes)", k.dst, k.tag, k.src, k.dst, k.bytes)
	}
	return t.nodeErr(int(bad.r), n, "comm_tag", "no COMM_SEND_NODE in rank %d's trace matches this receive (tag %d, %d → %d, %d bytes)", k.src, k.tag, k.src, k.dst, k.bytes)
}

// checkGroups checks that the members of every group issue the same collectives (type and
// size) in the same order (node-id order, the order ASTRA-sim issues dependency-free nodes).
func (t *Trace) checkGroups() error {
	type coll struct {
		i    int32
		comm CommType
		size int64
	}
	for g := range t.groupList {
		gr := &t.groupList[g]
		gr.sorted = slices.Sorted(slices.Values(gr.members))
		var first []coll
		var firstRank int32
		for k, r := range gr.members {
			var seq []coll
			for i, o := range t.ranks[r].ops {
				if o.kind == kColl && o.group == int32(g) {
					seq = append(seq, coll{int32(i), o.comm, o.bytes})
				}
			}
			if k == 0 {
				first, firstRank = seq, r
				continue
			}
			for j := range max(len(seq), len(first)) {
				switch {
				case j >= len(seq):
					a := &t.Files[firstRank].Nodes[first[j].i]
					return t.nodeErr(int(firstRank), a, "pg_name", "collective #%d of group %q has no counterpart in rank %d's trace (it issues %d on the group, rank %d issues %d)", j+1, gr.name, r, len(seq), firstRank, len(first))
				case j >= len(first):
					b := &t.Files[r].Nodes[seq[j].i]
					return t.nodeErr(int(r), b, "pg_name", "collective #%d of group %q has no counterpart in rank %d's trace (it issues %d on the group, rank %d issues %d)", j+1, gr.name, firstRank, len(first), r, len(seq))
				case seq[j].comm != first[j].comm || seq[j].size != first[j].size:
					b := &t.Files[r].Nodes[seq[j].i]
					a := &t.Files[firstRank].Nodes[first[j].i]
					return t.nodeErr(int(r), b, "comm_type/comm_size", "collective #%d of group %q is %s of %d bytes, but rank %d's (node %d) is %s of %d bytes: group members must issue the same collectives in the same order",
						j+1, gr.name, seq[j].comm, seq[j].size, firstRank, a.ID, first[j].comm, first[j].size)
				}
			}
		}
	}
	return nil
}

// roofline is COMP time in ps under the roofline: num_ops / min(bw·num_ops/tensor_size, peak)
// seconds; ok is false when the node has no num_ops.
func roofline(o *op, peakFLOPS, memBps float64) (int64, bool) {
	if !o.hasOps {
		return 0, false
	}
	if o.flops <= 0 {
		return 0, true
	}
	perf := peakFLOPS
	if memBps > 0 {
		if o.tensor <= 0 {
			return 0, true // ASTRA-sim skips it
		}
		perf = min(perf, memBps*o.flops/o.tensor)
	}
	ps := o.flops / perf * 1e12
	if ps > math.MaxInt64/4 {
		ps = math.MaxInt64 / 4
	}
	return int64(math.Ceil(ps)), true
}
