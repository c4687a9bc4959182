package algo

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"simd/ccl"
	"simd/ccl/nccl"
)

// measured is what the generated DAG really holds, counted flow by flow.
type measured struct {
	flows, roots, leaves, stored int
	replay                       int  // most flows started in one time unit of a unit-time replay
	forest                       bool // no flow has two parents
}

// measure counts d: roots and leaves, what it stores, and a replay in which a flow starts when
// its last parent has finished and every flow takes one time unit.
func measure(a Name, d ccl.DAG) measured {
	n := d.NumFlows()
	m := measured{flows: n, forest: true}
	switch fd := d.(type) {
	case *ccl.FlowDAG:
		m.stored = len(fd.Flows)
	default:
		if a == Tree || a == NVLS || a == NVLSTree {
			// nccl's chunked DAGs keep one template per channel: the flows of chunk 0.
			for i := range n {
				if d.Flow(ccl.FlowID(i)).Chunk == 0 {
					m.stored++
				}
			}
		}
	}
	start := make([]int, n) // a parent always has a smaller id in every generator
	var buf []ccl.FlowID
	perTime := map[int]int{}
	for i := range n {
		buf = d.Parents(ccl.FlowID(i), buf[:0])
		if len(buf) == 0 {
			m.roots++
		}
		if len(buf) > 1 {
			m.forest = false
		}
		for _, p := range buf {
			if int(p) >= i {
				panic(fmt.Sprintf("flow %d has parent %d", i, p))
			}
			start[i] = max(start[i], start[p]+1)
		}
		perTime[start[i]]++
		if len(d.Children(ccl.FlowID(i), buf[:0])) == 0 {
			m.leaves++
		}
	}
	for _, c := range perTime {
		m.replay = max(m.replay, c)
	}
	return m
}

// group builds a request: n ranks from first, stride apart, gps GPUs per server.
func group(op ccl.Op, n, gps, first, stride int) ccl.Request {
	r := ccl.Request{Op: op, GPUsPerServer: gps, Bytes: 3 << 20}
	for i := range n {
		r.Ranks = append(r.Ranks, int32(first+i*stride))
	}
	last := int(r.Ranks[n-1]) + 1
	r.TotalGPUs = (last + gps - 1) / gps * gps
	return r
}

// shapes are the placements the tests try for n ranks: consecutive from rank 0, consecutive
// from the middle of a server, and strided as data-parallel groups are.
func shapes(n int) []ccl.Request {
	var out []ccl.Request
	for _, gps := range []int{1, 2, 4, 8} {
		out = append(out, group(ccl.OpNone, n, gps, 0, 1))
		if gps >= 4 {
			out = append(out, group(ccl.OpNone, n, gps, gps/2, 1), group(ccl.OpNone, n, gps, 1, 2))
		}
		if gps == 8 {
			out = append(out, group(ccl.OpNone, n, gps, 3, 4), group(ccl.OpNone, n, gps, 0, 8))
		}
	}
	return out
}

func sizes(short bool) []int {
	if short {
		return []int{2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32}
	}
	var out []int
	for n := 2; n <= 20; n++ {
		out = append(out, n)
	}
	return append(out, 23, 24, 30, 31, 32, 36, 40, 47, 48)
}

// checkFootprint compares FootprintOf with the generated DAG; it returns false if both refused.
func checkFootprint(t *testing.T, a Name, req ccl.Request, p Params) bool {
	t.Helper()
	name := fmt.Sprintf("%s %s n=%d gps=%d ranks %v… %+v channels %d", a, req.Op, len(req.Ranks), req.GPUsPerServer, req.Ranks[:min(4, len(req.Ranks))], p, req.Channels)
	f, ferr := FootprintOf(a, req, p)
	d, gerr := Generate(a, req, p)
	if gerr != nil || ferr != nil {
		if gerr == nil || ferr == nil || gerr.Error() != ferr.Error() {
			t.Errorf("%s: FootprintOf error %v, Generate error %v", name, ferr, gerr)
		}
		return false
	}
	m := measure(a, d)
	if f.Flows != int64(m.flows) || f.Roots != int64(m.roots) || f.Stored != int64(m.stored) {
		t.Errorf("%s: footprint %+v; the DAG has %d flows, %d roots, %d stored", name, f, m.flows, m.roots, m.stored)
	}
	// Roots and leaves are antichains; the replay's busiest time unit is one too.
	if f.Width < int64(m.replay) || f.Width < int64(m.leaves) || f.Width < int64(m.roots) || f.Width > f.Flows {
		t.Errorf("%s: width %d; replay %d, leaves %d, roots %d, flows %d", name, f.Width, m.replay, m.leaves, m.roots, m.flows)
	}
	// Where no flow has two parents the largest antichain is the leaves, and the rings'
	// and Multi-Ring's bounds claim to be exactly that.
	if m.forest && (a == Ring || a == PXN || a == MultiRing) && f.Width != int64(m.leaves) {
		t.Errorf("%s: width %d, but the DAG is a forest with %d leaves", name, f.Width, m.leaves)
	}
	return true
}

// paramsFor are the parameters the exactness tests try for algorithm a: several chunk counts
// for the chunked algorithms, both PXN variants for PXN.
func paramsFor(a Name) []Params {
	switch a {
	case Tree, NVLS, NVLSTree:
		return []Params{{}, {Chunks: 1}, {Chunks: 3}}
	case PXN:
		return []Params{{PXN: nccl.PXNSimCCL}, {PXN: nccl.PXNNCCL}}
	}
	return []Params{{}}
}

// paramsKey names an algorithm with the parameters that change its DAG's shape.
func paramsKey(a Name, p Params) string {
	if a == PXN {
		return string(a) + "/" + p.PXN.String()
	}
	return string(a)
}

// FootprintOf counts exactly what Generate builds, for every algorithm, every operation it
// supports (and refuses the others as Generate does), group sizes 2..48 placed in several ways
// over 1, 2, 4 and 8 GPUs per server, several chunk counts and both PXN variants.
func TestFootprintMatchesGenerate(t *testing.T) {
	ops := []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather, ccl.OpAllToAll}
	built := map[string]int{}
	for _, n := range sizes(testing.Short()) {
		for _, sh := range shapes(n) {
			for _, a := range Names {
				for _, op := range ops {
					if a == MultiRing && op != ccl.OpAllGather && n > 24 {
						continue // Multi-Ring has n³ flows; the all-gather covers the sizes
					}
					req := sh
					req.Op = op
					for _, p := range paramsFor(a) {
						if checkFootprint(t, a, req, p) {
							built[paramsKey(a, p)]++
						}
					}
				}
			}
		}
	}
	t.Logf("DAGs compared: %v", built)
	for _, a := range Names {
		for _, p := range paramsFor(a) {
			if built[paramsKey(a, p)] == 0 {
				t.Errorf("no DAG of %s %+v was compared", a, p)
			}
		}
	}
}

// Explicit channel counts, default chunk counts that depend on the size, single ranks, and
// groups with different member counts per server.
func TestFootprintOptions(t *testing.T) {
	cases := []struct {
		a      Name
		op     ccl.Op
		req    ccl.Request
		chunks int
	}{
		{Ring, ccl.OpAllReduce, withChannels(group(0, 16, 8, 0, 1), 3), 0},
		{PXN, ccl.OpAllGather, withChannels(group(0, 16, 4, 0, 1), 5), 0},
		{PXN, ccl.OpAllReduce, withChannels(group(0, 12, 4, 0, 1), 1), 0},
		{Tree, ccl.OpAllReduce, withChannels(group(0, 24, 8, 0, 1), 3), 2},
		{NVLSTree, ccl.OpAllReduce, withChannels(group(0, 12, 4, 2, 1), 5), 0},
		{Tree, ccl.OpAllReduce, withBytes(group(0, 32, 4, 0, 1), 1<<30), 0},     // 64 chunks (the cap)
		{NVLSTree, ccl.OpAllReduce, withBytes(group(0, 16, 8, 0, 1), 5<<20), 0}, // 3 chunks of 128 KiB
		{Tree, ccl.OpAllReduce, withBytes(group(0, 16, 8, 0, 1), 0), 0},
		{NVLS, ccl.OpAllReduce, group(0, 8, 8, 0, 1), 7},
		{Ring, ccl.OpAllReduce, group(0, 12, 8, 0, 1), 0}, // 8 + 4 members
		{Tree, ccl.OpAllReduce, group(0, 11, 4, 2, 1), 0}, // 2 + 4 + 4 + 1
		{PXN, ccl.OpAllToAll, group(0, 11, 4, 2, 1), 0},
		{MultiRing, ccl.OpAllReduce, group(0, 32, 8, 0, 1), 0},
		// Rails counted in a map when servers are much larger than the group: 0→65 and 1→64
		// are relayed through 1 and 0, and 64→1, 65→0 through 65 and 64.
		{PXN, ccl.OpAllToAll, ccl.Request{Ranks: []int32{0, 1, 64, 65, 130}, GPUsPerServer: 64, TotalGPUs: 192, Bytes: 1 << 20}, 0},
		// SimCCL's integer chunks: a ring of fewer bytes than ranks × channels has no flow
		// (with and without PXN); one byte more than that has every flow, of 1 byte.
		{Ring, ccl.OpAllReduce, truncated(withBytes(group(0, 16, 8, 0, 1), 4)), 0},
		{Ring, ccl.OpAllGather, truncated(withBytes(group(0, 16, 8, 0, 1), 127)), 0},
		{Ring, ccl.OpReduceScatter, truncated(withBytes(group(0, 16, 8, 0, 1), 128)), 0},
		{PXN, ccl.OpAllReduce, truncated(withBytes(group(0, 16, 8, 0, 1), 100)), 0},
		{PXN, ccl.OpAllReduce, truncated(withBytes(group(0, 16, 8, 0, 1), 129)), 0},
		{NVLS, ccl.OpAllReduce, truncated(withBytes(group(0, 8, 8, 0, 1), 3)), 0},
		{Direct, ccl.OpAllToAll, truncated(withBytes(group(0, 16, 8, 0, 1), 15)), 0},
	}
	for _, n := range []int{1} {
		for _, a := range Names {
			for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpAllGather, ccl.OpReduceScatter, ccl.OpAllToAll} {
				if Supports(a, op) {
					cases = append(cases, struct {
						a      Name
						op     ccl.Op
						req    ccl.Request
						chunks int
					}{a, op, group(0, n, 8, 0, 1), 0})
				}
			}
		}
	}
	for _, c := range cases {
		c.req.Op = c.op
		ps := []Params{{Chunks: c.chunks}}
		if c.a == PXN {
			ps = append(ps, Params{Chunks: c.chunks, PXN: nccl.PXNNCCL})
		}
		for _, p := range ps {
			checkFootprint(t, c.a, c.req, p)
		}
	}
}

func withChannels(r ccl.Request, c int) ccl.Request { r.Channels = c; return r }
func truncated(r ccl.Request) ccl.Request           { r.Truncate = true; return r }
func withBytes(r ccl.Request, b int64) ccl.Request  { r.Bytes = b; return r }

// What Generate refuses, FootprintOf refuses with the same error.
func TestFootprintRefuses(t *testing.T) {
	dup := group(ccl.OpAllReduce, 4, 8, 0, 1)
	dup.Ranks[2] = 1
	desc := group(ccl.OpAllReduce, 4, 8, 0, 1)
	desc.Ranks[2], desc.Ranks[3] = 3, 2
	out := group(ccl.OpAllReduce, 4, 8, 0, 1)
	out.TotalGPUs = 3
	neg := group(ccl.OpAllReduce, 4, 8, 0, 1)
	neg.Bytes = -1
	cases := []struct {
		a      Name
		req    ccl.Request
		chunks int
		want   string
	}{
		{Tree, withOp(group(0, 8, 8, 0, 1), ccl.OpAllGather), 0, "does not implement"},
		{Direct, group(ccl.OpAllReduce, 8, 8, 0, 1), 0, "does not implement"},
		{Ring, ccl.Request{Op: ccl.OpAllReduce, GPUsPerServer: 8, TotalGPUs: 8}, 0, "empty"},
		{Ring, dup, 0, "twice"},
		{Ring, desc, 0, "ascending"},
		{RHD, out, 0, "not one of"},
		{Ring, neg, 0, "bytes"},
		{NVLS, group(ccl.OpAllReduce, 16, 8, 0, 1), 0, "spans 2 servers"},
		{NVLSTree, group(ccl.OpAllReduce, 8, 8, 0, 1), 0, "one server"},
		{PXN, group(ccl.OpAllReduce, 12, 8, 0, 1), 0, "same number"},
		{PXN, group(ccl.OpReduceScatter, 12, 8, 0, 1), 0, "same number"},
		{MultiRing, group(ccl.OpAllReduce, 6, 8, 0, 1), 0, "no decomposition"},
		{MultiRing, group(ccl.OpAllGather, 12, 4, 1, 1), 0, "same number"}, // 3 + 4 + 4 + 1
		{MultiRing, group(ccl.OpAllGather, 10, 5, 0, 1), 0, "no decomposition"},
		{Tree, group(ccl.OpAllReduce, 8, 8, 0, 1), -1, "negative chunk"},
		{Ring, group(ccl.OpAllReduce, 8, 8, 0, 1), -2, "negative chunk"},
	}
	for _, c := range cases {
		_, ferr := FootprintOf(c.a, c.req, Params{Chunks: c.chunks})
		_, gerr := Generate(c.a, c.req, Params{Chunks: c.chunks})
		if ferr == nil || gerr == nil || ferr.Error() != gerr.Error() || !strings.Contains(ferr.Error(), c.want) {
			t.Errorf("%s %v: FootprintOf %v, Generate %v; want %q", c.a, c.req.Ranks, ferr, gerr, c.want)
		}
	}
	// An unknown PXN variant, in both.
	bad := Params{PXN: 9}
	_, ferr := FootprintOf(PXN, group(ccl.OpAllReduce, 16, 8, 0, 1), bad)
	_, gerr := Generate(PXN, group(ccl.OpAllReduce, 16, 8, 0, 1), bad)
	if ferr == nil || gerr == nil || ferr.Error() != gerr.Error() {
		t.Errorf("unknown PXN variant: FootprintOf %v, Generate %v", ferr, gerr)
	}
	// Algorithms without chunks ignore a negative count, in both.
	if _, err := FootprintOf(RHD, group(ccl.OpAllReduce, 8, 8, 0, 1), Params{Chunks: -1}); err != nil {
		t.Errorf("rhd with chunks -1: %v", err)
	}
}

func withOp(r ccl.Request, op ccl.Op) ccl.Request { r.Op = op; return r }

// Huge groups are counted in closed form: a direct all-to-all over a million ranks has
// n(n−1) flows, all of them roots and in flight at once, none stored (its DAG is arithmetic),
// and counting them takes about as long
// as checking the ranks.
func TestFootprintHuge(t *testing.T) {
	const n = 1_000_000
	req := group(ccl.OpAllToAll, n, 8, 0, 1)
	start := time.Now()
	f, err := FootprintOf(Direct, req, Params{})
	took := time.Since(start)
	want := int64(n) * (n - 1)
	if err != nil || f != (Footprint{Flows: want, Roots: want, Width: want}) {
		t.Errorf("direct all-to-all over %d ranks: %+v, %v; want %d flows, roots and width, none stored", n, f, err, want)
	}
	// O(n) with a small constant: a scan of the ranks, nowhere near n² (10¹² flows).
	if took > 200*time.Millisecond {
		t.Errorf("direct all-to-all over %d ranks took %v", n, took)
	}
	t.Logf("direct all-to-all over %d ranks: %v", n, took)

	// The others, on the same million ranks: exact closed forms.
	req.Op = ccl.OpAllReduce
	pxn, err := FootprintOf(PXN, req, Params{})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := FootprintOf(Ring, req, Params{})
	if err != nil || ring.Flows != 8*2*(n-1)*n || ring.Roots != 8*n || ring.Stored != 0 {
		t.Errorf("ring all-reduce: %+v, %v", ring, err)
	}
	// SimCCL's PXN: N more flows per step and channel (the network hops), as wide as the ring.
	if pxn.Flows != ring.Flows+8*2*(n-1)*(n/8) || pxn.Roots != ring.Roots || pxn.Width != ring.Width {
		t.Errorf("PXN ring %+v against the ring %+v", pxn, ring)
	}
	nc, err := FootprintOf(PXN, req, Params{PXN: nccl.PXNNCCL})
	if err != nil || nc.Flows <= ring.Flows || nc.Width <= ring.Width {
		t.Errorf("NCCL-like PXN ring %+v not above the ring %+v: %v", nc, ring, err)
	}
	tree, err := FootprintOf(Tree, req, Params{Chunks: 2})
	if err != nil || tree.Flows != 16*2*2*(n-1) || tree.Stored != 16*2*(n-1) {
		t.Errorf("tree all-reduce: %+v, %v", tree, err)
	}
	rhd, err := FootprintOf(RHD, req, Params{})
	// 10⁶ = 2^19 + 475,712: 2·19·2^19 + 2·475,712 flows.
	if err != nil || rhd.Flows != 2*19*(1<<19)+2*(n-(1<<19)) || rhd.Roots != 1<<19 {
		t.Errorf("rhd all-reduce: %+v, %v", rhd, err)
	}
}

// Counts beyond int64 are errors that say which count overflowed.
func TestFootprintOverflow(t *testing.T) {
	req := group(ccl.OpAllReduce, 64, 8, 0, 1)
	if _, err := FootprintOf(Tree, req, Params{Chunks: math.MaxInt}); !errors.Is(err, errOverflow) || !strings.Contains(err.Error(), "number of flows") {
		t.Errorf("tree with %d chunks: %v", math.MaxInt, err)
	}
	req.Channels = math.MaxInt / 4
	if _, err := FootprintOf(Ring, req, Params{}); !errors.Is(err, errOverflow) || !strings.Contains(err.Error(), "number of flows") {
		t.Errorf("ring with %d channels: %v", req.Channels, err)
	}
	// A channel count just below the limit still counts.
	req.Channels = math.MaxInt / (2 * 63 * 64)
	if f, err := FootprintOf(Ring, req, Params{}); err != nil || f.Flows != int64(req.Channels)*2*63*64 {
		t.Errorf("ring with %d channels: %+v, %v", req.Channels, f, err)
	}
	f := Footprint{Flows: 1 << 20, Roots: 1, Stored: 1, Width: 1 << 40}
	if _, err := f.Scaled(1 << 30); !errors.Is(err, errOverflow) || !strings.Contains(err.Error(), "flows in flight") {
		t.Errorf("Scaled: %v", err)
	}
	if g, err := f.Scaled(3); err != nil || g != (Footprint{Flows: 3 << 20, Roots: 3, Stored: 3, Width: 3 << 40}) {
		t.Errorf("Scaled(3) = %+v, %v", g, err)
	}
}

// groupOffsets and firstGroup follow ccl.Layout.Groups.
func TestGroupOffsets(t *testing.T) {
	kinds := []ccl.GroupKind{ccl.GroupTP, ccl.GroupDP, ccl.GroupPP, ccl.GroupEP, ccl.GroupDPEP, ccl.GroupNone}
	for _, l := range []ccl.Layout{
		{GPUs: 32, GPUsPerServer: 8, TP: 4, PP: 1, EP: 2},
		{GPUs: 48, GPUsPerServer: 8, TP: 2, PP: 3, EP: 4},
		{GPUs: 24, GPUsPerServer: 6, TP: 4, PP: 1, EP: 3},
		{GPUs: 64, GPUsPerServer: 8, TP: 8, PP: 2, EP: 1},
		{GPUs: 16, GPUsPerServer: 4, TP: 1, PP: 4, EP: 2},
	} {
		for _, k := range kinds {
			groups := l.Groups(k)
			first := firstGroup(l, k)
			var got [][]int
			groupOffsets(l, k, func(d int) {
				g := make([]int, len(first))
				for i, r := range first {
					g[i] = r + d
				}
				got = append(got, g)
			})
			if first == nil {
				got = nil
			}
			if fmt.Sprint(got) != fmt.Sprint(groups) {
				t.Errorf("%+v %s: offsets give %v, Groups %v", l, k, got, groups)
			}
		}
	}
}

// Selector.Footprint is Plan's DAGs counted: the largest of each count over the groups, their
// number and the first group's choice — also when groups of one kind sit differently on their
// servers and get different algorithms.
func TestSelectorFootprint(t *testing.T) {
	cases := []struct {
		opt  Options
		l    ccl.Layout
		kind ccl.GroupKind
		op   ccl.Op
	}{
		{Options{GPUType: "H100"}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 4, PP: 1, EP: 2}, ccl.GroupTP, ccl.OpAllReduce},
		{Options{GPUType: "H100"}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 4, PP: 1, EP: 2}, ccl.GroupDP, ccl.OpAllGather},
		{Options{GPUType: "H100", PXN: true}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 2, PP: 1, EP: 8}, ccl.GroupEP, ccl.OpAllToAll},
		{Options{GPUType: "H100", PXN: true, PXNVariant: nccl.PXNNCCL}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 2, PP: 1, EP: 8}, ccl.GroupEP, ccl.OpAllToAll},
		{Options{GPUType: "H100", PXN: true}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 16, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllGather},
		{Options{GPUType: "H100", PXN: true}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 16, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpReduceScatter},
		{Options{GPUType: "H100", NVLS: true}, ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 16, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllReduce},
		{Options{GPUType: "H100"}, ccl.Layout{GPUs: 48, GPUsPerServer: 8, TP: 2, PP: 3, EP: 4}, ccl.GroupDPEP, ccl.OpReduceScatter},
		{Options{GPUType: "H100"}, ccl.Layout{GPUs: 48, GPUsPerServer: 8, TP: 2, PP: 3, EP: 4}, ccl.GroupPP, ccl.OpAllReduce},
		{Options{GPUType: "H100", Force: map[ccl.GroupKind]Name{ccl.GroupDP: Tree}}, ccl.Layout{GPUs: 64, GPUsPerServer: 8, TP: 2, PP: 1, EP: 1}, ccl.GroupDP, ccl.OpAllReduce},
		// Groups that differ: 6 GPUs per server, TP 4 — ranks 0–3 on one server (ring), 4–7
		// on two (PXN ring).
		{Options{GPUType: "H100", PXN: true}, ccl.Layout{GPUs: 24, GPUsPerServer: 6, TP: 4, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllReduce},
		{Options{GPUType: "H100", PXN: true, PXNVariant: nccl.PXNNCCL}, ccl.Layout{GPUs: 24, GPUsPerServer: 6, TP: 4, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllGather},
		{Options{Policy: PolicyNCCL, GPUType: "H100"}, ccl.Layout{GPUs: 24, GPUsPerServer: 6, TP: 4, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllReduce},
		// A tree on ranks 6–11 (2 + 4 members) has more leaves than on 0–5 (one server).
		{Options{Force: map[ccl.GroupKind]Name{ccl.GroupEP: Tree}}, ccl.Layout{GPUs: 24, GPUsPerServer: 8, TP: 1, PP: 1, EP: 6}, ccl.GroupEP, ccl.OpAllReduce},
		{Options{GPUType: "H100"}, ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 1, PP: 1, EP: 1}, ccl.GroupTP, ccl.OpAllReduce},
	}
	differ, above := false, false
	for _, c := range cases {
		s, err := NewSelector(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		plans, perr := s.Plan(c.l, c.l.GPUs, c.op, c.kind, 1<<20, 0)
		per, groups, choice, ferr := s.Footprint(c.l, c.l.GPUs, c.op, c.kind, 1<<20, 0)
		if perr != nil || ferr != nil {
			t.Errorf("%+v %s: Plan %v, Footprint %v", c.l, c.kind, perr, ferr)
			continue
		}
		var want, first Footprint
		for i, p := range plans {
			m := measure(p.Choice.Algorithm, p.DAG)
			f, err := FootprintOf(p.Choice.Algorithm, ccl.Request{Op: c.op, Ranks: p.Ranks, GPUsPerServer: c.l.GPUsPerServer, TotalGPUs: c.l.GPUs, Bytes: 1 << 20}, Params{PXN: c.opt.PXNVariant})
			if err != nil || f.Flows != int64(m.flows) {
				t.Fatalf("%v: %+v, %v; %d flows", p.Ranks, f, err, m.flows)
			}
			want = Footprint{max(want.Flows, f.Flows), max(want.Roots, f.Roots), max(want.Stored, f.Stored), max(want.Width, f.Width)}
			if i == 0 {
				first = f
			} else if f != first || p.Choice.Algorithm != plans[0].Choice.Algorithm {
				differ = true
			}
		}
		if per != first {
			above = true // a later group holds more than the first in some count
		}
		if per != want || groups != len(plans) || (len(plans) > 0 && choice != plans[0].Choice) {
			t.Errorf("%+v %s %s: Footprint %+v, %d groups, %s; Plan %+v, %d groups, %s", c.l, c.kind, c.op, per, groups, choice.Algorithm, want, len(plans), plans[0].Choice.Algorithm)
		}
	}
	if !differ || !above {
		t.Errorf("no case had groups of one kind with different footprints (%v) or a first group below the others (%v)", differ, above)
	}
	// Plan's errors: NVLS forced on a kind whose groups span servers.
	s, _ := NewSelector(Options{Force: map[ccl.GroupKind]Name{ccl.GroupDP: NVLS}})
	l := ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 2, PP: 1, EP: 1}
	_, perr := s.Plan(l, 32, ccl.OpAllReduce, ccl.GroupDP, 1<<20, 0)
	_, _, _, ferr := s.Footprint(l, 32, ccl.OpAllReduce, ccl.GroupDP, 1<<20, 0)
	if perr == nil || ferr == nil || perr.Error() != ferr.Error() {
		t.Errorf("forced NVLS across servers: Plan %v, Footprint %v", perr, ferr)
	}
}

// BenchmarkFootprintOf counts the DAGs of a 16,384-rank group (2,048 servers of 8).
func BenchmarkFootprintOf(b *testing.B) {
	const n = 16384
	for _, c := range []struct {
		a  Name
		op ccl.Op
	}{
		{Direct, ccl.OpAllToAll}, {PXN, ccl.OpAllToAll}, {Ring, ccl.OpAllReduce}, {PXN, ccl.OpAllReduce},
		{Tree, ccl.OpAllReduce}, {MultiRing, ccl.OpAllGather}, {RHD, ccl.OpAllReduce},
	} {
		req := group(c.op, n, 8, 0, 1)
		b.Run(fmt.Sprintf("%s-%s", c.a, c.op), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FootprintOf(c.a, req, Params{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
