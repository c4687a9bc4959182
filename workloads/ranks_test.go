package workloads

import (
	"testing"

	"simd/ccl"
	"simd/engine"
)

// rankSkewNetwork ends rank r's part of a collective Bytes + 10·r ns after the rank reached it,
// and notes when each rank reached which collective.
type rankSkewNetwork struct {
	s       *engine.Scheduler
	reached map[int][]issue // per rank, in order
}

type issue struct {
	layer int
	ph    Phase
	at    int64
}

func (n *rankSkewNetwork) StartRank(rank int, c Collective, done func()) error {
	n.reached[rank] = append(n.reached[rank], issue{c.Layer, c.Phase, ns(n.s.Now())})
	n.s.AfterFunc(engine.Time(int64(c.Bytes)+10*int64(rank))*engine.Nanosecond, done)
	return nil
}

// Every rank runs its own copy of the pass: rank r goes on from a blocking collective as soon as
// its own part is done (Bytes + 10·r ns after it reached it), so it reaches the next collective
// 10·r ns later per collective before it, and the report is rank 0's. Two layers, each a 10 ns
// (then 20 ns) compute and a blocking forward all-reduce of 100 (then 50) ns; the last rank (3)
// ends 2·30 ns after rank 0, which is when the pass has ended.
func TestRanksGoOnTheirOwn(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 0 NONE 0 0 NONE 0 0\n" +
		"l1 -1 20 ALLREDUCE 50 0 NONE 0 0 NONE 0 0\n"
	w, _ := mustParse(t, "w", text)
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	s := engine.NewScheduler()
	net := &rankSkewNetwork{s: s, reached: map[int][]issue{}}
	rs, err := NewRanks(w, l, s, net)
	if err != nil {
		t.Fatal(err)
	}
	var ended int64 = -1
	rs.Start(0, func() { ended = ns(s.Now()) })
	s.Run()
	res, err := rs.Result()
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		skew := int64(10 * r)
		want := []issue{{0, Fwd, 10}, {1, Fwd, 10 + 100 + skew + 20}}
		got := net.reached[r]
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("rank %d reached %v, want %v", r, got, want)
		}
	}
	if got := ns(res.End); got != 180 {
		t.Errorf("rank 0's pass ends at %d ns, want 180", got)
	}
	if ended != 240 {
		t.Errorf("the pass ended at %d ns, want 240 (rank 3's end)", ended)
	}
	for i, want := range [][2]int64{{10, 100}, {20, 50}} { // rank 0's compute and comm
		st := res.Layers[i][Fwd]
		if got := [2]int64{ns(st.Compute), ns(st.Comm)}; got != want || ns(st.Exposed) != want[1] {
			t.Errorf("layer %d: compute/comm %v exposed %d, want %v exposed %d", i, got, ns(st.Exposed), want, want[1])
		}
	}
	if done, total := rs.Progress(); done != total || total != 4*len(w.Plan()) {
		t.Errorf("progress %d of %d, want every rank's %d steps done", done, total, len(w.Plan()))
	}
}
