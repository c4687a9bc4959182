package moe

import (
	"fmt"
	"math"
	"strings"
)

// Kind is a dispatch schedule.
type Kind uint8

const (
	DeepEP Kind = iota + 1
	FAST
)

func (k Kind) String() string {
	switch k {
	case DeepEP:
		return "DeepEP"
	case FAST:
		return "FAST"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind reads "deepep" or "fast" (any case).
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(s) {
	case "deepep":
		return DeepEP, nil
	case "fast":
		return FAST, nil
	}
	return 0, fmt.Errorf("%q: expected deepep or fast", s)
}

// Model is how a plan is priced.
type Model uint8

const (
	// Seed is seed 000's closed forms (see EstimateSeed).
	Seed Model = iota + 1
	// Exact prices the plan's own transfers stage by stage (see EstimateExact).
	Exact
)

func (m Model) String() string {
	switch m {
	case Seed:
		return "seed"
	case Exact:
		return "exact"
	}
	return fmt.Sprintf("Model(%d)", uint8(m))
}

// ParseModel reads "seed" or "exact" (any case).
func ParseModel(s string) (Model, error) {
	switch strings.ToLower(s) {
	case "seed":
		return Seed, nil
	case "exact":
		return Exact, nil
	}
	return 0, fmt.Errorf("%q: expected seed or exact", s)
}

// Phase is the step of a dispatch a transfer belongs to.
type Phase uint8

const (
	// DeepEPCopy is the network copy of tokens from their source GPU to a proxy.
	DeepEPCopy Phase = iota + 1
	// DeepEPForward is the NVLink forward of tokens from a proxy to a target; Deps holds the
	// copy that brought them.
	DeepEPForward
	// DeepEPLocal is the NVLink send of tokens to a target in the source's own server.
	DeepEPLocal
	// FASTIntrinsic is the NVLink send of copies to a target in the source's own server.
	FASTIntrinsic
	// FASTBalance is the NVLink move of cross-server copies between GPUs of one server.
	FASTBalance
	// FASTInter is the network transfer of one Birkhoff stage between GPUs of the same local
	// rank.
	FASTInter
	// FASTRedist is the NVLink forward, at the destination server, of copies received in a
	// stage to their target.
	FASTRedist
)

var phaseNames = [...]string{"", "deepep-copy", "deepep-forward", "deepep-local", "fast-intrinsic", "fast-balance", "fast-inter", "fast-redist"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) && p > 0 {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// ScaleOut reports whether transfers of the phase cross servers (the NIC) rather than staying
// on NVLink.
func (p Phase) ScaleOut() bool { return p == DeepEPCopy || p == FASTInter }

// Transfer is one point-to-point message of a plan: Tokens token copies of Config.TokenBytes
// each from GPU Src to GPU Dst, which may start once every transfer listed in Deps (indices
// into Plan.Transfers, all smaller than the transfer's own) has landed.
type Transfer struct {
	Phase    Phase
	Stage    int // FASTInter and FASTRedist: the index in FASTSchedule.Stages; −1 otherwise
	Src, Dst int
	// Tokens is the number of token copies the transfer carries.
	Tokens int
	// Picks is the number of (token, expert) selections the copies serve on Dst's side:
	// for a DeepEP forward or local send, the selections of experts on Dst (more than Tokens
	// when Dst hosts two experts of a token); elsewhere equal to Tokens.
	Picks int
	Deps  []int
}

// Plan is one layer's dispatch as transfers between GPUs. GPU x is local rank x mod
// GPUsPerNode of server x / GPUsPerNode. Within each group documented by BuildDeepEP and
// BuildFAST transfers are in a fixed order, so a plan is deterministic.
type Plan struct {
	Kind               Kind
	Nodes, GPUsPerNode int
	Layer              int // Layer.Index
	Transfers          []Transfer
	FAST               *FASTSchedule // nil for DeepEP
}

// Build builds the plan of the given kind for one layer.
func Build(kind Kind, cfg *Config, l *Layer) (*Plan, error) {
	switch kind {
	case DeepEP:
		return BuildDeepEP(cfg, l)
	case FAST:
		return BuildFAST(cfg, l)
	}
	return nil, fmt.Errorf("moe: unknown plan kind %v", kind)
}

// LayerEstimate is the price of one layer's plan. Times are seconds; which parts are set
// depends on the plan and model.
type LayerEstimate struct {
	Seconds float64
	// InterKB is the data that crosses servers, in KB (Config.TokenKB per copy).
	InterKB float64
	// DeepEP: the network and NVLink bottlenecks (the layer takes the larger). FAST: InterS is
	// the time of the inter stages.
	InterS, IntraS float64
	// FAST: balance, the restore time not hidden behind a stage, and (exact model) the
	// intrinsic same-server traffic.
	BalanceS, RedistS, IntrinsicS float64
	// FAST: the Birkhoff stages priced and the index of the last one carrying real traffic
	// (−1 if none). The seed model decomposes its own server matrix (see EstimateSeed).
	Stages    []Stage
	LastStage int
}

// kbPerSec converts GB/s to KB/s as the seed does.
func kbPerSec(gbps float64) float64 { return gbps * 1024 * 1024 }

func checkBandwidths(cfg *Config) error {
	if !(cfg.BWInterGBps > 0) || !(cfg.BWIntraGBps > 0) || math.IsInf(cfg.BWInterGBps, 0) || math.IsInf(cfg.BWIntraGBps, 0) {
		return fmt.Errorf("moe: bandwidths %v and %v GB/s: both must be positive and finite", cfg.BWInterGBps, cfg.BWIntraGBps)
	}
	return nil
}

// EstimateSeed prices a plan with seed 000's closed forms. Units are the seed's: loads are
// counted in tokens, a token is Config.TokenKB KB, bandwidths are GB/s × 1024 × 1024 KB/s.
//
// DeepEP: per GPU, inter_tx/inter_rx count the copies it sends to or receives as a proxy (one
// per token and destination server), intra_tx/intra_rx the NVLink sends counted per (token,
// expert) selection (Transfer.Picks: the seed loops over the target list, so a GPU hosting two
// experts of a token counts twice). Layer = max(max_g max(inter_tx, inter_rx)·token/bw_inter,
// max_g max(intra_tx, intra_rx)·token/bw_intra).
//
// FAST, from the plan's cross-server demand (copies per (token, expert) selection):
//   - node matrix N[s][t] = ⌊Σ demand from GPUs of s to GPUs of t / g⌋ (the seed's integer
//     average per GPU);
//   - balance = the largest per-GPU NVLink volume that gives every GPU of a server an equal
//     share of its server's copies to each destination server: for GPU i of s with R_t
//     copies for server t and share A_t = Σ_i R_t / g, out = Σ_t max(0, R_t − A_t), in =
//     Σ_t max(0, A_t − R_t); volume = max over GPUs of max(out, in); time = volume·token/bw_intra;
//   - inter = L·token/bw_inter, L the largest row or column sum of N;
//   - N padded to line sums L (PadSeed), decomposed (Birkhoff); the last stage with real
//     traffic found as the seed's _find_last_stage does (walking back from the last stage,
//     a stage is padding if none of its entries exceeds the padding not yet accounted for,
//     which is then reduced by it); its entries less that remaining padding, floored at zero;
//     redist = (largest such entry / 2)·token/bw_intra — the seed's assumption that each GPU
//     forwards half of what it received in that stage;
//   - layer = balance + inter + redist. Same-server traffic is not priced, as in the seed.
//
// InterKB counts DeepEP's copies to proxies and FAST's cross-server copies.
func EstimateSeed(cfg *Config, p *Plan) (LayerEstimate, error) {
	if err := checkBandwidths(cfg); err != nil {
		return LayerEstimate{}, err
	}
	switch p.Kind {
	case DeepEP:
		return deepEPEstimate(cfg, p, true), nil
	case FAST:
		return fastSeed(cfg, p)
	}
	return LayerEstimate{}, fmt.Errorf("moe: unknown plan kind %v", p.Kind)
}

// EstimateExact prices a plan from its own transfers, stage by stage, in the seed's units.
//
// DeepEP: the copies are bounded by each GPU's NIC in and out, the forwards and local sends
// by each GPU's NVLink in and out, counting token copies as they travel (one per GPU, not per
// expert). DeepEP streams tokens through the proxies in small chunks, so the two stages
// overlap and the layer takes the larger bottleneck, max(max_g max(nic_tx, nic_rx)·token/
// bw_inter, max_g max(nvl_tx, nvl_rx)·token/bw_intra); the fill and drain of one chunk is left
// to the event mode.
//
// FAST: balance = max_g max(tx, rx) of the balance transfers·token/bw_intra. Stage k's inter
// time I_k = the most copies any GPU sends or receives in it·token/bw_inter (the stages run one
// after the other; a stage that is all padding takes no time); its restore R_k = max_g
// max(tx, rx) of its redistribution transfers·token/bw_intra, run during stage k+1. With K
// stages the pipeline takes P = Σ_{k=0..K} max(I_k, R_{k−1}) (I_K = R_{−1} = 0). Intrinsic
// traffic I = max_g max(tx, rx)·token/bw_intra rides NVLink while the NICs run the stages, so
// layer = balance + max(P, I). InterS reports Σ I_k and RedistS the restore time not hidden,
// P − Σ I_k.
func EstimateExact(cfg *Config, p *Plan) (LayerEstimate, error) {
	if err := checkBandwidths(cfg); err != nil {
		return LayerEstimate{}, err
	}
	switch p.Kind {
	case DeepEP:
		return deepEPEstimate(cfg, p, false), nil
	case FAST:
		if p.FAST == nil {
			return LayerEstimate{}, fmt.Errorf("moe: FAST plan without its schedule")
		}
		return fastExact(cfg, p), nil
	}
	return LayerEstimate{}, fmt.Errorf("moe: unknown plan kind %v", p.Kind)
}

// Estimate prices a plan with the given model.
func Estimate(model Model, cfg *Config, p *Plan) (LayerEstimate, error) {
	switch model {
	case Seed:
		return EstimateSeed(cfg, p)
	case Exact:
		return EstimateExact(cfg, p)
	}
	return LayerEstimate{}, fmt.Errorf("moe: unknown model %v", model)
}

// load accumulates per-GPU send and receive counts.
type load struct{ tx, rx []int64 }

func newLoad(gpus int) load { return load{make([]int64, gpus), make([]int64, gpus)} }

func (l load) add(src, dst, n int) {
	l.tx[src] += int64(n)
	l.rx[dst] += int64(n)
}

func (l load) max() int64 {
	var m int64
	for i := range l.tx {
		m = max(m, l.tx[i], l.rx[i])
	}
	return m
}

func (l load) reset() {
	clear(l.tx)
	clear(l.rx)
}

func deepEPEstimate(cfg *Config, p *Plan, seed bool) LayerEstimate {
	gpus := p.Nodes * p.GPUsPerNode
	inter, intra := newLoad(gpus), newLoad(gpus)
	var copies int64
	for i := range p.Transfers {
		t := &p.Transfers[i]
		switch t.Phase {
		case DeepEPCopy:
			inter.add(t.Src, t.Dst, t.Tokens)
			copies += int64(t.Tokens)
		case DeepEPForward, DeepEPLocal:
			if seed {
				intra.add(t.Src, t.Dst, t.Picks)
			} else {
				intra.add(t.Src, t.Dst, t.Tokens)
			}
		}
	}
	tok := cfg.TokenKB()
	e := LayerEstimate{LastStage: -1}
	e.InterS = float64(inter.max()) * tok / kbPerSec(cfg.BWInterGBps)
	e.IntraS = float64(intra.max()) * tok / kbPerSec(cfg.BWIntraGBps)
	e.Seconds = max(e.InterS, e.IntraS)
	e.InterKB = float64(copies) * tok
	return e
}

func fastSeed(cfg *Config, p *Plan) (LayerEstimate, error) {
	fs := p.FAST
	if fs == nil {
		return LayerEstimate{}, fmt.Errorf("moe: FAST plan without its schedule")
	}
	n, g := p.Nodes, p.GPUsPerNode
	gpus := n * g
	// perServer[x*n+t]: copies GPU x holds for server t; sum[s*n+t]: server totals.
	perServer := make([]int64, gpus*n)
	sum := make([]int64, n*n)
	var copies int64
	for _, d := range fs.Demand {
		perServer[d.Src*n+d.Dst/g] += int64(d.Copies)
		sum[(d.Src/g)*n+d.Dst/g] += int64(d.Copies)
		copies += int64(d.Copies)
	}
	tok := cfg.TokenKB()
	intra, interBW := kbPerSec(cfg.BWIntraGBps), kbPerSec(cfg.BWInterGBps)
	e := LayerEstimate{LastStage: -1}
	e.InterKB = float64(copies) * tok

	// Balance against the exact average share.
	vol := 0.0
	for x := range gpus {
		s := x / g
		out, in := 0.0, 0.0
		for t := range n {
			if t == s {
				continue
			}
			d := float64(perServer[x*n+t]) - float64(sum[s*n+t])/float64(g)
			if d > 0 {
				out += d
			} else {
				in -= d
			}
		}
		vol = max(vol, out, in)
	}
	e.BalanceS = vol * tok / intra

	node := make([][]int64, n)
	var lsum int64
	for s := range n {
		node[s] = make([]int64, n)
		for t := range n {
			if t != s {
				node[s][t] = sum[s*n+t] / int64(g)
			}
		}
	}
	for s := range n {
		var row, col int64
		for t := range n {
			row += node[s][t]
			col += node[t][s]
		}
		lsum = max(lsum, row, col)
	}
	e.InterS = float64(lsum) * tok / interBW

	padded, padding, err := PadSeed(node, lsum)
	if err != nil {
		return LayerEstimate{}, err
	}
	if e.Stages, err = Birkhoff(toFloat(padded)); err != nil {
		return LayerEstimate{}, err
	}
	var maxVal float64
	e.LastStage, maxVal = seedLastStage(e.Stages, padding)
	redistTokens := maxVal / 2
	e.RedistS = redistTokens * tok / intra
	e.Seconds = e.BalanceS + e.InterS + e.RedistS
	return e, nil
}

// seedLastStage is the seed's _find_last_stage followed by its clean-up: it returns the index
// of the stage it settles on (−1 if there are no stages) and the largest entry of that stage
// less the padding still unaccounted for, floored at zero.
func seedLastStage(stages []Stage, padding [][]int64) (int, float64) {
	if len(stages) == 0 {
		// The seed indexes stages[0] and fails; with no stages there is nothing to restore.
		return -1, 0
	}
	n := len(padding)
	rem := make([][]float64, n)
	for r := range n {
		rem[r] = make([]float64, n)
		for c := range n {
			rem[r][c] = float64(padding[r][c])
		}
	}
	last := 0
	for k := len(stages) - 1; k >= 0; k-- {
		st := stages[k]
		real := false
		for r, c := range st.Perm {
			if st.Weight > rem[r][c] {
				real = true
				break
			}
		}
		if real {
			last = k
			break
		}
		for r, c := range st.Perm {
			rem[r][c] -= st.Weight
		}
	}
	// np.max over the whole stage matrix, zeros included, after max(0, stage − remaining).
	maxVal := 0.0
	for r, c := range stages[last].Perm {
		maxVal = max(maxVal, stages[last].Weight-rem[r][c])
	}
	return last, maxVal
}

func fastExact(cfg *Config, p *Plan) LayerEstimate {
	fs := p.FAST
	gpus := p.Nodes * p.GPUsPerNode
	tok := cfg.TokenKB()
	intra, interBW := kbPerSec(cfg.BWIntraGBps), kbPerSec(cfg.BWInterGBps)
	e := LayerEstimate{Stages: fs.Stages, LastStage: fs.LastReal}
	k := len(fs.Stages)
	interMax, restoreMax := make([]int64, k), make([]int64, k)
	bal, intr := newLoad(gpus), newLoad(gpus)
	restore := newLoad(gpus)
	cur := -1
	flush := func() {
		if cur >= 0 {
			restoreMax[cur] = restore.max()
			restore.reset()
		}
	}
	var copies int64
	for i := range p.Transfers {
		t := &p.Transfers[i]
		switch t.Phase {
		case FASTIntrinsic:
			intr.add(t.Src, t.Dst, t.Tokens)
		case FASTBalance:
			bal.add(t.Src, t.Dst, t.Tokens)
		case FASTInter, FASTRedist:
			if t.Stage != cur {
				flush()
				cur = t.Stage
			}
			if t.Phase == FASTInter {
				// One-to-one: a GPU sends and receives at most one transfer per stage.
				interMax[t.Stage] = max(interMax[t.Stage], int64(t.Tokens))
				copies += int64(t.Tokens)
			} else {
				restore.add(t.Src, t.Dst, t.Tokens)
			}
		}
	}
	flush()
	e.InterKB = float64(copies) * tok
	e.BalanceS = float64(bal.max()) * tok / intra
	e.IntrinsicS = float64(intr.max()) * tok / intra
	pipe := 0.0
	for s := 0; s <= k; s++ {
		var in, re float64
		if s < k {
			in = float64(interMax[s]) * tok / interBW
			e.InterS += in
		}
		if s > 0 {
			re = float64(restoreMax[s-1]) * tok / intra
		}
		pipe += max(in, re)
	}
	e.RedistS = pipe - e.InterS
	e.Seconds = e.BalanceS + max(pipe, e.IntrinsicS)
	return e
}

// Metrics are seed 000's summary of a run, in its units: GB = KB / 1024 / 1024 and GB/s =
// KB/s / 1024 / 1024.
type Metrics struct {
	// TotalLatencyS is the sum of the layer times.
	TotalLatencyS float64 `json:"total_latency_s"`
	// AvgLayerLatencyMs is TotalLatencyS / layers × 1000.
	AvgLayerLatencyMs float64 `json:"avg_layer_latency_ms"`
	// InterNodeTrafficGB is the data that crossed servers.
	InterNodeTrafficGB float64 `json:"inter_node_traffic_gb"`
	// AlgoBWGBps is tokens·token_KB·layers·top_k / (TotalLatencyS · GPUs), in GB/s; 0 when
	// nothing took any time.
	AlgoBWGBps float64 `json:"algo_bw_gbps"`
	// LayerLatencyS is each layer's time, iteration by iteration, layer by layer.
	LayerLatencyS []float64 `json:"layer_latency_s"`
}

// LayerResult is one priced layer of a run.
type LayerResult struct {
	Iteration, Layer int // Iteration.Index and Layer.Index
	Plan             *Plan
	Estimate         LayerEstimate
}

// Run builds and prices the plan of every layer of every iteration, in order, and returns the
// seed's metrics. each, if not nil, sees every layer as it is priced. The payload of the
// algorithm bandwidth counts Config.Tokens() tokens with Config.TopK selections per layer
// priced, as the seed does.
func Run(cfg *Config, iters []Iteration, kind Kind, model Model, each func(LayerResult) error) (Metrics, error) {
	m := Metrics{LayerLatencyS: []float64{}}
	var totalKB float64
	for _, it := range iters {
		for li := range it.Layers {
			l := &it.Layers[li]
			p, err := Build(kind, cfg, l)
			if err != nil {
				return Metrics{}, fmt.Errorf("iteration %d: %w", it.Index, err)
			}
			e, err := Estimate(model, cfg, p)
			if err != nil {
				return Metrics{}, fmt.Errorf("iteration %d layer %d: %w", it.Index, l.Index, err)
			}
			m.TotalLatencyS += e.Seconds
			totalKB += e.InterKB
			m.LayerLatencyS = append(m.LayerLatencyS, e.Seconds)
			if each != nil {
				if err := each(LayerResult{Iteration: it.Index, Layer: l.Index, Plan: p, Estimate: e}); err != nil {
					return Metrics{}, err
				}
			}
		}
	}
	return Summarize(cfg, m.LayerLatencyS, totalKB), nil
}

// Summarize computes the seed's metrics from the time of every layer priced (or simulated), in
// order, and the data that crossed servers, in KB.
func Summarize(cfg *Config, layerS []float64, interKB float64) Metrics {
	m := Metrics{LayerLatencyS: layerS}
	if m.LayerLatencyS == nil {
		m.LayerLatencyS = []float64{}
	}
	for _, s := range layerS {
		m.TotalLatencyS += s
	}
	layers := len(m.LayerLatencyS)
	if layers > 0 {
		m.AvgLayerLatencyMs = m.TotalLatencyS / float64(layers) * 1000
	}
	m.InterNodeTrafficGB = interKB / 1024 / 1024
	if m.TotalLatencyS > 0 {
		// The seed's order of operations, tokens·size·layers·iterations·top_k.
		payload := float64(cfg.Tokens()) * cfg.TokenKB() * float64(layers) * float64(cfg.TopK)
		if layers == cfg.Layers*cfg.Iters {
			payload = float64(cfg.Tokens()) * cfg.TokenKB() * float64(cfg.Layers) * float64(cfg.Iters) * float64(cfg.TopK)
		}
		m.AlgoBWGBps = payload / (m.TotalLatencyS * float64(cfg.GPUs())) / 1024 / 1024
	}
	return m
}
