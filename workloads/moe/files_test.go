package moe

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"simd/configs/lex"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Generate → WriteDir → ReadDir gives back the same config and requests.
func TestRoundTrip(t *testing.T) {
	for _, cfg := range []Config{tiny(), func() Config {
		c := seedDefaults()
		c.SeqLen, c.Batch, c.Layers, c.Iters, c.TopK, c.Zipf, c.Seed = 129, 3, 3, 2, 6, 0.7, 1<<63+5
		return c
	}(), func() Config {
		c := seedDefaults()
		c.Nodes, c.GPUsPerNode, c.ExpertsPerGPU, c.TopK, c.SeqLen, c.Batch, c.Layers, c.Iters = 1, 2, 40, 40, 10, 1, 1, 1
		return c
	}()} {
		iters := mustGenerate(t, cfg)
		dir := t.TempDir()
		if err := WriteDir(dir, cfg, iters); err != nil {
			t.Fatal(err)
		}
		gotCfg, gotIters, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if gotCfg != cfg {
			t.Errorf("config %+v, want %+v", gotCfg, cfg)
		}
		if !reflect.DeepEqual(gotIters, iters) {
			t.Errorf("%+v: the requests read back differ from those written", cfg)
		}
	}
}

// The tiny workload's files match testdata/tiny (go test -update rewrites them).
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, tiny(), mustGenerate(t, tiny())); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tiny")
	got := readAll(t, dir)
	if *update {
		os.MkdirAll(golden, 0o755)
		for name, text := range got {
			if err := os.WriteFile(filepath.Join(golden, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := readAll(t, golden)
	if !reflect.DeepEqual(slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want))) {
		t.Fatalf("wrote %v, golden %v", slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
	}
	for name := range want {
		if got[name] != want[name] {
			t.Errorf("%s differs from testdata/tiny:\n%s\nwant:\n%s", name, got[name], want[name])
		}
	}
}

func mapsKeys(m map[string]string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// tinyDir writes the tiny workload to a fresh folder.
func tinyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteDir(dir, tiny(), mustGenerate(t, tiny())); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editLine replaces line n (1-based) of a file.
func editLine(t *testing.T, path string, n int, text string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[n-1] = text
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lineOf(t *testing.T, path string, n int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")[n-1]
}

// ReadDir's errors name the file, the line and the field. The tiny workload (testdata/tiny):
// line 2 of a requests file is layer 0 token 0; 5 tokens per layer; 8 experts, 2 per GPU.
func TestReadDirErrors(t *testing.T) {
	it0 := IterationFile(0)
	it1 := IterationFile(1)
	set := func(name, text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	line := func(name string, n int, text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { editLine(t, filepath.Join(dir, name), n, text) }
	}
	edit := func(name string, old, new string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, name)
			b, _ := os.ReadFile(p)
			if !bytes.Contains(b, []byte(old)) {
				t.Fatalf("%s has no %q", name, old)
			}
			os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
		}
	}
	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   string // file:line: field: ...
	}{
		{"bad layer number", line(it0, 2, "x,0,0,1;2,0;1"), it0 + ":2: layer: \"x\": expected a number"},
		{"negative token", line(it0, 3, "0,-1,0,1;2,0;1"), it0 + ":3: token: \"-1\": expected a number"},
		{"bad src", line(it0, 3, "0,1,1.5,1;2,0;1"), it0 + ":3: src_gpu: \"1.5\""},
		{"bad expert", line(it0, 3, "0,1,0,1;z,0;1"), it0 + ":3: experts: \"z\": expected a number"},
		{"empty expert entry", line(it0, 3, "0,1,0,1;,0;1"), it0 + ":3: experts: \"1;\" has an empty entry"},
		{"bad gpu", line(it0, 3, "0,1,0,1;2,0; 1"), it0 + ":3: gpus: \" 1\": expected a number"},
		{"four columns", line(it0, 4, "0,2,0,1;2"), it0 + ":4: 4 fields: expected 5"},
		{"six columns", line(it0, 4, "0,2,0,1;2,0;1,7"), it0 + ":4: 6 fields: expected 5"},
		{"expert out of range", line(it0, 2, "0,0,0,8;1,4;0"), it0 + ":2: experts: 8: expected an expert in [0, 8)"},
		{"gpu not expert/E", line(it0, 2, "0,0,0,5;1,3;0"), it0 + ":2: gpus: 3 for expert 5: expected its GPU, 5 / 2 = 2"},
		{"second gpu wrong", line(it0, 2, "0,0,0,5;1,2;1"), it0 + ":2: gpus: 1 for expert 1: expected its GPU, 1 / 2 = 0"},
		{"duplicate expert", line(it0, 2, "0,0,0,3;3,1;1"), it0 + ":2: experts: 3 twice: expected 2 distinct experts"},
		{"too many experts", line(it0, 2, "0,0,0,3;4;5,1;2;2"), it0 + ":2: experts: 3 experts: expected top_k = 2"},
		{"gpus count", line(it0, 2, "0,0,0,3;4,1"), it0 + ":2: gpus: 1 GPUs: expected one per expert, 2"},
		{"src out of range", line(it0, 2, "0,0,4,3;4,1;2"), it0 + ":2: src_gpu: 4: expected a GPU in [0, 4)"},
		{"layer out of order", line(it0, 6, "1,4,3,3;4,1;2"), it0 + ":6: layer: 1: expected 0 (layers in order, each with tokens 0 to 4)"},
		{"token out of order", line(it0, 3, "0,2,0,3;4,1;2"), it0 + ":3: token: 2: expected 1 (tokens in order)"},
		{"header", line(it1, 1, "layer,token,src,experts,gpus"), it1 + ":1: header: \"layer,token,src,experts,gpus\": expected \"layer,token,src_gpu,experts,gpus\""},
		{"empty file", set(it1, ""), it1 + ": empty file"},
		{"empty line", line(it0, 4, ""), it0 + ":4: empty line"},
		{"truncated", set(it1, RequestsHeader+"\n0,0,0,3;4,1;2\n"), it1 + ":2: ends at layer 0 token 1: expected 2 layers of 5 tokens"},
		{"extra line", func(t *testing.T, dir string) {
			p := filepath.Join(dir, it0)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "2,0,0,3;4,1;2\n"...), 0o644)
		}, it0 + ":12: extra line: expected 2 layers of 5 tokens, which end on line 11"},
		{"missing iteration", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, it1)) },
			it1 + ": missing: config.json names 2 iterations, expected iter_0_requests.csv to iter_1_requests.csv"},
		{"missing config", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, ConfigFile)) }, ConfigFile + ": missing"},
		{"config syntax", edit(ConfigFile, `"top_k": 2,`, `"top_k": 2`), ConfigFile + ":8: invalid character"},
		{"config missing key", edit(ConfigFile, `"hidden": 16,`, ``), ConfigFile + ": hidden: missing"},
		{"config unknown key", edit(ConfigFile, `"hidden": 16,`, `"hidden": 16, "hiden": 3,`), ConfigFile + ":11: hiden: unknown key"},
		{"config not an integer", edit(ConfigFile, `"layers": 2,`, `"layers": 2.5,`), ConfigFile + ":9: layers: 2.5: expected an integer"},
		{"config string", edit(ConfigFile, `"zipf": 1.2,`, `"zipf": "1.2",`), ConfigFile + ":8: zipf: \"1.2\": expected a number"},
		{"config negative seed", edit(ConfigFile, `"seed": 7`, `"seed": -7`), ConfigFile + ":15: seed: -7: expected an integer from 0"},
		{"config top_k > experts", edit(ConfigFile, `"top_k": 2,`, `"top_k": 9,`), ConfigFile + ":7: top_k: 9: expected 1 to 8 experts per token"},
		{"config zero bandwidth", edit(ConfigFile, `"bw_inter_gbps": 50,`, `"bw_inter_gbps": 0,`), ConfigFile + ":13: bw_inter_gbps: 0: expected a bandwidth above 0"},
		{"config trailing data", edit(ConfigFile, "}\n", "}\n{}"), ConfigFile + ":17: invalid character '{' after top-level value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tinyDir(t)
			c.break_(t, dir)
			_, _, err := ReadDir(dir)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !lex.IsInputError(err) {
				t.Errorf("%v is not an input error", err)
			}
			if want := filepath.Join(dir, c.want); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %v\nwant it to start with\n  %s", err, want)
			}
		})
	}
}

// CRLF line ends, a byte-order mark and blank lines at the end read like the plain file.
func TestReadDirLenient(t *testing.T) {
	dir := tinyDir(t)
	cfg, want, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, IterationFile(1))
	b, _ := os.ReadFile(p)
	b = append([]byte("\uFEFF"), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))...)
	b = append(b, "\r\n\n"...)
	os.WriteFile(p, b, 0o644)
	cfg2, got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg2 != cfg || !reflect.DeepEqual(got, want) {
		t.Error("the CRLF file reads differently")
	}
}

// A failure while writing leaves nothing behind: no temporary file, no new file, the old files
// untouched; a complete write replaces them.
func TestWriteDirAtomic(t *testing.T) {
	cfg := tiny()
	cfg.Iters = 3
	iters := mustGenerate(t, cfg)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, IterationFile(0)), []byte("old"), 0o644)
	before := readAll(t, dir)
	failAt2 := func(i int) (Iteration, error) {
		if i == 2 {
			return Iteration{}, errors.New("boom")
		}
		return iters[i], nil
	}
	if err := WriteDirFunc(dir, cfg, failAt2); err == nil || err.Error() != "boom" {
		t.Fatalf("error %v, want boom", err)
	}
	if got := readAll(t, dir); !reflect.DeepEqual(got, before) {
		t.Errorf("after a failed write the folder holds %v", slices.Sorted(mapsKeys(got)))
	}
	// An iteration that disagrees with the config is refused before anything is renamed.
	bad := mustGenerate(t, cfg)
	bad[1].Layers[1].Requests[3].Experts[1] = bad[1].Layers[1].Requests[3].Experts[0]
	err := WriteDir(dir, cfg, bad)
	if err == nil || !strings.Contains(err.Error(), "iteration 1 layer 1 token 3: experts:") {
		t.Errorf("error %v, want one naming iteration 1 layer 1 token 3", err)
	}
	if got := readAll(t, dir); !reflect.DeepEqual(got, before) {
		t.Errorf("after a refused write the folder holds %v", slices.Sorted(mapsKeys(got)))
	}
	bad = mustGenerate(t, cfg)
	bad[0].Layers = bad[0].Layers[:1]
	if err := WriteDir(dir, cfg, bad); err == nil {
		t.Error("an iteration with too few layers was written")
	}
	if err := WriteDir(dir, cfg, iters[:2]); err == nil {
		t.Error("2 iterations were written for a config of 3")
	}
	cfg.TopK = 0
	var pe *ParamError
	if err := WriteDir(dir, cfg, iters); !errors.As(err, &pe) || pe.Flag != "top-k" {
		t.Errorf("invalid config: error %v", err)
	}
	cfg.TopK = 2
	if err := WriteDir(dir, cfg, iters); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	if len(got) != 4 || got[ConfigFile] == "old" || got[IterationFile(0)] == "old" {
		t.Errorf("after a complete write the folder holds %v", slices.Sorted(mapsKeys(got)))
	}
	if _, _, err := ReadDir(dir); err != nil {
		t.Error(err)
	}
}

// The requests of one line too long for any valid line are refused with the line's number.
func TestReadRequestsLongLine(t *testing.T) {
	text := RequestsHeader + "\n" + "0,0,0," + strings.Repeat("1;", 200) + "1,0\n"
	_, err := ReadRequests(strings.NewReader(text), "r.csv", tiny(), 0)
	if err == nil || !strings.HasPrefix(err.Error(), "r.csv:2: line too long") {
		t.Errorf("error %v", err)
	}
}

// FuzzReadRequests: ReadRequests never panics; what it accepts passes the writer's checks and
// reads back the same after WriteRequests. The seeds are testdata/tiny's requests files and
// freshly generated ones.
//
//	go test -run '^$' -fuzz FuzzReadRequests -fuzztime 60s ./workloads/moe
func FuzzReadRequests(f *testing.F) {
	cfg := tiny()
	for _, it := range mustGenerate(f, cfg) {
		var b bytes.Buffer
		if err := WriteRequests(&b, cfg, &it); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
		f.Add(bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte("\r\n")))
		f.Add(b.Bytes()[:b.Len()/2])
	}
	for _, name := range []string{IterationFile(0), IterationFile(1)} { // the files simd moe gen wrote
		data, err := os.ReadFile(filepath.Join("testdata", "tiny", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(""))
	f.Add([]byte(RequestsHeader + "\n0,0,0,1;1,0;0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := ReadRequests(bytes.NewReader(data), "f.csv", cfg, 1)
		if err != nil {
			if !lex.IsInputError(err) {
				t.Fatalf("%v is not an input error", err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteRequests(&b, cfg, &it); err != nil {
			t.Fatalf("accepted a file the writer refuses: %v", err)
		}
		again, err := ReadRequests(&b, "again.csv", cfg, 1)
		if err != nil || !reflect.DeepEqual(again, it) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzParseConfig: config.json is read without panics; an error is a *lex.Error naming the file;
// an accepted config is valid and reads back the same after the writer's encoding.
//
//	go test -run '^$' -fuzz FuzzParseConfig -fuzztime 60s ./workloads/moe
func FuzzParseConfig(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "tiny", ConfigFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	f.Add([]byte(`{"nodes": 1}`))
	f.Add([]byte(`{"nodes":1,"gpus_per_node":1,"experts_per_gpu":1,"seq_len":1073741824,"batch":1,"top_k":1,"zipf":0,"layers":1,"iters":1,"hidden":16777216,"dtype_bytes":64,"bw_inter_gbps":1e308,"bw_intra_gbps":5e-324,"seed":18446744073709551615}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig("config.json", data)
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) || le.File != "config.json" {
				t.Fatalf("error %v is not a *lex.Error naming the file", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.Line < 0 || le.Line > lines {
				t.Fatalf("error %q names line %d of %d", err, le.Line, lines)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		js, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseConfig("again.json", js)
		if err != nil || again != cfg {
			t.Fatalf("round trip: %v\n%s", err, js)
		}
	})
}

// GenerateDir writes Generate's workload as WriteDir does and says what it wrote; an invalid
// config writes nothing.
func TestGenerateDir(t *testing.T) {
	one := tiny()
	one.Iters, one.Zipf = 1, 0
	for _, c := range []struct {
		cfg   Config
		lines string // with DIR for the folder
	}{
		{tiny(), "2 nodes × 2 GPUs, 8 experts (2 per GPU); 2 layers × 5 tokens (5 × 1) per iteration, top-2, Zipf 1.2 (hottest expert 5 on GPU 2, 42.9% of draws), seed 7\n" +
			"wrote DIR/config.json and DIR/iter_0_requests.csv to iter_1_requests.csv (20 requests)\n"},
		{one, "2 nodes × 2 GPUs, 8 experts (2 per GPU); 2 layers × 5 tokens (5 × 1) per iteration, top-2, Zipf 0 (hottest expert 5 on GPU 2, 12.5% of draws), seed 7\n" +
			"wrote DIR/config.json and DIR/iter_0_requests.csv (10 requests)\n"},
	} {
		dir := filepath.Join(t.TempDir(), "w")
		var out bytes.Buffer
		if err := GenerateDir(dir, c.cfg, &out); err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(c.lines, "DIR/", dir+string(filepath.Separator)); out.String() != want {
			t.Errorf("GenerateDir said\n%s\nwant\n%s", out.String(), want)
		}
		if got, want := readAll(t, dir), writeWorkload(t, c.cfg); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: GenerateDir wrote other files than WriteDir of Generate", c.cfg)
		}
	}
	bad := tiny()
	bad.Nodes = 0
	dir := filepath.Join(t.TempDir(), "w")
	var out bytes.Buffer
	var pe *ParamError
	if err := GenerateDir(dir, bad, &out); !errors.As(err, &pe) || pe.Flag != "nodes" {
		t.Errorf("invalid config: error %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) || out.Len() != 0 {
		t.Errorf("invalid config: the folder was created (%v) or something said: %q", err, out.String())
	}
}

// onlyReader hides a reader's size, as a pipe does.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A reader that knows its size gets each layer's buffers at once, bounded by the lines the size
// can hold; the requests are the same as read from one that does not (which grows them), from a
// file, and the bound holds for the shortest lines there are.
func TestReadRequestsSizedAndUnsized(t *testing.T) {
	cfg := tiny()
	var b bytes.Buffer
	if err := WriteRequests(&b, cfg, &mustGenerate(t, cfg)[0]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := ReadRequests(onlyReader{bytes.NewReader(b.Bytes())}, "r.csv", cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		r    io.Reader
	}{{"bytes", bytes.NewReader(b.Bytes())}, {"file", f}} {
		if n, ok := sizeOf(r.r); !ok || n != int64(b.Len()) {
			t.Errorf("%s: size %d, %v; want %d", r.name, n, ok, b.Len())
		}
		got, err := ReadRequests(r.r, "r.csv", cfg, 0)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, or requests differ from the unsized reader's", r.name, err)
		}
	}
	if _, ok := sizeOf(onlyReader{f}); ok {
		t.Error("a reader without a size has one")
	}
	for _, k := range []int{1, 2, 8} {
		line := "0,0,0," + strings.Repeat("1;", k-1) + "1," + strings.Repeat("1;", k-1) + "1\n"
		if len(line) != minRequestLine(k) {
			t.Errorf("top-%d: the shortest line is %d bytes, minRequestLine says %d", k, len(line), minRequestLine(k))
		}
	}
	// A config that promises 2^30 tokens a layer over a file of one line: the layer's buffers
	// are sized by the file, and the file is refused for its missing lines, not by memory.
	big := cfg
	big.SeqLen, big.Batch = 1<<15, 1<<15
	text := RequestsHeader + "\n0,0,0,0;1,0;0\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := big.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRequests(strings.NewReader(text), "r.csv", big, 0); err == nil || !strings.Contains(err.Error(), "ends at layer 0 token 1") {
		t.Errorf("a one-line file for a layer of 2^30 tokens: error %v", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("reading one line allocated %d bytes", grew)
	}
}
