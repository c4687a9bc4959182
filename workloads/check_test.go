package workloads

import (
	"errors"
	"strings"
	"testing"

	"simd/configs/lex"
)

// The layout check: DP = GPUs / (TP · PP) whole, EP dividing DP; the exact error of each case.
func TestCheckLayout(t *testing.T) {
	rec := "l -1 1 ALLREDUCE 4096 1 NONE 0 1 ALLREDUCE 4096 1\n"
	for _, c := range []struct {
		header string
		gpus   int
		want   string
	}{
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 8 pp: 2 ep: 2", 32, ""},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 8", 8, ""},
		{"MICRO", 1, ""},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 8", 12,
			"w.txt:1: model_parallel_NPU_group: TP 8 does not divide the 12 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 8", 4,
			"w.txt:1: model_parallel_NPU_group: TP 8 does not divide the 4 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 12", 1024,
			"w.txt:1: pp: TP 2 × PP 12 = 24 does not divide the 1024 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 3 ep: 4", 36,
			"w.txt:1: ep: EP 4 does not divide DP 6 (= 36 GPUs / (TP 2 × PP 3)): every expert-parallel group is EP members of a data-parallel group"},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: 16777216 pp: 16777216", 1 << 20,
			"w.txt:1: model_parallel_NPU_group: TP 16777216 does not divide the 1048576 GPUs: DP = GPUs / (TP × PP) must be a whole number"},
		{"MICRO", 0, "w.txt: 0 GPUs: a workload runs on at least 1 GPU"},
	} {
		w, _, err := Parse(strings.NewReader(c.header+"\n1\n"+rec), "w.txt")
		if err != nil {
			t.Fatal(err)
		}
		err = w.CheckLayout(c.gpus)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.As(err, new(*lex.Error)) {
				t.Errorf("%s on %d: %T is not a *lex.Error", c.header, c.gpus, err)
			}
		}
		if got != c.want {
			t.Errorf("%s on %d GPUs:\n got %s\nwant %s", c.header, c.gpus, got, c.want)
		}
	}
}
