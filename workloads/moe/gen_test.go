package moe

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// seedDefaults is seed 000's SimConfig defaults (its README example: 4 nodes of 8 GPUs, 2
// experts per GPU), with fewer tokens so that tests run fast.
func seedDefaults() Config {
	return Config{Nodes: 4, GPUsPerNode: 8, ExpertsPerGPU: 2, SeqLen: 2048, Batch: 32, TopK: 2, Zipf: 1.2,
		Layers: 12, Iters: 10, Hidden: 2048, DtypeBytes: 4, BWInterGBps: 50, BWIntraGBps: 900, Seed: 1}
}

// tiny is the configuration of the golden files: 5 tokens on 4 GPUs (a remainder of 1).
func tiny() Config {
	return Config{Nodes: 2, GPUsPerNode: 2, ExpertsPerGPU: 2, SeqLen: 5, Batch: 1, TopK: 2, Zipf: 1.2,
		Layers: 2, Iters: 2, Hidden: 16, DtypeBytes: 2, BWInterGBps: 50, BWIntraGBps: 900, Seed: 7}
}

func mustGenerate(t testing.TB, cfg Config) []Iteration {
	t.Helper()
	iters, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return iters
}

// readAll maps every file name in dir to its content.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func writeWorkload(t *testing.T, cfg Config) map[string]string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteDir(dir, cfg, mustGenerate(t, cfg)); err != nil {
		t.Fatal(err)
	}
	return readAll(t, dir)
}

// Same seed, same files, byte for byte; another seed, other requests.
func TestSameSeedSameFiles(t *testing.T) {
	cfg := seedDefaults()
	cfg.SeqLen, cfg.Batch, cfg.Iters, cfg.Layers = 301, 1, 3, 2
	a, b := writeWorkload(t, cfg), writeWorkload(t, cfg)
	if len(a) != 4 {
		t.Fatalf("wrote %d files, want config.json and 3 iterations", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed wrote different files")
	}
	cfg.Seed++
	c := writeWorkload(t, cfg)
	for i := range cfg.Iters {
		name := IterationFile(i)
		if c[name] == a[name] {
			t.Errorf("%s: seeds %d and %d wrote the same requests", name, cfg.Seed-1, cfg.Seed)
		}
	}
	if a[IterationFile(0)] == a[IterationFile(1)] {
		t.Error("two iterations of one workload are identical")
	}
}

// A Generator's Iteration(i) alone is Generate's i-th, in any order.
func TestIterationAlone(t *testing.T) {
	cfg := tiny()
	cfg.Iters = 4
	all := mustGenerate(t, cfg)
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{3, 0, 2, 1} {
		if got := g.Iteration(i); !reflect.DeepEqual(got, all[i]) {
			t.Errorf("Iteration(%d) differs from Generate's", i)
		}
	}
}

// Each GPU holds the floor or the ceiling of Tokens/GPUs; tokens are numbered GPU by GPU and keep
// their GPU through the layers; the GPUs that take the remainder change between iterations.
func TestTokenSpread(t *testing.T) {
	for _, c := range []struct{ nodes, gps, tokens int }{
		{4, 8, 2048}, {4, 8, 2049}, {4, 8, 2047}, {2, 2, 5}, {4, 8, 7}, {1, 1, 3}, {3, 5, 1}, {1, 32, 31 * 100},
	} {
		cfg := seedDefaults()
		cfg.Nodes, cfg.GPUsPerNode, cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = c.nodes, c.gps, c.tokens, 1, 3, 12
		G := cfg.GPUs()
		extraSets := map[string]bool{}
		for _, it := range mustGenerate(t, cfg) {
			count := make([]int, G)
			first := it.Layers[0].Requests
			if len(first) != c.tokens {
				t.Fatalf("%+v: %d tokens", c, len(first))
			}
			for l, layer := range it.Layers {
				for tok, rq := range layer.Requests {
					if rq.Token != tok || rq.Src != first[tok].Src {
						t.Fatalf("%+v: layer %d token %d: token %d on GPU %d, layer 0 had GPU %d", c, l, tok, rq.Token, rq.Src, first[tok].Src)
					}
					if tok > 0 && rq.Src < layer.Requests[tok-1].Src {
						t.Fatalf("%+v: tokens are not numbered GPU by GPU", c)
					}
				}
			}
			for _, rq := range first {
				count[rq.Src]++
			}
			lo, hi := c.tokens/G, (c.tokens+G-1)/G
			extra := make([]byte, G)
			for g, n := range count {
				if n != lo && n != hi {
					t.Fatalf("%+v: GPU %d holds %d tokens, want %d or %d", c, g, n, lo, hi)
				}
				if n > lo {
					extra[g] = 1
				}
			}
			extraSets[string(extra)] = true
		}
		if c.tokens%G != 0 && len(extraSets) < 2 {
			t.Errorf("%+v: the same GPUs took the remainder in all 12 iterations", c)
		}
	}
}

// No token names an expert twice, even when the law makes repeats likely or when a token takes
// every expert; GPUs[i] is Experts[i] / ExpertsPerGPU.
func TestExpertsDistinctAndPlaced(t *testing.T) {
	for _, c := range []struct {
		e, k int
		s    float64
	}{{2, 2, 1.2}, {2, 8, 3}, {2, 64, 1.2}, {1, 32, 0}, {3, 5, 2}, {2, 64, 60}, {2, 64, 1e300}, {4, 128, 8}} {
		cfg := seedDefaults()
		cfg.ExpertsPerGPU, cfg.TopK, cfg.Zipf, cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = c.e, c.k, c.s, 200, 1, 2, 2
		hot := cfg.HotExperts()
		for _, it := range mustGenerate(t, cfg) {
			for _, layer := range it.Layers {
				for _, rq := range layer.Requests {
					if len(rq.Experts) != c.k || len(rq.GPUs) != c.k {
						t.Fatalf("%+v: %d experts, %d GPUs", c, len(rq.Experts), len(rq.GPUs))
					}
					seen := map[int]bool{}
					for i, e := range rq.Experts {
						if e < 0 || e >= cfg.Experts() || seen[e] {
							t.Fatalf("%+v: token %d experts %v", c, rq.Token, rq.Experts)
						}
						seen[e] = true
						if rq.GPUs[i] != e/c.e {
							t.Fatalf("%+v: expert %d on GPU %d, want %d", c, e, rq.GPUs[i], e/c.e)
						}
					}
					if c.s >= 60 && c.k < cfg.Experts() {
						// Such an exponent leaves (almost) no mass past the first free rank.
						for i, e := range rq.Experts {
							if e != hot[i] {
								t.Fatalf("%+v: token %d experts %v, want the hottest in order %v", c, rq.Token, rq.Experts, hot[:c.k])
							}
						}
					}
				}
			}
		}
	}
}

// expertCounts counts how many tokens name each expert, over every layer and iteration.
func expertCounts(iters []Iteration, experts int) ([]int, int) {
	count := make([]int, experts)
	tokens := 0
	for _, it := range iters {
		for _, layer := range it.Layers {
			for _, rq := range layer.Requests {
				tokens++
				for _, e := range rq.Experts {
					count[e]++
				}
			}
		}
	}
	return count, tokens
}

// within reports whether a count of n trials is within z standard deviations of probability p.
func within(count, n int, p, z float64) bool {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return math.Abs(float64(count)-float64(n)*p) <= z*sd
}

// Zipf 0 is uniform: every expert's count is within 4.5 standard deviations of N/E.
func TestZipfUniform(t *testing.T) {
	cfg := seedDefaults()
	cfg.Nodes, cfg.GPUsPerNode, cfg.TopK, cfg.Zipf, cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = 2, 4, 1, 0, 25000, 1, 4, 2
	count, n := expertCounts(mustGenerate(t, cfg), cfg.Experts())
	for e, c := range count {
		if !within(c, n, 1/float64(cfg.Experts()), 4.5) {
			t.Errorf("expert %d: %d of %d draws, want about %d", e, c, n, n/cfg.Experts())
		}
	}
}

// With Zipf 1.2 the hottest expert's frequency matches the closed form within 5%: 1/H(E, 1.2)
// for top-1, and with top-2 (a repeat drawn again) p0 + Σ_{j≠0} p_j·p0/(1−p_j). Every rank's
// top-1 frequency is within 4.5 standard deviations of its probability.
func TestZipfHottest(t *testing.T) {
	for _, k := range []int{1, 2} {
		cfg := seedDefaults()
		cfg.TopK, cfg.Zipf, cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = k, 1.2, 20000, 1, 2, 2
		E := cfg.Experts()
		var h float64
		for j := 1; j <= E; j++ {
			h += math.Pow(float64(j), -1.2)
		}
		p := make([]float64, E)
		for j := range p {
			p[j] = math.Pow(float64(j+1), -1.2) / h
		}
		if got := ZipfProbabilities(E, 1.2); math.Abs(got[0]-p[0]) > 1e-12 || math.Abs(got[E-1]-p[E-1]) > 1e-12 {
			t.Errorf("ZipfProbabilities: %v, %v want %v, %v", got[0], got[E-1], p[0], p[E-1])
		}
		want := p[0]
		if k == 2 {
			for j := 1; j < E; j++ {
				want += p[j] * p[0] / (1 - p[j])
			}
		}
		count, n := expertCounts(mustGenerate(t, cfg), E)
		hot := cfg.HotExperts()
		got := float64(count[hot[0]]) / float64(n)
		if math.Abs(got/want-1) > 0.05 {
			t.Errorf("top-%d: hottest expert %d in %.4f of tokens, closed form %.4f", k, hot[0], got, want)
		}
		if k == 1 {
			for r, e := range hot {
				if !within(count[e], n, p[r], 4.5) {
					t.Errorf("rank %d (expert %d): %d of %d draws, want about %.0f", r, e, count[e], n, p[r]*float64(n))
				}
			}
		}
	}
}

// Drawing from the law restricted to the experts not yet chosen gives what drawing again on a
// repeat gives (the seed's way): each rank's inclusion frequency matches a literal
// resample-until-new reference with its own random stream.
func TestDrawMatchesResampling(t *testing.T) {
	for _, s := range []float64{0.8, 2.5} {
		cfg := seedDefaults()
		cfg.Nodes, cfg.GPUsPerNode, cfg.TopK, cfg.Zipf, cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.Iters = 1, 8, 4, s, 30000, 1, 2, 1
		g, err := NewGenerator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		E, K := cfg.Experts(), cfg.TopK
		p := ZipfProbabilities(E, s)
		cdf := make([]float64, E)
		acc := 0.0
		for i, v := range p {
			acc += v
			cdf[i] = acc
		}
		ref := rand.New(rand.NewPCG(99, 100))
		n := 2 * cfg.Tokens()
		refCount := make([]int, E)
		for range n {
			seen := map[int]bool{}
			for len(seen) < K {
				u := ref.Float64() * acc
				r := 0
				for r < E-1 && cdf[r] <= u {
					r++
				}
				seen[r] = true
			}
			for r := range seen {
				refCount[r]++
			}
		}
		count, total := expertCounts([]Iteration{g.Iteration(0)}, E)
		if total != n {
			t.Fatalf("%d tokens", total)
		}
		for r, e := range g.hot {
			// Both are estimates of the same probability q: their difference has variance 2q(1−q)/n.
			q := float64(refCount[r]) / float64(n)
			sd := math.Sqrt(2 * q * (1 - q) / float64(n))
			if d := math.Abs(float64(count[e])/float64(n) - q); d > 4.5*sd+1e-9 {
				t.Errorf("s=%g rank %d: in %.4f of tokens, the resampling reference %.4f", s, r, float64(count[e])/float64(n), q)
			}
		}
	}
}

// The ranking is a permutation drawn from the seed: not the identity, different for another seed.
func TestHotExperts(t *testing.T) {
	cfg := seedDefaults()
	hot := cfg.HotExperts()
	seen := make([]bool, cfg.Experts())
	identity := true
	for r, e := range hot {
		if seen[e] {
			t.Fatalf("expert %d twice in %v", e, hot)
		}
		seen[e] = true
		identity = identity && e == r
	}
	if identity {
		t.Error("the ranking is the identity")
	}
	cfg.Seed++
	if reflect.DeepEqual(hot, cfg.HotExperts()) {
		t.Error("seeds 1 and 2 rank the experts alike")
	}
}

func TestFirstFree(t *testing.T) {
	for _, c := range []struct {
		chosen []int
		want   int
	}{{nil, 0}, {[]int{0}, 1}, {[]int{1}, 0}, {[]int{0, 1, 3}, 2}, {[]int{0, 1, 2}, 3}} {
		if got := firstFree(c.chosen); got != c.want {
			t.Errorf("firstFree(%v) = %d, want %d", c.chosen, got, c.want)
		}
	}
}

// The defaults are seed 000's, and valid.
func TestDefaultConfig(t *testing.T) {
	if c := DefaultConfig(); c != seedDefaults() {
		t.Errorf("DefaultConfig() = %+v, want %+v", c, seedDefaults())
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// Every parameter out of range is named by its flag and its config.json key.
func TestValidate(t *testing.T) {
	cases := []struct {
		flag, key string
		edit      func(c *Config)
	}{
		{"nodes", "nodes", func(c *Config) { c.Nodes = 0 }},
		{"gps", "gpus_per_node", func(c *Config) { c.GPUsPerNode = -1 }},
		{"gps", "gpus_per_node", func(c *Config) { c.Nodes, c.GPUsPerNode = 1<<20, 2 }},
		{"experts-per-gpu", "experts_per_gpu", func(c *Config) { c.ExpertsPerGPU = 0 }},
		{"experts-per-gpu", "experts_per_gpu", func(c *Config) { c.ExpertsPerGPU = 1 << 20 }},
		{"seq-len", "seq_len", func(c *Config) { c.SeqLen = 0 }},
		{"batch", "batch", func(c *Config) { c.Batch = 0 }},
		{"batch", "batch", func(c *Config) { c.SeqLen, c.Batch = 1<<20, 1<<20 }},
		{"top-k", "top_k", func(c *Config) { c.TopK = 0 }},
		{"top-k", "top_k", func(c *Config) { c.TopK = 65 }},
		{"zipf", "zipf", func(c *Config) { c.Zipf = -0.1 }},
		{"zipf", "zipf", func(c *Config) { c.Zipf = math.NaN() }},
		{"zipf", "zipf", func(c *Config) { c.Zipf = math.Inf(1) }},
		{"layers", "layers", func(c *Config) { c.Layers = 0 }},
		{"layers", "layers", func(c *Config) { c.SeqLen, c.Batch, c.Layers = 1<<15, 1<<15, 1<<20 }},
		{"iters", "iters", func(c *Config) { c.Iters = 0 }},
		{"hidden", "hidden", func(c *Config) { c.Hidden = 0 }},
		{"dtype-bytes", "dtype_bytes", func(c *Config) { c.DtypeBytes = 0 }},
		{"dtype-bytes", "dtype_bytes", func(c *Config) { c.DtypeBytes = 65 }},
		{"bw-inter", "bw_inter_gbps", func(c *Config) { c.BWInterGBps = 0 }},
		{"bw-intra", "bw_intra_gbps", func(c *Config) { c.BWIntraGBps = math.Inf(1) }},
	}
	for _, c := range cases {
		cfg := seedDefaults()
		c.edit(&cfg)
		_, err := Generate(cfg)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Flag != c.flag || pe.Key != c.key {
			t.Errorf("%s: error %v, want one naming -%s", c.flag, err, c.flag)
			continue
		}
		if msg := err.Error(); msg[:len(c.flag)+2] != "-"+c.flag+" " {
			t.Errorf("%s: error %q does not start with the flag", c.flag, msg)
		}
	}
	cfg := seedDefaults()
	cfg.TopK = cfg.Experts()
	if err := cfg.Validate(); err != nil {
		t.Errorf("top-k = experts: %v", err)
	}
	// A layer's bytes, tokens × top-k × hidden × dtype bytes, must fit an int64.
	cfg = seedDefaults()
	cfg.SeqLen, cfg.Batch, cfg.Layers, cfg.TopK, cfg.Hidden, cfg.DtypeBytes = 1<<15, 1<<15, 1, 64, MaxHidden, MaxDtypeBytes
	want := "-hidden 16777216: 1073741824 tokens × top-64 × 16777216 elements × 64 bytes: a layer's dispatch is more than 9223372036854775807 bytes"
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("overflowing layer: %v\nwant %s", err, want)
	}
	cfg.DtypeBytes = 8 // 2^30 · 2^6 · 2^24 · 2^3 = 2^63: still one too many
	if err := cfg.Validate(); err == nil {
		t.Error("a layer of 2^63 bytes accepted")
	}
	cfg.DtypeBytes = 4
	if err := cfg.Validate(); err != nil {
		t.Errorf("a layer of 2^62 bytes: %v", err)
	}
}
