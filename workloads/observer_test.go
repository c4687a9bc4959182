package workloads

import (
	"slices"
	"testing"

	"simd/ccl"
	"simd/engine"
)

// spanLog is an Observer that keeps every span of every stage.
type spanLog struct {
	spans map[int][][2]engine.Time
	// per stage: compute, exposed, bubble and pipeline communication
	sums map[int]*[4]engine.Time
}

func (o *spanLog) add(stage, kind int, a, b engine.Time) {
	if o.spans == nil {
		o.spans, o.sums = map[int][][2]engine.Time{}, map[int]*[4]engine.Time{}
	}
	o.spans[stage] = append(o.spans[stage], [2]engine.Time{a, b})
	if o.sums[stage] == nil {
		o.sums[stage] = new([4]engine.Time)
	}
	o.sums[stage][kind] += b - a
}

func (o *spanLog) Compute(stage, _ int, _ Phase, a, b engine.Time) { o.add(stage, 0, a, b) }
func (o *spanLog) Issued(int, Collective, engine.Time)             {}
func (o *spanLog) Exposed(stage, _ int, _ Phase, a, b engine.Time) { o.add(stage, 1, a, b) }
func (o *spanLog) Received(stage int, st PlanStep, wait, sent, arrived engine.Time) {
	if st.Kind != StepRecv {
		panic("Received with a step that is not a receive")
	}
	o.add(stage, 2, wait, sent)
	o.add(stage, 3, sent, arrived)
}

// The observer sees every stretch of a pass once: a stage's spans never overlap, and compute,
// exposed waits, bubble and pipeline communication add up to the figures of the result, so a
// timeline drawn from them has no gap the report does not explain.
func TestObserverSeesThePass(t *testing.T) {
	one := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 7 ALLREDUCE 1000 0\n" +
		"l1 -1 20 ALLREDUCE 50 3 ALLREDUCE 40 2 ALLREDUCE 30 1\n"
	for _, tc := range []struct {
		name string
		text string
		l    ccl.Layout
	}{
		{"one pass", one, ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}},
		{"two stages", pipeText(2, 1, 1, 3, 1, 10, 13, 7, 1000), ccl.Layout{GPUs: 2, GPUsPerServer: 1, TP: 1, PP: 2, EP: 1}},
		{"three stages interleaved", pipeText(3, 2, 4, 4, 4, 10, 13, 7, 500), ccl.Layout{GPUs: 3, GPUsPerServer: 1, TP: 1, PP: 3, EP: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := mustParse(t, "w", tc.text)
			s := engine.NewScheduler()
			net := &sendNetwork{s: s, lat: 2000, perByte: 3}
			var it interface {
				Observe(Observer)
				Run() (*RunResult, error)
			}
			if w.Pipelined(tc.l) {
				p, err := NewPipeline(w, tc.l, s, net)
				if err != nil {
					t.Fatal(err)
				}
				it = p
			} else {
				it = NewRunner(w, tc.l, s, net)
			}
			var o spanLog
			it.Observe(&o)
			res, err := it.Run()
			if err != nil {
				t.Fatal(err)
			}
			stages := res.Stages
			if stages == nil {
				stages = []StageResult{{Layers: res.Layers, End: res.End}}
			}
			for i, st := range stages {
				stage := i
				if res.Stages == nil {
					stage = -1
				}
				var want [4]engine.Time
				for _, ph := range st.Layers {
					for _, p := range ph {
						want[0] += p.Compute
						want[1] += p.Exposed
					}
				}
				want[2], want[3] = st.Bubble, st.PPExposed
				got := o.sums[stage]
				if got == nil || *got != want {
					t.Errorf("stage %d: compute, exposed, bubble, pp = %v, want %v", stage, got, want)
				}
				sp := slices.Clone(o.spans[stage])
				slices.SortFunc(sp, func(a, b [2]engine.Time) int { return int(a[0] - b[0]) })
				for k := 1; k < len(sp); k++ {
					if sp[k][0] < sp[k-1][1] {
						t.Errorf("stage %d: spans %v and %v overlap", stage, sp[k-1], sp[k])
					}
				}
				if sum := want[0] + want[1] + want[2] + want[3]; sum != st.End {
					t.Errorf("stage %d: spans add up to %d, the pass ends at %d", stage, sum, st.End)
				}
			}
		})
	}
}
