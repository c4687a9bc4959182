package workloads

// Partial is the result of a pass stopped before its end (a guard or a signal stopped the
// scheduler): the statistics gathered so far, End at the time the run reached, and Finished
// telling which layers are done — every plan step of the layer executed and none of its
// collectives still running. Only finished layers have final figures; the others have what
// their phases accumulated until the stop.
func (r *Runner) Partial() *RunResult {
	res := r.res
	res.End = r.s.Now()
	res.Stopped = true
	last := make([]int, len(r.w.Layers))
	for i := range last {
		last[i] = -1
	}
	for i, st := range r.plan {
		if st.Kind != StepWaitAll { // the pass's final wait belongs to no layer
			last[st.Layer] = i
		}
	}
	res.Finished = make([]bool, len(r.w.Layers))
	for l := range res.Finished {
		o := r.outstanding[l]
		res.Finished[l] = last[l] < r.pc && o[Fwd] == 0 && o[IG] == 0 && o[WG] == 0
	}
	return &res
}

// Done reports whether layer l has its final figures: always for a complete pass.
func (r *RunResult) Done(l int) bool { return !r.Stopped || r.Finished[l] }
