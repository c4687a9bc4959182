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

// flowLog keeps every flow's endpoints and end.
type flowLog struct{ recs []netmodel.FlowRecord }

func (l *flowLog) FlowDone(r *netmodel.FlowRecord) { l.recs = append(l.recs, *r) }

// hpn32 is the 32-GPU AlibabaHPN dual-ToR fabric (ECMP over both ToRs, so a collective's ranks
// end at different times).
func hpn32(t *testing.T) *topo.Topology {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "topo", "testdata", "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp, err := topo.Parse(f, "hpn32")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// hpnSimulation is workload text on the first 16 GPUs of hpn32 under the shipped SimAI.conf.
func hpnSimulation(t *testing.T, text string) *Simulation {
	t.Helper()
	return placedJob(t, hpn32(t), text, string(configs.ShippedSimAIConfText()), gpuRange(0, 15))
}

// With every rank on its own (the default), a layer's time is rank 0's: from the collective's
// issue to the end of the last flow rank 0 sends or receives, which is before the last flow of
// all here; in lockstep it is the last flow of all. Both run the same flows.
func TestRanksReportRankZero(t *testing.T) {
	const text = "MICRO\n1\ngrad0\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t0\n"
	for _, lockstep := range []bool{false, true} {
		s := hpnSimulation(t, text)
		log := &flowLog{}
		att := Attachments{Attach: func(m *netmodel.Simulator) error { m.Observe(log); return nil }}
		r, err := s.Event(context.Background(), EventOptions{SendLatency: -1, RanksInLockstep: lockstep}, att)
		if err != nil {
			t.Fatal(err)
		}
		var last, rank0 engine.Time
		for _, f := range log.recs {
			last = max(last, f.Arrived)
			if f.Src == 0 || f.Dst == 0 {
				rank0 = max(rank0, f.Arrived)
			}
		}
		if rank0 >= last {
			t.Fatalf("rank 0's last flow ends at %v, the last at %v: the case does not tell the two apart", rank0, last)
		}
		issue := fromMicros(r.Collectives[0].StartUs) // every rank issues it at once here
		want := rank0 - issue
		if lockstep {
			want = last - issue
		}
		got := r.Run.Layers[0][workloads.WG].Comm
		if got != want {
			t.Errorf("lockstep %v: the layer's communication %v, want %v", lockstep, got, want)
		}
	}
}

// A timeline of ranks on their own has a track per rank (merged where alike) for compute and
// waits, and one for the collectives.
func TestRanksTimeline(t *testing.T) {
	const text = "MICRO\n2\ngrad0\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t1\n" +
		"grad1\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tREDUCESCATTER\t524288\t1\n"
	s := hpnSimulation(t, text)
	tl := NewTimeline(false)
	jobs := []Job{{Name: "w.txt", Sim: s}}
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, tl.Attach(Attachments{}, jobs))
	if err != nil {
		t.Fatal(err)
	}
	tl.Collectives(0, r.Collectives, r.End)
	got := writeTimeline(t, tl)
	for _, want := range []string{`"collectives · ranks 0-15 comm"`, `"rank 0"`, `"L1 wg wait reducescatter DP"`, `"L1 wg reducescatter DP 512 KiB (own part)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the timeline does not hold %s", want)
		}
	}
	if n := strings.Count(got, `"thread_name"`); n < 5 {
		t.Errorf("%d threads: the ranks' tracks, which end at different times here, were merged", n)
	}
}

// With StageRanksOnTheirOwn (-ranks own-stages) a pipelined pass runs rank by rank too: on the
// AlibabaHPN 32 dual-ToR fabric the ranks of a stage (16 GPUs on two servers, TP 16) end their
// forward all-reduces at different times, so their pipeline sends leave at different times,
// where with a program per stage (the default, and lockstep) every rank of a stage sends its
// message at once. All three run the same flows to the end.
func TestRanksPipelineSendsRankByRank(t *testing.T) {
	const text = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 16 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 32 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1048576\n2\n" +
		"layer0 -1 1000 ALLREDUCE 4194304 1000 NONE 0 1000 NONE 0 0\n" +
		"layer1 -1 1000 ALLREDUCE 4194304 1000 NONE 0 1000 NONE 0 0\n"
	tp := hpn32(t)
	modes := []EventOptions{{StageRanksOnTheirOwn: true}, {}, {RanksInLockstep: true}}
	var flows [3]int
	var starts [3]map[engine.Time]bool
	for i, opt := range modes {
		s := placedJob(t, tp, text, string(configs.ShippedSimAIConfText()), gpuRange(0, 31))
		log := &flowLog{}
		att := Attachments{Attach: func(m *netmodel.Simulator) error { m.Observe(log); return nil }}
		opt.SendLatency = -1
		r, err := s.Event(context.Background(), opt, att)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Run.Stages) != 2 {
			t.Fatalf("%+v: %d stages", opt, len(r.Run.Stages))
		}
		flows[i] = len(log.recs)
		starts[i] = map[engine.Time]bool{}
		for _, f := range log.recs {
			if f.Kind == ccl.KindP2P {
				starts[i][f.Start] = true
			}
		}
	}
	for i := 1; i < len(modes); i++ {
		if flows[i] != flows[0] {
			t.Errorf("%+v: %d flows, %d rank by rank", modes[i], flows[i], flows[0])
		}
		if len(starts[0]) <= len(starts[i]) {
			t.Errorf("pipeline sends start at %d instants rank by rank, %d with %+v: the ranks did not send on their own", len(starts[0]), len(starts[i]), modes[i])
		}
	}
}
