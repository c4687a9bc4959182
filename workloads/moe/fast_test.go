package moe

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fastHandLayer is the FAST hand case on handCfg's cluster, written with expert 2·GPU so that
// GPUs read off directly:
//
//	t0, t1 on GPU 0 → GPUs 2, 3
//	t2     on GPU 0 → GPUs 2, 1   (1 is same-server: intrinsic 0→1)
//	t3     on GPU 1 → GPUs 3, 1   (1 is itself: nothing to send)
//	t4     on GPU 2 → GPUs 0, 2
//	t5     on GPU 3 → GPUs 1, 0
//
// Cross-server demand: 0→2: 3, 0→3: 2, 1→3: 1 (server 0 → 1: 6 copies, GPU 0 holds 5, GPU 1
// holds 1); 2→0: 1, 3→1: 1, 3→0: 1 (server 1 → 0: 3 copies, GPU 2 holds 1, GPU 3 holds 2).
func fastHandLayer() Layer {
	return Layer{Requests: []Request{
		req(0, 0, 4, 6), req(1, 0, 4, 6), req(2, 0, 4, 2), req(3, 1, 6, 2), req(4, 2, 0, 4), req(5, 3, 2, 0),
	}}
}

func TestFASTPlanByHand(t *testing.T) {
	cfg, l := handCfg(), fastHandLayer()
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	fs := p.FAST
	if want := []Demand{{0, 2, 3}, {0, 3, 2}, {1, 3, 1}, {2, 0, 1}, {3, 0, 1}, {3, 1, 1}}; !reflect.DeepEqual(fs.Demand, want) {
		t.Fatalf("demand %v, want %v", fs.Demand, want)
	}
	// Balance: server 0 → 1 has 6 copies, 3 per GPU: GPU 0 gives 2 to GPU 1, first those
	// bound for local rank 1 (GPU 3): both of 0→3. Server 1 → 0 has 3: ⌈3/2⌉ = 2 for GPU 3
	// (it holds more), 1 for GPU 2, which they already hold.
	// Server matrix [[0 3] [2 0]], L = 3, padded with 1 at (1,0) to [[0 3] [3 0]]: one stage,
	// the swap, weight 3.
	if want := [][]int64{{0, 3}, {2, 0}}; !reflect.DeepEqual(fs.Server, want) {
		t.Fatalf("server matrix %v, want %v", fs.Server, want)
	}
	if want := [][]int64{{0, 0}, {1, 0}}; !reflect.DeepEqual(fs.Padding, want) {
		t.Fatalf("padding %v, want %v", fs.Padding, want)
	}
	if want := []Stage{{Perm: []int{1, 0}, Weight: 3}}; !reflect.DeepEqual(fs.Stages, want) || fs.LastReal != 0 {
		t.Fatalf("stages %v (last real %d), want %v", fs.Stages, fs.LastReal, want)
	}
	// Stage 0: GPU 0 sends its 3 copies for GPU 2 to GPU 2, GPU 1 its 3 for GPU 3 to GPU 3,
	// GPU 2 its 1 for GPU 0 to GPU 0, GPU 3 its 2 (for GPUs 0 and 1) to GPU 1, which forwards
	// the one for GPU 0.
	want := []Transfer{
		{Phase: FASTIntrinsic, Stage: -1, Src: 0, Dst: 1, Tokens: 1, Picks: 1},             // 0
		{Phase: FASTBalance, Stage: -1, Src: 0, Dst: 1, Tokens: 2, Picks: 2},               // 1
		{Phase: FASTInter, Stage: 0, Src: 0, Dst: 2, Tokens: 3, Picks: 3},                  // 2
		{Phase: FASTInter, Stage: 0, Src: 1, Dst: 3, Tokens: 3, Picks: 3, Deps: []int{1}},  // 3
		{Phase: FASTInter, Stage: 0, Src: 2, Dst: 0, Tokens: 1, Picks: 1},                  // 4
		{Phase: FASTInter, Stage: 0, Src: 3, Dst: 1, Tokens: 2, Picks: 2},                  // 5
		{Phase: FASTRedist, Stage: 0, Src: 1, Dst: 0, Tokens: 1, Picks: 1, Deps: []int{5}}, // 6
	}
	if !reflect.DeepEqual(p.Transfers, want) {
		t.Fatalf("transfers\n%+v\nwant\n%+v", p.Transfers, want)
	}
}

func TestFASTEstimatesByHand(t *testing.T) {
	cfg, l := handCfg(), fastHandLayer()
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	// Seed: node matrix [[0 ⌊6/2⌋] [⌊3/2⌋ 0]] = [[0 3] [1 0]], L = 3: inter 3.
	// Balance against the average share: server 0 → 1, share 3: GPU 0 out 5 − 3 = 2, GPU 1 in
	// 2; server 1 → 0, share 1.5: GPU 2 in 0.5, GPU 3 out 0.5. Volume 2.
	// Padded [[0 3] [3 0]] (padding 2 at (1,0)); one stage, the swap, weight 3; it holds real
	// traffic, and less the padding its entries are 3 and 1: redistribution 3/2 = 1.5.
	// Layer 2 + 3 + 1.5 = 6.5 tokens' time; 9 copies cross servers.
	seed, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if seed.BalanceS != 2*perTok || seed.InterS != 3*perTok || seed.RedistS != 1.5*perTok ||
		seed.Seconds != 6.5*perTok || seed.InterKB != 9 || seed.LastStage != 0 || len(seed.Stages) != 1 {
		t.Errorf("seed: %+v", seed)
	}
	// Exact: balance 2 (GPU 0 → 1); stage 0 moves at most 3 per GPU; its restore (GPU 1 → 0,
	// one copy) runs after it: pipeline max(3, 0) + max(0, 1) = 4. Intrinsic traffic (1 copy
	// 0 → 1) hides behind it. Layer 2 + 4 = 6.
	exact, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact.BalanceS != 2*perTok || exact.InterS != 3*perTok || exact.RedistS != 1*perTok ||
		exact.IntrinsicS != 1*perTok || exact.Seconds != 6*perTok || exact.InterKB != 9 || exact.LastStage != 0 {
		t.Errorf("exact: %+v", exact)
	}
}

// With one GPU per server the server matrix is the demand itself and there is no balance:
// 3 servers, demand [[0 4 1] [2 0 0] [0 1 0]]. Line sums 5 2 1 / 2 5 1: L = 5. The seed's
// padding walk fills (1,0) with 3 (row 1 and column 0 full) and then (2,2) with 4: padded
// [[0 4 1] [5 0 0] [0 1 4]]. The assignment (scipy's order) takes row 0 → 1 (the last free
// zero scanned), row 1 → 0, row 2 → 2: weight min(4, 5, 4) = 4, leaving the cycle 0→2→1→0 of
// weight 1. The last stage carries real traffic (0→2 and 2→1 are not padding); less the
// padding left (3 at (1,0)) its largest entry is 1: redistribution 0.5. Layer 0 + 5 + 0.5.
func TestFASTSeedThreeServers(t *testing.T) {
	cfg := Config{Nodes: 3, GPUsPerNode: 1, ExpertsPerGPU: 1, Hidden: 512, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1}
	var l Layer
	add := func(src, dst, n int) {
		for range n {
			l.Requests = append(l.Requests, Request{Token: len(l.Requests), Src: src, Experts: []int{dst}, GPUs: []int{dst}})
		}
	}
	add(0, 1, 4)
	add(0, 2, 1)
	add(1, 0, 2)
	add(2, 1, 1)
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	e, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	wantStages := []Stage{{Perm: []int{1, 0, 2}, Weight: 4}, {Perm: []int{2, 0, 1}, Weight: 1}}
	if !reflect.DeepEqual(e.Stages, wantStages) || e.LastStage != 1 {
		t.Fatalf("stages %v, last %d; want %v, 1", e.Stages, e.LastStage, wantStages)
	}
	if e.BalanceS != 0 || e.InterS != 5*perTok || e.RedistS != 0.5*perTok || e.Seconds != 5.5*perTok {
		t.Fatalf("seed: %+v", e)
	}
	// The plan's own schedule is the same matrix (⌈x/1⌉ = x): stage 0 carries 4 (0→1), 2
	// (1→0), and nothing on the diagonal; stage 1 carries 1 (0→2) and 1 (2→1), 0 (1→0, the
	// padding). No restore with one GPU per server: exact = 4 + 1 = 5.
	x, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if x.Seconds != 5*perTok || x.InterS != 5*perTok || x.RedistS != 0 {
		t.Fatalf("exact: %+v", x)
	}
}

// The seed's _find_last_stage walks back over stages made only of padding.
func TestSeedLastStage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stages  []Stage
		padding [][]int64
		last    int
		maxVal  float64
	}{
		{"last stage is padding", []Stage{{[]int{1, 0}, 3}, {[]int{0, 1}, 2}}, [][]int64{{2, 0}, {0, 2}}, 0, 3},
		{"real stage reduced by padding", []Stage{{[]int{1, 0}, 3}}, [][]int64{{0, 1}, {3, 0}}, 0, 2},
		// All padding: the seed returns the first stage with the padding left after all of
		// them (none): its largest entry.
		{"all padding", []Stage{{[]int{0, 1}, 1}}, [][]int64{{1, 0}, {0, 1}}, 0, 1},
		{"no stages", nil, [][]int64{{0}}, -1, 0},
	} {
		last, mv := seedLastStage(tc.stages, tc.padding)
		if last != tc.last || mv != tc.maxVal {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, last, mv, tc.last, tc.maxVal)
		}
	}
}

// checkFASTPlan checks a FAST plan against its layer: every copy delivered exactly once,
// balance to ⌊S/g⌋ or ⌈S/g⌉ per GPU, one-to-one rail-aligned stages within their weights,
// the decomposition exact, dependencies pointing backwards to what they should.
func checkFASTPlan(t *testing.T, cfg *Config, l *Layer, p *Plan) {
	t.Helper()
	g, n, gpus := cfg.GPUsPerNode, cfg.Nodes, cfg.GPUs()
	want := make([]int, gpus*gpus)
	for _, r := range l.Requests {
		for _, d := range r.GPUs {
			if d != r.Src {
				want[r.Src*gpus+d]++
			}
		}
	}
	fs := p.FAST
	checkBvN(t, toFloat(fs.Padded), fs.Stages)
	for s := range n {
		for u := range n {
			if fs.Padded[s][u] != fs.Server[s][u]+fs.Padding[s][u] || fs.Padding[s][u] < 0 {
				t.Fatalf("padding inconsistent at (%d,%d)", s, u)
			}
		}
	}
	got := make([]int, gpus*gpus)   // delivered, by (origin for intrinsic / server-level), target
	toServer := make([]int, gpus*n) // inter copies sent by GPU x to server t
	keptAt := map[[2]int]int{}      // (stage, GPU): copies received by inter
	redistFrom := map[[2]int]int{}  // (stage, GPU): copies forwarded
	received := make([]int, gpus)   // copies that ended on each GPU from other servers
	sends := map[[2]int]int{}       // (stage, GPU) → inter transfers sent
	recvs := map[[2]int]int{}       // (stage, GPU) → inter transfers received
	lastReal := -1
	for id, tr := range p.Transfers {
		if tr.Tokens <= 0 || tr.Picks != tr.Tokens || tr.Src == tr.Dst {
			t.Fatalf("bad transfer %d %+v", id, tr)
		}
		for _, d := range tr.Deps {
			if d < 0 || d >= id {
				t.Fatalf("transfer %d depends on %d", id, d)
			}
		}
		switch tr.Phase {
		case FASTIntrinsic:
			if tr.Src/g != tr.Dst/g || len(tr.Deps) != 0 {
				t.Fatalf("bad intrinsic %+v", tr)
			}
			got[tr.Src*gpus+tr.Dst] += tr.Tokens
		case FASTBalance:
			if tr.Src/g != tr.Dst/g || len(tr.Deps) != 0 {
				t.Fatalf("bad balance %+v", tr)
			}
		case FASTInter:
			st := fs.Stages[tr.Stage]
			if st.Perm[tr.Src/g] != tr.Dst/g || tr.Src%g != tr.Dst%g || float64(tr.Tokens) > st.Weight {
				t.Fatalf("inter %+v does not fit stage %+v", tr, st)
			}
			for _, d := range tr.Deps {
				dp := p.Transfers[d]
				ok := (dp.Phase == FASTBalance && dp.Dst == tr.Src) ||
					(dp.Phase == FASTInter && dp.Stage < tr.Stage && (dp.Src == tr.Src || dp.Dst == tr.Dst))
				if !ok {
					t.Fatalf("inter %+v depends on %+v", tr, dp)
				}
			}
			sends[[2]int{tr.Stage, tr.Src}]++
			recvs[[2]int{tr.Stage, tr.Dst}]++
			toServer[tr.Src*n+tr.Dst/g] += tr.Tokens
			keptAt[[2]int{tr.Stage, tr.Dst}] += tr.Tokens
			received[tr.Dst] += tr.Tokens
			lastReal = max(lastReal, tr.Stage)
		case FASTRedist:
			if len(tr.Deps) != 1 {
				t.Fatalf("redist %+v deps", tr)
			}
			dp := p.Transfers[tr.Deps[0]]
			if dp.Phase != FASTInter || dp.Stage != tr.Stage || dp.Dst != tr.Src || tr.Src/g != tr.Dst/g {
				t.Fatalf("redist %+v depends on %+v", tr, dp)
			}
			redistFrom[[2]int{tr.Stage, tr.Src}] += tr.Tokens
			received[tr.Src] -= tr.Tokens
			received[tr.Dst] += tr.Tokens
		default:
			t.Fatalf("phase %v in a FAST plan", tr.Phase)
		}
	}
	if lastReal != fs.LastReal {
		t.Fatalf("last real stage %d, plan says %d", lastReal, fs.LastReal)
	}
	for k, c := range sends {
		if c != 1 || recvs[k] > 1 {
			t.Fatalf("stage %d GPU %d: %d sends, %d receives", k[0], k[1], c, recvs[k])
		}
	}
	for k, c := range redistFrom {
		if c > keptAt[k] {
			t.Fatalf("stage %d GPU %d forwards %d of %d received", k[0], k[1], c, keptAt[k])
		}
	}
	// Same-server demand delivered directly; cross-server demand per target GPU.
	for x := range gpus {
		for y := range gpus {
			if x/g == y/g && got[x*gpus+y] != want[x*gpus+y] {
				t.Fatalf("intrinsic %d→%d: %d, want %d", x, y, got[x*gpus+y], want[x*gpus+y])
			}
		}
	}
	for y := range gpus {
		w := 0
		for x := range gpus {
			if x/g != y/g {
				w += want[x*gpus+y]
			}
		}
		if received[y] != w {
			t.Fatalf("GPU %d ends with %d copies from other servers, want %d", y, received[y], w)
		}
	}
	// Balanced: every GPU of s sends ⌊S/g⌋ or ⌈S/g⌉ to t.
	for s := range n {
		for u := range n {
			if u == s {
				continue
			}
			total := 0
			for x := s * g; x < (s+1)*g; x++ {
				for y := u * g; y < (u+1)*g; y++ {
					total += want[x*gpus+y]
				}
			}
			for x := s * g; x < (s+1)*g; x++ {
				if c := toServer[x*n+u]; c != total/g && c != (total+g-1)/g {
					t.Fatalf("GPU %d sends %d to server %d: %d copies over %d GPUs", x, c, u, total, g)
				}
			}
		}
	}
}

func TestFASTPlanProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 400 {
		cfg := randomCfg(rng)
		l := randomLayer(rng, &cfg)
		p, err := BuildFAST(&cfg, &l)
		if err != nil {
			t.Fatal(err)
		}
		checkFASTPlan(t, &cfg, &l, p)
		seed, err := EstimateSeed(&cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := EstimateExact(&cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		if seed.InterKB != exact.InterKB {
			t.Fatalf("inter traffic %v (seed) and %v (exact)", seed.InterKB, exact.InterKB)
		}
		// The exact inter stages take at most the padded line sum.
		if lpad := sumRow(p.FAST.Padded[0]); exact.InterS > float64(lpad)*cfg.TokenKB()/kbPerSec(cfg.BWInterGBps)*(1+1e-12) {
			t.Fatalf("exact inter %v above the padded line sum %d", exact.InterS, lpad)
		}
		if math.IsNaN(exact.Seconds) || exact.Seconds < exact.BalanceS+exact.InterS || seed.Seconds < 0 {
			t.Fatalf("seed %+v exact %+v", seed, exact)
		}
	}
}

func sumRow(r []int64) int64 {
	var s int64
	for _, x := range r {
		s += x
	}
	return s
}

// An odd number of copies: 3 tokens on GPU 0 for GPU 2 (expert 4), on handCfg's cluster.
//
// Seed: node matrix ⌊3/2⌋ = 1, L = 1: inter 1. Balance against the share 1.5: GPU 0 out 1.5,
// GPU 1 in 1.5. Padded with 1 at (1,0): one stage, the swap, weight 1; less the padding its
// entries are 1 and 0: redistribution 0.5. Layer 1.5 + 1 + 0.5 = 3.
//
// Exact: shares ⌈3/2⌉ = 2 for GPU 0 (it holds more), 1 for GPU 1: GPU 0 gives GPU 1 one copy
// (it has none for local rank 1, so one for rank 0): balance 1. Server matrix 2, one stage of
// weight 2: GPU 0 → 2 carries 2 for GPU 2, GPU 1 → 3 carries 1 for GPU 2, which GPU 3
// forwards: pipeline max(2, 0) + max(0, 1) = 3. Layer 1 + 3 = 4.
func TestFASTOddShareByHand(t *testing.T) {
	cfg := handCfg()
	l := Layer{Requests: []Request{req(0, 0, 4), req(1, 0, 4), req(2, 0, 4)}}
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if seed.BalanceS != 1.5*perTok || seed.InterS != 1*perTok || seed.RedistS != 0.5*perTok || seed.Seconds != 3*perTok {
		t.Errorf("seed: %+v", seed)
	}
	exact, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact.BalanceS != 1*perTok || exact.InterS != 2*perTok || exact.RedistS != 1*perTok || exact.Seconds != 4*perTok {
		t.Errorf("exact: %+v", exact)
	}
}

// Restores hide behind the next stage. 3 servers × 2 GPUs (GPUs 0-1, 2-3, 4-5), expert e on
// GPU e: GPU 0 sends 2 copies to GPU 3 and 2 to GPU 5, GPU 1 sends 2 to GPU 2 and 2 to GPU 4.
// No balance (each GPU holds 2 for each server). Server matrix [[0 2 2] [0 0 0] [0 0 0]],
// L = 4, padded [[0 2 2] [4 0 0] [0 2 2]]; stages [1 0 2] (weight 2: server 0 → 1) and
// [2 0 1] (weight 2: server 0 → 2). Every copy lands on the wrong rail: each stage restores
// 2 per GPU. Pipeline max(2, 0) + max(2, 2) + max(0, 2) = 6.
// Seed: inter 4; the last stage is real (0→2 is not padding), entries less the padding left
// (4 at (1,0), 2 at (2,1)) are 2, 0, 0: redistribution 1. Layer 5.
func TestFASTPipelineByHand(t *testing.T) {
	cfg := Config{Nodes: 3, GPUsPerNode: 2, ExpertsPerGPU: 1, Hidden: 512, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1}
	var l Layer
	add := func(src, dst, n int) {
		for range n {
			l.Requests = append(l.Requests, Request{Token: len(l.Requests), Src: src, Experts: []int{dst}, GPUs: []int{dst}})
		}
	}
	add(0, 3, 2)
	add(0, 5, 2)
	add(1, 2, 2)
	add(1, 4, 2)
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	wantStages := []Stage{{Perm: []int{1, 0, 2}, Weight: 2}, {Perm: []int{2, 0, 1}, Weight: 2}}
	if !reflect.DeepEqual(p.FAST.Stages, wantStages) {
		t.Fatalf("stages %v, want %v", p.FAST.Stages, wantStages)
	}
	exact, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact.BalanceS != 0 || exact.InterS != 4*perTok || exact.RedistS != 2*perTok || exact.Seconds != 6*perTok {
		t.Errorf("exact: %+v", exact)
	}
	seed, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if seed.InterS != 4*perTok || seed.RedistS != 1*perTok || seed.Seconds != 5*perTok || seed.LastStage != 1 {
		t.Errorf("seed: %+v", seed)
	}
}

// A GPU whose copies for a server are split over stages sends those for other rails first,
// so the last stage restores nothing. 3 servers × 2 GPUs, expert e on GPU e; each GPU of a
// server sends the same: GPU 0 → 2, 3, 4 (one each) and GPU 1 → 2, 3, 5; GPU 2 → 0, 0, 4 and
// GPU 3 → 1, 1, 5; GPU 4 → 0, 2 and GPU 5 → 1, 3. No balance; server matrix
// [[0 2 1] [2 0 1] [1 1 0]], L = 3, padded with 1 at (2,2). Stages (scipy's order):
// [1 0 2], [2 0 1], [1 2 0], weight 1 each; server 0 → 1 runs in stages 0 and 2. In stage 0
// GPU 0 sends its copy for GPU 3 (GPU 2 forwards it) and GPU 1 its copy for GPU 2; in stage 2
// the copies for their own rails. Every other copy is on its target's rail.
// Exact: 1 + max(1, 1) + 1 + max(0, 0) = 3. Seed: inter 3, last stage [1 2 0] is real with
// entries 1: redistribution 0.5, layer 3.5.
func TestFASTSplitStagesByHand(t *testing.T) {
	cfg := Config{Nodes: 3, GPUsPerNode: 2, ExpertsPerGPU: 1, Hidden: 512, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1}
	var l Layer
	for src, dsts := range [][]int{{2, 3, 4}, {2, 3, 5}, {0, 0, 4}, {1, 1, 5}, {0, 2}, {1, 3}} {
		for _, d := range dsts {
			l.Requests = append(l.Requests, Request{Token: len(l.Requests), Src: src, Experts: []int{d}, GPUs: []int{d}})
		}
	}
	p, err := BuildFAST(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	wantStages := []Stage{{Perm: []int{1, 0, 2}, Weight: 1}, {Perm: []int{2, 0, 1}, Weight: 1}, {Perm: []int{1, 2, 0}, Weight: 1}}
	if !reflect.DeepEqual(p.FAST.Stages, wantStages) {
		t.Fatalf("stages %v, want %v", p.FAST.Stages, wantStages)
	}
	var redist [][3]int
	for _, tr := range p.Transfers {
		if tr.Phase == FASTRedist {
			redist = append(redist, [3]int{tr.Stage, tr.Src, tr.Dst})
		}
	}
	if want := [][3]int{{0, 2, 3}, {0, 3, 2}}; !reflect.DeepEqual(redist, want) {
		t.Fatalf("restores (stage, from, to) %v, want %v", redist, want)
	}
	exact, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Seconds != 3*perTok || exact.RedistS != 0 {
		t.Errorf("exact: %+v", exact)
	}
	seed, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if seed.Seconds != 3.5*perTok || seed.LastStage != 2 {
		t.Errorf("seed: %+v", seed)
	}
}
