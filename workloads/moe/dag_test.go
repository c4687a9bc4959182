package moe

import (
	"math/rand/v2"
	"testing"

	"simd/ccl"
)

// The DeepEP hand case as a DAG: the three copies are roots; each forward waits for the copy
// that brought its tokens; local sends are roots; bytes are tokens × 1024.
func TestDeepEPDAGByHand(t *testing.T) {
	cfg, l := handCfg(), deepEPHandLayer()
	p, err := BuildDeepEP(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.DAG(&cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	type fl struct {
		src, dst int32
		bytes    int64
		kind     ccl.FlowKind
		parents  []ccl.FlowID
	}
	want := []fl{
		{0, 2, 2048, ccl.KindDispatchRDMA, nil},
		{1, 3, 1024, ccl.KindDispatchRDMA, nil},
		{3, 1, 2048, ccl.KindDispatchRDMA, nil},
		{2, 3, 2048, ccl.KindDispatchNVL, []ccl.FlowID{0}},
		{3, 2, 1024, ccl.KindDispatchNVL, []ccl.FlowID{1}},
		{1, 0, 2048, ccl.KindDispatchNVL, []ccl.FlowID{2}},
		{0, 1, 1024, ccl.KindDispatchNVL, nil},
		{2, 3, 1024, ccl.KindDispatchNVL, nil}, // DeepEPLocal 2→3: another phase than the forward 2→3
	}
	if d.NumFlows() != len(want) {
		t.Fatalf("%d flows, want %d", d.NumFlows(), len(want))
	}
	for i, w := range want {
		f := d.Flow(ccl.FlowID(i))
		ps := d.Parents(ccl.FlowID(i), nil)
		if f.Src != w.src || f.Dst != w.dst || f.Bytes != w.bytes || f.Kind != w.kind || len(ps) != len(w.parents) {
			t.Errorf("flow %d: %+v parents %v, want %+v", i, f, ps, w)
			continue
		}
		for j := range ps {
			if ps[j] != w.parents[j] {
				t.Errorf("flow %d: parents %v, want %v", i, ps, w.parents)
			}
		}
	}
}

// For random layers of both plans the DAG carries exactly the bytes of the plan's transfers
// between distinct GPUs, merges every (phase, stage, pair) into one flow, and has no cycle.
func TestPlanDAGProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		cfg := randomCfg(rng)
		l := randomLayer(rng, &cfg)
		for _, kind := range []Kind{DeepEP, FAST} {
			p, err := Build(kind, &cfg, &l)
			if err != nil {
				t.Fatal(err)
			}
			d, err := p.DAG(&cfg, cfg.GPUs())
			if err != nil {
				t.Fatalf("trial %d %v: %v", trial, kind, err)
			}
			var want, got int64
			pairs := map[[4]int]bool{}
			for _, tr := range p.Transfers {
				if tr.Src != tr.Dst {
					want += int64(tr.Tokens) * cfg.TokenBytes()
					pairs[[4]int{int(tr.Phase), tr.Stage, tr.Src, tr.Dst}] = true
				}
			}
			for i := range d.NumFlows() {
				f := d.Flow(ccl.FlowID(i))
				got += f.Bytes
				if f.Src == f.Dst {
					t.Fatalf("trial %d: flow %d from GPU %d to itself", trial, i, f.Src)
				}
			}
			if got != want || d.NumFlows() != len(pairs) {
				t.Fatalf("trial %d %v: %d bytes in %d flows, want %d in %d", trial, kind, got, d.NumFlows(), want, len(pairs))
			}
		}
	}
}

// A plan whose merged transfers would wait for each other is refused.
func TestPlanDAGRejectsCycles(t *testing.T) {
	cfg := handCfg()
	p := &Plan{Kind: FAST, Nodes: 2, GPUsPerNode: 2, Transfers: []Transfer{
		{Phase: FASTBalance, Stage: -1, Src: 0, Dst: 1, Tokens: 1},
		{Phase: FASTInter, Stage: 0, Src: 1, Dst: 3, Tokens: 1, Deps: []int{0}},
		{Phase: FASTBalance, Stage: -1, Src: 0, Dst: 1, Tokens: 1, Deps: []int{1}}, // merges with 0
	}}
	if _, err := p.DAG(&cfg, 4); err == nil {
		t.Fatal("a cycle through merged transfers was accepted")
	}
}

// Cut in two, the DeepEP hand case streams: each transfer's second piece follows its first,
// and a forward's piece i waits for piece i of its copy, so the forward overlaps the copy.
func TestDeepEPChunkedDAG(t *testing.T) {
	cfg, l := handCfg(), deepEPHandLayer()
	p, err := BuildDeepEP(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.ChunkedDAG(&cfg, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Flows 0..7 of the whole DAG become pieces: copy 0→2 (2048 B) is pieces 0, 1; copy 1→3
	// (1024 B) pieces 2, 3; copy 3→1 pieces 4, 5; forward 2→3 (2048 B) pieces 6, 7.
	var total int64
	for i := range d.NumFlows() {
		total += d.Flow(ccl.FlowID(i)).Bytes
	}
	if d.NumFlows() != 16 || total != 2048+1024+2048+2048+1024+2048+1024+1024 {
		t.Fatalf("%d pieces, %d bytes", d.NumFlows(), total)
	}
	for _, tc := range []struct {
		piece   ccl.FlowID
		bytes   int64
		parents []ccl.FlowID
	}{
		{0, 1024, nil},
		{1, 1024, []ccl.FlowID{0}},
		{6, 1024, []ccl.FlowID{0}},    // forward 2→3, piece 0: copy 0→2's piece 0
		{7, 1024, []ccl.FlowID{6, 1}}, // piece 1: its own piece 0, then copy piece 1
	} {
		f := d.Flow(tc.piece)
		ps := d.Parents(tc.piece, nil)
		if f.Bytes != tc.bytes || len(ps) != len(tc.parents) {
			t.Errorf("piece %d: %d bytes, parents %v; want %d, %v", tc.piece, f.Bytes, ps, tc.bytes, tc.parents)
			continue
		}
		for i := range ps {
			if ps[i] != tc.parents[i] {
				t.Errorf("piece %d: parents %v, want %v", tc.piece, ps, tc.parents)
			}
		}
	}
	if _, err := p.ChunkedDAG(&cfg, 4, 0); err == nil {
		t.Error("0 chunks accepted")
	}
}
