package algo

import (
	"fmt"
	"strings"

	"simd/ccl"
	"simd/ccl/nccl"
)

// Policy is how a Selector chooses.
type Policy string

// Selection policies.
const (
	// PolicySimCCL is SimAI's rule (get_algo_proto_info, ccl-facts.md §1.5): NVLS for an
	// all-reduce on a TP group of at least 8 ranks of H100, H800 or H20 GPUs when NVLS is
	// enabled (NVLS-Tree when the group spans servers), the ring for everything else, PXN rings
	// when PXN is enabled, the group spans servers and the PXN variant relays the operation
	// (SimCCL's: all-reduce and reduce-scatter), direct pairs for all-to-all (PXN pairs with
	// the NCCL-like PXN).
	PolicySimCCL Policy = "simccl"
	// PolicyNCCL picks what NCCL 2.30's tuning model finds fastest for the operation, size,
	// node count and GPU generation (ccl-facts.md §2.7), among the algorithms simd can build;
	// NVLS and NVLS-Tree are candidates only when NVLS is enabled.
	PolicyNCCL Policy = "nccl"
)

// Options configure a Selector.
type Options struct {
	Policy  Policy
	GPUType string // H100, H800, A100, ... (the topology's or -g_type)
	NVLS    bool   // AS_NVLS_ENABLE=1
	PXN     bool   // AS_PXN_ENABLE=1
	// PXNVariant is how PXN decomposes (Params.PXN): SimCCL's by default.
	PXNVariant nccl.PXNVariant
	// ExactBytes sends every byte of a collective; by default the plans cut it as SimCCL's
	// integer divisions do (ccl.Request.Truncate).
	ExactBytes bool
	// Force fixes the algorithm for a group kind, whatever the policy says.
	Force map[ccl.GroupKind]Name
}

// OptionsFromEnv reads AS_NVLS_ENABLE and AS_PXN_ENABLE ("1" enables, as in SimAI) through
// getenv, starting from the SimCCL policy.
func OptionsFromEnv(getenv func(string) string) Options {
	return Options{
		Policy: PolicySimCCL,
		NVLS:   getenv("AS_NVLS_ENABLE") == "1",
		PXN:    getenv("AS_PXN_ENABLE") == "1",
	}
}

// ParseForce reads "TP=nvls,DP=ring,EP=direct" into a Force map.
func ParseForce(s string) (map[ccl.GroupKind]Name, error) {
	out := map[ccl.GroupKind]Name{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected GROUP=ALGORITHM, e.g. TP=nvls", part)
		}
		g, err := parseGroup(k)
		if err != nil {
			return nil, err
		}
		a, err := ParseName(v)
		if err != nil {
			return nil, err
		}
		out[g] = a
	}
	return out, nil
}

func parseGroup(s string) (ccl.GroupKind, error) {
	if g, ok := ccl.ParseGroupKind(s); ok {
		return g, nil
	}
	return 0, fmt.Errorf("unknown group %q; expected TP, DP, PP, EP or DP_EP", s)
}

// Choice is a selected algorithm and why.
type Choice struct {
	Algorithm Name
	// Protocol is NCCL's protocol for the choice (ProtoUndef under the SimCCL policy, as in
	// SimAI's basic version); the event mode uses it for the per-flow send latency.
	Protocol nccl.Protocol
	Reason   string
}

// Selector chooses algorithms.
type Selector struct {
	opt Options
}

// params are the DAG parameters the selector's plans use.
func (s *Selector) params(chunks int) Params { return Params{Chunks: chunks, PXN: s.opt.PXNVariant} }

// pxn says whether PXN relays op on a group spanning servers.
func (s *Selector) pxn(op ccl.Op, servers int) bool {
	o := nccl.Options{PXN: s.opt.PXN, PXNVariant: s.opt.PXNVariant}
	return servers > 1 && o.PXNApplies(op)
}

// Truncates says whether the selector's requests cut the data as SimCCL does
// (ccl.Request.Truncate): unless Options.ExactBytes.
func (s *Selector) Truncates() bool { return !s.opt.ExactBytes }

// ParseChunkBytes reads a -chunk-bytes rule into Options.ExactBytes: simccl (SimCCL's integer
// chunks, ccl.Request.Truncate) is false, exact (every byte sent) true, "" is exactByDefault.
func ParseChunkBytes(rule string, exactByDefault bool) (exact bool, err error) {
	switch rule {
	case "":
		return exactByDefault, nil
	case "simccl":
		return false, nil
	case "exact":
		return true, nil
	}
	return false, fmt.Errorf("-chunk-bytes %q: expected simccl or exact", rule)
}

// NewSelector checks the options.
func NewSelector(opt Options) (*Selector, error) {
	if opt.Policy == "" {
		opt.Policy = PolicySimCCL
	}
	if opt.Policy != PolicySimCCL && opt.Policy != PolicyNCCL {
		return nil, fmt.Errorf("unknown selection policy %q; expected simccl or nccl", opt.Policy)
	}
	if opt.PXNVariant != nccl.PXNSimCCL && opt.PXNVariant != nccl.PXNNCCL {
		return nil, fmt.Errorf("unknown %s", opt.PXNVariant)
	}
	return &Selector{opt: opt}, nil
}

// Choose picks the algorithm for op on a group of the given kind (req holds the ranks and the
// size). A forced algorithm that cannot run op (e.g. a tree for an all-gather) is an error
// naming both.
func (s *Selector) Choose(op ccl.Op, group ccl.GroupKind, req *ccl.Request) (Choice, error) {
	if a, ok := s.opt.Force[group]; ok {
		if !Supports(a, op) {
			return Choice{}, fmt.Errorf("the algorithm forced for %s groups, %s, does not implement %s", group, a, op)
		}
		return Choice{Algorithm: a, Protocol: nccl.ProtoUndef, Reason: "forced for " + group.String() + " groups"}, nil
	}
	n, servers := len(req.Ranks), req.Servers()
	if s.opt.Policy == PolicyNCCL {
		return s.chooseNCCL(op, n, servers, req)
	}
	if op == ccl.OpAllToAll {
		if s.pxn(op, servers) {
			return Choice{Algorithm: PXN, Protocol: nccl.ProtoUndef, Reason: "all-to-all with PXN relays (AS_PXN_ENABLE, NCCL-like PXN)"}, nil
		}
		return Choice{Algorithm: Direct, Protocol: nccl.ProtoUndef, Reason: "all-to-all: every pair at once, as SimCCL"}, nil
	}
	switch nccl.SimCCLAlgorithm(op, group, s.opt.GPUType, n, servers, s.opt.NVLS) {
	case nccl.AlgoNVLS:
		return Choice{Algorithm: NVLS, Protocol: nccl.ProtoUndef, Reason: "TP all-reduce of ≥8 ranks with AS_NVLS_ENABLE on " + s.opt.GPUType}, nil
	case nccl.AlgoNVLSTree:
		return Choice{Algorithm: NVLSTree, Protocol: nccl.ProtoUndef, Reason: "TP all-reduce across servers with AS_NVLS_ENABLE: NVLS inside servers, a tree between them"}, nil
	}
	if s.pxn(op, servers) {
		return Choice{Algorithm: PXN, Protocol: nccl.ProtoUndef, Reason: fmt.Sprintf("ring with PXN relays (AS_PXN_ENABLE, %s PXN)", s.opt.PXNVariant)}, nil
	}
	if s.opt.PXN && servers > 1 && op == ccl.OpAllGather {
		return Choice{Algorithm: Ring, Protocol: nccl.ProtoUndef, Reason: "SimCCL's ring: SimCCL v1.6 never runs PXN for all-gather"}, nil
	}
	return Choice{Algorithm: Ring, Protocol: nccl.ProtoUndef, Reason: "SimCCL's ring"}, nil
}

// chooseNCCL follows NCCL's tuning model; algorithms simd has no flows for (CollNet, PAT) fall
// back to the ring, and all-to-all, which NCCL runs as point-to-point, is direct.
func (s *Selector) chooseNCCL(op ccl.Op, n, servers int, req *ccl.Request) (Choice, error) {
	if op == ccl.OpAllToAll {
		a := Direct
		if s.pxn(op, servers) {
			a = PXN
		}
		return Choice{Algorithm: a, Protocol: nccl.ProtoSimple, Reason: "NCCL runs all-to-all as point-to-point sends"}, nil
	}
	arch, ok := nccl.ArchOf(s.opt.GPUType)
	if !ok {
		return Choice{}, fmt.Errorf("NCCL's tuning model needs a GPU generation; %q is not one simd knows", s.opt.GPUType)
	}
	if n%servers != 0 {
		return Choice{Algorithm: Ring, Protocol: nccl.ProtoSimple, Reason: "uneven group: NCCL's model assumes equal servers; ring"}, nil
	}
	cfg := nccl.DefaultTuneConfig(servers, n/servers, arch, 0)
	if !s.opt.NVLS {
		// NVLS needs NVSwitch multicast, which SimAI's AS_NVLS_ENABLE switches on; without it
		// neither NVLS nor NVLS-Tree is a candidate (fewer than 2 NVLS channels disables both).
		cfg.NVLS.Channels = 0
	}
	a, p, us, ok := cfg.Select(op, req.Bytes)
	if !ok {
		return Choice{Algorithm: Ring, Protocol: nccl.ProtoSimple, Reason: "NCCL's model has no entry; ring"}, nil
	}
	name := Ring
	switch a {
	case nccl.AlgoTree:
		name = Tree
	case nccl.AlgoNVLS:
		name = NVLS
	case nccl.AlgoNVLSTree:
		name = NVLSTree
	}
	if !Supports(name, op) || (name == NVLS && servers > 1) {
		name = Ring
	}
	return Choice{Algorithm: name, Protocol: p, Reason: fmt.Sprintf("NCCL's model: %s/%s, %.1f µs", a, p, us)}, nil
}
