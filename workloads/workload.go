package workloads

import (
	"fmt"

	"simd/ccl"
)

// Policy is a workload's parallelism policy, the first token of its header (§2.2).
type Policy uint8

// Parallelism policies SimAI decodes (Workload::decode_parallelsim).
const (
	PolicyNone Policy = iota
	PolicyData
	PolicyTransformer
	PolicyTransformerFwdInBckwd
	PolicyDLRM
	PolicyDLRMEnhanced
	PolicyModel
	PolicyHybridDataModel
	PolicyHybridModelData
	PolicyHybridCustomized
	PolicyMicroBenchmark
	PolicyDistributedInference
)

var policyTokens = [...]string{
	PolicyNone:                  "NONE",
	PolicyData:                  "DATA",
	PolicyTransformer:           "HYBRID_TRANSFORMER",
	PolicyTransformerFwdInBckwd: "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
	PolicyDLRM:                  "HYBRID_DLRM",
	PolicyDLRMEnhanced:          "HYBRID_DLRM_ENHANCED",
	PolicyModel:                 "MODEL",
	PolicyHybridDataModel:       "HYBRID_DATA_MODEL",
	PolicyHybridModelData:       "HYBRID_MODEL_DATA",
	PolicyHybridCustomized:      "HYBRID_CUSTOMIZED",
	PolicyMicroBenchmark:        "MICRO",
	PolicyDistributedInference:  "DISTRIBUTED_INFERENCE",
}

// String is the header token of the policy.
func (p Policy) String() string {
	if int(p) < len(policyTokens) {
		return policyTokens[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy decodes a header token; ok is false for an unknown one.
func ParsePolicy(tok string) (Policy, bool) {
	for p, t := range policyTokens {
		if p != int(PolicyNone) && t == tok {
			return Policy(p), true
		}
	}
	return PolicyNone, false
}

// Phase names the three passes of a layer.
type Phase uint8

// Phases of a layer.
const (
	Fwd Phase = iota // forward pass
	IG               // input gradient
	WG               // weight gradient
)

func (p Phase) String() string {
	switch p {
	case Fwd:
		return "fwd"
	case IG:
		return "ig"
	case WG:
		return "wg"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Comm is the collective a phase of a layer issues.
type Comm struct {
	Op    ccl.Op
	Group ccl.GroupKind
	Bytes uint64
	Type  string // the comm-type token as written, e.g. "ALLGATHER_DP_EP"
}

// Step is one phase of a layer: a compute delay then a collective.
type Step struct {
	ComputeNs uint64
	Comm      Comm
}

// Layer is one workload record (§2.3).
type Layer struct {
	Name         string
	Dependency   int
	Phases       [3]Step // indexed by Phase
	UpdateTimeNs uint64  // delay added after every collective of the layer finishes
	Policy       Policy  // HYBRID_CUSTOMIZED's per-layer policy; PolicyNone otherwise
	Line         int     // line of the record's first token
}

// Header is the workload's first line (§2.2) with simd's defaults for missing keys.
type Header struct {
	Policy              Policy
	TP, EP, PP, VPP, GA int
	AllGPUs             int    // 0 when absent: the GPU count then comes from -g or the topology
	PPCommBytes         uint64 // activation bytes sent between pipeline stages per micro-batch
	Checkpoints         []int  // layers whose activations are kept
	CheckpointInitiates []int  // layers whose input gradient first recomputes the forward pass
	DLRMLastBottomLayer int
	Present             map[string]bool // header keys that appeared, without the colon
}

// Workload is a parsed workload file.
type Workload struct {
	File   string
	Header Header
	Layers []Layer
}

// Collective is one collective as the runner issues it: the layer's comm with the group size the
// layout gives and SimAI's size rules applied.
type Collective struct {
	Layer     int
	Phase     Phase
	Op        ccl.Op
	Group     ccl.GroupKind
	GroupSize int
	Bytes     uint64
	// Stage is the pipeline stage whose groups run the collective when the pipeline is
	// simulated (PP > 1 in the event mode), −1 for the groups of every stage at once. A send
	// (ccl.OpSend) goes from the ranks of Stage to the matching ranks of stage Peer.
	Stage, Peer int
}

// IssuedBytes is the size SimAI issues for a phase: under HYBRID_TRANSFORMER_FWD_IN_BCKWD a
// forward size of 1..4095 bytes is raised to 4096 before it is issued, and the report uses the
// raised size too (§2.3, §5.6 rule 1).
func (w *Workload) IssuedBytes(layer int, ph Phase) uint64 {
	b := w.Layers[layer].Phases[ph].Comm.Bytes
	if ph == Fwd && w.Header.Policy == PolicyTransformerFwdInBckwd && b > 0 && b < 4096 {
		return 4096
	}
	return b
}

// ReportGroupSize is the group size SimAI's report uses for a phase (§5.1, last paragraph): in the
// forward and input-gradient columns the EP size if the column's group is EP and the TP size
// otherwise; in the weight-gradient column DP/EP for DP_EP and DP otherwise.
func (w *Workload) ReportGroupSize(l ccl.Layout, layer int, ph Phase) int {
	g := w.Layers[layer].Phases[ph].Comm.Group
	if ph == WG {
		if g == ccl.GroupDPEP {
			return l.DPEP()
		}
		return l.DP()
	}
	if g == ccl.GroupEP {
		return l.EP
	}
	return l.TP
}

// Collective describes what a phase of a layer issues under layout l: the group size is the
// size of the group kind in the layout (1 for group NONE).
func (w *Workload) Collective(l ccl.Layout, layer int, ph Phase) Collective {
	c := w.Layers[layer].Phases[ph].Comm
	return Collective{
		Layer: layer, Phase: ph, Op: c.Op, Group: c.Group,
		GroupSize: l.GroupSize(c.Group),
		Bytes:     w.IssuedBytes(layer, ph),
		Stage:     -1, Peer: -1,
	}
}

// Layout is the rank layout of the workload on gpus GPUs with gps per server.
func (w *Workload) Layout(gpus, gps int) ccl.Layout {
	h := w.Header
	return ccl.Layout{GPUs: gpus, GPUsPerServer: gps, TP: h.TP, PP: h.PP, EP: h.EP}
}
