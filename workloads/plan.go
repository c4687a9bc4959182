package workloads

import "simd/ccl"

// StepKind is what one step of an iteration plan does.
type StepKind uint8

// Step kinds.
const (
	// StepCompute delays by the phase's compute time.
	StepCompute StepKind = iota
	// StepIssue issues the phase's collective; a blocking one suspends the iteration until it
	// finishes (plus the layer's update time).
	StepIssue
	// StepWait suspends until every collective of that layer and phase issued so far has finished
	// (SimAI's is_*_comm_finished_blocking); the time waited is exposed communication of it.
	StepWait
	// StepWaitAll ends the pass: it waits for every collective still running, one (layer,
	// phase) at a time, in the order the next pass's forward steps would wait for them: layers
	// from 0 up and, within a layer, the weight gradient, then the forward and input-gradient
	// collectives (only the DLRM policies leave those running). The time until the one waited
	// for has finished is its exposed time; then the next one still running is waited for, and
	// one already finished costs nothing. Layer 0's weight gradient comes first, so its exposed
	// time is SimAI's, which marks only it as waited on; SimAI drops the rest of the wait from
	// its layer rows, which then fall short of its own total exposed time.
	StepWaitAll
	// StepSend sends a pipeline stage's output for micro-batch Micro of model chunk Chunk to
	// the adjacent stage: its activations forward (Phase Fwd) or its input gradients backward
	// (Phase IG). The stage goes on at once (see Pipeline).
	StepSend
	// StepRecv suspends a pipeline stage until the input of micro-batch Micro of model chunk
	// Chunk has arrived from the adjacent stage: activations (Phase Fwd) or gradients (IG).
	StepRecv
)

// PlanStep is one step of an iteration.
type PlanStep struct {
	Kind     StepKind
	Layer    int32
	Phase    Phase
	Blocking bool
	// Micro and Chunk name the micro-batch and model chunk of a pipeline send or receive.
	Micro, Chunk int32
}

// Plan lists the steps SimAI's Workload state machine takes for one pass of the workload's
// policy (Workload::iterate_*, simai-formats.md §2.6), in order. SimAI's one-tick gaps between
// states are left out: they only shift the clock by a few nanoseconds per layer.
//
// Two policies differ from SimAI on purpose (docs/differences-from-simai.md): MICRO issues every
// layer's weight-gradient collective, one after the other, where SimAI issues only layer 0's;
// and checkpoint recomputation under HYBRID_TRANSFORMER_FWD_IN_BCKWD recomputes the forward pass
// from the nearest checkpoint below the initiating layer up to the layer before it.
func (w *Workload) Plan() []PlanStep {
	n := len(w.Layers)
	var p planBuilder
	p.steps = make([]PlanStep, 0, 6*n+1)
	switch w.Header.Policy {
	case PolicyTransformerFwdInBckwd, PolicyTransformer:
		for i := range n {
			p.forward(i, true)
		}
		recompute := w.Header.Policy == PolicyTransformerFwdInBckwd
		initiates := indexSet(w.Header.CheckpointInitiates, n)
		checkpoint := indexSet(w.Header.Checkpoints, n)
		for i := n - 1; i >= 0; i-- {
			if recompute && initiates[i] && !checkpoint[i] {
				from := 0
				for j := i - 1; j >= 0; j-- {
					if checkpoint[j] {
						from = j
						break
					}
				}
				for j := from; j < i; j++ {
					p.forward(j, true)
				}
			}
			p.add(StepCompute, i, IG, false)
			p.add(StepIssue, i, IG, true)
			p.add(StepCompute, i, WG, false)
			p.add(StepIssue, i, WG, false)
		}
	case PolicyData:
		for i := range n {
			p.add(StepWait, i, WG, false)
			p.add(StepCompute, i, Fwd, false)
		}
		for i := n - 1; i >= 0; i-- {
			p.add(StepCompute, i, WG, false)
			p.add(StepIssue, i, WG, false)
			if i > 0 {
				p.add(StepCompute, i, IG, false)
			}
		}
	case PolicyMicroBenchmark:
		for i := range n {
			p.add(StepIssue, i, WG, true)
		}
	case PolicyModel, PolicyHybridDataModel, PolicyHybridModelData, PolicyHybridCustomized:
		for i := range n {
			p.forward(i, true)
		}
		for i := n - 1; i >= 0; i-- {
			p.add(StepCompute, i, IG, false)
			if i > 0 {
				p.add(StepIssue, i, IG, false)
			}
			p.add(StepCompute, i, WG, false)
			if w.Header.Policy != PolicyModel {
				p.add(StepIssue, i, WG, false)
			}
			p.add(StepWait, i, IG, false)
		}
	case PolicyDistributedInference:
		for i := range n {
			p.forward(i, true)
		}
	case PolicyDLRM, PolicyDLRMEnhanced:
		last := w.Header.DLRMLastBottomLayer
		for i := range n {
			p.add(StepWait, i, WG, false)
			p.add(StepCompute, i, Fwd, false)
			if w.Layers[i].Phases[Fwd].Comm.Op == ccl.OpAllToAll {
				p.add(StepIssue, i, Fwd, false)
			} else if i == last {
				p.add(StepWait, 0, Fwd, false)
			}
		}
		for i := n - 1; i >= 0; i-- {
			p.add(StepCompute, i, WG, false)
			p.add(StepIssue, i, WG, false)
			if w.Header.Policy == PolicyDLRM {
				p.add(StepWait, i, IG, false)
			}
			if i > 0 {
				p.add(StepCompute, i, IG, false)
				if i == last+1 {
					p.add(StepIssue, 0, IG, false)
				}
			}
		}
	}
	p.steps = append(p.steps, PlanStep{Kind: StepWaitAll})
	return p.steps
}

type planBuilder struct{ steps []PlanStep }

func (p *planBuilder) add(k StepKind, layer int, ph Phase, blocking bool) {
	p.steps = append(p.steps, PlanStep{Kind: k, Layer: int32(layer), Phase: ph, Blocking: blocking})
}

// forward is one layer's forward pass: wait for its previous weight-gradient collective, compute,
// issue the forward collective.
func (p *planBuilder) forward(i int, blocking bool) {
	p.add(StepWait, i, WG, false)
	p.add(StepCompute, i, Fwd, false)
	p.add(StepIssue, i, Fwd, blocking)
}

func indexSet(list []int, n int) []bool {
	s := make([]bool, n)
	for _, v := range list {
		if v >= 0 && v < n {
			s[v] = true
		}
	}
	return s
}
