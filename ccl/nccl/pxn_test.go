package nccl

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"simd/ccl"
)

// simcclPXN builds SimCCL v1.6's PXN ring all-reduce or reduce-scatter from its rules
// (ccl-facts.md §1.3–1.4), independently of Ring, in the order SimCCL creates the flows:
// channel by channel, step by step, and inside a step rank by rank, ascending.
//
// On channel c every rank knows its ring predecessor and successor and, on its server, the
// channel's first rank (node_recv, the entry) and last rank (node_send, the exit). At every
// step:
//   - an exit that is not also its server's entry (its server has two members or more, the
//     group several servers) sends its flow to its own entry over NVLink, labelled "RING",
//     and the entry sends the same data on to the exit's successor (the next server's entry),
//     labelled "PXN_INIT" in an all-reduce and at step 0 of a reduce-scatter, "RING"
//     otherwise; the second waits for the first;
//   - every other rank sends its flow to its successor, labelled "RING";
//   - a rank's flow (an exit's NVLink hop included) waits for the flow that delivered its
//     predecessor's data of the step before: the predecessor's flow, or when the predecessor
//     is an exit, that exit's network hop (SimCCL's task_list).
//
// The data: at reduce-scatter step s ring position p sends the chunk that ends at p−s−1; at
// gather step t the chunk of p−t; the two hops of an exit carry the exit's chunk. Piece
// numbering is Ring's: chunk of group index i on channel c is piece i·C+c.
func simcclPXN(t *testing.T, req ccl.Request) *ccl.FlowDAG {
	t.Helper()
	rings := simcclRings(req.Ranks, req.GPUsPerServer)
	n, C := len(req.Ranks), len(rings)
	gps := int32(req.GPUsPerServer)
	servers := map[int32]bool{}
	gi := map[int32]int{}
	for i, r := range req.Ranks {
		servers[r/gps] = true
		gi[r] = i
	}
	var steps, rs int
	switch req.Op {
	case ccl.OpAllReduce:
		steps, rs = 2*(n-1), n-1
	case ccl.OpReduceScatter:
		steps, rs = n-1, n-1
	default:
		t.Fatalf("SimCCL's PXN does not run %s", req.Op)
	}
	b := ccl.NewDAGBuilder(ccl.Collective{Op: req.Op, Ranks: req.Ranks, GPUsPerServer: req.GPUsPerServer,
		TotalGPUs: req.TotalGPUs, Bytes: req.Bytes, Pieces: n * C})
	for c, ring := range rings {
		pos := map[int32]int{}
		for p, r := range ring {
			pos[r] = p
		}
		next := func(r int32) int32 { return ring[(pos[r]+1)%n] }
		prev := func(r int32) int32 { return ring[(pos[r]+n-1)%n] }
		sameServer := func(a, b int32) bool { return a/gps == b/gps }
		// The entry and exit of r's server on this channel: the first and last rank of the
		// server's stretch of the ring.
		entry := func(r int32) int32 {
			for p := pos[r]; ; p = (p + n - 1) % n {
				if !sameServer(ring[(p+n-1)%n], r) || len(servers) == 1 {
					return ring[p]
				}
			}
		}
		exit := func(r int32) int32 {
			for p := pos[r]; ; p = (p + 1) % n {
				if !sameServer(ring[(p+1)%n], r) || len(servers) == 1 {
					return ring[p]
				}
			}
		}
		delivered := map[int32]ccl.FlowID{} // task_list: the flow that carried r's data on
		for s := range steps {
			chunk := func(r int32) int32 {
				p := pos[r]
				o := (p - s - 1 + 2*n) % n
				if s >= rs {
					o = (p - (s - rs) + n) % n
				}
				return int32(gi[ring[o]]*C + c)
			}
			add := func(src, dst int32, kind ccl.FlowKind, piece int32, parents ...ccl.FlowID) ccl.FlowID {
				f := ccl.Flow{Src: src, Dst: dst, Channel: int32(c), Chunk: int32(s), Kind: kind, PieceLo: piece, PieceHi: piece + 1}
				f.Bytes = b.Collective().RangeBytes(piece, piece+1)
				return b.Add(f, parents...)
			}
			now := map[int32]ccl.FlowID{}
			for _, r := range req.Ranks {
				var parents []ccl.FlowID
				if s > 0 {
					parents = []ccl.FlowID{delivered[prev(r)]}
				}
				if len(servers) > 1 && exit(r) == r && entry(r) != r {
					nv := add(r, entry(r), ccl.KindRing, chunk(r), parents...)
					label := ccl.KindRing
					if req.Op == ccl.OpAllReduce || s == 0 {
						label = ccl.KindPXNInit
					}
					now[r] = add(entry(r), next(r), label, chunk(r), nv)
					continue
				}
				now[r] = add(r, next(r), ccl.KindRing, chunk(r), parents...)
			}
			delivered = now
		}
	}
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Ring with PXN (SimCCL's variant, the default) is SimCCL's PXN flow for flow: the same flows
// under the same ids (SimCCL's creation order), with the same parents, on 2 servers × 4 and
// 2 × 8 GPUs, more servers, DP-style groups and explicit channel counts.
func TestPXNIsSimCCLs(t *testing.T) {
	for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter} {
		for _, req := range []ccl.Request{
			consecutive(op, 8, 4, 8*4*1000),
			consecutive(op, 16, 8, 64<<20),
			consecutive(op, 4, 2, 4*2*100+3), // uneven bytes: pieces differ by a byte
			consecutive(op, 12, 4, 12*4*10),
			consecutive(op, 24, 8, 24*8),
			strided(op, 8, 8, 2, 1, 8*4*10),                // DP group of TP=2 on 2 servers
			strided(op, 16, 8, 4, 3, 16*2*10),              // DP group of TP=4 on 8 servers
			explicitRanks(op, 8, 32, 4*2*10, 2, 6, 18, 22), // same rails on servers 0 and 2
		} {
			t.Run(fmt.Sprintf("%s/%v/gps%d", op, req.Ranks, req.GPUsPerServer), func(t *testing.T) {
				d, err := Ring(req, Options{PXN: true})
				if err != nil {
					t.Fatal(err)
				}
				sameDAG(t, d, simcclPXN(t, req))
				if err := ccl.CheckWith(d, ccl.CheckOptions{AllowRedundant: op == ccl.OpAllReduce}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// Every flow of SimCCL's PXN reduce-scatter on 2 servers of 2 GPUs (ranks 0–3, 400 bytes:
// 50 per flow), written out from the rules: channel 0 is the ring 0 1 | 2 3 (entries 0 and 2,
// exits 1 and 3), channel 1 is 1 0 | 3 2 (entries 1 and 3, exits 0 and 2). Each line is one
// step of one channel, its flows in SimCCL's order: "src→dst kind parent", the parent as
// src→dst@step or "-".
func TestPXNReduceScatterHandTable(t *testing.T) {
	const table = `
c0 s0: 0→1 RING -      1→0 RING -      0→2 PXN_INIT 1→0@0 2→3 RING -      3→2 RING -      2→0 PXN_INIT 3→2@0
c0 s1: 0→1 RING 2→0@0  1→0 RING 0→1@0  0→2 RING 1→0@1     2→3 RING 0→2@0  3→2 RING 2→3@0  2→0 RING 3→2@1
c0 s2: 0→1 RING 2→0@1  1→0 RING 0→1@1  0→2 RING 1→0@2     2→3 RING 0→2@1  3→2 RING 2→3@1  2→0 RING 3→2@2
c1 s0: 0→1 RING -      1→3 PXN_INIT 0→1@0 1→0 RING -      2→3 RING -      3→1 PXN_INIT 2→3@0 3→2 RING -
c1 s1: 0→1 RING 1→0@0  1→3 RING 0→1@1  1→0 RING 3→1@0     2→3 RING 3→2@0  3→1 RING 2→3@1  3→2 RING 1→3@0
c1 s2: 0→1 RING 1→0@1  1→3 RING 0→1@2  1→0 RING 3→1@1     2→3 RING 3→2@1  3→1 RING 2→3@2  3→2 RING 1→3@1`
	d, err := Ring(consecutive(ccl.OpReduceScatter, 4, 2, 400), Options{PXN: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		head, flows, _ := strings.Cut(line, ":")
		var c, s int
		fmt.Sscanf(head, "c%d s%d", &c, &s)
		f := strings.Fields(flows)
		for i := 0; i < len(f); i += 3 {
			want = append(want, fmt.Sprintf("c%d s%d %s %s %s", c, s, f[i], f[i+1], f[i+2]))
		}
	}
	var got []string
	for i := range d.NumFlows() {
		f := d.Flow(ccl.FlowID(i))
		parent := "-"
		if ps := d.Parents(ccl.FlowID(i), nil); len(ps) == 1 {
			p := d.Flow(ps[0])
			parent = fmt.Sprintf("%d→%d@%d", p.Src, p.Dst, p.Chunk)
		}
		if f.Bytes != 50 {
			t.Errorf("%s: want 50 bytes", flowString(f))
		}
		got = append(got, fmt.Sprintf("c%d s%d %d→%d %s %s", f.Channel, f.Chunk, f.Src, f.Dst, f.Kind, parent))
	}
	if !slices.Equal(got, want) {
		t.Errorf("flows (in id order):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := ccl.Check(d); err != nil {
		t.Error(err)
	}
}

// SimCCL's PXN all-reduce delivers chunks to ranks that hold them (its relays forward the gather
// phase too): the strict checker refuses it, the one that allows redundant deliveries of
// finished chunks accepts it. Its reduce-scatter has no such delivery.
func TestPXNSimCCLRedundancy(t *testing.T) {
	opt := Options{PXN: true}
	d, err := Ring(consecutive(ccl.OpAllReduce, 8, 4, 8*4*10), opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := ccl.Check(d); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("strict check: %v", err)
	}
	if !opt.RedundantDeliveries(ccl.OpAllReduce) || opt.RedundantDeliveries(ccl.OpReduceScatter) {
		t.Error("RedundantDeliveries")
	}
	nccl := Options{PXN: true, PXNVariant: PXNNCCL}
	if nccl.RedundantDeliveries(ccl.OpAllReduce) || (&Options{}).RedundantDeliveries(ccl.OpAllReduce) {
		t.Error("RedundantDeliveries of the NCCL-like variant or without PXN")
	}
}

// SimCCL v1.6 never runs PXN for all-gather (AS_PXN_ENABLE is compared by pointer) nor for
// all-to-all: with its variant they are the plain ring and the plain all-to-all; the NCCL-like
// variant relays both.
func TestPXNSimCCLAllGatherAndAllToAll(t *testing.T) {
	for _, op := range []ccl.Op{ccl.OpAllGather, ccl.OpAllToAll} {
		req := consecutive(op, 16, 8, 16*8*100)
		plain, err := Ring(req, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Ring(req, Options{PXN: true})
		if err != nil {
			t.Fatal(err)
		}
		sameDAG(t, d, plain)
		nc, err := Ring(req, Options{PXN: true, PXNVariant: PXNNCCL})
		if err != nil {
			t.Fatal(err)
		}
		relayed := 0
		for i := range nc.NumFlows() {
			if nc.Flow(ccl.FlowID(i)).Kind == ccl.KindPXN {
				relayed++
			}
		}
		if relayed == 0 {
			t.Errorf("%s: the NCCL-like PXN relays nothing", op)
		}
	}
	// A group with uneven servers is refused by PXN only where PXN runs.
	ag := explicitRanks(ccl.OpAllGather, 4, 8, 10, 1, 2, 5)
	if _, err := Ring(ag, Options{PXN: true}); err != nil {
		t.Errorf("SimCCL's PXN all-gather refused an uneven group: %v", err)
	}
	if _, err := Ring(ag, Options{PXN: true, PXNVariant: PXNNCCL}); err == nil {
		t.Error("the NCCL-like PXN all-gather accepted an uneven group")
	}
}

// The 64 MiB all-reduce over 16 GPUs, 8 per server, with PXN has exactly the flows of SimAI
// v1.6's packet-level run: the same (src, dst, bytes) with the same count per pair
// (testdata/tp16_allreduce_64MB_pxn.txt, taken from that run's FCT log).
func TestPXNMatchesSimAIRun(t *testing.T) {
	f, err := os.Open("testdata/tp16_allreduce_64MB_pxn.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type key struct {
		src, dst int32
		bytes    int64
	}
	want := map[key]int{}
	total := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		var k key
		var cnt int
		if _, err := fmt.Sscan(line, &k.src, &k.dst, &k.bytes, &cnt); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		want[k] += cnt
		total += cnt
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	d, err := Ring(consecutive(ccl.OpAllReduce, 16, 8, 64<<20), Options{PXN: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[key]int{}
	for i := range d.NumFlows() {
		fl := d.Flow(ccl.FlowID(i))
		got[key{fl.Src, fl.Dst, fl.Bytes}]++
	}
	if d.NumFlows() != total {
		t.Errorf("%d flows, SimAI's run %d", d.NumFlows(), total)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%d→%d %d B: %d flows, SimAI's run %d", k.src, k.dst, k.bytes, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%d→%d %d B: %d flows, none in SimAI's run", k.src, k.dst, k.bytes, g)
		}
	}
}
