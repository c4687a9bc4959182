package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"simd/ccl"
	"simd/engine"
)

// phaseWant is a phase's expected {compute, exposed} in ns.
type phaseWant [2]int64

// checkPhases compares a run's per-phase compute and exposed time with a hand-made table.
func checkPhases(t *testing.T, res *RunResult, want [][3]phaseWant) {
	t.Helper()
	for i := range want {
		for ph := Fwd; ph <= WG; ph++ {
			st := res.Layers[i][ph]
			if got := (phaseWant{ns(st.Compute), ns(st.Exposed)}); got != want[i][ph] {
				t.Errorf("layer %d %s: compute/exposed = %v ns, want %v", i, ph, got, want[i][ph])
			}
		}
	}
}

// checkGroups checks the event report's split by group (µs) and that it adds up.
func checkGroups(t *testing.T, w *Workload, res *RunResult, l ccl.Layout, tp, dp, dpep, ep, exposed float64) *EventReport {
	t.Helper()
	rep, err := EventEndToEnd(w, res, AnalyticalOptions{Layout: l, FileName: "x-", Overlap: Overlap{PP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	got := [5]float64{s.TPComm, s.DPComm, s.DPEPComm, s.EPComm, s.Exposed}
	want := [5]float64{tp, dp, dpep, ep, exposed}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("exposed TP, DP, DP_EP, EP, total = %v µs, want %v", got, want)
			break
		}
	}
	return rep
}

// A tensor- and data-parallel pass (HYBRID_TRANSFORMER, TP 2, DP 4) on a network that takes
// `size` ns per collective, with the exposed time of each group worked out by hand:
//
//	0    C0fwd 10 → 10   I0fwd! TP 100 → 110              l0 fwd exposed 100 (TP)
//	110  C1fwd 10 → 120  (no fwd comm); C2fwd 10 → 130
//	130  C2ig 10 → 140   I2ig!  TP 40 → 180               l2 ig exposed 40 (TP)
//	180  C2wg 10 → 190   I2wg   DP 500, runs 190–690
//	190  C1ig 10 → 200   I1ig!  TP 200 → 400              l1 ig exposed 200 (TP), though
//	                                                      l2's DP collective runs meanwhile
//	400  C1wg 10 → 410   I1wg   DP 300, runs 410–710
//	410  C0ig 5 → 415    C0wg 5 → 420   I0wg DP 50, runs 420–470
//	420  end of pass: wait for layer 0's wg until 470      l0 wg exposed 50 (DP, as SimAI)
//	     then layer 1's wg, still running, until 710       l1 wg exposed 240 (DP)
//	     layer 2's wg finished at 690, while waiting for layer 1's: nothing more.
//
// End 710, compute 80, exposed 630 = TP 340 + DP 290. SimAI's report would count only the
// 50 of layer 0's wg and lose the 240 of layer 1's.
func TestExposedTPAndDP(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n3\n" +
		"l0 -1 10 ALLREDUCE 100 5 NONE 0 5 ALLREDUCE 50 0\n" +
		"l1 -1 10 NONE 0 10 ALLREDUCE 200 10 ALLREDUCE 300 0\n" +
		"l2 -1 10 NONE 0 10 ALLREDUCE 40 10 REDUCESCATTER 500 0\n"
	l := ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 2, PP: 1, EP: 1}
	w, _ := mustParse(t, "w", text)
	res, _ := runWith(t, text, l, true)
	if ns(res.End) != 710 {
		t.Fatalf("end = %d ns, want 710", ns(res.End))
	}
	checkPhases(t, res, [][3]phaseWant{ // fwd, ig, wg
		{{10, 100}, {5, 0}, {5, 50}},
		{{10, 0}, {10, 200}, {10, 240}},
		{{10, 0}, {10, 40}, {10, 0}},
	})
	rep := checkGroups(t, w, res, l, 0.340, 0.290, 0, 0, 0.630)
	if g := rep.Summary.WholeGroupsUs(); g != [4]float64{0, 0, 1, 0} {
		// 0.29 DP, 0.34 TP, 0.63 total: 1 µs printed, given to the larger fraction, TP.
		t.Errorf("whole µs DP, DP_EP, TP, EP = %v, want [0 0 1 0]", g)
	}
}

// An expert-parallel pass (TP 2, EP 2: DP 4, DP_EP 2) whose layer 0 issues nothing, as AICB's
// first layers often do, so that SimAI's end-of-pass wait on layer 0's weight gradient waits
// for nothing. Layer 2's input gradient is an EP all-to-all after a TP forward collective: its
// exposed time is EP's (the analytical report would put it in the fwd column's group, TP).
//
//	0    (layer 0: nothing)  C1fwd 10 → 10   I1fwd! EP 60 → 70     l1 fwd exposed 60 (EP)
//	70   C2fwd 10 → 80   I2fwd! TP 30 → 110                         l2 fwd exposed 30 (TP)
//	110  C2ig 10 → 120   I2ig!  EP 20 → 140                         l2 ig exposed 20 (EP)
//	140  C2wg 10 → 150   I2wg   DP 600, runs 150–750
//	150  C1ig 10 → 160   I1ig!  EP 70 → 230                         l1 ig exposed 70 (EP)
//	230  C1wg 10 → 240   I1wg   DP_EP 400, runs 240–640
//	240  end of pass: layer 0's wg never ran; layer 1's until 640    l1 wg exposed 400 (DP_EP)
//	     then layer 2's until 750                                   l2 wg exposed 110 (DP)
//
// End 750, compute 60, exposed 690 = EP 150 + TP 30 + DP_EP 400 + DP 110.
func TestExposedEPAndDPEP(t *testing.T) {
	text := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n3\n" +
		"l0 -1 0 NONE 0 0 NONE 0 0 NONE 0 0\n" +
		"l1 -1 10 ALLTOALL_EP 60 10 ALLTOALL_EP 70 10 ALLREDUCE_DP_EP 400 0\n" +
		"l2 -1 10 ALLREDUCE 30 10 ALLTOALL_EP 20 10 ALLREDUCE 600 0\n"
	l := ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 2, PP: 1, EP: 2}
	w, _ := mustParse(t, "w", text)
	res, _ := runWith(t, text, l, true)
	if ns(res.End) != 750 {
		t.Fatalf("end = %d ns, want 750", ns(res.End))
	}
	checkPhases(t, res, [][3]phaseWant{
		{{0, 0}, {0, 0}, {0, 0}},
		{{10, 60}, {10, 70}, {10, 400}},
		{{10, 30}, {10, 20}, {10, 110}},
	})
	checkGroups(t, w, res, l, 0.030, 0.110, 0.400, 0.150, 0.690)
}

// Under HYBRID_DATA_MODEL an input-gradient collective runs while the layer's weight gradient is
// computed, and the wait step for it is where it is exposed, whatever else runs: here a DP_EP
// weight-gradient collective that no step waits for until the end of the pass.
//
//	0    C1ig 10 → 10    I1ig TP 100, runs 10–110
//	10   C1wg 20 → 30    I1wg DP_EP 500, runs 30–530
//	30   W1ig until 110                                   l1 ig exposed 80 (TP)
//	110  C0ig 5 → 115    C0wg 5 → 120   I0wg DP 50, runs 120–170
//	120  W0ig: nothing to wait for
//	120  end of pass: layer 0's wg until 170, then layer 1's until 530: exposed 50 and 360 (DP, DP_EP)
func TestExposedModelPolicy(t *testing.T) {
	text := "HYBRID_DATA_MODEL model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n2\n" +
		"l0 -1 0 NONE 0 5 NONE 0 5 ALLREDUCE 50 0\n" +
		"l1 -1 0 NONE 0 10 ALLREDUCE 100 20 ALLREDUCE_DP_EP 500 0\n"
	l := ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 2, PP: 1, EP: 2}
	w, _ := mustParse(t, "w", text)
	res, _ := runWith(t, text, l, true)
	if ns(res.End) != 530 {
		t.Fatalf("end = %d ns, want 530", ns(res.End))
	}
	checkPhases(t, res, [][3]phaseWant{
		{{0, 0}, {5, 0}, {5, 50}},
		{{0, 0}, {10, 80}, {20, 360}},
	})
	checkGroups(t, w, res, l, 0.080, 0.050, 0.360, 0, 0.490)
}

// randomWorkload writes a workload of the policy with random layers: compute delays, comm types
// of every group and sizes (ns on fixedNetwork), update times.
func randomWorkload(r *rand.Rand, policy string) string {
	n := 1 + r.IntN(6)
	var b strings.Builder
	fmt.Fprintf(&b, "%s model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 1 ga: 1 all_gpus: 8", policy)
	if strings.HasPrefix(policy, "HYBRID_DLRM") {
		fmt.Fprintf(&b, " DLRM_LAST_BOTTOM_LAYER: %d", r.IntN(n))
	}
	fmt.Fprintf(&b, "\n%d\n", n)
	comm := func(wg bool) string {
		types := []string{"NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "ALLTOALL_EP", "ALLREDUCE_DP_EP", "ALLGATHER_EP"}
		t := types[r.IntN(len(types))]
		if t == "NONE" {
			return "NONE 0"
		}
		return fmt.Sprintf("%s %d", t, 1+r.IntN(1000))
	}
	for i := range n {
		fmt.Fprintf(&b, "l%d -1 %d %s %d %s %d %s %d\n", i, r.IntN(50), comm(false), r.IntN(50), comm(false), r.IntN(50), comm(true), r.IntN(4))
	}
	return b.String()
}

// For random workloads of every policy, run whole or stopped at a random time, every
// picosecond of the pass is compute or exposed time of some phase, and the event report's
// groups add up to its exposed total, in µs and in the whole µs it prints.
func TestExposedAddsUp(t *testing.T) {
	policies := []string{"HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD", "DATA", "MICRO", "MODEL",
		"HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", "DISTRIBUTED_INFERENCE", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"}
	l := ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 2, PP: 1, EP: 2}
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 400 {
		policy := policies[k%len(policies)]
		text := randomWorkload(r, policy)
		if policy == "HYBRID_CUSTOMIZED" {
			// Its records carry a 13th token, the layer's policy.
			text = strings.ReplaceAll(text, "\n", " HYBRID_DATA_MODEL\n")
			head, rest, _ := strings.Cut(text, " HYBRID_DATA_MODEL\n")
			count, rest, _ := strings.Cut(rest, " HYBRID_DATA_MODEL\n")
			text = head + "\n" + count + "\n" + rest
		}
		w, _, err := Parse(strings.NewReader(text), "w")
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		s := engine.NewScheduler()
		runner := NewRunner(w, l, s, &fixedNetwork{s: s})
		stop := k%2 == 1
		if stop {
			s.AtFunc(engine.Time(r.IntN(3000))*engine.Nanosecond, s.Stop)
		}
		res, err := runner.Run()
		if err != nil {
			if !stop {
				t.Fatalf("%v\n%s", err, text)
			}
			res = runner.Partial()
		}
		var sum engine.Time
		for i := range res.Layers {
			for ph := Fwd; ph <= WG; ph++ {
				sum += res.Layers[i][ph].Compute + res.Layers[i][ph].Exposed
			}
		}
		if sum != res.End {
			t.Fatalf("compute + exposed = %v, end %v (stopped %v)\n%s", sum, res.End, res.Stopped, text)
		}
		rep, err := EventEndToEnd(w, res, AnalyticalOptions{Layout: l, FileName: "x-", Overlap: Overlap{PP: 1}})
		if err != nil {
			t.Fatal(err)
		}
		sm := rep.Summary
		if groups := sm.TPComm + sm.DPComm + sm.DPEPComm + sm.EPComm; math.Abs(groups-sm.Exposed) > 1e-9*max(1, sm.Exposed) {
			t.Fatalf("groups add up to %v µs, exposed %v µs\n%s", groups, sm.Exposed, text)
		}
		g := sm.WholeGroupsUs()
		if g[0]+g[1]+g[2]+g[3] != math.RoundToEven(sm.Exposed) {
			t.Fatalf("whole µs groups %v, exposed %v µs\n%s", g, sm.Exposed, text)
		}
	}
}

func TestApportion(t *testing.T) {
	for _, c := range []struct {
		parts [4]float64
		total float64
		want  [4]float64
	}{
		{[4]float64{0.4, 0.4, 0.4, 0}, 1.2, [4]float64{1, 0, 0, 0}},  // 1 to the first of equal fractions
		{[4]float64{10.5, 20.5, 0, 0}, 31, [4]float64{11, 20, 0, 0}}, // each alone would round to 10 + 20
		{[4]float64{1.6, 2.6, 3.6, 0}, 7.8, [4]float64{2, 3, 3, 0}},  // 8 in all
		{[4]float64{194938.2692, 0, 56339.26, 0}, 251277.53, [4]float64{194939, 0, 56339, 0}},
		{[4]float64{5, 5, 0, 0}, 100, [4]float64{5, 5, 0, 0}},                   // not a split of the total: each rounded
		{[4]float64{math.NaN(), 1.5, 0, 0}, 3, [4]float64{math.NaN(), 2, 0, 0}}, // not finite: each rounded
	} {
		got := apportion(c.parts, c.total)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("apportion(%v, %v) = %v, want %v", c.parts, c.total, got, c.want)
		}
	}
}
