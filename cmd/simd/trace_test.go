package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const chakraData = "../../workloads/chakra/testdata/"

// TestChakraCLI runs every multi-rank trace of the chakra testdata in both modes through the
// command line, and checks the outputs and the summary line. (The PyTorch trace, kept in its
// tarball, runs in workloads/sim's tests.)
func TestChakraCLI(t *testing.T) {
	traces := []struct{ w, groups string }{
		{w: "astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce"},
		{w: "astra-sim/microbenchmarks/all_to_all/16npus_1MB/all_to_all.%d.et"},
		{w: "astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce"},
		{w: "tutorials-micro2024/demo1/allreduce/allreduce"},
		{w: "tutorials-micro2024/demo2/workload/MLP_ModelParallel"},
		{w: "legacy-2023/resnet50_DataParallel/resnet50_DataParallel.%d.et"},
		{w: "stg/llama_dp2_tp2_pp2/workload", groups: "stg/llama_dp2_tp2_pp2/workload.json"},
	}
	for _, tc := range traces {
		for _, mode := range []string{"analytical", "event"} {
			t.Run(filepath.Base(filepath.Dir(tc.w))+"/"+mode, func(t *testing.T) {
				if testing.Short() && strings.Contains(tc.w, "resnet") && mode == "event" {
					t.Skip("-short")
				}
				dir := t.TempDir()
				args := []string{"-w", chakraData + tc.w, "-mode", mode, "-o", dir, "-quiet", "-roofline-tflops", "400", "-roofline-gbps", "2000"}
				if tc.groups != "" {
					args = append(args, "-comm-groups", chakraData+tc.groups)
				}
				var out, errb bytes.Buffer
				if code := run(args, &out, &errb); code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				if !strings.Contains(out.String(), "simd "+mode+": Chakra trace") || !strings.Contains(out.String(), "last rank finished") {
					t.Errorf("stdout:\n%s", out.String())
				}
				for _, f := range []string{"summary.json", "ranks.csv"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
}

// TestChakraCLIErrors: bad traces and flags exit 2 with a message naming the file, rank, node
// and field, and write nothing.
func TestChakraCLIErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-w", chakraData + "stg/llama_dp2_tp2_pp2/workload"}, `workload.0.et: rank 0: node 8 (COMM_COLL_NODE "mb0.transformer.0.mha.qkv@0_X1COMM"): pg_name: group "5" is not defined`},
		{[]string{"-w", chakraData + "astra-sim/microbenchmarks/all_reduce/16npus_1MB/all_reduce", "-g", "20"}, "rank 16 of 20"},
		{[]string{"-w", chakraData + "legacy-2023/resnet50_DataParallel/resnet50_DataParallel.%d.et", "-n", "../../topo/testdata/Rail_Opti_SingleToR_16g_8gps_200Gbps_H20"}, "resnet50_DataParallel.16.et: rank 16: the trace has 64 ranks but the topology"},
		{[]string{"-w", chakraData + "astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce", "-chakra-deps", "some"}, "-chakra-deps"},
		{[]string{"-w", chakraData + "astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce", "-mode", "compare"}, "analytical or event"},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		code := run(append(tc.args, "-o", dir, "-quiet"), &out, &errb)
		if code != exitBadInput || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: wrote %d files", tc.args, len(ents))
		}
	}
}
