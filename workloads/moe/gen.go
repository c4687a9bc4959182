package moe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"simd/configs/units"
	"simd/engine/detmath"
)

// Limits of a Config. They keep every count and product inside an int and the tables the
// generator builds (one float per expert, one int per GPU) small; they are far above any real
// cluster or batch.
const (
	MaxNodes      = 1 << 20
	MaxGPUs       = 1 << 20 // Nodes × GPUsPerNode
	MaxExperts    = 1 << 22 // GPUs × ExpertsPerGPU
	MaxTokens     = 1 << 30 // SeqLen × Batch, per layer
	MaxRequests   = 1 << 32 // Tokens × Layers, per iteration
	MaxLayers     = 1 << 20
	MaxIters      = 1 << 20
	MaxHidden     = 1 << 24
	MaxDtypeBytes = 64
)

// ParamError is a Config parameter out of range. Flag is the simd moe gen flag that sets it
// (without the dash) and Key its name in config.json.
type ParamError struct {
	Flag, Key string
	Value     string // the value as given
	Msg       string // what was expected
}

func (e *ParamError) Error() string { return fmt.Sprintf("-%s %s: %s", e.Flag, e.Value, e.Msg) }

func badParam(flag, key string, value any, format string, args ...any) *ParamError {
	var v string
	switch x := value.(type) {
	case float64:
		v = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		v = fmt.Sprint(x)
	}
	return &ParamError{Flag: flag, Key: key, Value: v, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks every parameter and returns a *ParamError for the first one out of range, in
// the order of the fields.
func (c *Config) Validate() error {
	intIn := func(flag, key string, v, lo, hi int, what string) error {
		if v < lo || v > hi {
			return badParam(flag, key, v, "expected %d to %d %s", lo, hi, what)
		}
		return nil
	}
	if err := intIn("nodes", "nodes", c.Nodes, 1, MaxNodes, "nodes"); err != nil {
		return err
	}
	if err := intIn("gps", "gpus_per_node", c.GPUsPerNode, 1, MaxGPUs, "GPUs per node"); err != nil {
		return err
	}
	if int64(c.Nodes)*int64(c.GPUsPerNode) > MaxGPUs {
		return badParam("gps", "gpus_per_node", c.GPUsPerNode, "%d nodes × %d GPUs: expected at most %d GPUs in all", c.Nodes, c.GPUsPerNode, MaxGPUs)
	}
	if err := intIn("experts-per-gpu", "experts_per_gpu", c.ExpertsPerGPU, 1, MaxExperts, "experts per GPU"); err != nil {
		return err
	}
	if int64(c.GPUs())*int64(c.ExpertsPerGPU) > MaxExperts {
		return badParam("experts-per-gpu", "experts_per_gpu", c.ExpertsPerGPU, "%d GPUs × %d experts: expected at most %d experts in all", c.GPUs(), c.ExpertsPerGPU, MaxExperts)
	}
	if err := intIn("seq-len", "seq_len", c.SeqLen, 1, MaxTokens, "tokens per sequence"); err != nil {
		return err
	}
	if err := intIn("batch", "batch", c.Batch, 1, MaxTokens, "sequences per batch"); err != nil {
		return err
	}
	if int64(c.SeqLen)*int64(c.Batch) > MaxTokens {
		return badParam("batch", "batch", c.Batch, "%d tokens × %d sequences: expected at most %d tokens per layer", c.SeqLen, c.Batch, MaxTokens)
	}
	if err := intIn("top-k", "top_k", c.TopK, 1, c.Experts(), "experts per token (at most the number of experts)"); err != nil {
		return err
	}
	if math.IsNaN(c.Zipf) || math.IsInf(c.Zipf, 0) || c.Zipf < 0 {
		return badParam("zipf", "zipf", c.Zipf, "expected a finite exponent of at least 0 (0: uniform)")
	}
	if err := intIn("layers", "layers", c.Layers, 1, MaxLayers, "layers"); err != nil {
		return err
	}
	if int64(c.Tokens())*int64(c.Layers) > MaxRequests {
		return badParam("layers", "layers", c.Layers, "%d layers × %d tokens: expected at most %d requests per iteration", c.Layers, c.Tokens(), int64(MaxRequests))
	}
	if err := intIn("iters", "iters", c.Iters, 1, MaxIters, "iterations"); err != nil {
		return err
	}
	if err := intIn("hidden", "hidden", c.Hidden, 1, MaxHidden, "elements per token"); err != nil {
		return err
	}
	if err := intIn("dtype-bytes", "dtype_bytes", c.DtypeBytes, 1, MaxDtypeBytes, "bytes per element (1 FP8, 2 BF16/FP16, 4 FP32)"); err != nil {
		return err
	}
	// A layer dispatches every token to top_k experts: its bytes must fit the int64 sizes of
	// flows and transfers.
	if _, ok := units.Product(int64(c.Tokens()), int64(c.TopK), int64(c.Hidden), int64(c.DtypeBytes)); !ok {
		return badParam("hidden", "hidden", c.Hidden, "%d tokens × top-%d × %d elements × %d bytes: a layer's dispatch is more than %d bytes",
			c.Tokens(), c.TopK, c.Hidden, c.DtypeBytes, int64(math.MaxInt64))
	}
	for _, bw := range []struct {
		flag, key string
		v         float64
	}{{"bw-inter", "bw_inter_gbps", c.BWInterGBps}, {"bw-intra", "bw_intra_gbps", c.BWIntraGBps}} {
		if math.IsNaN(bw.v) || math.IsInf(bw.v, 0) || bw.v <= 0 {
			return badParam(bw.flag, bw.key, bw.v, "expected a bandwidth above 0, in GB/s")
		}
	}
	return nil
}

// ExpertGPU is the GPU that hosts expert e, e / ExpertsPerGPU.
func (c *Config) ExpertGPU(e int) int { return e / c.ExpertsPerGPU }

// HotExperts is the ranking of the experts the Zipf law applies to: HotExperts()[k] is the
// expert of rank k, rank 0 being the most popular. It is a permutation of 0..Experts()-1 drawn
// from Seed alone, the same for every layer and iteration. The Config must be valid.
func (c *Config) HotExperts() []int {
	return rand.New(rand.NewPCG(c.Seed, streamHot)).Perm(c.Experts())
}

// ZipfProbabilities is the law of one draw of the generator over n ranks with exponent s:
// P(rank k) = (k+1)^-s / Σ_{j<n} (j+1)^-s. s = 0 is uniform.
func ZipfProbabilities(n int, s float64) []float64 {
	tail := zipfTail(n, s)
	p := make([]float64, n)
	for k := range p {
		p[k] = zipfWeight(k, s) / tail[0]
	}
	return p
}

// zipfWeight is (k+1)^-s, by detmath.Pow: math.Pow differs in the last bits between platforms.
func zipfWeight(k int, s float64) float64 {
	if s == 0 {
		return 1
	}
	return detmath.Pow(float64(k+1), -s)
}

// zipfTail is tail[k] = Σ_{j≥k} (j+1)^-s for k = 0..n, summed from the small end so that the
// differences the sampler takes keep their precision.
func zipfTail(n int, s float64) []float64 {
	tail := make([]float64, n+1)
	for k := n - 1; k >= 0; k-- {
		tail[k] = tail[k+1] + zipfWeight(k, s)
	}
	return tail
}

// Random streams: each is a PCG seeded with (Config.Seed, stream). The ranking of the experts
// has its own stream; iteration i has stream mix(i+1), so iterations can be drawn separately
// and in any order.
var streamHot = mix(0)

func iterationStream(i int) uint64 { return mix(uint64(i) + 1) }

// mix is splitmix64's finalizer, a bijection.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Generator draws the iterations of one Config. It is safe for concurrent use.
type Generator struct {
	cfg  Config
	hot  []int     // hot[rank] = expert
	tail []float64 // zipfTail(Experts, Zipf)
}

// NewGenerator validates cfg (a *ParamError names the bad parameter) and prepares its tables.
func NewGenerator(cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Generator{cfg: cfg, hot: cfg.HotExperts(), tail: zipfTail(cfg.Experts(), cfg.Zipf)}, nil
}

// Generate is seed 000's generate_workload: cfg.Iters iterations of cfg.Layers layers of
// cfg.Tokens() requests each, drawn from cfg.Seed alone (same Config, same workload).
//
// Source GPUs: each GPU holds Tokens / GPUs tokens and the remainder r = Tokens mod GPUs goes
// one token each to r distinct GPUs chosen at random ("as even as possible, the rest assigned at
// random"), so every GPU holds the floor or the ceiling of the mean. The tokens are numbered GPU
// by GPU (GPU 0's first), and a token keeps its GPU in every layer of an iteration; the r GPUs
// are drawn again for every iteration.
//
// Experts: each of a token's TopK experts is a draw from a Zipf law over the Experts() experts
// ranked by HotExperts: P(rank k) ∝ (k+1)^-Zipf, k = 0..Experts()-1 (any exponent ≥ 0; 0 is
// uniform; unlike numpy's zipf it needs no exponent above 1 and puts no mass beyond the last
// expert). A draw that repeats an expert of the same token is drawn again, as the seed does;
// the generator does this exactly, by drawing from the law restricted to the experts not yet
// chosen, which gives the same distribution in bounded time. Experts are listed in the order
// drawn, and GPUs[i] = Experts[i] / ExpertsPerGPU.
func Generate(cfg Config) ([]Iteration, error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]Iteration, cfg.Iters)
	for i := range out {
		out[i] = g.Iteration(i)
	}
	return out, nil
}

// Iteration draws iteration i (0 ≤ i < Iters) alone; it is the same as Generate's i-th.
func (g *Generator) Iteration(i int) Iteration {
	c := &g.cfg
	r := rand.New(rand.NewPCG(c.Seed, iterationStream(i)))
	src := g.sources(r)
	T, K := c.Tokens(), c.TopK
	it := Iteration{Index: i, Layers: make([]Layer, c.Layers)}
	chosen := make([]int, 0, K) // the token's ranks so far, sorted
	for l := range it.Layers {
		reqs := make([]Request, T)
		experts := make([]int, T*K)
		gpus := make([]int, T*K)
		for t := range reqs {
			chosen = chosen[:0]
			ex := experts[t*K : (t+1)*K : (t+1)*K]
			gp := gpus[t*K : (t+1)*K : (t+1)*K]
			for j := range K {
				rank := g.draw(r, chosen)
				at := sort.SearchInts(chosen, rank)
				chosen = append(chosen, 0)
				copy(chosen[at+1:], chosen[at:])
				chosen[at] = rank
				ex[j] = g.hot[rank]
				gp[j] = ex[j] / c.ExpertsPerGPU
			}
			reqs[t] = Request{Token: t, Src: src[t], Experts: ex, GPUs: gp}
		}
		it.Layers[l] = Layer{Index: l, Requests: reqs}
	}
	return it
}

// sources is the source GPU of every token of one iteration.
func (g *Generator) sources(r *rand.Rand) []int {
	G, T := g.cfg.GPUs(), g.cfg.Tokens()
	base, rest := T/G, T%G
	count := make([]int, G)
	for i := range count {
		count[i] = base
	}
	if rest > 0 {
		// The first rest entries of a partial Fisher–Yates shuffle are a uniform rest-subset.
		perm := make([]int, G)
		for i := range perm {
			perm[i] = i
		}
		for i := range rest {
			j := i + r.IntN(G-i)
			perm[i], perm[j] = perm[j], perm[i]
			count[perm[i]]++
		}
	}
	src := make([]int, 0, T)
	for gpu, n := range count {
		for range n {
			src = append(src, gpu)
		}
	}
	return src
}

// draw returns a rank not in chosen (sorted), with probability proportional to its Zipf weight.
// The ranks not chosen form gaps [a, b) between the chosen ones; the mass of a gap is
// tail[a] - tail[b]. A uniform point of the total mass is located gap by gap, then inside its
// gap by binary search on tail.
func (g *Generator) draw(r *rand.Rand, chosen []int) int {
	n := len(g.tail) - 1
	tail := g.tail
	var mass float64
	a := 0
	for _, c := range chosen {
		mass += tail[a] - tail[c]
		a = c + 1
	}
	mass += tail[a]
	u := r.Float64()
	if !(mass > 0) {
		// Every weight left underflowed to 0 (an enormous exponent): the limit of the law is
		// the first rank not chosen.
		return firstFree(chosen)
	}
	t := float64(u * mass) // float64() forbids fusing into an FMA, so every platform rounds alike
	a, lastB := 0, -1
	for idx := 0; idx <= len(chosen); idx++ {
		b := n
		if idx < len(chosen) {
			b = chosen[idx]
		}
		if gm := tail[a] - tail[b]; a < b && gm > 0 {
			lastB = b
			if t < gm {
				target := tail[a] - t
				k := a + sort.Search(b-a, func(j int) bool { return tail[a+j+1] < target })
				return min(k, b-1)
			}
			t -= gm
		}
		if idx < len(chosen) {
			a = chosen[idx] + 1
		}
	}
	// Rounding left t past the last gap with mass: take that gap's last rank.
	return lastB - 1
}

func firstFree(chosen []int) int {
	for i, c := range chosen {
		if c != i {
			return i
		}
	}
	return len(chosen)
}
