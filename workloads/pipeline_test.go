package workloads

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"simd/ccl"
	"simd/engine"
)

// pipeText is a workload of `layers` layers per micro-batch without communication: forward
// f ns, input gradient b ns, weight gradient g ns per layer. With copies > 1 the file lists the
// micro-batch's layers that many times, as AICB does.
func pipeText(pp, vpp, ga, layers, copies int, f, b, g int, ppComm int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: %d vpp: %d ga: %d all_gpus: %d checkpoints: 0 checkpoint_initiates: 0 pp_comm: %d\n%d\n",
		pp, vpp, ga, pp, ppComm, layers*copies)
	for range copies {
		for j := range layers {
			fmt.Fprintf(&sb, "layer%d -1 %d NONE 0 %d NONE 0 %d NONE 0 0\n", j, f, b, g)
		}
	}
	return sb.String()
}

func runPipeline(t *testing.T, text string, l ccl.Layout, net func(*engine.Scheduler) Network) *RunResult {
	t.Helper()
	w, _ := mustParse(t, "w", text)
	s := engine.NewScheduler()
	var n Network
	if net != nil {
		n = net(s)
	}
	p, err := NewPipeline(w, l, s, n)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Every stage's schedule runs each (micro-batch, chunk) forward once and backward once, the
// backward after the forward, and starts with Megatron's warm-up count of forwards.
func TestPipelineSchedule(t *testing.T) {
	for _, c := range []struct{ pp, ga, vpp int }{{4, 8, 1}, {4, 2, 1}, {2, 1, 1}, {4, 8, 2}, {4, 4, 3}, {3, 7, 2}, {4, 2, 2}} {
		for st := range c.pp {
			s := PipelineSchedule(c.pp, st, c.ga, c.vpp)
			if len(s) != 2*c.ga*c.vpp {
				t.Fatalf("%+v stage %d: %d tasks, want %d", c, st, len(s), 2*c.ga*c.vpp)
			}
			fwd := map[[2]int]int{}
			for k, task := range s {
				key := [2]int{task.Micro, task.Chunk}
				if !task.Backward {
					fwd[key] = k + 1
				} else if fwd[key] == 0 {
					t.Errorf("%+v stage %d: backward of %v before its forward", c, st, key)
				}
			}
			if len(fwd) != c.ga*c.vpp {
				t.Errorf("%+v stage %d: %d forwards, want %d", c, st, len(fwd), c.ga*c.vpp)
			}
			warm := 0
			for _, task := range s {
				if task.Backward {
					break
				}
				warm++
			}
			want := min(c.pp-st-1, c.ga) + 1 // the warm-up, then the first steady forward
			if c.vpp > 1 {
				group := c.pp
				if c.ga%c.pp != 0 {
					group = c.ga
				}
				want = min((c.pp-st-1)*2+(c.vpp-1)*group+1, c.ga*c.vpp)
				if c.ga == c.pp {
					want = c.ga * c.vpp
				}
			}
			if want > c.ga*c.vpp {
				want = c.ga * c.vpp
			}
			if warm != want {
				t.Errorf("%+v stage %d: %d forwards before the first backward, want %d", c, st, warm, want)
			}
		}
	}
	// Stage 0 of 4 with 6 micro-batches, 1F1B, in full.
	var got []string
	for _, task := range PipelineSchedule(4, 0, 6, 1) {
		d := "F"
		if task.Backward {
			d = "B"
		}
		got = append(got, fmt.Sprint(d, task.Micro))
	}
	if g := strings.Join(got, " "); g != "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5" {
		t.Errorf("1F1B stage 0 of 4, 6 micro-batches: %s", g)
	}
}

// With no communication and equal stages, the iteration is 1F1B's closed form
// (ga + pp − 1)·(t_f + t_b), interleaved 1F1B's ga·(t_f + t_b) + (pp − 1)·(t_f + t_b)/vpp when
// ga is a multiple of pp, and SimAI's analytical total (compute + bubble) in both cases.
func TestPipelineClosedForms(t *testing.T) {
	const f, b, g = 10, 13, 7 // ns per layer
	for _, c := range []struct{ pp, vpp, ga, layers int }{
		{2, 1, 1, 3}, {2, 1, 4, 3}, {4, 1, 8, 2}, {4, 1, 2, 2}, {4, 1, 3, 1}, {3, 1, 5, 4},
		{2, 2, 4, 4}, {4, 2, 8, 4}, {4, 4, 4, 4}, {2, 3, 6, 6}, {4, 2, 12, 2},
	} {
		for _, copies := range []int{1, c.ga} {
			name := fmt.Sprintf("pp%d-vpp%d-ga%d-copies%d", c.pp, c.vpp, c.ga, copies)
			text := pipeText(c.pp, c.vpp, c.ga, c.layers, copies, f, b, g, 0)
			l := ccl.Layout{GPUs: c.pp, GPUsPerServer: 1, TP: 1, PP: c.pp, EP: 1}
			res := runPipeline(t, text, l, func(s *engine.Scheduler) Network { return &fixedNetwork{s: s} })
			tf, tb := int64(c.layers*f), int64(c.layers*(b+g))
			var want int64
			if c.vpp == 1 {
				want = int64(c.ga+c.pp-1) * (tf + tb)
			} else {
				want = int64(c.ga)*(tf+tb) + int64(c.pp-1)*(tf+tb)/int64(c.vpp)
			}
			if got := ns(res.End); got != want {
				t.Errorf("%s: iteration %d ns, want %d", name, got, want)
			}
			// SimAI's analytical total: the compute of the file's layers (one stage) plus the
			// bubble Σ compute · (pp − 1)/(ga · vpp).
			total := float64(int64(c.ga) * (tf + tb))
			total += total * float64(c.pp-1) / float64(c.ga*c.vpp)
			if c.vpp == 1 || c.ga%c.pp == 0 {
				if float64(want) != total {
					t.Errorf("%s: closed form %d ns, SimAI's analytical total %g", name, want, total)
				}
			}
			checkStages(t, name, res)
		}
	}
}

// checkStages checks that every stage's time adds up: compute, exposed communication, bubble
// and pipeline communication make its end.
func checkStages(t *testing.T, name string, res *RunResult) {
	t.Helper()
	for i, st := range res.Stages {
		var sum engine.Time
		for _, l := range st.Layers {
			for _, ph := range l {
				sum += ph.Compute + ph.Exposed
			}
		}
		sum += st.Bubble + st.PPExposed
		if sum != st.End {
			t.Errorf("%s stage %d: compute + exposed + bubble + pp = %d ns, end %d ns", name, i, ns(sum), ns(st.End))
		}
		if st.End > res.End {
			t.Errorf("%s stage %d ends at %d after the iteration %d", name, i, ns(st.End), ns(res.End))
		}
	}
}

// sendNetwork takes lat + bytes/rate for a send and `bytes` ns for any other collective.
type sendNetwork struct {
	s       *engine.Scheduler
	lat     engine.Time
	perByte engine.Time
	sends   []Collective
}

func (n *sendNetwork) Start(c Collective, done func()) error {
	d := engine.Time(c.Bytes) * engine.Nanosecond
	if c.Op == ccl.OpSend {
		n.sends = append(n.sends, c)
		d = n.lat + engine.Time(c.Bytes)*n.perByte
	}
	n.s.AfterFunc(d, done)
	return nil
}

// A send of pp_comm bytes that takes c on the network: two stages and one micro-batch take
// 2·(t_f + t_b) + 2c, of which 2c is pipeline communication on the stage that waits for both
// messages' flights... and the first stage waits for the second's whole pass.
func TestPipelineSendCost(t *testing.T) {
	const f, b, g, layers = 10, 13, 7, 3
	const lat, perByte, bytes = 2000, 3, 1000 // ps: a send takes 2 ns + 3 ns = 5 ns
	text := pipeText(2, 1, 1, layers, 1, f, b, g, bytes)
	l := ccl.Layout{GPUs: 2, GPUsPerServer: 1, TP: 1, PP: 2, EP: 1}
	var sn *sendNetwork
	res := runPipeline(t, text, l, func(s *engine.Scheduler) Network {
		sn = &sendNetwork{s: s, lat: lat, perByte: perByte}
		return sn
	})
	tf, tb := int64(layers*f), int64(layers*(b+g))
	c := int64(lat+perByte*bytes) / 1000
	if got, want := ns(res.End), 2*(tf+tb)+2*c; got != want {
		t.Errorf("iteration %d ns, want 2(t_f+t_b) + 2c = %d", got, want)
	}
	if len(sn.sends) != 2 || sn.sends[0].Stage != 0 || sn.sends[0].Peer != 1 || sn.sends[1].Stage != 1 || sn.sends[1].Peer != 0 {
		t.Fatalf("sends %+v", sn.sends)
	}
	s0, s1 := res.Stages[0], res.Stages[1]
	// Stage 1 waits t_f for stage 0's forward (bubble) and c for its flight; stage 0 waits
	// t_f + t_b for stage 1 and c for the gradients' flight.
	want := [2][4]int64{ // bubble, pp exposed, pp comm, sends
		{tf + c + tb, c, c, 1},
		{tf, c, c, 1},
	}
	for i, st := range []StageResult{s0, s1} {
		got := [4]int64{ns(st.Bubble), ns(st.PPExposed), ns(st.PPComm), int64(st.Sends)}
		if got != want[i] {
			t.Errorf("stage %d: bubble, pp exposed, pp comm, sends = %v, want %v", i, got, want[i])
		}
	}
	checkStages(t, "send", res)
}

// Every schedule runs to the end (no stage waits for a message never sent), with any number of
// micro-batches, interleaved or not, and the stages' times add up.
func TestPipelineCompletes(t *testing.T) {
	for pp := 2; pp <= 5; pp++ {
		for vpp := 1; vpp <= 3; vpp++ {
			for ga := 1; ga <= 2*pp+1; ga++ {
				name := fmt.Sprintf("pp%d-vpp%d-ga%d", pp, vpp, ga)
				text := pipeText(pp, vpp, ga, 3, 1, 10, 13, 7, 100)
				l := ccl.Layout{GPUs: pp, GPUsPerServer: 1, TP: 1, PP: pp, EP: 1}
				res := runPipeline(t, text, l, func(s *engine.Scheduler) Network {
					return &sendNetwork{s: s, lat: 1000, perByte: 10}
				})
				checkStages(t, name, res)
			}
		}
	}
}

// The micro-batches of an AICB-style file are found between its per-iteration layers; a file
// without ga copies is one micro-batch; vpp may not exceed a micro-batch's layers.
func TestPipelineLayers(t *testing.T) {
	rec := func(name string) string { return name + " -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n" }
	file := func(ga, vpp int, names ...string) *Workload {
		text := fmt.Sprintf("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: %d ga: %d all_gpus: 2 pp_comm: 8\n%d\n", vpp, ga, len(names))
		for _, n := range names {
			text += rec(n)
		}
		w, _ := mustParse(t, "w", text)
		return w
	}
	aicb := []string{"grad_gather", "grad_param_comm", "embedding_grads",
		"embedding_layer", "attention_column", "attention_row", "mlp_moelayer", "mlp_moelayer", "final_column",
		"embedding_layer", "attention_column", "attention_row", "mlp_moelayer", "mlp_moelayer", "final_column",
		"embedding_layer", "attention_column", "attention_row", "mlp_moelayer", "mlp_moelayer", "final_column",
		"cross_entropy1", "optimizer1"}
	for _, c := range []struct {
		name               string
		w                  *Workload
		head, tail         []int
		start, len, stride int
		chunks             []int
	}{
		{"aicb ga 3", file(3, 2, aicb...), []int{0, 1, 2}, []int{21, 22}, 3, 6, 6, []int{0, 3, 6}},
		{"one micro-batch", file(4, 1, "a", "b", "c"), nil, nil, 0, 3, 0, []int{0, 3}},
		{"ga 1", file(1, 3, aicb[:9]...), nil, nil, 0, 9, 0, []int{0, 3, 6, 9}},
		{"vpp 3 of 4", file(2, 3, "a", "b", "c", "d", "a", "b", "c", "d"), nil, nil, 0, 4, 4, []int{0, 1, 2, 4}},
	} {
		pl, err := c.w.PipelineLayers()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := fmt.Sprint(pl.Head, pl.Tail, pl.Start, pl.Len, pl.Stride, pl.Chunks)
		if want := fmt.Sprint(c.head, c.tail, c.start, c.len, c.stride, c.chunks); got != want {
			t.Errorf("%s: head tail start len stride chunks = %s, want %s", c.name, got, want)
		}
	}
	if _, err := file(1, 4, "a", "b", "c").PipelineLayers(); err == nil || !strings.Contains(err.Error(), "vpp") {
		t.Errorf("vpp 4 over 3 layers: %v", err)
	}
}

// The event report of a pipelined run is the last stage to end's: its compute, its measured
// bubble and pipeline communication, adding up to the iteration. Two stages, one micro-batch,
// sends of 5 µs: stage 0 computes t_f + t_b, waits t_f + t_b + 5 µs for stage 1 (bubble) and
// 5 µs for the gradients' flight (PP).
func TestPipelineEventReport(t *testing.T) {
	const f, b, g, layers = 10000, 13000, 7000, 3 // ns
	text := pipeText(2, 1, 1, layers, 1, f, b, g, 1000)
	l := ccl.Layout{GPUs: 2, GPUsPerServer: 1, TP: 1, PP: 2, EP: 1}
	res := runPipeline(t, text, l, func(s *engine.Scheduler) Network {
		return &sendNetwork{s: s, lat: 2 * engine.Microsecond, perByte: 3 * engine.Nanosecond}
	})
	w, _ := mustParse(t, "w", text)
	rep, err := EventEndToEnd(w, res, AnalyticalOptions{Layout: l, FileName: "pp-", Overlap: Overlap{PP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	tf, tb := float64(layers*f)/1000, float64(layers*(b+g))/1000 // µs
	s := rep.Summary
	if res.Reported != 0 || s.Compute != tf+tb || s.Exposed != 0 || s.PPComm != 5 || s.Bubble != tf+tb+5 || s.Total != 2*(tf+tb)+10 || rep.End != s.Total {
		t.Errorf("reported stage %d, summary %+v, end %g", res.Reported, s, rep.End)
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if got, want := lines[len(lines)-1], "total exposed comm,100.000000,total comp,90.000000,total time,190.000000"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
}
