package workloads

import (
	"strings"
	"testing"

	"simd/ccl"
	"simd/engine"
)

// fixedNetwork finishes each collective after a duration in ns chosen by its size: the tests
// pick sizes equal to the durations they want.
type fixedNetwork struct {
	s       *engine.Scheduler
	started []Collective
}

func (n *fixedNetwork) Start(c Collective, done func()) error {
	n.started = append(n.started, c)
	n.s.AfterFunc(engine.Time(c.Bytes)*engine.Nanosecond, done)
	return nil
}

func runWith(t *testing.T, text string, l ccl.Layout, withNet bool) (*RunResult, *fixedNetwork) {
	t.Helper()
	w, _ := mustParse(t, "w", text)
	s := engine.NewScheduler()
	var fn *fixedNetwork
	var net Network
	if withNet {
		fn = &fixedNetwork{s: s}
		net = fn
	}
	res, err := NewRunner(w, l, s, net).Run()
	if err != nil {
		t.Fatal(err)
	}
	return res, fn
}

func ns(t engine.Time) int64 { return int64(t / engine.Nanosecond) }

// Two FWD_IN_BCKWD layers on a network that takes exactly `size` ns per collective. The
// timeline, worked by hand:
//
//	0    C0fwd 10        → 10  I0fwd! 100 ns, update 0   → 110 (comm 100, exposed 100)
//	110  C1fwd 20        → 130 I1fwd! 50 ns + update 1   → 181 (comm 51, exposed 51)
//	181  C1ig 3          → 184 I1ig!  40 ns + 1          → 225 (comm 41, exposed 41)
//	225  C1wg 2          → 227 I1wg   30 ns + 1, non-blocking, ends 258 (comm 31, exposed 0)
//	227  C0ig 5          → 232 (no ig collective)
//	232  C0wg 7          → 239 I0wg   1000 ns, ends 1239
//	239  end of pass: wait for everything; only layer 0's wg counts as exposed: 1239 − 239 = 1000.
func TestRunnerTimeline(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 7 ALLREDUCE 1000 0\n" +
		"l1 -1 20 ALLREDUCE 50 3 ALLREDUCE 40 2 ALLREDUCE 30 1\n"
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	res, fn := runWith(t, text, l, true)
	if ns(res.End) != 1239 {
		t.Errorf("end = %d ns, want 1239", ns(res.End))
	}
	want := [2][3][3]int64{ // layer, phase, {compute, comm, exposed}
		{{10, 100, 100}, {5, 0, 0}, {7, 1000, 1000}},
		{{20, 51, 51}, {3, 41, 41}, {2, 31, 0}},
	}
	for i := range want {
		for ph := Fwd; ph <= WG; ph++ {
			st := res.Layers[i][ph]
			got := [3]int64{ns(st.Compute), ns(st.Comm), ns(st.Exposed)}
			if got != want[i][ph] {
				t.Errorf("layer %d %s: compute/comm/exposed = %v, want %v", i, ph, got, want[i][ph])
			}
		}
	}
	if len(fn.started) != 5 {
		t.Fatalf("%d collectives started, want 5", len(fn.started))
	}
	// Under FWD_IN_BCKWD the same file issues its 100-byte forward collective as 4096 bytes.
	res, fn = runWith(t, strings.Replace(text, "HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD", 1), l, true)
	if fn.started[0].Bytes != 4096 || ns(res.Layers[0][Fwd].Comm) != 4096 {
		t.Errorf("FWD_IN_BCKWD forward issued %d bytes, comm %d ns; want 4096", fn.started[0].Bytes, ns(res.Layers[0][Fwd].Comm))
	}
}

// Under MODEL the input-gradient collective is non-blocking and the weight-gradient step waits
// for it: the exposed time is the time actually waited.
//
//	0  C1ig 10 → 10 I1ig (100 ns, ends 110); C1wg 30 → 40; wait for layer 1's ig until 110:
//	   exposed 70, comm 100. Then C0ig 1 → 111, C0wg 1 → 112, end at 112.
func TestRunnerWaitIsExposed(t *testing.T) {
	text := "MODEL model_parallel_NPU_group: 2\n2\n" +
		"l0 -1 0 NONE 0 1 NONE 0 1 NONE 0 0\n" +
		"l1 -1 0 NONE 0 10 ALLREDUCE 100 30 NONE 0 0\n"
	l := ccl.Layout{GPUs: 2, GPUsPerServer: 2, TP: 2, PP: 1, EP: 1}
	res, _ := runWith(t, text, l, true)
	st := res.Layers[1][IG]
	if ns(st.Comm) != 100 || ns(st.Exposed) != 70 || ns(res.End) != 112 {
		t.Errorf("comm %d exposed %d end %d; want 100, 70, 112", ns(st.Comm), ns(st.Exposed), ns(res.End))
	}
}

// Without a network (the analytical backend) only compute advances the clock; a recomputed
// forward pass counts its compute twice.
func TestRunnerAnalyticalCountsCompute(t *testing.T) {
	text := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 0 checkpoint_initiates: 1 1\n2\n" +
		"l0 -1 10 ALLREDUCE 1048576 5 NONE 0 7 ALLREDUCE 1048576 1\n" +
		"l1 -1 20 ALLREDUCE 1048576 3 ALLREDUCE 1048576 2 ALLREDUCE 1048576 1\n"
	l := ccl.Layout{GPUs: 2, GPUsPerServer: 2, TP: 2, PP: 1, EP: 1}
	res, _ := runWith(t, text, l, false)
	if ns(res.End) != 10+20+10+3+2+5+7 {
		t.Errorf("end = %d", ns(res.End))
	}
	if ns(res.Layers[0][Fwd].Compute) != 20 || res.Layers[0][Fwd].Issued != 2 {
		t.Errorf("layer 0 fwd = %+v, want compute 20 ns and 2 issues (recomputed)", res.Layers[0][Fwd])
	}
	if res.Layers[0][WG].Issued != 0 {
		t.Errorf("layer 0 wg issued %d, want 0: DP is 1", res.Layers[0][WG].Issued)
	}
}

type failingNetwork struct{}

func (failingNetwork) Start(Collective, func()) error { return errTest }

var errTest = errString("no route")

type errString string

func (e errString) Error() string { return string(e) }

func TestRunnerReportsNetworkErrors(t *testing.T) {
	w, _ := mustParse(t, "w", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\n")
	_, err := NewRunner(w, ccl.Layout{GPUs: 2, GPUsPerServer: 2, TP: 1, PP: 1, EP: 1}, engine.NewScheduler(), failingNetwork{}).Run()
	if err == nil {
		t.Fatal("no error")
	}
}

type silentNetwork struct{}

func (silentNetwork) Start(Collective, func()) error { return nil }

func TestRunnerNoticesLostCollectives(t *testing.T) {
	w, _ := mustParse(t, "w", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\n")
	_, err := NewRunner(w, ccl.Layout{GPUs: 2, GPUsPerServer: 2, TP: 1, PP: 1, EP: 1}, engine.NewScheduler(), silentNetwork{}).Run()
	if err == nil {
		t.Fatal("a collective that never finished went unnoticed")
	}
}

// Runners share a scheduler: each pass starts when asked, its figures count from its start, and
// ended is called at its end. The timeline of TestRunnerTimeline started at 500 ns ends at
// 1739 ns, with the same 1239 ns pass; a second one started at 0 does not change it (the fixed
// network has no contention).
func TestRunnersShareScheduler(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4\n2\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 7 ALLREDUCE 1000 0\n" +
		"l1 -1 20 ALLREDUCE 50 3 ALLREDUCE 40 2 ALLREDUCE 30 1\n"
	w, _ := mustParse(t, "w", text)
	l := ccl.Layout{GPUs: 4, GPUsPerServer: 4, TP: 2, PP: 1, EP: 1}
	s := engine.NewScheduler()
	var ends []int64
	a := NewRunner(w, l, s, &fixedNetwork{s: s})
	b := NewRunner(w, l, s, &fixedNetwork{s: s})
	a.Start(500*engine.Nanosecond, func() { ends = append(ends, ns(s.Now())) })
	b.Start(0, func() { ends = append(ends, ns(s.Now())) })
	s.Run()
	for _, r := range []*Runner{a, b} {
		res, err := r.Result()
		if err != nil {
			t.Fatal(err)
		}
		if ns(res.End) != 1239 || ns(res.Layers[0][WG].Exposed) != 1000 {
			t.Errorf("pass: end %d ns, layer 0 wg exposed %d ns; want 1239 and 1000", ns(res.End), ns(res.Layers[0][WG].Exposed))
		}
	}
	if len(ends) != 2 || ends[0] != 1239 || ends[1] != 1739 {
		t.Errorf("passes ended at %v ns, want [1239 1739]", ends)
	}
	// Stopped before it began, a pass has done nothing.
	s2 := engine.NewScheduler()
	c := NewRunner(w, l, s2, &fixedNetwork{s: s2})
	c.Start(engine.Microsecond, nil)
	s2.AtFunc(100*engine.Nanosecond, s2.Stop)
	s2.Run()
	if p := c.Partial(); p.End != 0 || p.Done(0) {
		t.Errorf("unstarted pass: end %v, layer 0 done %v", p.End, p.Done(0))
	}
}
