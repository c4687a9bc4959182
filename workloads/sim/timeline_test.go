package sim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/topo"
	"simd/workloads/timeline"
)

// timelineWorkload is two layers of TP 8 and DP 2 on 16 GPUs: blocking TP all-reduces forward
// and backward, a non-blocking DP all-reduce of the weight gradients.
const timelineWorkload = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0\n2\n" +
	"attention -1 20000 ALLREDUCE 1048576 20000 ALLREDUCE 1048576 10000 ALLREDUCE 8388608 100\n" +
	"mlp -1 30000 ALLREDUCE 2097152 30000 ALLREDUCE 2097152 15000 ALLREDUCE 16777216 100\n"

// writeTimeline writes tl into a temporary folder, checks it against the format's rules and
// returns it.
func writeTimeline(t *testing.T, tl *Timeline) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace.json")
	if err := tl.Write(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.Check(data); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return string(data)
}

// Both modes write a timeline of the same workload: compute spans named by layer and phase,
// collectives with their algorithm and flows in the event mode, and its link counters; the
// files match their golden files.
func TestTimelineModes(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		golden string
		holds  []string
	}{
		{"analytical", "timeline-analytical.json", []string{`"L0 attention fwd compute"`, `"L1 wg allreduce DP 16 MiB (analytical)"`, `"thread_name"`, `"ranks 0-15"`}},
		{"event", "timeline-event.json", []string{`"L0 attention fwd compute"`, `"L0 fwd wait allreduce TP"`, `allreduce TP 1 MiB (`, `"flows":`, `"ph":"C"`, `"util `, `"link `}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := newTestSimulation(t, timelineWorkload, 16, "")
			tl := NewTimeline(false)
			tl.Meta("workload", "w.txt")
			if tc.mode == "analytical" {
				if _, err := tl.Analytical("w.txt", s); err != nil {
					t.Fatal(err)
				}
			} else {
				att := tl.Attach(Attachments{}, []Job{{Name: "w.txt", Sim: s}})
				r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, att)
				if err != nil {
					t.Fatal(err)
				}
				tl.Collectives(0, r.Collectives, r.End)
			}
			got := writeTimeline(t, tl)
			for _, want := range tc.holds {
				if !strings.Contains(got, want) {
					t.Errorf("the timeline does not hold %s", want)
				}
			}
			golden(t, tc.golden, []byte(got))
		})
	}
}

// The analytical mode of a pipelined workload runs one pass for every stage: one track.
func TestTimelineAnalyticalPipeline(t *testing.T) {
	pp, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSimulation(t, string(pp), 16, "")
	tl := NewTimeline(false)
	if _, err := tl.Analytical("pp", s); err != nil {
		t.Fatal(err)
	}
	if got := writeTimeline(t, tl); !strings.Contains(got, `"ranks 0-15"`) || strings.Contains(got, "stage 0") {
		t.Errorf("not one track of ranks 0-15:\n%.2000s", got)
	}
}

// A pipelined workload gets a track per stage, with its sends and its bubbles; two jobs get a
// process each; every rank has its own track when asked.
func TestTimelineShapes(t *testing.T) {
	pp, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.DefaultFabric(32, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		allRanks bool
		jobs     func(t *testing.T) []Job
		holds    []string
		threads  int // at least
	}{
		{"pipeline", false, func(t *testing.T) []Job {
			return []Job{{Name: "p", Sim: placedJob(t, tp, string(pp), "CC_MODE 0\n", gpuRange(0, 15)), Iterations: 1}}
		}, []string{`"stage 0 · ranks 0-7"`, `"stage 1 · ranks 8-15"`, `send to stage 1`, `"bubble (micro-batch`}, 2},
		{"two jobs", false, func(t *testing.T) []Job {
			return []Job{
				{Name: "a", Sim: placedJob(t, tp, timelineWorkload, "CC_MODE 0\n", gpuRange(0, 15)), Iterations: 2},
				{Name: "b", Sim: placedJob(t, tp, timelineWorkload, "CC_MODE 0\n", gpuRange(16, 31)), Iterations: 1},
			}
		}, []string{`"args":{"name":"a"}`, `"args":{"name":"b"}`, `"args":{"name":"network"}`}, 2},
		{"all ranks", true, func(t *testing.T) []Job {
			return []Job{{Name: "a", Sim: placedJob(t, tp, timelineWorkload, "CC_MODE 0\n", gpuRange(0, 15)), Iterations: 1}}
		}, []string{`"rank 0"`, `"rank 15"`, `"collectives · rank 15 comm"`}, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := tc.jobs(t)
			tl := NewTimeline(tc.allRanks)
			r, err := RunJobs(context.Background(), jobs, EventOptions{SendLatency: -1}, tl.Attach(Attachments{}, jobs))
			if err != nil {
				t.Fatal(err)
			}
			for i, j := range r.Jobs {
				tl.Collectives(i, j.Collectives, r.End)
			}
			got := writeTimeline(t, tl)
			for _, want := range tc.holds {
				if !strings.Contains(got, want) {
					t.Errorf("the timeline does not hold %s", want)
				}
			}
			if n := strings.Count(got, `"thread_name"`); n < tc.threads {
				t.Errorf("%d threads, want at least %d", n, tc.threads)
			}
		})
	}
}
