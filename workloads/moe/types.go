package moe

// Config is a token-routing workload's parameters (seed 000's SimConfig), as config.json stores
// them. Bandwidths are GB/s as given on the command line; the seed's estimates convert them to
// KB/s (× 1024 × 1024) and the token size to KB (Hidden × DtypeBytes / 1024).
type Config struct {
	Nodes         int     `json:"nodes"`
	GPUsPerNode   int     `json:"gpus_per_node"`
	ExpertsPerGPU int     `json:"experts_per_gpu"`
	SeqLen        int     `json:"seq_len"`
	Batch         int     `json:"batch"`
	TopK          int     `json:"top_k"`
	Zipf          float64 `json:"zipf"`
	Layers        int     `json:"layers"`
	Iters         int     `json:"iters"`
	Hidden        int     `json:"hidden"`
	DtypeBytes    int     `json:"dtype_bytes"`
	BWInterGBps   float64 `json:"bw_inter_gbps"`
	BWIntraGBps   float64 `json:"bw_intra_gbps"`
	Seed          uint64  `json:"seed"`
}

// DefaultConfig is seed 000's SimConfig defaults, simd moe gen's: its README example of 4
// nodes of 8 GPUs with 2 experts per GPU, 2048-token sequences in batches of 32, top-2 routing
// with Zipf 1.2, 12 layers, 10 iterations, 2048-element float32 tokens, 50 GB/s network and
// 900 GB/s NVLink, seed 1.
func DefaultConfig() Config {
	return Config{Nodes: 4, GPUsPerNode: 8, ExpertsPerGPU: 2, SeqLen: 2048, Batch: 32, TopK: 2, Zipf: 1.2,
		Layers: 12, Iters: 10, Hidden: 2048, DtypeBytes: 4, BWInterGBps: 50, BWIntraGBps: 900, Seed: 1}
}

// GPUs is the number of GPUs, Nodes × GPUsPerNode.
func (c *Config) GPUs() int { return c.Nodes * c.GPUsPerNode }

// Experts is the number of experts; expert e lives on GPU e / ExpertsPerGPU.
func (c *Config) Experts() int { return c.GPUs() * c.ExpertsPerGPU }

// Tokens is the number of tokens of a layer, SeqLen × Batch.
func (c *Config) Tokens() int { return c.SeqLen * c.Batch }

// TokenKB is the size of one token in KB, Hidden × DtypeBytes / 1024 (seed 000).
func (c *Config) TokenKB() float64 { return float64(c.Hidden*c.DtypeBytes) / 1024 }

// TokenBytes is the size of one token in bytes.
func (c *Config) TokenBytes() int64 { return int64(c.Hidden) * int64(c.DtypeBytes) }

// Request is one token of one layer: the GPU that holds it and its top-k experts with the GPU
// of each (GPUs[i] hosts Experts[i]; a GPU may appear more than once when it hosts two of the
// token's experts).
type Request struct {
	Token   int
	Src     int
	Experts []int
	GPUs    []int
}

// Layer is the requests of one MoE layer of one iteration, in token order.
type Layer struct {
	Index    int
	Requests []Request
}

// Iteration is the layers of one iteration, in order.
type Iteration struct {
	Index  int
	Layers []Layer
}
