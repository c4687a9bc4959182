package workloads

import (
	"fmt"
	"strings"
	"testing"
)

// planString writes a plan compactly: C compute, I issue (! blocking), W wait, END.
func planString(steps []PlanStep) string {
	var parts []string
	for _, s := range steps {
		switch s.Kind {
		case StepCompute:
			parts = append(parts, fmt.Sprintf("C%d%s", s.Layer, s.Phase))
		case StepIssue:
			b := ""
			if s.Blocking {
				b = "!"
			}
			parts = append(parts, fmt.Sprintf("I%d%s%s", s.Layer, s.Phase, b))
		case StepWait:
			parts = append(parts, fmt.Sprintf("W%d%s", s.Layer, s.Phase))
		case StepWaitAll:
			parts = append(parts, "END")
		}
	}
	return strings.Join(parts, " ")
}

func threeLayers(header string) string {
	rec := func(name, fwd string) string {
		return name + " -1 1 " + fwd + " 1048576 1 ALLREDUCE 1048576 1 ALLREDUCE 1048576 1\n"
	}
	return header + "\n3\n" + rec("l0", "ALLREDUCE") + rec("l1", "ALLTOALL") + rec("l2", "ALLREDUCE")
}

// The step order of SimAI's Workload::iterate_* for each policy, written out by hand.
func TestPlans(t *testing.T) {
	fwd := "W0wg C0fwd I0fwd! W1wg C1fwd I1fwd! W2wg C2fwd I2fwd!"
	cases := []struct {
		header string
		want   string
	}{
		{"HYBRID_TRANSFORMER_FWD_IN_BCKWD", fwd + " C2ig I2ig! C2wg I2wg C1ig I1ig! C1wg I1wg C0ig I0ig! C0wg I0wg END"},
		{"HYBRID_TRANSFORMER", fwd + " C2ig I2ig! C2wg I2wg C1ig I1ig! C1wg I1wg C0ig I0ig! C0wg I0wg END"},
		// Layer 2 initiates recomputation from the checkpoint at layer 0: layers 0 and 1 run forward again.
		{"HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 0 checkpoint_initiates: 1 2",
			fwd + " W0wg C0fwd I0fwd! W1wg C1fwd I1fwd! C2ig I2ig! C2wg I2wg C1ig I1ig! C1wg I1wg C0ig I0ig! C0wg I0wg END"},
		// Checkpoints only apply to FWD_IN_BCKWD.
		{"HYBRID_TRANSFORMER checkpoints: 1 0 checkpoint_initiates: 1 2", fwd + " C2ig I2ig! C2wg I2wg C1ig I1ig! C1wg I1wg C0ig I0ig! C0wg I0wg END"},
		{"DATA", "W0wg C0fwd W1wg C1fwd W2wg C2fwd C2wg I2wg C2ig C1wg I1wg C1ig C0wg I0wg END"},
		{"MICRO", "I0wg! I1wg! I2wg! END"},
		{"MODEL", fwd + " C2ig I2ig C2wg W2ig C1ig I1ig C1wg W1ig C0ig C0wg W0ig END"},
		{"HYBRID_DATA_MODEL", fwd + " C2ig I2ig C2wg I2wg W2ig C1ig I1ig C1wg I1wg W1ig C0ig C0wg I0wg W0ig END"},
		{"HYBRID_MODEL_DATA", fwd + " C2ig I2ig C2wg I2wg W2ig C1ig I1ig C1wg I1wg W1ig C0ig C0wg I0wg W0ig END"},
		{"DISTRIBUTED_INFERENCE", fwd + " END"},
		// Layer 1's forward is an all-to-all (non-blocking); the last bottom layer 0 waits for layer 0's forward.
		{"HYBRID_DLRM DLRM_LAST_BOTTOM_LAYER: 0",
			"W0wg C0fwd W0fwd W1wg C1fwd I1fwd W2wg C2fwd C2wg I2wg W2ig C2ig C1wg I1wg W1ig C1ig I0ig C0wg I0wg W0ig END"},
		{"HYBRID_DLRM_ENHANCED DLRM_LAST_BOTTOM_LAYER: 0",
			"W0wg C0fwd W0fwd W1wg C1fwd I1fwd W2wg C2fwd C2wg I2wg C2ig C1wg I1wg C1ig I0ig C0wg I0wg END"},
	}
	for _, c := range cases {
		w, _ := mustParse(t, c.header, threeLayers(c.header))
		if got := planString(w.Plan()); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.header, got, c.want)
		}
	}
}
