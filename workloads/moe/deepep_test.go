package moe

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// handCfg is 2 servers × 2 GPUs (GPUs 0, 1 on server 0; 2, 3 on server 1), 2 experts per GPU
// (expert e on GPU e/2), 1 KB tokens (512 × 2 bytes / 1024) and 1 GB/s = 2²⁰ KB/s both ways,
// so a load of n tokens takes n/2²⁰ s.
func handCfg() Config {
	return Config{Nodes: 2, GPUsPerNode: 2, ExpertsPerGPU: 2, SeqLen: 6, Batch: 1, TopK: 2, Layers: 1, Iters: 1,
		Hidden: 512, DtypeBytes: 2, BWInterGBps: 1, BWIntraGBps: 1}
}

const perTok = 1.0 / (1 << 20) // seconds per token at 1 GB/s with 1 KB tokens

func req(token, src int, experts ...int) Request {
	r := Request{Token: token, Src: src, Experts: experts}
	for _, e := range experts {
		r.GPUs = append(r.GPUs, e/2)
	}
	return r
}

// deepEPHandLayer is the DeepEP hand case:
//
//	t0 on GPU 0 → GPUs 2, 3: copy 0→2 (proxy of server 1 for local rank 0), forward 2→3
//	t1 on GPU 0 → GPUs 1, 3: local 0→1; copy 0→2, forward 2→3
//	t2 on GPU 1 → GPUs 3, 3, 2: copy 1→3 (proxy, hosts two of its experts), forward 3→2
//	t3 on GPU 3 → GPUs 0, 0, 1: copy 3→1, forward 1→0 (one token, two selections)
//	t4 on GPU 2 → GPUs 2, 3: local 2→3 (GPU 2 is its own target)
//	t5 on GPU 3 → GPUs 0, 0: copy 3→1, forward 1→0 (one token, two selections)
func deepEPHandLayer() Layer {
	return Layer{Requests: []Request{
		req(0, 0, 4, 6), req(1, 0, 2, 6), req(2, 1, 6, 7, 4), req(3, 3, 0, 1, 2), req(4, 2, 5, 6), req(5, 3, 0, 1),
	}}
}

func TestDeepEPPlanByHand(t *testing.T) {
	cfg, l := handCfg(), deepEPHandLayer()
	p, err := BuildDeepEP(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	want := []Transfer{
		{Phase: DeepEPCopy, Stage: -1, Src: 0, Dst: 2, Tokens: 2, Picks: 2},                    // 0: t0, t1
		{Phase: DeepEPCopy, Stage: -1, Src: 1, Dst: 3, Tokens: 1, Picks: 1},                    // 1: t2
		{Phase: DeepEPCopy, Stage: -1, Src: 3, Dst: 1, Tokens: 2, Picks: 2},                    // 2: t3, t5
		{Phase: DeepEPForward, Stage: -1, Src: 2, Dst: 3, Tokens: 2, Picks: 2, Deps: []int{0}}, // origin 0
		{Phase: DeepEPForward, Stage: -1, Src: 3, Dst: 2, Tokens: 1, Picks: 1, Deps: []int{1}}, // origin 1
		{Phase: DeepEPForward, Stage: -1, Src: 1, Dst: 0, Tokens: 2, Picks: 4, Deps: []int{2}}, // origin 3
		{Phase: DeepEPLocal, Stage: -1, Src: 0, Dst: 1, Tokens: 1, Picks: 1},
		{Phase: DeepEPLocal, Stage: -1, Src: 2, Dst: 3, Tokens: 1, Picks: 1},
	}
	if !reflect.DeepEqual(p.Transfers, want) {
		t.Fatalf("transfers\n%+v\nwant\n%+v", p.Transfers, want)
	}
}

func TestDeepEPEstimatesByHand(t *testing.T) {
	cfg, l := handCfg(), deepEPHandLayer()
	p, err := BuildDeepEP(&cfg, &l)
	if err != nil {
		t.Fatal(err)
	}
	// Copies: GPU 0 sends 2, 1 sends 1, 3 sends 2; GPU 2 receives 2, 3 receives 1, 1 receives
	// 2: the NIC bottleneck is 2 tokens. 5 copies of 1 KB cross servers.
	// Seed, NVLink counted per selection: tx 0:1, 1:4 (forward of t3, t5), 2:2+1, 3:1; rx 0:4,
	// 1:1, 2:1, 3:2+1. Bottleneck 4 → layer max(2, 4) = 4 tokens' time.
	seed, err := EstimateSeed(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if seed.InterS != 2*perTok || seed.IntraS != 4*perTok || seed.Seconds != 4*perTok || seed.InterKB != 5 {
		t.Errorf("seed: %+v", seed)
	}
	// Exact, NVLink counted per token copy: tx 0:1, 1:2, 2:3, 3:1; rx 0:2, 1:1, 2:1, 3:3.
	// Bottleneck 3 → layer max(2, 3) = 3.
	exact, err := EstimateExact(&cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact.InterS != 2*perTok || exact.IntraS != 3*perTok || exact.Seconds != 3*perTok || exact.InterKB != 5 {
		t.Errorf("exact: %+v", exact)
	}
}

// randomLayer draws a layer of tokens with top-k distinct experts each, skewed towards the
// first experts.
func randomLayer(rng *rand.Rand, cfg *Config) Layer {
	var l Layer
	experts := cfg.Experts()
	for tok := range cfg.Tokens() {
		r := Request{Token: tok, Src: rng.IntN(cfg.GPUs())}
		for len(r.Experts) < cfg.TopK {
			e := rng.IntN(experts)
			if rng.IntN(2) == 0 {
				e = rng.IntN(min(experts, 3))
			}
			dup := false
			for _, x := range r.Experts {
				dup = dup || x == e
			}
			if !dup {
				r.Experts = append(r.Experts, e)
				r.GPUs = append(r.GPUs, e/cfg.ExpertsPerGPU)
			}
		}
		l.Requests = append(l.Requests, r)
	}
	return l
}

func randomCfg(rng *rand.Rand) Config {
	c := Config{Nodes: 1 + rng.IntN(5), GPUsPerNode: 1 + rng.IntN(4), ExpertsPerGPU: 1 + rng.IntN(3),
		SeqLen: 1 + rng.IntN(40), Batch: 1, Layers: 1, Iters: 1, Hidden: 1024, DtypeBytes: 1, BWInterGBps: 3, BWIntraGBps: 7}
	c.TopK = 1 + rng.IntN(min(4, c.Experts()))
	return c
}

// Every token reaches each of its target GPUs exactly once, crosses to a server at most once
// and only to servers that hold one of its targets, and is forwarded only by a proxy that got
// it; the plan's transfers add up to the routes.
func TestDeepEPRoutesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		cfg := randomCfg(rng)
		l := randomLayer(rng, &cfg)
		g, gpus := cfg.GPUsPerNode, cfg.GPUs()
		copies := map[[2]int]int{}
		fwd := map[[3]int]int{} // origin, sender, target
		for i := range l.Requests {
			r := &l.Requests[i]
			hops := deepEPHops(g, r, nil)
			arrived := map[int]int{r.Src: 1} // GPU → times the token reached it
			crossed := map[int]bool{}
			for _, h := range hops {
				if arrived[h.src] == 0 {
					t.Fatalf("trial %d token %d: %v sent from GPU %d before reaching it", trial, r.Token, h.phase, h.src)
				}
				arrived[h.dst]++
				switch h.phase {
				case DeepEPCopy:
					b := h.dst / g
					if h.src != r.Src || b == r.Src/g || h.dst%g != r.Src%g {
						t.Fatalf("trial %d token %d: bad copy %d→%d", trial, r.Token, h.src, h.dst)
					}
					if crossed[b] {
						t.Fatalf("trial %d token %d: server %d crossed to twice", trial, r.Token, b)
					}
					crossed[b] = true
					copies[[2]int{h.src, h.dst}]++
				case DeepEPForward, DeepEPLocal:
					if h.src/g != h.dst/g {
						t.Fatalf("trial %d token %d: NVLink hop %d→%d crosses servers", trial, r.Token, h.src, h.dst)
					}
					fwd[[3]int{r.Src, h.src, h.dst}]++
				}
			}
			want := map[int]bool{}
			for _, d := range r.GPUs {
				want[d] = true
				if arrived[d] != 1 {
					t.Fatalf("trial %d token %d: target GPU %d reached %d times", trial, r.Token, d, arrived[d])
				}
			}
			for d, k := range arrived {
				if want[d] || d == r.Src {
					continue
				}
				// Only a proxy of a crossed server may hold a token it does not need.
				if k != 1 || !crossed[d/g] || d%g != r.Src%g {
					t.Fatalf("trial %d token %d: GPU %d reached %d times without being a target", trial, r.Token, d, k)
				}
			}
			for b := range crossed {
				has := false
				for _, d := range r.GPUs {
					has = has || d/g == b
				}
				if !has {
					t.Fatalf("trial %d token %d: crossed to server %d without a target there", trial, r.Token, b)
				}
			}
		}
		p, err := BuildDeepEP(&cfg, &l)
		if err != nil {
			t.Fatal(err)
		}
		gotCopies := map[[2]int]int{}
		gotFwd := map[[3]int]int{}
		for id, tr := range p.Transfers {
			if tr.Tokens <= 0 || tr.Picks < tr.Tokens || tr.Src < 0 || tr.Dst >= gpus || tr.Src == tr.Dst {
				t.Fatalf("trial %d: bad transfer %+v", trial, tr)
			}
			switch tr.Phase {
			case DeepEPCopy:
				gotCopies[[2]int{tr.Src, tr.Dst}] += tr.Tokens
			case DeepEPForward:
				if len(tr.Deps) != 1 || tr.Deps[0] >= id {
					t.Fatalf("trial %d: forward %+v deps", trial, tr)
				}
				c := p.Transfers[tr.Deps[0]]
				if c.Phase != DeepEPCopy || c.Dst != tr.Src || c.Tokens < tr.Tokens {
					t.Fatalf("trial %d: forward %+v depends on %+v", trial, tr, c)
				}
				gotFwd[[3]int{c.Src, tr.Src, tr.Dst}] += tr.Tokens
			case DeepEPLocal:
				if len(tr.Deps) != 0 {
					t.Fatalf("trial %d: local send with deps %+v", trial, tr)
				}
				gotFwd[[3]int{tr.Src, tr.Src, tr.Dst}] += tr.Tokens
			default:
				t.Fatalf("trial %d: phase %v in a DeepEP plan", trial, tr.Phase)
			}
		}
		if !reflect.DeepEqual(copies, gotCopies) && !(len(copies) == 0 && len(gotCopies) == 0) {
			t.Fatalf("trial %d: copies %v, routes say %v", trial, gotCopies, copies)
		}
		if !reflect.DeepEqual(fwd, gotFwd) && !(len(fwd) == 0 && len(gotFwd) == 0) {
			t.Fatalf("trial %d: NVLink sends %v, routes say %v", trial, gotFwd, fwd)
		}
	}
}

func TestBuildRejectsBadGPUs(t *testing.T) {
	cfg := handCfg()
	for _, l := range []Layer{
		{Requests: []Request{{Token: 0, Src: 4, GPUs: []int{0}}}},
		{Requests: []Request{{Token: 0, Src: 0, GPUs: []int{-1}}}},
	} {
		if _, err := BuildDeepEP(&cfg, &l); err == nil {
			t.Errorf("DeepEP accepted %+v", l)
		}
		if _, err := BuildFAST(&cfg, &l); err == nil {
			t.Errorf("FAST accepted %+v", l)
		}
	}
}
