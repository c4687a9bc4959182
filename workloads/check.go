package workloads

import (
	"math"

	"simd/configs/lex"
	"simd/configs/units"
	"simd/engine"
)

// checkTimes makes sure that one iteration's compute and update times, in picoseconds, add up
// to a time simd's clock holds (engine.Time, about 106 days): the sum over the steps of the
// plan, so recomputed forward passes count as often as they run. Each time alone is bounded by
// maxComputeNs; the sum of many is what could wrap. The error names the layer record at which
// the sum first leaves the range.
func (w *Workload) checkTimes() error {
	var total int64
	for _, st := range w.Plan() {
		if st.Kind != StepCompute && st.Kind != StepIssue {
			continue
		}
		l := &w.Layers[st.Layer]
		ns, field := l.Phases[st.Phase].ComputeNs, st.Phase.String()+" compute time"
		if st.Kind == StepIssue {
			ns, field = l.UpdateTimeNs, "update time"
		}
		ps, ok := units.Product(int64(ns), int64(engine.Nanosecond))
		if ok {
			total, ok = units.Sum(total, ps)
		}
		if !ok {
			return lex.Errorf(w.File, l.Line, field, "%d ns: the compute and update times of one iteration add up to more than %d ps (about 106 days, simd's clock range) at layer %q",
				ns, int64(math.MaxInt64), l.Name)
		}
	}
	return nil
}

// CheckLayout checks the workload's parallelism against the number of GPUs simulated, the way
// SimAI derives the data-parallel size: DP = GPUs / (TP · PP) must be a whole number, and EP
// must divide DP (expert-parallel groups are EP members of a DP group). The error names the
// header key at fault (line 1) and gives the numbers; it is a *lex.Error.
func (w *Workload) CheckLayout(gpus int) error {
	h := w.Header
	tp, pp, ep := int64(h.TP), int64(h.PP), int64(h.EP)
	g := int64(gpus)
	if g < 1 {
		return lex.Errorf(w.File, 0, "", "%d GPUs: a workload runs on at least 1 GPU", gpus)
	}
	if g%tp != 0 {
		return lex.Errorf(w.File, 1, "model_parallel_NPU_group:", "TP %d does not divide the %d GPUs: DP = GPUs / (TP × PP) must be a whole number", tp, g)
	}
	tpp := tp * pp // each at most 2^24 (Parse's bound)
	if g%tpp != 0 {
		return lex.Errorf(w.File, 1, "pp:", "TP %d × PP %d = %d does not divide the %d GPUs: DP = GPUs / (TP × PP) must be a whole number", tp, pp, tpp, g)
	}
	if dp := g / tpp; dp%ep != 0 {
		return lex.Errorf(w.File, 1, "ep:", "EP %d does not divide DP %d (= %d GPUs / (TP %d × PP %d)): every expert-parallel group is EP members of a data-parallel group", ep, dp, g, tp, pp)
	}
	return nil
}
