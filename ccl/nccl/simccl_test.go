package nccl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"simd/ccl"
)

// simcclRings is SimCCL's channel construction written out literally (§1.3): sort the group,
// take the first nlocal = n/nNodes ranks as the template, rotate it left by c for channel c, and
// lay node k's copy at an offset of k·delta, delta = Ranks[nlocal] − Ranks[0].
func simcclRings(ranks []int32, gps int) [][]int32 {
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	nodes := map[int32]bool{}
	for _, r := range sorted {
		nodes[r/int32(gps)] = true
	}
	n, nNodes := len(sorted), len(nodes)
	nlocal := n / nNodes
	L := sorted[:nlocal]
	var delta int32
	if nlocal < n {
		delta = ranks[nlocal] - ranks[0]
	}
	rings := make([][]int32, nlocal)
	for c := range rings {
		for k := range nNodes {
			for i := range nlocal {
				rings[c] = append(rings[c], L[(c+i)%nlocal]+int32(k)*delta)
			}
		}
	}
	return rings
}

// simcclFlow is a SingleFlow reduced to what simd must match.
type simcclFlow struct {
	src, dst      int32
	bytes         int64
	channel, step int32
	parent        string // the parent's src→dst, or "" for none
}

// simcclFlows is SimCCL's ring decomposition (§1.4) over the literal rings: per channel and
// step every rank sends S/(n·C) to its ring successor, waiting for the previous-step flow it
// received from its predecessor.
func simcclFlows(op ccl.Op, ranks []int32, gps int, bytes int64) map[string]simcclFlow {
	rings := simcclRings(ranks, gps)
	n, C := int64(len(ranks)), int64(len(rings))
	steps := n - 1
	if op == ccl.OpAllReduce {
		steps = 2 * (n - 1)
	}
	out := map[string]simcclFlow{}
	for c, ring := range rings {
		next, prev := map[int32]int32{}, map[int32]int32{}
		for i, r := range ring {
			next[r] = ring[(i+1)%len(ring)]
			prev[r] = ring[(i-1+len(ring))%len(ring)]
		}
		for s := int64(0); s < steps; s++ {
			for _, r := range ranks {
				f := simcclFlow{r, next[r], bytes / n / C, int32(c), int32(s), ""}
				if s > 0 {
					f.parent = fmt.Sprintf("%d→%d", prev[r], r)
				}
				out[fmt.Sprintf("c%d s%d %d→%d", c, s, r, next[r])] = f
			}
		}
	}
	return out
}

func simdFlows(t *testing.T, d ccl.DAG) map[string]simcclFlow {
	t.Helper()
	out := map[string]simcclFlow{}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		sf := simcclFlow{f.Src, f.Dst, f.Bytes, f.Channel, f.Chunk, ""}
		ps := d.Parents(ccl.FlowID(i), nil)
		if len(ps) > 1 {
			t.Fatalf("flow %s has %d parents", flowString(f), len(ps))
		}
		if len(ps) == 1 {
			p := d.Flow(ps[0])
			if p.Channel != f.Channel || p.Chunk != f.Chunk-1 {
				t.Fatalf("flow %s waits for %s, not a flow of the previous step", flowString(f), flowString(p))
			}
			sf.parent = fmt.Sprintf("%d→%d", p.Src, p.Dst)
		}
		key := fmt.Sprintf("c%d s%d %d→%d", f.Channel, f.Chunk, f.Src, f.Dst)
		if _, dup := out[key]; dup {
			t.Fatalf("two flows %s", key)
		}
		out[key] = sf
	}
	return out
}

// The rings of the three groups of the issue, written out by hand.
func TestSimCCLRingsByHand(t *testing.T) {
	tp8 := consecutive(ccl.OpAllReduce, 8, 8, 1<<20)
	dp := explicitRanks(ccl.OpAllReduce, 8, 32, 1<<20, 0, 8, 16, 24)
	tp16 := consecutive(ccl.OpAllReduce, 16, 8, 1<<20)
	for _, c := range []struct {
		req   ccl.Request
		rings map[int][]int32 // channel → ring
		nCh   int
	}{
		{tp8, map[int][]int32{
			0: {0, 1, 2, 3, 4, 5, 6, 7},
			1: {1, 2, 3, 4, 5, 6, 7, 0},
			3: {3, 4, 5, 6, 7, 0, 1, 2},
			7: {7, 0, 1, 2, 3, 4, 5, 6},
		}, 8},
		{dp, map[int][]int32{0: {0, 8, 16, 24}}, 1},
		{tp16, map[int][]int32{
			0: {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			1: {1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8},
			5: {5, 6, 7, 0, 1, 2, 3, 4, 13, 14, 15, 8, 9, 10, 11, 12},
		}, 8},
	} {
		lit := simcclRings(c.req.Ranks, c.req.GPUsPerServer)
		if len(lit) != c.nCh {
			t.Fatalf("%v: SimCCL's construction gives %d channels, want %d", c.req.Ranks, len(lit), c.nCh)
		}
		d, err := Ring(c.req, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Step 0's flows of a channel are its ring's edges.
		next := map[[2]int32]int32{}
		for i := 0; i < d.NumFlows(); i++ {
			if f := d.Flow(ccl.FlowID(i)); f.Chunk == 0 {
				next[[2]int32{f.Channel, f.Src}] = f.Dst
			}
		}
		for ch, ring := range c.rings {
			if !slices.Equal(lit[ch], ring) {
				t.Errorf("%v channel %d: SimCCL's construction gives %v, by hand %v", c.req.Ranks, ch, lit[ch], ring)
			}
			for i, r := range ring {
				if got := next[[2]int32{int32(ch), r}]; got != ring[(i+1)%len(ring)] {
					t.Errorf("%v channel %d: %d sends to %d, want %d", c.req.Ranks, ch, r, got, ring[(i+1)%len(ring)])
				}
			}
		}
	}
}

// simd's ring flows are SimCCL's: same (src, dst, bytes, channel, step, parent) for every flow,
// on a TP-8 group, a DP group across servers, a 16-rank group with 8 per server and more.
func TestRingIsSimCCLs(t *testing.T) {
	for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather} {
		for _, req := range []ccl.Request{
			consecutive(op, 8, 8, 64<<20),
			explicitRanks(op, 8, 32, 64<<20, 0, 8, 16, 24),
			consecutive(op, 16, 8, 64<<20),
			strided(op, 8, 8, 2, 1, 8*4*1000),                // DP group of TP=2 on 2 servers
			strided(op, 12, 4, 4, 2, 12*1000),                // one GPU per server, rail 2
			consecutive(op, 24, 4, 24*4*1000),                // 6 servers
			explicitRanks(op, 8, 64, 4*2*1000, 3, 5, 19, 21), // same pattern on servers 0 and 2
		} {
			d, err := Ring(req, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := simdFlows(t, d), simcclFlows(op, req.Ranks, req.GPUsPerServer, req.Bytes)
			if len(got) != len(want) {
				t.Fatalf("%s %v: %d flows, SimCCL %d", op, req.Ranks, len(got), len(want))
			}
			for k, w := range want {
				if g, ok := got[k]; !ok || g != w {
					t.Fatalf("%s %v: %s is %+v, SimCCL %+v", op, req.Ranks, k, g, w)
				}
			}
		}
	}
}

// Every flow of a 64 MiB ring all-reduce on the DP group {0, 8, 16, 24} (8 GPUs per server),
// written out by hand: one channel, 6 steps, 16 MiB each, every flow after step 0 waiting for the
// one its sender received in the step before.
func TestRingHandTable(t *testing.T) {
	const table = `
0→8 s0 -      8→16 s0 -     16→24 s0 -     24→0 s0 -
0→8 s1 24→0   8→16 s1 0→8   16→24 s1 8→16  24→0 s1 16→24
0→8 s2 24→0   8→16 s2 0→8   16→24 s2 8→16  24→0 s2 16→24
0→8 s3 24→0   8→16 s3 0→8   16→24 s3 8→16  24→0 s3 16→24
0→8 s4 24→0   8→16 s4 0→8   16→24 s4 8→16  24→0 s4 16→24
0→8 s5 24→0   8→16 s5 0→8   16→24 s5 8→16  24→0 s5 16→24`
	fields := strings.Fields(table)
	want := map[string]string{}
	for i := 0; i < len(fields); i += 3 {
		want[fields[i]+" "+fields[i+1]] = fields[i+2]
	}
	d, err := Ring(explicitRanks(ccl.OpAllReduce, 8, 32, 64<<20, 0, 8, 16, 24), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFlows() != len(want) {
		t.Fatalf("%d flows, want %d", d.NumFlows(), len(want))
	}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		key := fmt.Sprintf("%d→%d s%d", f.Src, f.Dst, f.Chunk)
		parent := "-"
		if ps := d.Parents(ccl.FlowID(i), nil); len(ps) == 1 {
			p := d.Flow(ps[0])
			parent = fmt.Sprintf("%d→%d", p.Src, p.Dst)
		}
		if w, ok := want[key]; !ok || w != parent || f.Bytes != 16<<20 || f.Channel != 0 || f.Kind != ccl.KindRing {
			t.Errorf("flow %s (parent %s): want parent %q, 16 MiB, channel 0", flowString(f), parent, w)
		}
	}
}
