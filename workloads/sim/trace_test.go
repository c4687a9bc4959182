package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/ccl/algo"
	"simd/configs"
	"simd/topo"
	"simd/workloads/chakra"
)

// chakraDir is the chakra package's testdata: the public traces.
const chakraDir = "../chakra/testdata/"

// chakraTraces are the traces of the chakra package's testdata, with their communicator groups
// and rank counts.
var chakraTraces = []struct {
	pattern, groups string
	ranks           int
}{
	{"astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce", "", 4},
	{"astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce", "", 8},
	{"astra-sim/microbenchmarks/all_reduce/16npus_1MB/all_reduce", "", 16},
	{"astra-sim/microbenchmarks/all_gather/4npus_1MB/all_gather", "", 4},
	{"astra-sim/microbenchmarks/all_gather/8npus_1MB/all_gather", "", 8},
	{"astra-sim/microbenchmarks/all_gather/16npus_1MB/all_gather", "", 16},
	{"astra-sim/microbenchmarks/reduce_scatter/4npus_1MB/reduce_scatter", "", 4},
	{"astra-sim/microbenchmarks/reduce_scatter/8npus_1MB/reduce_scatter", "", 8},
	{"astra-sim/microbenchmarks/reduce_scatter/16npus_1MB/reduce_scatter", "", 16},
	{"astra-sim/microbenchmarks/all_to_all/4npus_1MB/all_to_all", "", 4},
	{"astra-sim/microbenchmarks/all_to_all/8npus_1MB/all_to_all", "", 8},
	{"astra-sim/microbenchmarks/all_to_all/16npus_1MB/all_to_all", "", 16},
	{"astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.%d.et", "", 8},
	{"tutorials-micro2024/demo1/allreduce/allreduce", "", 8},
	{"tutorials-micro2024/demo2/workload/MLP_ModelParallel", "", 32},
	{"legacy-2023/resnet50_DataParallel/resnet50_DataParallel.%d.et", "", 64},
	{"stg/llama_dp2_tp2_pp2/workload", "stg/llama_dp2_tp2_pp2/workload.json", 8},
}

func traceInputs(t testing.TB, tr *chakra.Trace, gpus int) TraceInputs {
	t.Helper()
	fab, err := topo.DefaultFabric(gpus, min(8, gpus))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ClusterOf(fab, "default fabric")
	if err != nil {
		t.Fatal(err)
	}
	c, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	return TraceInputs{Trace: tr, Cluster: cl, Conf: c, Exec: chakra.ExecOptions{PeakTFLOPS: 400, MemGBps: 2000}}
}

// pytorchTrace is the chakra package's PyTorch trace, its dependencies read from data_deps.
func pytorchTrace(t testing.TB) *chakra.Trace {
	t.Helper()
	data, err := os.ReadFile(chakraDir + "chakra/chakra.0.et.gz")
	if err != nil {
		t.Fatal(err)
	}
	file, err := chakra.Decode(data, "chakra.0.et.gz")
	if err != nil {
		t.Fatal(err)
	}
	trace, err := chakra.New("chakra.0.et.gz", []*chakra.File{file}, nil, "", chakra.DepsData)
	if err != nil {
		t.Fatal(err)
	}
	return trace
}

// TestEveryTraceRuns runs every trace of the chakra package's testdata in both modes, the
// PyTorch one on a single rank, and checks that every rank finishes with its compute inside
// its time.
func TestEveryTraceRuns(t *testing.T) {
	type one struct {
		name string
		tr   *chakra.Trace
	}
	var all []one
	for _, tc := range chakraTraces {
		opt := chakra.Options{}
		if tc.groups != "" {
			opt.CommGroups = chakraDir + tc.groups
		}
		tr, err := chakra.Load(chakraDir+tc.pattern, opt)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, one{filepath.Dir(tc.pattern), tr})
	}
	all = append(all, one{"pytorch", pytorchTrace(t)})
	for _, o := range all {
		t.Run(o.name, func(t *testing.T) {
			in := traceInputs(t, o.tr, max(o.tr.Ranks(), 2))
			ev, err := RunTrace(context.Background(), in, EventOptions{SendLatency: -1}, Attachments{})
			if err != nil {
				t.Fatal(err)
			}
			an, err := RunTraceAnalytical(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range []*TraceResult{ev, an} {
				for _, r := range res.Ranks {
					if r.Nodes != r.Total || r.Finish <= 0 || r.Compute > r.Finish {
						t.Errorf("%s rank %d: %d of %d nodes, finish %v, compute %v", res.Mode, r.Rank, r.Nodes, r.Total, r.Finish, r.Compute)
					}
				}
			}
			if len(ev.Finished()) != len(ev.Collectives) {
				t.Errorf("%d of %d collectives finished", len(ev.Finished()), len(ev.Collectives))
			}
		})
	}
}

// TestTraceTooBig: a trace for more ranks than the topology is refused naming the first rank
// without a GPU.
func TestTraceTooBig(t *testing.T) {
	tr, err := chakra.Load(chakraDir+"astra-sim/microbenchmarks/all_reduce/16npus_1MB/all_reduce", chakra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := traceInputs(t, tr, 8)
	_, err = RunTrace(context.Background(), in, EventOptions{}, Attachments{})
	if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "all_reduce.8.et: rank 8: the trace has 16 ranks but the topology") {
		t.Fatalf("got %v", err)
	}
}

// TestTraceGolden: ranks.csv of the STG Llama trace and summary.json of ASTRA-sim's 8-rank
// all-reduce, in both modes, byte for byte (wall clock zeroed).
func TestTraceGolden(t *testing.T) {
	tr, err := chakra.Load(chakraDir+"stg/llama_dp2_tp2_pp2/workload", chakra.Options{CommGroups: chakraDir + "stg/llama_dp2_tp2_pp2/workload.json"})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := chakra.Load(chakraDir+"astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce", chakra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := traceInputs(t, tr, 8)
	inAR := traceInputs(t, ar, 8)
	for _, mode := range []string{"event", "analytical"} {
		var res, resAR *TraceResult
		if mode == "event" {
			res, err = RunTrace(context.Background(), in, EventOptions{SendLatency: -1}, Attachments{})
			if err == nil {
				resAR, err = RunTrace(context.Background(), inAR, EventOptions{SendLatency: -1}, Attachments{})
			}
		} else {
			res, err = RunTraceAnalytical(in)
			if err == nil {
				resAR, err = RunTraceAnalytical(inAR)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		resAR.Wall = 0
		js, err := resAR.SummaryJSON(SummaryHeader{Mode: mode, Workload: "all_reduce 8npus_1MB", Topology: "default fabric", GPUs: 8})
		if err != nil {
			t.Fatal(err)
		}
		var csv bytes.Buffer
		if err := res.WriteRanksCSV(&csv); err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]byte{"chakra-allreduce-" + mode + "-summary.json": js, "chakra-llama-" + mode + "-ranks.csv": csv.Bytes()} {
			golden(t, name, got)
		}
	}
}

// A trace's event run is guarded like a workload's: the estimate is the sum of the closed forms
// of its distinct collectives' plans and the widest one's flows in flight, and a run whose
// estimate is above the limit is refused before anything is simulated.
func TestTraceMemoryGuard(t *testing.T) {
	tr, err := chakra.Load(chakraDir+"astra-sim/microbenchmarks/all_to_all/16npus_1MB/all_to_all.%d.et", chakra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := traceInputs(t, tr, tr.Ranks())
	sel, err := algo.NewSelector(algo.Options{GPUType: in.Cluster.GPUType})
	if err != nil {
		t.Fatal(err)
	}
	links := in.Cluster.Topology.NumLinks()
	est, err := estimateTraceMemory(tr, sel, 8, 16, links, false, algo.Params{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// One all-to-all over 16 ranks: SimCCL's direct all-to-all, 16·15 flows, all in flight
	// at once, none stored (an arithmetic DAG).
	want := int64(bytesBase + links*bytesPerLink + 16*15*bytesPerFlowMaxMin)
	if est.Bytes != want {
		t.Errorf("estimate %d B (%s), want %d", est.Bytes, est.What, want)
	}
	_, err = RunTrace(context.Background(), in, EventOptions{SendLatency: -1, MaxMemory: 1 << 20}, Attachments{})
	if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "the run would need about") {
		t.Errorf("a 1 MiB limit: %v", err)
	}
}
