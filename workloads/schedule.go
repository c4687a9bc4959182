package workloads

// PipelineTask is one step of a pipeline stage's schedule: the forward or the backward pass of
// one micro-batch through one of the stage's model chunks.
type PipelineTask struct {
	Micro, Chunk int
	Backward     bool
}

// PipelineSchedule is the order in which stage `stage` of a pp-stage pipeline runs ga
// micro-batches through its vpp model chunks, as Megatron-LM's schedules do
// (megatron/core/pipeline_parallel/schedules.py).
//
// With vpp = 1 it is 1F1B (forward_backward_pipelining_without_interleaving): min(pp−stage−1, ga)
// warm-up forwards, then one forward and one backward in turn until every forward is done, then
// the remaining backwards; micro-batches go in order both ways.
//
// With vpp > 1 it is interleaved 1F1B (forward_backward_pipelining_with_interleaving): the
// stage's forwards go through the schedule table — micro-batches in groups of pp (the last one
// may be short), each group through chunk 0, then chunk 1, ... — and its backwards through the
// same table with the chunks reversed; (pp−stage−1)·2 + (vpp−1)·group warm-up forwards (all
// of them when ga = pp), capped at ga·vpp, then one forward and one backward in turn, then the
// remaining backwards. The group is Megatron's microbatch_group_size_per_vp_stage: pp (its
// default) when ga is a multiple of pp, otherwise ga, one group of every micro-batch — with a
// short last group the default deadlocks (stage 0's forward of the last micro-batch's last
// chunk waits for a forward that stage pp−1 runs only after a backward that needs stage 0's).
// Megatron accepts any group size from pp to ga; simd also runs ga < pp that way.
func PipelineSchedule(pp, stage, ga, vpp int) []PipelineTask {
	out := make([]PipelineTask, 0, 2*ga*vpp)
	if vpp <= 1 {
		warm := min(pp-stage-1, ga)
		for m := range warm {
			out = append(out, PipelineTask{Micro: m})
		}
		for k := range ga - warm {
			out = append(out, PipelineTask{Micro: warm + k}, PipelineTask{Micro: k, Backward: true})
		}
		for m := ga - warm; m < ga; m++ {
			out = append(out, PipelineTask{Micro: m, Backward: true})
		}
		return out
	}
	group := pp
	if ga%pp != 0 {
		group = ga
	}
	var table []PipelineTask
	for lo := 0; lo < ga; lo += group {
		hi := min(lo+group, ga)
		for c := range vpp {
			for m := lo; m < hi; m++ {
				table = append(table, PipelineTask{Micro: m, Chunk: c})
			}
		}
	}
	total := ga * vpp
	warm := total
	if ga != pp {
		warm = min((pp-stage-1)*2+(vpp-1)*group, total)
	}
	bwd := func(k int) PipelineTask {
		t := table[k]
		return PipelineTask{Micro: t.Micro, Chunk: vpp - 1 - t.Chunk, Backward: true}
	}
	out = append(out, table[:warm]...)
	for k := range total - warm {
		out = append(out, table[warm+k], bwd(k))
	}
	for k := total - warm; k < total; k++ {
		out = append(out, bwd(k))
	}
	return out
}
