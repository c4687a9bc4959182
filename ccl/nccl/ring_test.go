package nccl

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/ccl"
)

// The arithmetic ring is the explicitly built one, flow for flow and edge for edge, without PXN
// and with the NCCL-like PXN (SimCCL's PXN has its own reference, TestPXNIsSimCCLs).
func TestRingMatchesExplicit(t *testing.T) {
	var reqs []ccl.Request
	for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather} {
		for _, n := range []int{1, 2, 3, 5, 8, 12, 13, 16, 24} {
			for _, gps := range []int{1, 2, 4, 8} {
				reqs = append(reqs, consecutive(op, n, gps, 1000003))
			}
			reqs = append(reqs, strided(op, n, 8, 2, 1, 999), strided(op, n, 4, 5, 3, 12345))
		}
		reqs = append(reqs, explicitRanks(op, 4, 16, 4096, 0, 1, 2, 9, 10, 11))
		r := consecutive(op, 12, 4, 1<<20)
		r.Channels = 6 // more channels than members per server
		reqs = append(reqs, r)
	}
	for _, req := range reqs {
		for _, pxn := range []bool{false, true} {
			name := fmt.Sprintf("%s/%v/gps%d/pxn=%v/ch%d", req.Op, req.Ranks, req.GPUsPerServer, pxn, req.Channels)
			d, err := Ring(req, Options{PXN: pxn, PXNVariant: PXNNCCL})
			if err != nil {
				if pxn && newGeometryOf(req).nsrv > 1 && !newGeometryOf(req).uniform() {
					continue // PXN refuses uneven groups
				}
				t.Fatalf("%s: %v", name, err)
			}
			t.Run(name, func(t *testing.T) {
				sameDAG(t, d, refRing(t, req, pxn))
			})
		}
	}
}

func newGeometryOf(req ccl.Request) *geometry { g := newGeometry(&req); return &g }

// The issue's example: a 64 MiB all-reduce on 16 GPUs, 8 per server, is 8 channels × 16 ranks
// × 30 steps of 512 KiB.
func TestRingIssueExample(t *testing.T) {
	d, err := Ring(consecutive(ccl.OpAllReduce, 16, 8, 64<<20), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.NumFlows(), 8*16*30; got != want {
		t.Fatalf("%d flows, want %d", got, want)
	}
	perStep := map[[2]int32]int{}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		if f.Bytes != 512<<10 || f.Kind != ccl.KindRing {
			t.Fatalf("flow %d: %s", i, flowString(f))
		}
		perStep[[2]int32{f.Channel, f.Chunk}]++
	}
	for c := int32(0); c < 8; c++ {
		for s := int32(0); s < 30; s++ {
			if perStep[[2]int32{c, s}] != 16 {
				t.Fatalf("channel %d step %d has %d flows, want 16", c, s, perStep[[2]int32{c, s}])
			}
		}
	}
	if len(perStep) != 8*30 {
		t.Fatalf("%d (channel, step) pairs, want 240", len(perStep))
	}
}

// Flow sizes: S/(n·C) for every op; simd's all-gather Bytes is the gathered output, so an
// all-gather step moves Bytes/(n·C) too.
func TestRingFlowSizes(t *testing.T) {
	for _, c := range []struct {
		op             ccl.Op
		n, gps         int
		bytes          int64
		flows, perFlow int64
	}{
		{ccl.OpAllReduce, 8, 8, 64 << 20, 8 * 8 * 14, 1 << 20},       // §1.4: TP=8, 896 flows of 1 MiB
		{ccl.OpReduceScatter, 8, 8, 64 << 20, 8 * 8 * 7, 1 << 20},    // n−1 steps
		{ccl.OpAllGather, 8, 8, 64 << 20, 8 * 8 * 7, 1 << 20},        // gathered output 64 MiB
		{ccl.OpAllReduce, 4, 1, 16 << 20, 4 * 6, 4 << 20},            // one channel
		{ccl.OpAllGather, 32, 8, 32 << 20, 8 * 32 * 31, 128 << 10},   // 4 servers
		{ccl.OpAllToAll, 16, 8, 16 << 20, 16 * 15, 1 << 20},          // Bytes/n per pair
		{ccl.OpReduceScatter, 24, 4, 24 * 4 * 100, 4 * 24 * 23, 100}, // 6 servers
	} {
		d, err := Ring(consecutive(c.op, c.n, c.gps, c.bytes), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if int64(d.NumFlows()) != c.flows {
			t.Errorf("%s n=%d gps=%d: %d flows, want %d", c.op, c.n, c.gps, d.NumFlows(), c.flows)
		}
		for i := 0; i < d.NumFlows(); i++ {
			if f := d.Flow(ccl.FlowID(i)); f.Bytes != c.perFlow {
				t.Fatalf("%s n=%d: flow %d is %d bytes, want %d", c.op, c.n, i, f.Bytes, c.perFlow)
			}
		}
	}
}

// SimCCL's integer chunks (ccl.Request.Truncate): chunk = data_size / nranks / channels in
// integers, the remainder never sent; a ring whose chunk is 0 bytes has no flow (its while loop
// never runs), an all-to-all still has its pairs (of 0 bytes, which the network sends as 1).
// Without Truncate the first S mod (n·C) pieces are one byte larger.
func TestRingTruncatesAsSimCCL(t *testing.T) {
	for _, c := range []struct {
		op             ccl.Op
		n, gps         int
		bytes          int64
		pxn            bool
		flows, perFlow int64 // truncated
		exactFlows     int64 // without Truncate, of perFlow or perFlow+1 bytes
	}{
		{ccl.OpAllReduce, 8, 8, 4, false, 0, 0, 896},                 // AICB's 4-byte all-reduces on TP 8
		{ccl.OpAllGather, 2, 1, 1, false, 0, 0, 2},                   // AICB's 1-byte all-gather on DP 2
		{ccl.OpAllReduce, 16, 8, 16*8 - 1, true, 0, 0, 8 * 30 * 18},  // PXN too
		{ccl.OpAllReduce, 8, 8, 1000, false, 896, 15, 896},           // 1000 = 64·15 + 40
		{ccl.OpReduceScatter, 16, 8, 119162, false, 1920, 930, 1920}, // a ZeRO-3 size of AICB's
		{ccl.OpAllToAll, 4, 4, 3, false, 12, 0, 12},                  // 3 bytes over 4 ranks: pairs of 0
	} {
		for _, truncate := range []bool{true, false} {
			req := consecutive(c.op, c.n, c.gps, c.bytes)
			req.Truncate = truncate
			opt := Options{PXN: c.pxn}
			d, err := Ring(req, opt)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s of %d B on %d (truncated %v)", c.op, c.bytes, c.n, truncate)
			want := c.flows
			if !truncate {
				want = c.exactFlows
			}
			if int64(d.NumFlows()) != want {
				t.Errorf("%s: %d flows, want %d", name, d.NumFlows(), want)
			}
			larger := 0
			for i := range d.NumFlows() {
				f := d.Flow(ccl.FlowID(i))
				if f.Bytes == c.perFlow+1 && !truncate {
					larger++
				} else if f.Bytes != c.perFlow {
					t.Fatalf("%s: flow %d is %d bytes, want %d", name, i, f.Bytes, c.perFlow)
				}
			}
			if !truncate && larger == 0 {
				t.Errorf("%s: no flow carries a byte of the remainder", name)
			}
			// Nothing lost beyond the truncation: every rank ends with what it is promised.
			if err := ccl.CheckWith(d, ccl.CheckOptions{AllowRedundant: opt.RedundantDeliveries(c.op)}); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// The NCCL-like PXN: no ring flow crosses servers; each relay hop stays in its server and each
// network hop joins two GPUs of the same rail (for SimAI's groups); the flow counts per phase.
func TestPXNStructure(t *testing.T) {
	for _, c := range []struct {
		req ccl.Request
	}{
		{consecutive(ccl.OpAllReduce, 16, 8, 1<<20)},
		{consecutive(ccl.OpAllReduce, 24, 4, 1<<20)},
		{consecutive(ccl.OpAllGather, 12, 2, 1<<20)},
		{consecutive(ccl.OpReduceScatter, 32, 8, 1<<20)},
		{strided(ccl.OpAllReduce, 16, 8, 2, 1, 1<<20)}, // DP group of TP=2: 4 per server
	} {
		req := c.req
		g := newGeometry(&req)
		n, N, m, C := g.n, g.nsrv, g.maxM, g.maxM
		d, err := Ring(req, Options{PXN: true, PXNVariant: PXNNCCL})
		if err != nil {
			t.Fatal(err)
		}
		gps := int32(req.GPUsPerServer)
		kinds := map[ccl.FlowKind]int{}
		for i := 0; i < d.NumFlows(); i++ {
			f := d.Flow(ccl.FlowID(i))
			kinds[f.Kind]++
			same := f.Src/gps == f.Dst/gps
			switch f.Kind {
			case ccl.KindRing, ccl.KindPXNInit:
				if !same {
					t.Fatalf("%s crosses servers", flowString(f))
				}
			case ccl.KindPXN:
				if same || f.Src%gps != f.Dst%gps {
					t.Fatalf("%s is not a rail-aligned network hop", flowString(f))
				}
			}
		}
		// Per channel: reduce-scatter steps: n flows + N network hops each; gather: m-1 split
		// steps (n+N), then direct steps (n), then dropped steps (n-N; the last all-reduce
		// step n-2N).
		var perChan int
		switch req.Op {
		case ccl.OpReduceScatter:
			perChan = (n - 1) * (n + N)
		case ccl.OpAllGather:
			perChan = (m-1)*(n+N) + (n-2*m+1)*n + (m-1)*(n-N)
		case ccl.OpAllReduce:
			perChan = (n-1)*(n+N) + (m-1)*(n+N) + (n-2*m)*n + (m-1)*(n-N) + (n - 2*N)
		}
		if d.NumFlows() != C*perChan {
			t.Errorf("%s %v: %d flows, want %d", req.Op, req.Ranks, d.NumFlows(), C*perChan)
		}
		// Every server receives each chunk it does not make once over the network per channel
		// and phase: reduce-scatter phase (n−1)·N hops, gather phase n−m per server.
		var wantNet int
		switch req.Op {
		case ccl.OpReduceScatter:
			wantNet = (n - 1) * N
		case ccl.OpAllGather:
			wantNet = (n - m) * N
		case ccl.OpAllReduce:
			wantNet = (n-1)*N + (n-m-1)*N // the entry of server k-1 already has server k's first chunk
		}
		if kinds[ccl.KindPXN] != C*wantNet {
			t.Errorf("%s %v: %d network hops, want %d", req.Op, req.Ranks, kinds[ccl.KindPXN], C*wantNet)
		}
	}
}

// The NCCL-like PXN reduce-scatter has the structure of SimCCL's PXN decomposition (§1.4; it
// labels the hops its own way): every step each server's exit sends its flow to its own entry
// over NVLink, and the entry sends it to the next server's entry, waiting for that hop; the
// entry's own ring flow waits for that network hop.
func TestPXNReduceScatterIsSimCCLs(t *testing.T) {
	req := consecutive(ccl.OpReduceScatter, 16, 8, 16*8*64)
	d, err := Ring(req, Options{PXN: true, PXNVariant: PXNNCCL})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ src, dst, ch, step int32 }
	byKey := map[key]ccl.FlowID{}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		byKey[key{f.Src, f.Dst, f.Channel, f.Chunk}] = ccl.FlowID(i)
	}
	rings := simcclRings(req.Ranks, 8)
	for c, ring := range rings {
		for s := int32(0); s < 15; s++ {
			for k := 0; k < 2; k++ {
				exit, entry, next := ring[8*k+7], ring[8*k], ring[(8*k+8)%16]
				relay, ok1 := byKey[key{exit, entry, int32(c), s}]
				net, ok2 := byKey[key{entry, next, int32(c), s}]
				if !ok1 || !ok2 {
					t.Fatalf("channel %d step %d server %d: missing relay %v or network hop %v", c, s, k, ok1, ok2)
				}
				if d.Flow(relay).Kind != ccl.KindPXNInit || d.Flow(net).Kind != ccl.KindPXN {
					t.Fatalf("kinds %s, %s", d.Flow(relay).Kind, d.Flow(net).Kind)
				}
				if ps := d.Parents(net, nil); len(ps) != 1 || ps[0] != relay {
					t.Fatalf("network hop waits for %v, want the relay %d", ps, relay)
				}
				if s+1 < 15 {
					own := byKey[key{next, ring[(8*k+9)%16], int32(c), s + 1}]
					if ps := d.Parents(own, nil); len(ps) != 1 || ps[0] != net {
						t.Fatalf("next entry's step %d waits for %v, want %d", s+1, ps, net)
					}
				}
			}
		}
	}
}

func TestAllToAll(t *testing.T) {
	req := consecutive(ccl.OpAllToAll, 12, 4, 1200)
	d, err := Ring(req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFlows() != 12*11 {
		t.Fatalf("%d flows", d.NumFlows())
	}
	seen := map[[2]int32]bool{}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		if f.Bytes != 100 || f.Channel != 0 || f.Kind != ccl.KindDirect || len(d.Parents(ccl.FlowID(i), nil)) != 0 {
			t.Fatalf("flow %s", flowString(f))
		}
		seen[[2]int32{f.Src, f.Dst}] = true
	}
	if len(seen) != 12*11 {
		t.Fatalf("%d distinct pairs", len(seen))
	}

	// The NCCL-like PXN: cross-server, cross-rail pairs go through the sender's server-mate on
	// the receiver's rail, on the MSCCL fork's channel.
	p, err := Ring(req, Options{PXN: true, PXNVariant: PXNNCCL})
	if err != nil {
		t.Fatal(err)
	}
	relayed, direct := 0, 0
	for i := 0; i < p.NumFlows(); i++ {
		f := p.Flow(ccl.FlowID(i))
		switch f.Kind {
		case ccl.KindPXNInit:
			relayed++
			if f.Src/4 != f.Dst/4 {
				t.Fatalf("relay hop %s leaves the server", flowString(f))
			}
			ch := p.Children(ccl.FlowID(i), nil)
			if len(ch) != 1 {
				t.Fatalf("relay hop has children %v", ch)
			}
			g := p.Flow(ch[0])
			if g.Kind != ccl.KindPXN || g.Src != f.Dst || g.Src%4 != g.Dst%4 || g.PieceLo != f.PieceLo || g.Channel != f.Channel {
				t.Fatalf("relay %s then %s", flowString(f), flowString(g))
			}
			src, dst := f.Src, g.Dst
			want := (int32(((dst/4-src/4)%3+3)%3)-1)*4 + ((dst%4-src%4)%4+4)%4
			if f.Channel != want {
				t.Fatalf("%d→%d on channel %d, want %d", src, dst, f.Channel, want)
			}
		case ccl.KindDirect:
			direct++
			if f.Src/4 != f.Dst/4 && f.Src%4 != f.Dst%4 {
				t.Fatalf("%s crosses servers and rails directly", flowString(f))
			}
		}
	}
	// Each rank: 3 server-mates and 2 rail-mates direct, 6 relayed.
	if direct != 12*5 || relayed != 12*6 {
		t.Fatalf("%d direct, %d relayed", direct, relayed)
	}
	// Without a server-mate on the receiver's rail in the group, the pair goes direct.
	q, err := Ring(explicitRanks(ccl.OpAllToAll, 4, 8, 400, 0, 1, 5, 6), Options{PXN: true, PXNVariant: PXNNCCL})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < q.NumFlows(); i++ {
		f := q.Flow(ccl.FlowID(i))
		if f.Kind == ccl.KindPXNInit && (f.Dst == 2 || f.Dst == 4 || f.Dst == 7 || f.Dst == 3) {
			t.Fatalf("relay through a non-member: %s", flowString(f))
		}
	}
	if err := ccl.Check(q); err != nil {
		t.Fatal(err)
	}
}

func TestRingRefuses(t *testing.T) {
	for _, c := range []struct {
		req ccl.Request
		opt Options
	}{
		{consecutive(ccl.OpNone, 4, 4, 10), Options{}},
		{explicitRanks(ccl.OpAllReduce, 4, 8, 10, 3, 1), Options{}},             // not ascending
		{explicitRanks(ccl.OpAllReduce, 4, 8, 10, 1, 2, 9), Options{PXN: true}}, // uneven servers
		{explicitRanks(ccl.OpAllGather, 4, 8, 10, 1, 2, 9), Options{PXN: true, PXNVariant: PXNNCCL}},
		{consecutive(ccl.OpAllReduce, 4, 4, 10), Options{PXN: true, PXNVariant: 7}},           // unknown variant
		{consecutive(ccl.OpAllReduce, 4, 4, 10), Options{Chunks: -1}},                         // bad option
		{ccl.Request{Op: ccl.OpAllReduce, Ranks: []int32{0, 1}, GPUsPerServer: 0}, Options{}}, // bad request
	} {
		if _, err := Ring(c.req, c.opt); err == nil {
			t.Errorf("%+v %+v: accepted", c.req, c.opt)
		}
	}
}

// A 1,024-GPU ring all-reduce with 8 channels has 16.7 million flows and is built in O(n)
// memory; its flows and edges agree with each other.
func TestRingHuge(t *testing.T) {
	for _, opt := range []Options{{}, {PXN: true}, {PXN: true, PXNVariant: PXNNCCL}} {
		pxn := opt.PXN
		d, err := Ring(consecutive(ccl.OpAllReduce, 1024, 8, 1<<30), opt)
		if err != nil {
			t.Fatal(err)
		}
		if !pxn && d.NumFlows() != 8*1024*2046 {
			t.Fatalf("%d flows", d.NumFlows())
		}
		rd := d.(*ringDAG)
		if len(rd.stepStart) > 2*1024 || len(rd.g.srv) != 1024 {
			t.Fatalf("state grows with the flows")
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var buf, buf2 []ccl.FlowID
		for range 20000 {
			id := ccl.FlowID(rng.IntN(d.NumFlows()))
			f := d.Flow(id)
			for _, p := range d.Parents(id, buf[:0]) {
				if pf := d.Flow(p); pf.Dst != f.Src {
					t.Fatalf("parent %s does not deliver to the sender of %s", flowString(pf), flowString(f))
				}
				if !slices.Contains(d.Children(p, buf2[:0]), id) {
					t.Fatalf("flow %d is not a child of its parent %d", id, p)
				}
			}
			for _, c := range d.Children(id, buf[:0]) {
				if !slices.Contains(d.Parents(c, buf2[:0]), id) {
					t.Fatalf("flow %d is not a parent of its child %d", id, c)
				}
			}
		}
	}
}

// BenchmarkRingFlow describes flows of the 1,024-GPU ring all-reduce the way the event mode
// does, once each: the flow, then its children. One op is one flow.
//
//	go test -run '^$' -bench RingFlow ./ccl/nccl
func BenchmarkRingFlow(b *testing.B) {
	d, err := Ring(consecutive(ccl.OpAllReduce, 1024, 8, 1<<30), Options{})
	if err != nil {
		b.Fatal(err)
	}
	nf := d.NumFlows()
	var kids []ccl.FlowID
	var sum int64
	i := 0
	for b.Loop() {
		id := ccl.FlowID(i)
		if i++; i == nf {
			i = 0
		}
		sum += d.Flow(id).Bytes
		kids = d.Children(id, kids[:0])
	}
	if sum == 0 {
		b.Fatal("no bytes")
	}
}

// A plain ring's sequences are its senders' flows of a channel, step by step: every sequence
// holds one flow per step, all from one sender on one channel, at places 0, 1, ... in step
// order; with PXN no flow is in one.
func TestRingSequences(t *testing.T) {
	for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather} {
		for _, req := range []ccl.Request{consecutive(op, 16, 8, 1<<20), consecutive(op, 5, 2, 999), strided(op, 8, 4, 5, 3, 12345)} {
			d, err := Ring(req, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sd := d.(ccl.SequencedDAG)
			type seen struct {
				src, ch int32
				places  []int32
			}
			seqs := map[int32]*seen{}
			for id := range d.NumFlows() {
				f := d.Flow(ccl.FlowID(id))
				key, pos, ok := sd.Sequence(ccl.FlowID(id))
				if !ok || key < 0 || int(key) >= sd.Sequences() {
					t.Fatalf("%s: flow %d in sequence %d (ok %v) of %d", op, id, key, ok, sd.Sequences())
				}
				s := seqs[key]
				if s == nil {
					s = &seen{src: f.Src, ch: f.Channel}
					seqs[key] = s
				}
				if f.Src != s.src || f.Channel != s.ch || pos != f.Chunk {
					t.Fatalf("%s: flow %d (src %d, channel %d, step %d) at place %d of the sequence of src %d, channel %d",
						op, id, f.Src, f.Channel, f.Chunk, pos, s.src, s.ch)
				}
				s.places = append(s.places, pos)
			}
			for key, s := range seqs {
				for i, p := range s.places {
					if p != int32(i) {
						t.Fatalf("%s: sequence %d holds places %v, want 0, 1, ...", op, key, s.places)
					}
				}
			}
		}
	}
	req := consecutive(ccl.OpAllReduce, 16, 8, 1<<20)
	d, err := Ring(req, Options{PXN: true})
	if err != nil {
		t.Fatal(err)
	}
	for id := range d.NumFlows() {
		if _, _, ok := d.(ccl.SequencedDAG).Sequence(ccl.FlowID(id)); ok {
			t.Fatalf("PXN flow %d is in a sequence", id)
		}
	}
}
