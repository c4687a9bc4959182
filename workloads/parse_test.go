package workloads

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"simd/ccl"
	"simd/configs"
	"simd/configs/lex"
)

func mustParse(t *testing.T, name, text string) (*Workload, []*lex.Error) {
	t.Helper()
	w, warns, err := Parse(strings.NewReader(text), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w, warns
}

// Every workload file shipped with SimAI and AICB parses, with the layer counts their count lines give.
func TestParseSimAIAndAICBFiles(t *testing.T) {
	want := map[string]int{
		"G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt":    92,
		"G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt": 172,
		"G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt":  33,
		"L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt":  33, // its count line says 839
		"L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt":          12,
		"L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt":    76,
		"all_gather.txt":      19,
		"all_reduce.txt":      19,
		"all_to_all.txt":      19,
		"muti_all_reduce.txt": 19,
	}
	for name, n := range want {
		data, err := os.ReadFile(filepath.Join("testdata", "aicb", name))
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := ParseWith(bytes.NewReader(data), name, ParseOptions{AllowShortCount: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(w.Layers) != n {
			t.Errorf("%s: %d layers, want %d", name, len(w.Layers), n)
		}
	}
	for _, name := range configs.ExampleWorkloadNames() {
		data, _ := configs.ExampleWorkload(name)
		mustParse(t, name, string(data))
	}
}

func TestShortCount(t *testing.T) {
	data, _ := os.ReadFile("testdata/aicb/L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt")
	_, _, err := Parse(bytes.NewReader(data), "l65b")
	if err == nil || !strings.Contains(err.Error(), "839") || !strings.Contains(err.Error(), "33 complete records") {
		t.Fatalf("err = %v", err)
	}
	w, warns, err := ParseWith(bytes.NewReader(data), "l65b", ParseOptions{AllowShortCount: true})
	if err != nil || len(w.Layers) != 33 || len(warns) == 0 {
		t.Fatalf("lenient: %v layers, %v, %v", len(w.Layers), warns, err)
	}
	cut := "MICRO\n2\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\nl -1 1 NONE\n"
	if _, _, err := ParseWith(strings.NewReader(cut), "cut", ParseOptions{AllowShortCount: true}); err == nil {
		t.Fatal("a record cut in the middle was accepted")
	}
}

func TestHeaderOfCanonicalWorkload(t *testing.T) {
	data, _ := configs.ExampleWorkload("workload_analytical.txt")
	w, warns := mustParse(t, "workload_analytical.txt", string(data))
	h := w.Header
	got := []any{h.Policy, h.TP, h.EP, h.PP, h.VPP, h.GA, h.AllGPUs, h.PPCommBytes, len(w.Layers)}
	want := []any{PolicyTransformerFwdInBckwd, 2, 16, 12, 8, 24, 9216, uint64(50331648), 1789}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("header = %v, want %v", got, want)
	}
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	l := w.Layers[0]
	if l.Name != "grad_gather" || l.Phases[WG].Comm.Op != ccl.OpAllGather || l.Phases[WG].Comm.Group != ccl.GroupDP || l.Phases[WG].Comm.Bytes != 2807758848 || l.UpdateTimeNs != 100 {
		t.Errorf("layer 0 = %+v", l)
	}
}

func TestOldFormatHeaderGetsDefaults(t *testing.T) {
	data, _ := os.ReadFile("testdata/aicb/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt")
	w, warns := mustParse(t, "g13b", string(data))
	h := w.Header
	if h.TP != 8 || h.EP != 1 || h.PP != 1 || h.VPP != 1 || h.GA != 1 || h.AllGPUs != 0 || h.PPCommBytes != 0 {
		t.Errorf("header = %+v", h)
	}
	var sawOld, sawBroadcast bool
	for _, w := range warns {
		sawOld = sawOld || strings.Contains(w.Msg, "old-format header")
		sawBroadcast = sawBroadcast || strings.Contains(w.Msg, "BROADCAST")
	}
	if !sawOld || !sawBroadcast {
		t.Errorf("warnings %v lack the old-format or BROADCAST note", warns)
	}
	data, _ = os.ReadFile("testdata/aicb/all_reduce.txt")
	w, _ = mustParse(t, "micro", string(data))
	if w.Header.Policy != PolicyMicroBenchmark || w.Header.TP != 1 {
		t.Errorf("micro header = %+v", w.Header)
	}
}

func TestCommTypes(t *testing.T) {
	cases := []struct {
		tok   string
		ph    Phase
		op    ccl.Op
		group ccl.GroupKind
	}{
		{"ALLREDUCE", Fwd, ccl.OpAllReduce, ccl.GroupTP},
		{"ALLREDUCE", IG, ccl.OpAllReduce, ccl.GroupTP},
		{"ALLREDUCE", WG, ccl.OpAllReduce, ccl.GroupDP},
		{"ALLGATHER_EP", WG, ccl.OpAllGather, ccl.GroupEP},
		{"REDUCESCATTER_DP_EP", Fwd, ccl.OpReduceScatter, ccl.GroupDPEP},
		{"ALLTOALL_EP", IG, ccl.OpAllToAll, ccl.GroupEP},
		{"ALLTOALL", WG, ccl.OpAllToAll, ccl.GroupDP},
		{"NONE", Fwd, ccl.OpNone, ccl.GroupNone},
		{"BROADCAST", Fwd, ccl.OpNone, ccl.GroupNone},
		{"ALLREDUCEALLTOALL", WG, ccl.OpAllReduce, ccl.GroupNone},
	}
	for _, c := range cases {
		p := parser{file: "x"}
		got, err := p.decodeComm(lex.Token{Text: c.tok, Line: 3}, c.ph, "l")
		if err != nil || got.Op != c.op || got.Group != c.group {
			t.Errorf("%s in %s: %v %v, %v; want %v %v", c.tok, c.ph, got.Op, got.Group, err, c.op, c.group)
		}
	}
}

func TestLineBreaksAndCRLF(t *testing.T) {
	lf := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0\n2\n" +
		"a -1 5 ALLREDUCE 100 1 NONE 0 1 NONE 0 1\n" +
		"b\t-1  7\nALLGATHER 200\n 1 NONE 0\t1 NONE 0 1"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	w1, _ := mustParse(t, "lf", lf)
	w2, _ := mustParse(t, "crlf", crlf)
	w1.File, w2.File = "", ""
	if !reflect.DeepEqual(w1, w2) {
		t.Errorf("CRLF parse differs:\n%+v\n%+v", w1, w2)
	}
	if w1.Layers[1].Name != "b" || w1.Layers[1].Phases[Fwd].ComputeNs != 7 || w1.Layers[1].Phases[Fwd].Comm.Bytes != 200 || w1.Layers[1].Line != 4 {
		t.Errorf("layer b = %+v", w1.Layers[1])
	}
}

func TestParseErrors(t *testing.T) {
	head := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n"
	rec := "l -1 1 ALLREDUCE 1048576 1 NONE 0 1 NONE 0 1\n"
	cases := []struct {
		name      string
		text      string
		wantLine  int
		wantField string
	}{
		{"empty file", "", 1, "parallelism policy"},
		{"unknown policy", "FOO\n1\n" + rec, 1, "parallelism policy"},
		{"missing count", head, 2, "layer count"},
		{"count not a number", head + "two\n" + rec, 2, "layer count"},
		{"negative count", head + "-1\n", 2, "layer count"},
		{"count of 10^12", head + "1000000000000\n" + rec, 2, "layer count"},
		{"fewer records", head + "3\n" + rec + rec, 4, "layer name"},
		{"record cut short", head + "1\nl -1 1 ALLREDUCE 1048576 1 NONE", 3, "ig comm size"},
		{"unknown comm type", head + "1\nl -1 1 ALLREDUCE_TP 1048576 1 NONE 0 1 NONE 0 1\n", 3, "fwd comm type"},
		{"negative size", head + "1\nl -1 1 ALLREDUCE -5 1 NONE 0 1 NONE 0 1\n", 3, "fwd comm size"},
		{"non-numeric size", head + "1\nl -1 1 ALLREDUCE 1MB 1 NONE 0 1 NONE 0 1\n", 3, "fwd comm size"},
		{"huge size", head + "1\nl -1 1 ALLREDUCE 99999999999999999999 1 NONE 0 1 NONE 0 1\n", 3, "fwd comm size"},
		{"negative compute", head + "1\nl -1 -1 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "fwd compute time"},
		{"bad dependency", head + "1\nl x 1 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "dependency"},
		{"bad header value", "HYBRID_TRANSFORMER ep: x\n1\n" + rec, 1, "ep:"},
		{"zero tp", "HYBRID_TRANSFORMER model_parallel_NPU_group: 0\n1\n" + rec, 1, "model_parallel_NPU_group:"},
		{"header key without value", "HYBRID_TRANSFORMER pp:\n1\n" + rec, 1, "pp:"},
		{"checkpoint out of range", "HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 5\n1\n" + rec, 1, "checkpoints:"},
		{"checkpoint list short", "HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 2 0\n1\n" + rec, 1, "checkpoints:"},
		{"customized policy", "HYBRID_CUSTOMIZED\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1 WHATEVER\n", 3, "layer policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(c.text), "w.txt")
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *lex.Error", err)
			}
			if le.File != "w.txt" || le.Line != c.wantLine || le.Field != c.wantField {
				t.Errorf("got %s:%d field %q (%v); want line %d field %q", le.File, le.Line, le.Field, err, c.wantLine, c.wantField)
			}
		})
	}
}

// Sizes and times: negative ones, and times whose sum over an iteration leaves the clock's range.
func TestParseRefusesSizes(t *testing.T) {
	const big = "4503599627370496" // 2^52 ns: the largest time; two fit an iteration, three do not
	rec := func(name, fwd string) string { return name + " -1 " + fwd + " NONE 0 1 NONE 0 1 NONE 0 1\n" }
	for _, c := range []struct{ name, text, want string }{
		{"negative size", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE -4096 1\n",
			`w.txt:3: wg comm size: -4096 is negative (layer "l")`},
		{"negative update time", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 -1\n",
			`w.txt:3: update time: -1 is negative (layer "l")`},
		{"negative pp_comm", "HYBRID_TRANSFORMER pp: 2 pp_comm: -8\n1\n" + rec("l", "1"),
			`w.txt:1: pp_comm: -8 is not a valid byte count`},
		{"size above 2^52", "MICRO\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4503599627370497 1\n",
			`w.txt:3: wg comm size: 4503599627370497 is larger than simd accepts (4503599627370496) (layer "l")`},
		{"compute times past the clock", "HYBRID_TRANSFORMER\n3\n" + rec("a", big) + rec("b", big) + rec("c", big),
			`w.txt:5: fwd compute time: 4503599627370496 ns: the compute and update times of one iteration add up to more than 9223372036854775807 ps (about 106 days, simd's clock range) at layer "c"`},
		{"update times past the clock", "MICRO\n3\n" + strings.Repeat("u -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 8 "+big+"\n", 3),
			`w.txt:5: update time: 4503599627370496 ns: the compute and update times of one iteration add up to more than 9223372036854775807 ps (about 106 days, simd's clock range) at layer "u"`},
		// A recomputed forward pass counts again: two layers of 2^52 ns fit (below), but not
		// when the first is recomputed.
		{"recomputation past the clock", "HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 0 checkpoint_initiates: 1 1\n2\n" + rec("a", big) + rec("b", big),
			`w.txt:3: fwd compute time: 4503599627370496 ns: the compute and update times of one iteration add up to more than 9223372036854775807 ps (about 106 days, simd's clock range) at layer "a"`},
	} {
		_, _, err := Parse(strings.NewReader(c.text), "w.txt")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// Two times of 2^52 ns fit.
	if _, _, err := Parse(strings.NewReader("HYBRID_TRANSFORMER\n2\n"+rec("a", big)+rec("b", big)), "w.txt"); err != nil {
		t.Error(err)
	}
}

func TestHeaderForms(t *testing.T) {
	// AICB writes pp_comm as a float; expert_parallel_npu_group: is read as ep:; unknown keys are skipped with their value.
	w, warns := mustParse(t, "h", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 expert_parallel_npu_group: 2 pp: 2 foo: 9 pp_comm: 8388608.0 all_gpus: 16 ep_o\n0\n")
	h := w.Header
	if h.TP != 4 || h.EP != 2 || h.PP != 2 || h.PPCommBytes != 8388608 || h.AllGPUs != 16 {
		t.Errorf("header = %+v", h)
	}
	if len(warns) < 3 {
		t.Errorf("want warnings for expert_parallel_npu_group:, foo: and ep_o, got %v", warns)
	}
	if _, _, err := Parse(strings.NewReader("HYBRID_TRANSFORMER pp_comm 8.5\n0\n"), "x"); err == nil {
		t.Error("fractional pp_comm accepted")
	}
}

func TestTrailingTextIgnoredWithWarning(t *testing.T) {
	_, warns := mustParse(t, "t", "MICRO\n1 layers\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\nextra stuff\n")
	if len(warns) != 2 {
		t.Errorf("warnings = %v, want one for the count line and one for the extra text", warns)
	}
}

// FuzzParse: the parser never panics; every error is a *lex.Error naming the file, a line of it
// and a field; a parsed workload keeps its sizes within bounds and its plan refers only to its
// layers. The seeds are every SimAI and AICB workload file in testdata and the shipped examples.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./workloads
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/aicb/*.txt")
	if len(files) != 10 {
		f.Fatalf("expected AICB's 10 workload files in testdata/aicb, found %d", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range configs.ExampleWorkloadNames() {
		data, _ := configs.ExampleWorkload(name)
		f.Add(data)
	}
	f.Add([]byte("HYBRID_CUSTOMIZED checkpoints: 1 0\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1 DATA\n"))
	f.Add([]byte("HYBRID_DLRM DLRM_LAST_BOTTOM_LAYER: 0\n1\nl -1 1 ALLTOALL 10 1 NONE 0 1 NONE 0 1\r\n"))
	f.Add([]byte("HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 0 checkpoint_initiates: 1 1\n2\na -1 4503599627370496 NONE 0 1 NONE 0 1 NONE 0 1\nb -1 4503599627370496 NONE 0 1 NONE 0 1 NONE 0 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, _, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("error is not a *lex.Error: %v", err)
			}
			// A line of the file, or the one just past its end where a missing line was due
			// (testdata/fuzz/FuzzParse/ead882c88e3b2b4b: a file of one line lacks the count line 2).
			if lines := bytes.Count(data, []byte("\n")) + 1; le.File != "fuzz" || le.Line < 1 || le.Line > lines+1 || le.Field == "" {
				t.Fatalf("error %q does not name the file, a line of its %d and a field", err, lines)
			}
			return
		}
		for _, st := range w.Plan() {
			if st.Layer < 0 || int(st.Layer) >= max(len(w.Layers), 1) {
				t.Fatalf("plan step %+v outside the %d layers", st, len(w.Layers))
			}
		}
		for i := range w.Layers {
			for ph := Fwd; ph <= WG; ph++ {
				if w.Layers[i].Phases[ph].Comm.Bytes > maxBytes || w.Layers[i].Phases[ph].ComputeNs > maxComputeNs {
					t.Fatalf("size or time above the bound accepted")
				}
			}
		}
	})
}
