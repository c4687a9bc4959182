package workloads

import "testing"

func TestResultPrefix(t *testing.T) {
	cases := []struct {
		file string
		want string
	}{
		// Verified against SimAI_analytical (simai-formats.md §1.1).
		{"H100-gpt_7B-world_size8-tp8-pp1-ep1-gbs8-mbs1-seq4096-A.txt", "H100-gpt_7B-tp8-pp1-dp1-ga8-ep1-NVL8-388.0G-DP0.0-"},
		// SimAI crashes on names without tpN/ppN; simd uses the base name.
		{"dir/microAllReduce.txt", "microAllReduce-"},
		{"G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt", "G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100-"},
	}
	for _, c := range cases {
		if got := ResultPrefix(c.file, 8, 48.5, 0); got != c.want {
			t.Errorf("%s: %q, want %q", c.file, got, c.want)
		}
	}
}
