package workloads

// Partial is the result of a pass stopped before its end (a guard or a signal stopped the
// scheduler): the statistics gathered so far, End at the time the run reached, and Finished
// telling which layers are done — every plan step of the layer executed (its last compute delay
// included) and none of its collectives still running. Only finished layers have final figures; the others have what
// their phases accumulated until the stop: a compute delay under way counts up to the stop, and
// a wait under way is exposed time of what it waits for up to the stop, so that compute and
// exposed time still add up to End.
func (r *Runner) Partial() *RunResult {
	res := r.res
	now := r.s.Now()
	if !r.began {
		now = r.start // stopped before the pass began: nothing happened yet
	}
	res.End = now - r.start
	res.Stopped = true
	res.Layers = append([][3]PhaseStats(nil), r.res.Layers...)
	computing := !r.blocked && r.computeEnd > now
	if r.blocked {
		res.Layers[r.waitLayer][r.waitPhase].Exposed += now - r.waitStart
	} else if computing {
		res.Layers[r.computeLayer][r.computePhase].Compute -= r.computeEnd - now
	}
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
		res.Finished[l] = last[l] < r.pc && o[Fwd] == 0 && o[IG] == 0 && o[WG] == 0 && !(computing && r.computeLayer == l)
	}
	return &res
}

// Done reports whether layer l has its final figures: always for a complete pass.
func (r *RunResult) Done(l int) bool { return !r.Stopped || r.Finished[l] }
