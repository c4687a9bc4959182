package sim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/ccl"
	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads"
)

// placedJob is workload text placed on GPUs of topology t (8 GPUs per server), with SimAI.conf
// text conf.
func placedJob(t *testing.T, tp *topo.Topology, workload, conf string, gpus []int32) *Simulation {
	t.Helper()
	w, _, err := workloads.Parse(strings.NewReader(workload), "w.txt")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ClusterOf(tp, "fabric")
	if err != nil {
		t.Fatal(err)
	}
	cl.GPUs = len(gpus)
	c, _, err := configs.ParseSimAIConf(strings.NewReader(conf), "SimAI.conf")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Inputs{Workload: w, WorkloadName: "w.txt", Cluster: cl, Conf: c}, Options{Placement: gpus})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gpuRange(lo, hi int32) []int32 {
	var g []int32
	for i := lo; i <= hi; i++ {
		g = append(g, i)
	}
	return g
}

// iterations runs jobs together and returns each job's iteration times.
func iterations(t *testing.T, jobs ...Job) [][]engine.Time {
	t.Helper()
	r, err := RunJobs(context.Background(), jobs, EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]engine.Time
	for i, j := range r.Jobs {
		if !j.Complete(jobs[i].Iterations) {
			t.Fatalf("job %s incomplete: %d iterations", j.Name, len(j.Iterations))
		}
		var its []engine.Time
		for _, it := range j.Iterations {
			its = append(its, it.End)
		}
		out = append(out, its)
	}
	return out
}

// railDPWorkload is a TP all-reduce of 16 MiB and a data-parallel all-reduce of 64 MiB (TP 8): on
// two servers, the DP groups pair GPU k of one server with GPU k of the other, on rail k.
const railDPWorkload = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n1\n" +
	"grad -1 1 ALLREDUCE 16777216 1 NONE 0 1 ALLREDUCE 67108864 1\n"

// Two jobs on disjoint parts of a rail-optimised fabric share no link (each rail's ASW has a
// port per GPU, and the DP rings stay on their rails): together each takes exactly the time it
// takes alone, and a job that starts later, or runs twice, changes nothing either.
func TestJobsDisjoint(t *testing.T) {
	tp, err := topo.DefaultFabric(32, 8)
	if err != nil {
		t.Fatal(err)
	}
	const conf = "CC_MODE 0\n"
	a := placedJob(t, tp, railDPWorkload, conf, gpuRange(0, 15))
	b := placedJob(t, tp, railDPWorkload, conf, gpuRange(16, 31))
	aloneA := iterations(t, Job{Name: "a", Sim: a, Iterations: 1})[0][0]
	aloneB := iterations(t, Job{Name: "b", Sim: b, Iterations: 1})[0][0]
	if aloneA != aloneB {
		t.Errorf("alone: a %v, b %v; the two halves of the fabric are alike", aloneA, aloneB)
	}
	both := iterations(t, Job{Name: "a", Sim: a, Iterations: 2}, Job{Name: "b", Sim: b, Start: 7 * engine.Microsecond, Iterations: 1})
	t.Logf("alone %v, together %v", aloneA, both)
	for _, it := range append(both[0], both[1]...) {
		if it != aloneA {
			t.Errorf("together: iterations %v, alone %v", both, aloneA)
			break
		}
	}
	// The single-job run of the same placement is the event mode's own run.
	r, err := a.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Run.End != aloneA {
		t.Errorf("Event: %v, RunJobs alone: %v", r.Run.End, aloneA)
	}
}

// tpWorkload is a 64 MiB all-reduce over a TP group of 2.
const tpWorkload = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 2\n1\n" +
	"ar -1 1 ALLREDUCE 67108864 1 NONE 0 1 NONE 0 1\n"

// Two jobs forced through one link share it as max-min predicts. On a rail-optimised fabric with
// one PSW, a TP group of GPU 0 (server 0, rail 0) and GPU 9 (server 1, rail 1) crosses rails:
// ASW 0 → PSW → ASW 1 and back. A second job on GPUs 8 (server 1, rail 0) and 1 (server 0, rail
// 1) crosses the same uplinks, so every uplink direction carries a flow of each job: together
// each gets half of the 400 Gbps uplink, which is what it gets alone on 200 Gbps uplinks.
func TestJobsShareALink(t *testing.T) {
	build := func(uplink string) *topo.Topology {
		o := topo.NewGeneratorOptions(topo.TemplateSpectrumX, true, false, false)
		o.GPUs, o.PSWs, o.ASWPSWRate = 16, 1, uplink
		g, err := o.Generate()
		if err != nil {
			t.Fatal(err)
		}
		return g.Topology
	}
	full, half := build("400Gbps"), build("200Gbps")
	const conf = "CC_MODE 0\n"
	a, b := []int32{0, 9}, []int32{8, 1}
	together := iterations(t,
		Job{Name: "a", Sim: placedJob(t, full, tpWorkload, conf, a), Iterations: 1},
		Job{Name: "b", Sim: placedJob(t, full, tpWorkload, conf, b), Iterations: 1})
	aloneFull := iterations(t, Job{Name: "a", Sim: placedJob(t, full, tpWorkload, conf, a), Iterations: 1})[0][0]
	aloneHalf := iterations(t, Job{Name: "a", Sim: placedJob(t, half, tpWorkload, conf, a), Iterations: 1})[0][0]
	t.Logf("together %v, alone %v on 400 Gbps uplinks, %v on 200 Gbps", together, aloneFull, aloneHalf)
	for i, it := range together {
		// The packets' store-and-forward at the PSW costs MTU/rate more on the thinner uplink
		// alone: a few hundred ns per step against a transfer of milliseconds.
		if d := float64(it[0]-aloneHalf) / float64(aloneHalf); d > 0.002 || d < -0.002 {
			t.Errorf("job %d together: %v, alone on half the uplink: %v (%.3f%%)", i, it[0], aloneHalf, 100*d)
		}
	}
	if !(aloneFull < aloneHalf*6/10) {
		t.Errorf("alone on the full uplink %v, on half %v: the uplink should be the bottleneck", aloneFull, aloneHalf)
	}
}

func TestRunJobsRefuses(t *testing.T) {
	tp, err := topo.DefaultFabric(16, 8)
	if err != nil {
		t.Fatal(err)
	}
	other, err := topo.DefaultFabric(16, 8)
	if err != nil {
		t.Fatal(err)
	}
	const conf = "CC_MODE 0\n"
	a := placedJob(t, tp, tpWorkload, conf, []int32{0, 1})
	for _, tc := range []struct {
		name string
		jobs []Job
		want string
	}{
		{"none", nil, "no jobs"},
		{"overlap", []Job{{Name: "a", Sim: a, Iterations: 1}, {Name: "b", Sim: placedJob(t, tp, tpWorkload, conf, []int32{1, 2}), Iterations: 1}}, "jobs a and b are both placed on GPU 1"},
		{"topologies", []Job{{Name: "a", Sim: a, Iterations: 1}, {Name: "b", Sim: placedJob(t, other, tpWorkload, conf, []int32{4, 5}), Iterations: 1}}, "same topology"},
		{"iterations", []Job{{Name: "a", Sim: a}}, "0 iterations"},
	} {
		_, err := RunJobs(context.Background(), tc.jobs, EventOptions{}, Attachments{})
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an input error with %q", tc.name, err, tc.want)
		}
	}
	w, _, _ := workloads.Parse(strings.NewReader(tpWorkload), "w.txt")
	cl, _ := ClusterOf(tp, "fabric")
	cl.GPUs = 2
	if _, err := New(Inputs{Workload: w, WorkloadName: "w.txt", Cluster: cl}, Options{Placement: []int32{3, 16}}); err == nil || !strings.Contains(err.Error(), "GPU 16, beyond the topology's 16 GPUs") {
		t.Errorf("placement beyond the topology: %v", err)
	}
}

// pp2OnFabric32 is testdata/pp2-aicb.txt (PP 2 on 16 GPUs) and the default 32-GPU fabric.
func pp2OnFabric32(t *testing.T) ([]byte, *topo.Topology) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.DefaultFabric(32, 8)
	if err != nil {
		t.Fatal(err)
	}
	return text, tp
}

// A pipelined workload runs as a job as it runs alone: RunJobs's iteration is Event's, stage
// for stage.
func TestJobsPipelined(t *testing.T) {
	text, tp := pp2OnFabric32(t)
	s := placedJob(t, tp, string(text), "CC_MODE 0\n", gpuRange(16, 31))
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Run.Stages) != 2 {
		t.Fatalf("%d stages", len(r.Run.Stages))
	}
	got := iterations(t, Job{Name: "p", Sim: s, Iterations: 2})[0]
	if got[0] != r.Run.End || got[1] != r.Run.End {
		t.Errorf("as a job: %v, alone: %v", got, r.Run.End)
	}
}

// A placed pipelined job sends its activations and gradients between its own GPUs: every flow
// of the pass, the stages' collectives and the sends between them, starts and ends on a GPU of
// its placement.
func TestJobsPipelineSendsOnPlacement(t *testing.T) {
	text, tp := pp2OnFabric32(t)
	for _, opt := range []EventOptions{{}, {RanksInLockstep: true}, {StageRanksOnTheirOwn: true}} {
		s := placedJob(t, tp, string(text), "CC_MODE 0\n", gpuRange(16, 31))
		log := &flowLog{}
		att := Attachments{Attach: func(m *netmodel.Simulator) error { m.Observe(log); return nil }}
		opt.SendLatency = -1
		if _, err := s.Event(context.Background(), opt, att); err != nil {
			t.Fatal(err)
		}
		sends := 0
		for _, f := range log.recs {
			if f.Src < 16 || f.Dst < 16 {
				t.Fatalf("%+v: a flow of %d bytes from GPU %d to GPU %d, outside the job's GPUs 16-31", opt, f.Bytes, f.Src, f.Dst)
			}
			if f.Kind == ccl.KindP2P {
				sends++
			}
		}
		if sends == 0 {
			t.Errorf("%+v: no pipeline send", opt)
		}
	}
}
