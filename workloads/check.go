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
