package chakra

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realTraces are the traces of testdata/ (their origins are in testdata/README.md): the
// pattern, the rank count, the communicator groups, and how dependencies are read.
var realTraces = []struct {
	pattern, groups string
	ranks           int
	deps            Deps
}{
	{pattern: "testdata/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce", ranks: 4},
	{pattern: "testdata/astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce", ranks: 8},
	{pattern: "testdata/astra-sim/microbenchmarks/all_reduce/16npus_1MB/all_reduce", ranks: 16},
	{pattern: "testdata/astra-sim/microbenchmarks/all_gather/4npus_1MB/all_gather", ranks: 4},
	{pattern: "testdata/astra-sim/microbenchmarks/all_gather/8npus_1MB/all_gather", ranks: 8},
	{pattern: "testdata/astra-sim/microbenchmarks/all_gather/16npus_1MB/all_gather", ranks: 16},
	{pattern: "testdata/astra-sim/microbenchmarks/reduce_scatter/4npus_1MB/reduce_scatter", ranks: 4},
	{pattern: "testdata/astra-sim/microbenchmarks/reduce_scatter/8npus_1MB/reduce_scatter", ranks: 8},
	{pattern: "testdata/astra-sim/microbenchmarks/reduce_scatter/16npus_1MB/reduce_scatter", ranks: 16},
	{pattern: "testdata/astra-sim/microbenchmarks/all_to_all/4npus_1MB/all_to_all", ranks: 4},
	{pattern: "testdata/astra-sim/microbenchmarks/all_to_all/8npus_1MB/all_to_all", ranks: 8},
	{pattern: "testdata/astra-sim/microbenchmarks/all_to_all/16npus_1MB/all_to_all", ranks: 16},
	{pattern: "testdata/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.%d.et", ranks: 8},
	{pattern: "testdata/tutorials-micro2024/demo1/allreduce/allreduce", ranks: 8},
	{pattern: "testdata/tutorials-micro2024/demo2/workload/MLP_ModelParallel", ranks: 32},
	{pattern: "testdata/legacy-2023/resnet50_DataParallel/resnet50_DataParallel.%d.et", ranks: 64},
	{pattern: "testdata/stg/llama_dp2_tp2_pp2/workload", ranks: 8, groups: "testdata/stg/llama_dp2_tp2_pp2/workload.json"},
}

// pytorchTrace decodes the PyTorch trace, kept gzipped (150 KB instead of 2.9 MB) as Decode
// reads it.
func pytorchTrace(t testing.TB) *File {
	t.Helper()
	data, err := os.ReadFile("testdata/chakra/chakra.0.et.gz")
	if err != nil {
		t.Fatal(err)
	}
	file, err := Decode(data, "chakra.0.et.gz")
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// TestEveryTraceParses loads every .et file of testdata with its trace (the rank count found
// from the files), legacy and PyTorch included, and checks that none is left out.
func TestEveryTraceParses(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range realTraces {
		t.Run(filepath.Base(filepath.Dir(tc.pattern)), func(t *testing.T) {
			tr, err := Load(tc.pattern, Options{CommGroups: tc.groups, Deps: tc.deps})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Ranks() != tc.ranks {
				t.Fatalf("%d ranks, want %d", tr.Ranks(), tc.ranks)
			}
			for _, f := range tr.Files {
				seen[filepath.Clean(f.Name)] = true
				if len(f.Nodes) == 0 {
					t.Errorf("%s: no nodes", f.Name)
				}
			}
		})
	}
	all, err := filepath.Glob("testdata/*/*/*.et")
	if err != nil {
		t.Fatal(err)
	}
	for _, pat := range []string{"testdata/*/*/*/*.et", "testdata/*/*/*/*/*.et"} {
		m, _ := filepath.Glob(pat)
		all = append(all, m...)
	}
	for _, f := range all {
		if !seen[filepath.Clean(f)] {
			t.Errorf("%s is not in realTraces", f)
		}
	}
	t.Run("pytorch", func(t *testing.T) {
		f := pytorchTrace(t)
		if len(f.Nodes) != 3664 {
			t.Fatalf("%d nodes, want 3664", len(f.Nodes))
		}
		if _, err := New("pytorch", []*File{f}, nil, "", DepsBoth); err == nil || !strings.Contains(err.Error(), "ctrl_deps") {
			t.Fatalf("with ctrl_deps: %v, want an error about ctrl_deps", err)
		}
		if _, err := New("pytorch", []*File{f}, nil, "", DepsData); err != nil {
			t.Fatal(err)
		}
	})
}
