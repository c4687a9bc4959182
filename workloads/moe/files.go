package moe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"simd/configs/lex"
)

// A workload folder holds:
//
//	config.json             the Config, indented, keys in the order of its fields
//	iter_<i>_requests.csv   one per iteration i = 0..Iters-1
//
// A requests file starts with the header line RequestsHeader, then has one line per token of
// each layer, layers in order and tokens 0..Tokens()-1 in order within a layer:
//
//	layer,token,src_gpu,experts,gpus
//	0,0,3,12;40,6;20
//
// experts are the token's TopK distinct expert ids in [0, Experts()) and gpus the GPU of each,
// expert / ExpertsPerGPU, both separated by ';'. Numbers are decimal. CRLF line ends and a
// UTF-8 byte-order mark are accepted.

// ConfigFile is the name of a workload folder's parameters.
const ConfigFile = "config.json"

// RequestsHeader is the first line of a requests file.
const RequestsHeader = "layer,token,src_gpu,experts,gpus"

// IterationFile is the name of iteration i's requests file.
func IterationFile(i int) string { return "iter_" + strconv.Itoa(i) + "_requests.csv" }

// WriteDir writes cfg and iters (one per iteration, len(iters) == cfg.Iters) to dir, which is
// created if needed. See WriteDirFunc.
func WriteDir(dir string, cfg Config, iters []Iteration) error {
	if len(iters) != cfg.Iters {
		return fmt.Errorf("moe: %d iterations for a config of %d", len(iters), cfg.Iters)
	}
	return WriteDirFunc(dir, cfg, func(i int) (Iteration, error) { return iters[i], nil })
}

// WriteDirFunc writes cfg and the iterations iteration(0), …, iteration(cfg.Iters-1) to dir,
// holding one iteration at a time. Every file is written under a temporary name first; only
// when all of them are written are they renamed into place, the iterations first and
// config.json last (an older config.json is removed before the first rename), so a failure
// leaves no half-written file and a folder whose config.json exists is complete. Iteration files
// of an earlier, longer workload in the same folder are left alone; config.json says how many
// are current. The iterations must agree with cfg (ReadDir's checks); an invalid cfg gives its
// *ParamError.
func WriteDirFunc(dir string, cfg Config, iteration func(i int) (Iteration, error)) (err error) {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the workload folder: %w", err)
	}
	var temps, finals []string
	defer func() {
		if err != nil {
			for _, t := range temps {
				os.Remove(t)
			}
		}
	}()
	for i := range cfg.Iters {
		it, err := iteration(i)
		if err != nil {
			return err
		}
		if it.Index != i {
			return fmt.Errorf("moe: iteration %d has index %d", i, it.Index)
		}
		final := filepath.Join(dir, IterationFile(i))
		tmp, err := writeTemp(final, func(w io.Writer) error { return WriteRequests(w, cfg, &it) })
		if tmp != "" {
			temps = append(temps, tmp)
		}
		if err != nil {
			return err
		}
		finals = append(finals, final)
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	final := filepath.Join(dir, ConfigFile)
	tmp, err := writeTemp(final, func(w io.Writer) error { _, err := w.Write(js); return err })
	if tmp != "" {
		temps = append(temps, tmp)
	}
	if err != nil {
		return err
	}
	finals = append(finals, final)
	if err := os.Remove(final); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing %s: %w", final, err)
	}
	for k, t := range temps {
		if err := os.Rename(t, finals[k]); err != nil {
			return fmt.Errorf("writing %s: %w", finals[k], err)
		}
	}
	return nil
}

// GenerateDir is simd moe gen: it draws the workload of cfg (see Generate) and writes it to dir
// (see WriteDirFunc), one iteration at a time so that only one is held in memory, then says on
// w what it wrote, in two lines: the workload's shape with its hottest expert (rank 0 of
// HotExperts), the GPU that hosts it and its share of the draws, and the files with the number
// of requests. An invalid cfg gives its *ParamError, with nothing written. Writing to w cannot
// fail the call: the workload is complete by then.
func GenerateDir(dir string, cfg Config, w io.Writer) error {
	g, err := NewGenerator(cfg)
	if err != nil {
		return err
	}
	if err := WriteDirFunc(dir, cfg, func(i int) (Iteration, error) { return g.Iteration(i), nil }); err != nil {
		return err
	}
	hot := cfg.HotExperts()[0]
	fmt.Fprintf(w, "%d nodes × %d GPUs, %d experts (%d per GPU); %d layers × %d tokens (%d × %d) per iteration, top-%d, Zipf %g (hottest expert %d on GPU %d, %.1f%% of draws), seed %d\n",
		cfg.Nodes, cfg.GPUsPerNode, cfg.Experts(), cfg.ExpertsPerGPU, cfg.Layers, cfg.Tokens(), cfg.SeqLen, cfg.Batch,
		cfg.TopK, cfg.Zipf, hot, cfg.ExpertGPU(hot), 100*ZipfProbabilities(cfg.Experts(), cfg.Zipf)[0], cfg.Seed)
	files := filepath.Join(dir, IterationFile(0))
	if cfg.Iters > 1 {
		files += " to " + IterationFile(cfg.Iters-1)
	}
	fmt.Fprintf(w, "wrote %s and %s (%d requests)\n", filepath.Join(dir, ConfigFile), files, int64(cfg.Iters)*int64(cfg.Layers)*int64(cfg.Tokens()))
	return nil
}

// writeTemp writes a temporary file next to final and returns its name (also on error, when it
// was created).
func writeTemp(final string, write func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", final, err)
	}
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f.Name(), fmt.Errorf("writing %s: %w", final, err)
	}
	return f.Name(), nil
}

// WriteRequests writes one iteration as a requests file. It checks the iteration against cfg
// first, request by request, as ReadRequests does, so that what it writes reads back.
func WriteRequests(w io.Writer, cfg Config, it *Iteration) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(it.Layers) != cfg.Layers {
		return fmt.Errorf("moe: iteration %d has %d layers, the config %d", it.Index, len(it.Layers), cfg.Layers)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(RequestsHeader + "\n")
	var dup dupCheck
	buf := make([]byte, 0, 256)
	for l := range it.Layers {
		layer := &it.Layers[l]
		if layer.Index != l || len(layer.Requests) != cfg.Tokens() {
			return fmt.Errorf("moe: iteration %d layer %d: index %d and %d requests, expected index %d and %d requests",
				it.Index, l, layer.Index, len(layer.Requests), l, cfg.Tokens())
		}
		for t := range layer.Requests {
			rq := &layer.Requests[t]
			if field, msg := checkRequest(&cfg, rq, t, &dup); msg != "" {
				return fmt.Errorf("moe: iteration %d layer %d token %d: %s: %s", it.Index, l, t, field, msg)
			}
			buf = strconv.AppendInt(buf[:0], int64(l), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(rq.Token), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(rq.Src), 10)
			for _, list := range [2][]int{rq.Experts, rq.GPUs} {
				for j, v := range list {
					if j == 0 {
						buf = append(buf, ',')
					} else {
						buf = append(buf, ';')
					}
					buf = strconv.AppendInt(buf, int64(v), 10)
				}
			}
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// checkRequest checks the request of token t against cfg and returns the field at fault and
// what was expected, or msg "".
func checkRequest(cfg *Config, rq *Request, t int, dup *dupCheck) (field, msg string) {
	E, K := cfg.Experts(), cfg.TopK
	switch {
	case rq.Token != t:
		return "token", fmt.Sprintf("%d: expected %d (tokens in order)", rq.Token, t)
	case rq.Src < 0 || rq.Src >= cfg.GPUs():
		return "src_gpu", fmt.Sprintf("%d: expected a GPU in [0, %d)", rq.Src, cfg.GPUs())
	case len(rq.Experts) != K:
		return "experts", fmt.Sprintf("%d experts: expected top_k = %d", len(rq.Experts), K)
	case len(rq.GPUs) != K:
		return "gpus", fmt.Sprintf("%d GPUs: expected one per expert, %d", len(rq.GPUs), K)
	}
	dup.reset(E, K)
	for j, e := range rq.Experts {
		if e < 0 || e >= E {
			return "experts", fmt.Sprintf("%d: expected an expert in [0, %d)", e, E)
		}
		if dup.seen(e) {
			return "experts", fmt.Sprintf("%d twice: expected %d distinct experts", e, K)
		}
		if g := rq.GPUs[j]; g != e/cfg.ExpertsPerGPU {
			return "gpus", fmt.Sprintf("%d for expert %d: expected its GPU, %d / %d = %d", g, e, e, cfg.ExpertsPerGPU, e/cfg.ExpertsPerGPU)
		}
	}
	return "", ""
}

// dupCheck finds a repeated expert in one token: by comparing with the earlier ones for a small
// top-k, with a table stamped per token for a large one.
type dupCheck struct {
	small  []int
	stamp  []uint64
	now    uint64
	bigSet bool
}

const dupSmall = 32

func (d *dupCheck) reset(experts, k int) {
	d.small = d.small[:0]
	d.bigSet = k > dupSmall
	if d.bigSet {
		if len(d.stamp) != experts {
			d.stamp, d.now = make([]uint64, experts), 0
		}
		d.now++
	}
}

func (d *dupCheck) seen(e int) bool {
	if d.bigSet {
		if d.stamp[e] == d.now {
			return true
		}
		d.stamp[e] = d.now
		return false
	}
	for _, x := range d.small {
		if x == e {
			return true
		}
	}
	d.small = append(d.small, e)
	return false
}

// ReadDir reads a workload folder written by WriteDir: its config.json, then every iteration's
// requests file. Bad input is a *lex.Error naming the file, the line and the field.
func ReadDir(dir string) (Config, []Iteration, error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return Config{}, nil, err
	}
	iters := make([]Iteration, cfg.Iters)
	for i := range iters {
		if iters[i], err = ReadIteration(dir, cfg, i); err != nil {
			return Config{}, nil, err
		}
	}
	return cfg, iters, nil
}

// configKeys are config.json's keys in the order of Config's fields, with where each goes.
func configKeys(c *Config) []struct {
	key string
	ptr any
} {
	return []struct {
		key string
		ptr any
	}{
		{"nodes", &c.Nodes}, {"gpus_per_node", &c.GPUsPerNode}, {"experts_per_gpu", &c.ExpertsPerGPU},
		{"seq_len", &c.SeqLen}, {"batch", &c.Batch}, {"top_k", &c.TopK}, {"zipf", &c.Zipf},
		{"layers", &c.Layers}, {"iters", &c.Iters}, {"hidden", &c.Hidden}, {"dtype_bytes", &c.DtypeBytes},
		{"bw_inter_gbps", &c.BWInterGBps}, {"bw_intra_gbps", &c.BWIntraGBps}, {"seed", &c.Seed},
	}
}

// maxConfigBytes bounds what ReadConfig reads; a real config.json is a few hundred bytes.
const maxConfigBytes = 1 << 20

// ReadConfig reads and validates dir/config.json. Every key must be present, once, and no
// other.
func ReadConfig(dir string) (Config, error) {
	path := filepath.Join(dir, ConfigFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, lex.Errorf(path, 0, "", "missing: expected the workload's parameters (simd moe gen writes them)")
	}
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return Config{}, lex.Errorf(path, 0, "", "larger than %d bytes: expected a small JSON object", maxConfigBytes)
	}
	return parseConfig(path, data)
}

func parseConfig(path string, data []byte) (Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = lineAt(data, int(se.Offset))
		}
		return Config{}, lex.Errorf(path, line, "", "%v: expected a JSON object of the workload's parameters", jsonMsg(err))
	}
	var cfg Config
	known := map[string]bool{}
	for _, k := range configKeys(&cfg) {
		known[k.key] = true
		v, ok := raw[k.key]
		if !ok {
			return Config{}, lex.Errorf(path, 0, k.key, "missing")
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		if err := dec.Decode(k.ptr); err != nil {
			what := "an integer"
			switch k.ptr.(type) {
			case *float64:
				what = "a number"
			case *uint64:
				what = "an integer from 0 to 18446744073709551615"
			}
			return Config{}, lex.Errorf(path, keyLine(data, k.key), k.key, "%s: expected %s", v, what)
		}
	}
	if len(raw) != len(known) {
		var extra []string
		for k := range raw {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		first := extra[0]
		for _, k := range extra {
			first = min(first, k) // deterministic choice
		}
		return Config{}, lex.Errorf(path, keyLine(data, first), first, "unknown key: expected only %s", strings.Join(keyNames(), ", "))
	}
	if err := cfg.Validate(); err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			return Config{}, lex.Errorf(path, keyLine(data, pe.Key), pe.Key, "%s: %s", pe.Value, pe.Msg)
		}
		return Config{}, err
	}
	return cfg, nil
}

func keyNames() []string {
	var c Config
	var out []string
	for _, k := range configKeys(&c) {
		out = append(out, k.key)
	}
	return out
}

func jsonMsg(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// keyLine is the line where "key" first appears in data, or 0.
func keyLine(data []byte, key string) int {
	if i := bytes.Index(data, []byte(`"`+key+`"`)); i >= 0 {
		return lineAt(data, i)
	}
	return 0
}

// ReadIteration reads iteration i of the workload in dir, whose config is cfg.
func ReadIteration(dir string, cfg Config, i int) (Iteration, error) {
	path := filepath.Join(dir, IterationFile(i))
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Iteration{}, lex.Errorf(path, 0, "", "missing: %s names %d iterations, expected %s to %s",
			ConfigFile, cfg.Iters, IterationFile(0), IterationFile(cfg.Iters-1))
	}
	if err != nil {
		return Iteration{}, err
	}
	defer f.Close()
	return ReadRequests(f, path, cfg, i)
}

// ReadRequests reads one requests file (name is used in errors) as iteration index of a
// workload whose config is cfg. It streams: the text is not held, only the requests. Bad input
// is a *lex.Error naming the file, the line and the field.
func ReadRequests(r io.Reader, name string, cfg Config, index int) (Iteration, error) {
	if err := cfg.Validate(); err != nil {
		return Iteration{}, err
	}
	T, K, L := cfg.Tokens(), cfg.TopK, cfg.Layers
	sc := bufio.NewScanner(r)
	// A line is at most five numbers of 20 digits, their commas and 2K list entries. The
	// scanner reads 64 KiB at a time whatever that bound (a buffer of one line's bound read a
	// 21 MB file 464 bytes a system call), so next checks the bound itself.
	maxLine := 128 + 2*K*21
	sc.Buffer(make([]byte, 0, 64<<10), max(maxLine, 64<<10))
	line := 0
	bad := func(field, format string, args ...any) (Iteration, error) {
		return Iteration{}, lex.Errorf(name, line, field, format, args...)
	}
	tooLong := func() (Iteration, error) {
		return bad("", "line too long: expected %d experts and their GPUs", K)
	}
	// next returns the next line without its end, valid until the following call: the lines
	// are parsed where the scanner holds them, not copied.
	next := func() ([]byte, bool) {
		if !sc.Scan() {
			return nil, false
		}
		line++
		s := sc.Bytes()
		if line == 1 {
			s = bytes.TrimPrefix(s, []byte("\uFEFF"))
		}
		return bytes.TrimSuffix(s, []byte("\r")), true
	}
	scanErr := func() (Iteration, error) {
		if errors.Is(sc.Err(), bufio.ErrTooLong) {
			line++
			return tooLong()
		}
		return Iteration{}, fmt.Errorf("reading %s: %w", name, sc.Err())
	}
	hdr, ok := next()
	if !ok {
		if sc.Err() != nil {
			return scanErr()
		}
		return bad("", "empty file: expected the header %q", RequestsHeader)
	}
	if string(hdr) != RequestsHeader {
		return bad("header", "%q: expected %q", hdr, RequestsHeader)
	}
	it := Iteration{Index: index, Layers: make([]Layer, 0, min(L, 1<<10))}
	var (
		reqs    []Request
		experts []int
		gpus    []int
		dup     dupCheck
		rq      Request
		layer   int // the layer and token the next line must hold
		token   int
	)
	// Buffers grow with what the file holds rather than what config.json promises: where the
	// reader knows its size, a layer holds at most as many requests as lines of the shortest
	// form fit in it, and gets them at once (growing by doubling cost a 786,432-line file 0.45
	// s of 0.95, the copies and the collector's scans of the pointers in them); otherwise at
	// most 4,096 at first.
	perLayer := min(T, 1<<12)
	if n, ok := sizeOf(r); ok {
		perLayer = int(min(n/int64(minRequestLine(K))+1, int64(T)))
	}
	startLayer := func() {
		reqs = make([]Request, 0, perLayer)
		experts = make([]int, 0, perLayer*K)
		gpus = make([]int, 0, perLayer*K)
	}
	startLayer()
	for {
		s, ok := next()
		if !ok {
			break
		}
		if len(s) > maxLine {
			return tooLong()
		}
		if layer == L {
			if len(s) == 0 {
				continue // blank lines at the end
			}
			return bad("", "extra line: expected %d layers of %d tokens, which end on line %d", L, T, line-1)
		}
		if n := bytes.Count(s, []byte(",")) + 1; n != 5 {
			if len(s) == 0 {
				return bad("", "empty line: expected %s", RequestsHeader)
			}
			return bad("", "%d fields: expected 5 separated by ',' (%s)", n, RequestsHeader)
		}
		var fields [5][]byte
		rest := s
		for j := range 4 {
			fields[j], rest, _ = bytes.Cut(rest, []byte(","))
		}
		fields[4] = rest
		l, ok := parseCount(fields[0])
		if !ok {
			return bad("layer", "%q: expected a number", fields[0])
		}
		if l != layer {
			return bad("layer", "%d: expected %d (layers in order, each with tokens 0 to %d)", l, layer, T-1)
		}
		t, ok := parseCount(fields[1])
		if !ok {
			return bad("token", "%q: expected a number", fields[1])
		}
		src, ok := parseCount(fields[2])
		if !ok {
			return bad("src_gpu", "%q: expected a number", fields[2])
		}
		e0, g0 := len(experts), len(gpus)
		for j, name := range [2]string{"experts", "gpus"} {
			list := &experts
			if j == 1 {
				list = &gpus
			}
			var entry []byte
			if *list, entry, ok = appendList(*list, fields[3+j]); !ok {
				if len(entry) == 0 {
					return bad(name, "%q has an empty entry: expected %d numbers separated by ';'", fields[3+j], K)
				}
				return bad(name, "%q: expected a number", entry)
			}
		}
		rq = Request{Token: t, Src: src, Experts: experts[e0:], GPUs: gpus[g0:]}
		if f, msg := checkRequest(&cfg, &rq, token, &dup); msg != "" {
			return bad(f, "%s", msg)
		}
		reqs = append(reqs, Request{Token: t, Src: src})
		token++
		if token == T {
			for j := range reqs {
				reqs[j].Experts = experts[j*K : (j+1)*K : (j+1)*K]
				reqs[j].GPUs = gpus[j*K : (j+1)*K : (j+1)*K]
			}
			it.Layers = append(it.Layers, Layer{Index: layer, Requests: reqs})
			layer, token = layer+1, 0
			if layer < L {
				startLayer()
			}
		}
	}
	if sc.Err() != nil {
		return scanErr()
	}
	if layer < L {
		return bad("", "ends at layer %d token %d: expected %d layers of %d tokens", layer, token, L, T)
	}
	return it, nil
}

// parseCount reads a decimal number of at most 18 digits (no sign).
func parseCount[S ~string | ~[]byte](s S) (int, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// appendList appends the ';'-separated numbers of s to dst; on a bad entry it returns that
// entry and false.
func appendList(dst []int, s []byte) ([]int, []byte, bool) {
	for {
		entry, rest, more := bytes.Cut(s, []byte(";"))
		v, ok := parseCount(entry)
		if !ok {
			return dst, entry, false
		}
		dst = append(dst, v)
		if !more {
			return dst, nil, true
		}
		s = rest
	}
}

// minRequestLine is the fewest bytes a line of a requests file takes with top-k K: three
// one-digit numbers, four commas, two lists of K one-digit entries and K−1 semicolons, and the
// line's end.
func minRequestLine(K int) int {
	return 3 + 4 + 2*(2*K-1) + 1
}

// sizeOf is how many bytes reader r holds, where it can tell (a file, a bytes or strings
// reader).
func sizeOf(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size(), true
		}
	case interface{ Len() int }:
		return int64(v.Len()), true
	}
	return 0, false
}
