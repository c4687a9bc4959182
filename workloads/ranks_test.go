package workloads

import (
	"fmt"
	"reflect"
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

// rankSends is sendNetwork's costs, rank by rank: rank r's send takes 10·r ns more.
type rankSends struct{ sendNetwork }

func (n *rankSends) StartRank(rank int, c Collective, done func()) error {
	d := engine.Time(c.Bytes) * engine.Nanosecond
	if c.Op == ccl.OpSend {
		n.sends = append(n.sends, c)
		d = n.lat + engine.Time(c.Bytes)*n.perByte + engine.Time(10*rank)*engine.Nanosecond
	}
	n.s.AfterFunc(d, done)
	return nil
}

// agreeingRanks is sendNetwork's costs for every rank alike.
type agreeingRanks struct{ sendNetwork }

func (n *agreeingRanks) StartRank(_ int, c Collective, done func()) error { return n.Start(c, done) }

func runRankPipeline(t *testing.T, text string, l ccl.Layout, net RankNetwork, s *engine.Scheduler) (*Pipeline, *RunResult, int64) {
	t.Helper()
	w, _ := mustParse(t, "w", text)
	p, err := NewRankPipeline(w, l, s, net)
	if err != nil {
		t.Fatal(err)
	}
	var ended int64 = -1
	p.Start(0, func() { ended = ns(s.Now()) })
	s.Run()
	res, err := p.Result()
	if err != nil {
		t.Fatal(err)
	}
	return p, res, ended
}

// Where every rank's parts take the same time, a pipeline run rank by rank is the pipeline run
// stage by stage, figure for figure, with every rank's steps done.
func TestRankPipelineAgreesWhenRanksDo(t *testing.T) {
	for _, c := range []struct{ pp, vpp, ga int }{{2, 1, 1}, {2, 1, 4}, {4, 1, 8}, {3, 1, 5}, {2, 2, 4}, {4, 2, 8}, {2, 3, 6}} {
		name := fmt.Sprintf("pp%d-vpp%d-ga%d", c.pp, c.vpp, c.ga)
		text := pipeText(c.pp, c.vpp, c.ga, 3, 1, 10, 13, 7, 100)
		l := ccl.Layout{GPUs: 2 * c.pp, GPUsPerServer: 2, TP: 1, PP: c.pp, EP: 1}
		want := runPipeline(t, text, l, func(s *engine.Scheduler) Network { return &sendNetwork{s: s, lat: 1000, perByte: 10} })
		s := engine.NewScheduler()
		p, got, ended := runRankPipeline(t, text, l, &agreeingRanks{sendNetwork{s: s, lat: 1000, perByte: 10}}, s)
		if got.End != want.End || ended != ns(want.End) || !reflect.DeepEqual(got.Stages, want.Stages) {
			t.Errorf("%s: rank by rank ends at %d ns (the last rank at %d), stage by stage at %d, or their stages differ",
				name, ns(got.End), ended, ns(want.End))
		}
		steps := 0
		for _, r := range p.stages {
			steps += 2 * len(r.plan) // two ranks a stage
		}
		if done, total := p.Progress(); done != total || total != steps {
			t.Errorf("%s: progress %d of %d", name, done, total)
		}
		checkStages(t, name, got)
	}
}

// Rank by rank, a rank waits for its own message, from the rank in its place of the stage
// before (or after), and its stage reports its first rank. Two stages of two ranks, one
// micro-batch, one layer: rank r's send takes c + 10·r ns, so rank 2 (stage 1, place 0) has
// its activations at t_f + c and rank 3 at t_f + c + 10; rank 2's gradients reach rank 0 at
// 2t_f + t_b + 2c + 20 and rank 3's reach rank 1 at 2t_f + t_b + 2c + 40, each then runs its
// backward. Stage by stage, the stage would wait for its slowest rank's message.
func TestRankPipelineWaitsForItsOwnMessage(t *testing.T) {
	const f, b, g, bytes = 10, 13, 7, 1000
	const lat, perByte = 2000, 3 // ps: a send takes c = 5 ns, and 10·rank ns more
	text := pipeText(2, 1, 1, 1, 1, f, b, g, bytes)
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 2, TP: 1, PP: 2, EP: 1}
	s := engine.NewScheduler()
	net := &rankSends{sendNetwork{s: s, lat: lat, perByte: perByte}}
	p, res, ended := runRankPipeline(t, text, l, net, s)
	const tf, tb, c = f, b + g, 5
	if len(net.sends) != 4 {
		t.Fatalf("%d sends, want one per rank", len(net.sends))
	}
	ends := [4]int64{2*tf + 2*tb + 2*c + 20, 2*tf + 2*tb + 2*c + 40, tf + c + tf + tb, tf + c + 10 + tf + tb}
	for r, want := range ends {
		if got := ns(p.runners[r].res.End); p.runners[r].quiet == (r%2 == 0) || (r%2 == 0 && got != want) {
			t.Errorf("rank %d: ends at %d ns, want %d (quiet %v)", r, got, want, p.runners[r].quiet)
		}
	}
	if ended != ends[1] {
		t.Errorf("the pass ended at %d ns, want %d (rank 1's end)", ended, ends[1])
	}
	s0, s1 := res.Stages[0], res.Stages[1]
	if got := [2]int64{ns(s1.Bubble), ns(s1.PPExposed)}; got != [2]int64{tf, c} {
		t.Errorf("stage 1 (rank 2): bubble and pp exposed %v, want [%d %d]: its own message", got, tf, c)
	}
	if got := [2]int64{ns(s0.Bubble), ns(s0.PPExposed)}; got != [2]int64{tf + c + tb, c + 20} {
		t.Errorf("stage 0 (rank 0): bubble and pp exposed %v, want [%d %d]", got, tf+c+tb, c+20)
	}
	if ns(res.End) != ends[0] || res.Reported != 0 {
		t.Errorf("reported stage %d ending at %d ns, want stage 0 at %d", res.Reported, ns(res.End), ends[0])
	}
	checkStages(t, "ranks", res)
}

// partLog is a RankObserver whose ranks note their own parts of collectives.
type partLog struct {
	spanLog
	parts map[int][][2]int64 // per rank: issue and done, ns
}

type rankParts struct {
	spanLog
	log  *partLog
	rank int
}

func (l *partLog) Rank(rank int) Observer { return &rankParts{log: l, rank: rank} }

func (r *rankParts) Part(_ int, _ Collective, issued, done engine.Time) {
	r.log.parts[r.rank] = append(r.log.parts[r.rank], [2]int64{ns(issued), ns(done)})
}

// A PartObserver on ranks on their own sees each rank's own part of each collective: rank r's
// ends Bytes + 10·r ns after the rank reached it.
func TestRanksReportOwnParts(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 0 NONE 0 0 NONE 0 0\n" +
		"l1 -1 20 ALLREDUCE 50 0 NONE 0 0 NONE 0 0\n"
	w, _ := mustParse(t, "w", text)
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	s := engine.NewScheduler()
	rs, err := NewRanks(w, l, s, &rankSkewNetwork{s: s, reached: map[int][]issue{}})
	if err != nil {
		t.Fatal(err)
	}
	log := &partLog{parts: map[int][][2]int64{}}
	rs.Observe(log)
	rs.Start(0, nil)
	s.Run()
	if _, err := rs.Result(); err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		skew := int64(10 * r)
		second := 10 + 100 + skew + 20
		want := [][2]int64{{10, 110 + skew}, {second, second + 50 + skew}}
		if got := log.parts[r]; !reflect.DeepEqual(got, want) {
			t.Errorf("rank %d's parts %v, want %v", r, got, want)
		}
	}
}
