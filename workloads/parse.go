package workloads

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/configs/lex"
)

// recordFields names the tokens of a layer record (§2.3), for error messages.
var recordFields = [...]string{
	"layer name", "dependency",
	"fwd compute time", "fwd comm type", "fwd comm size",
	"ig compute time", "ig comm type", "ig comm size",
	"wg compute time", "wg comm type", "wg comm size",
	"update time", "layer policy",
}

// headerIntKeys are the header keys followed by one integer (§2.2). expert_parallel_npu_group:
// is what AICB's multi-all-reduce writer emits for ep:; SimAI ignores it, simd reads it as ep:.
var headerIntKeys = map[string]string{
	"model_parallel_NPU_group:":  "model_parallel_NPU_group",
	"ep:":                        "ep",
	"expert_parallel_npu_group:": "ep",
	"pp:":                        "pp",
	"vpp:":                       "vpp",
	"ga:":                        "ga",
	"all_gpus:":                  "all_gpus",
	"pp_comm":                    "pp_comm",
	"pp_comm:":                   "pp_comm",
	"DLRM_LAST_BOTTOM_LAYER:":    "DLRM_LAST_BOTTOM_LAYER",
}

// maxLayers bounds the count line: more records than this cannot be a real workload, and the
// bound keeps a hostile count from being trusted for anything.
const maxLayers = 1 << 24

// maxBytes bounds a comm size so that sums and products of sizes stay inside int64.
const maxBytes = 1 << 52

// maxComputeNs bounds a compute or update time (about 52 days in ns), so that one of them in
// picoseconds fits an int64; checkTimes bounds their sum over an iteration.
const maxComputeNs = 1 << 52

// ParseOptions relax the parser.
type ParseOptions struct {
	// AllowShortCount accepts a file that ends cleanly after fewer complete records than its
	// count line announces, keeping the records it holds (with a warning). Some AICB files have
	// such a count line (L65B-M1-C05 announces 839 records and holds 33); SimAI reads past the end
	// of them into uninitialised layers. A record cut off in the middle is always an error.
	AllowShortCount bool
}

// Parse reads a SimAI workload file. Warnings describe input SimAI accepts but simd reads
// differently or finds suspicious; an error is a *lex.Error naming file, line and field.
func Parse(r io.Reader, file string) (*Workload, []*lex.Error, error) {
	return ParseWith(r, file, ParseOptions{})
}

// ParseWith is Parse with options.
func ParseWith(r io.Reader, file string, opt ParseOptions) (*Workload, []*lex.Error, error) {
	p := parser{s: lex.NewScanner(r, file), file: file, opt: opt}
	w, err := p.parse()
	if err == nil && p.s.Err() != nil {
		err = fmt.Errorf("%s: %w", file, p.s.Err())
	}
	if err != nil {
		return nil, p.warnings, err
	}
	return w, p.warnings, nil
}

type parser struct {
	s        *lex.Scanner
	file     string
	opt      ParseOptions
	warnings []*lex.Error
	// Comm types SimAI accepts but that carry no communication (BROADCAST) or no group
	// (ALLREDUCEALLTOALL): reported once each, with a count and the first line.
	odd      map[string]int
	oddLine  map[string]int
	oddOrder []string
}

func (p *parser) warn(line int, field, format string, args ...any) {
	p.warnings = append(p.warnings, lex.Errorf(p.file, line, field, format, args...))
}

func (p *parser) errf(line int, field, format string, args ...any) error {
	return lex.Errorf(p.file, line, field, format, args...)
}

func (p *parser) parse() (*Workload, error) {
	w := &Workload{File: p.file}
	fields, line, ok := p.s.NextLine()
	if !ok || len(fields) == 0 {
		if p.s.Err() != nil {
			return nil, fmt.Errorf("%s: %w", p.file, p.s.Err())
		}
		return nil, p.errf(1, "parallelism policy", "the first line is empty; expected a policy such as HYBRID_TRANSFORMER_FWD_IN_BCKWD")
	}
	if err := p.parseHeader(&w.Header, fields, line); err != nil {
		return nil, err
	}

	countFields, line, ok := p.s.NextLine()
	if !ok || len(countFields) == 0 {
		return nil, p.errf(2, "layer count", "missing: the second line must hold the number of layer records")
	}
	n, err := strconv.ParseInt(countFields[0], 10, 64)
	if err != nil || n < 0 {
		return nil, p.errf(line, "layer count", "%q is not a non-negative integer", countFields[0])
	}
	if n > maxLayers {
		return nil, p.errf(line, "layer count", "%d layer records is more than simd accepts (%d)", n, maxLayers)
	}
	if len(countFields) > 1 {
		p.warn(line, "layer count", "ignoring %q after the count", strings.Join(countFields[1:], " "))
	}

	nfields := 12
	if w.Header.Policy == PolicyHybridCustomized {
		nfields = 13
	}
	w.Layers = make([]Layer, 0, min(int(n), 4096))
	var toks [13]lex.Token
records:
	for k := 0; k < int(n); k++ {
		for f := 0; f < nfields; f++ {
			t, ok := p.s.Next()
			if !ok {
				if f == 0 && p.opt.AllowShortCount {
					p.warn(line, "layer count", "the count line says %d records but the file holds %d; using the %d records it holds", n, k, k)
					n = int64(k)
					break records
				}
				hint := ""
				if f == 0 {
					hint = " (if the count line is wrong and the records are complete, -allow-short-workload reads the records the file holds)"
				}
				return nil, p.errf(p.s.Line(), recordFields[f],
					"layer record %d of %d is missing: the file ends after %d complete records but the count line (line %d) says %d%s", k+1, n, k, line, n, hint)
			}
			toks[f] = t
		}
		l, err := p.parseRecord(toks[:nfields], w.Header.Policy)
		if err != nil {
			return nil, err
		}
		w.Layers = append(w.Layers, l)
	}
	if t, ok := p.s.Next(); ok {
		p.warn(t.Line, "", "ignoring the rest of the file from %q on: the count line says %d records", t.Text, n)
	}
	for _, key := range p.oddOrder {
		switch key {
		case "BROADCAST":
			p.warn(p.oddLine[key], "comm type", "BROADCAST in %d place(s): SimAI does not simulate it and neither does simd (no communication)", p.odd[key])
		default:
			p.warn(p.oddLine[key], "comm type", "%s in %d place(s): SimAI reads it as an all-reduce with no group (the all-reduce-all-to-all collective was never implemented); simd does the same, so it costs nothing", key, p.odd[key])
		}
	}
	if err := p.checkLayerRefs(w); err != nil {
		return nil, err
	}
	if err := w.checkTimes(); err != nil {
		return nil, err
	}
	return w, nil
}

// parseHeader reads line 1 (§2.2). Unlike SimAI, which reads the keys only for the two
// Transformer policies and leaves them uninitialised otherwise, simd reads them for every policy
// and gives absent keys the defaults TP=EP=PP=VPP=GA=1, pp_comm=0.
func (p *parser) parseHeader(h *Header, fields []string, line int) error {
	pol, ok := ParsePolicy(fields[0])
	if !ok {
		names := make([]string, 0, len(policyTokens)-1)
		for _, t := range policyTokens[1:] {
			names = append(names, t)
		}
		return p.errf(line, "parallelism policy", "unknown policy %q; expected one of %s", fields[0], strings.Join(names, ", "))
	}
	*h = Header{Policy: pol, TP: 1, EP: 1, PP: 1, VPP: 1, GA: 1, Present: map[string]bool{}}
	for i := 1; i < len(fields); i++ {
		tok := fields[i]
		if key, ok := headerIntKeys[tok]; ok {
			if i+1 >= len(fields) {
				return p.errf(line, tok, "missing value at the end of the header line")
			}
			i++
			v, err := headerInt(fields[i])
			if err != nil {
				return p.errf(line, tok, "%q is not an integer", fields[i])
			}
			if err := p.setHeaderInt(h, key, tok, v, line); err != nil {
				return err
			}
			if tok == "expert_parallel_npu_group:" {
				p.warn(line, tok, "SimAI ignores this key (it knows only ep:); simd reads it as ep: %d", v)
			}
			continue
		}
		switch tok {
		case "checkpoints:", "checkpoint_initiates:":
			list, next, err := p.headerList(fields, i, line)
			if err != nil {
				return err
			}
			if tok == "checkpoints:" {
				h.Checkpoints = list
			} else {
				h.CheckpointInitiates = list
			}
			h.Present[strings.TrimSuffix(tok, ":")] = true
			i = next
			continue
		}
		// SimAI ignores unknown tokens; so does simd, but says so. A key's value goes with it.
		if strings.HasSuffix(tok, ":") && i+1 < len(fields) {
			p.warn(line, tok, "unknown header key (with value %q) ignored", fields[i+1])
			i++
		} else {
			p.warn(line, tok, "unknown header token ignored")
		}
	}
	if pol == PolicyTransformer || pol == PolicyTransformerFwdInBckwd {
		var missing []string
		for _, k := range []string{"model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus"} {
			if !h.Present[k] {
				missing = append(missing, k+":")
			}
		}
		if len(missing) > 0 {
			p.warn(line, "header", "old-format header without %s (SimAI_analytical crashes on it): using 1 for missing sizes and the GPU count from -g or the topology", strings.Join(missing, " "))
		}
	}
	if h.PP != 1 && h.PPCommBytes == 0 && h.Present["pp"] {
		p.warn(line, "pp_comm", "pp is %d but pp_comm is 0: pipeline communication will cost nothing", h.PP)
	}
	if h.PP == 1 && h.PPCommBytes != 0 {
		p.warn(line, "pp_comm", "pp_comm is %d but pp is 1: there is no pipeline to send it over", h.PPCommBytes)
	}
	return nil
}

// headerInt reads an integer the way SimAI's stoi-based header parser accepts them, including
// AICB's float form of pp_comm ("8388608.0"); a fractional part other than zeros is refused.
func headerInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("not an integer")
	}
	return int64(f), nil
}

func (p *parser) setHeaderInt(h *Header, key, tok string, v int64, line int) error {
	h.Present[key] = true
	if key == "pp_comm" {
		if v < 0 || v > maxBytes {
			return p.errf(line, tok, "%d is not a valid byte count", v)
		}
		h.PPCommBytes = uint64(v)
		return nil
	}
	if key == "DLRM_LAST_BOTTOM_LAYER" {
		if v < 0 || v > maxLayers {
			return p.errf(line, tok, "%d is not a layer index", v)
		}
		h.DLRMLastBottomLayer = int(v)
		return nil
	}
	if v < 1 || v > 1<<24 {
		return p.errf(line, tok, "%d must be between 1 and %d", v, 1<<24)
	}
	switch key {
	case "model_parallel_NPU_group":
		h.TP = int(v)
	case "ep":
		h.EP = int(v)
	case "pp":
		h.PP = int(v)
	case "vpp":
		h.VPP = int(v)
	case "ga":
		h.GA = int(v)
	case "all_gpus":
		h.AllGPUs = int(v)
	}
	return nil
}

// headerList reads "key: K l1 .. lK" starting at fields[i] (the key); it returns the list and
// the index of its last token. SimAI reads the first listed layer K times (a bug); simd reads
// the K layers listed.
func (p *parser) headerList(fields []string, i, line int) ([]int, int, error) {
	tok := fields[i]
	if i+1 >= len(fields) {
		return nil, i, p.errf(line, tok, "missing count at the end of the header line")
	}
	k, err := strconv.Atoi(fields[i+1])
	if err != nil || k < 0 {
		return nil, i, p.errf(line, tok, "count %q is not a non-negative integer", fields[i+1])
	}
	if i+1+k >= len(fields) {
		return nil, i, p.errf(line, tok, "count %d but only %d layer indices follow", k, len(fields)-i-2)
	}
	list := make([]int, k)
	for j := range k {
		v, err := strconv.Atoi(fields[i+2+j])
		if err != nil || v < 0 {
			return nil, i, p.errf(line, tok, "layer index %q is not a non-negative integer", fields[i+2+j])
		}
		list[j] = v
	}
	return list, i + 1 + k, nil
}

// checkLayerRefs checks header references to layer indices against the layer count.
func (p *parser) checkLayerRefs(w *Workload) error {
	n := len(w.Layers)
	refs := []struct {
		key  string
		list []int
	}{{"checkpoints:", w.Header.Checkpoints}, {"checkpoint_initiates:", w.Header.CheckpointInitiates}}
	for _, r := range refs {
		for _, v := range r.list {
			if v >= n {
				return p.errf(1, r.key, "layer %d does not exist (the workload has %d layers)", v, n)
			}
		}
	}
	if h := w.Header; (h.Policy == PolicyDLRM || h.Policy == PolicyDLRMEnhanced) && h.DLRMLastBottomLayer >= n {
		return p.errf(1, "DLRM_LAST_BOTTOM_LAYER:", "layer %d does not exist (the workload has %d layers)", h.DLRMLastBottomLayer, n)
	}
	return nil
}

// parseRecord reads one layer record's tokens.
func (p *parser) parseRecord(t []lex.Token, pol Policy) (Layer, error) {
	l := Layer{Name: t[0].Text, Line: t[0].Line}
	dep, err := strconv.Atoi(t[1].Text)
	if err != nil {
		return l, p.errf(t[1].Line, "dependency", "%q is not an integer (layer %q)", t[1].Text, l.Name)
	}
	l.Dependency = dep
	for ph := Fwd; ph <= WG; ph++ {
		base := 2 + 3*int(ph)
		c, err := p.uintField(t[base], recordFields[base], l.Name, maxComputeNs)
		if err != nil {
			return l, err
		}
		comm, err := p.decodeComm(t[base+1], ph, l.Name)
		if err != nil {
			return l, err
		}
		size, err := p.uintField(t[base+2], recordFields[base+2], l.Name, maxBytes)
		if err != nil {
			return l, err
		}
		comm.Bytes = size
		l.Phases[ph] = Step{ComputeNs: c, Comm: comm}
	}
	u, err := p.uintField(t[11], recordFields[11], l.Name, maxComputeNs)
	if err != nil {
		return l, err
	}
	l.UpdateTimeNs = u
	if pol == PolicyHybridCustomized {
		sp, ok := ParsePolicy(t[12].Text)
		if !ok {
			return l, p.errf(t[12].Line, "layer policy", "unknown policy %q (layer %q)", t[12].Text, l.Name)
		}
		l.Policy = sp
	}
	return l, nil
}

func (p *parser) uintField(t lex.Token, field, layer string, limit uint64) (uint64, error) {
	v, err := strconv.ParseUint(t.Text, 10, 64)
	if err != nil {
		if strings.HasPrefix(t.Text, "-") {
			return 0, p.errf(t.Line, field, "%s is negative (layer %q)", t.Text, layer)
		}
		return 0, p.errf(t.Line, field, "%q is not a whole non-negative number (layer %q)", t.Text, layer)
	}
	if v > limit {
		return 0, p.errf(t.Line, field, "%d is larger than simd accepts (%d) (layer %q)", v, limit, layer)
	}
	return v, nil
}

// commBases are the comm-type prefixes SimAI decodes, in its matching order (§2.4).
var commBases = []struct {
	name string
	op   ccl.Op
}{
	{"ALLREDUCE", ccl.OpAllReduce},
	{"ALLTOALL", ccl.OpAllToAll},
	{"ALLGATHER", ccl.OpAllGather},
	{"REDUCESCATTER", ccl.OpReduceScatter},
}

// decodeComm maps a comm-type token to a collective and a group (§2.4): the prefix names the
// collective, the suffix the group; a plain type is TP in the fwd and ig columns and DP in the wg
// column. NONE and BROADCAST mean no communication. simd refuses tokens SimAI would silently
// turn into "no communication" or into a collective without a group.
func (p *parser) decodeComm(t lex.Token, ph Phase, layer string) (Comm, error) {
	tok := t.Text
	c := Comm{Type: tok, Op: ccl.OpNone, Group: ccl.GroupNone}
	switch tok {
	case "NONE":
		return c, nil
	case "BROADCAST":
		p.noteOdd(tok, t.Line)
		return c, nil
	case "ALLREDUCEALLTOALL", "ALLREDUCEALLTOALL_EP", "ALLREDUCEALLTOALL_DP_EP":
		// Prefix ALLREDUCE matches first and the exact group names do not: All_Reduce, group NONE.
		p.noteOdd("ALLREDUCEALLTOALL", t.Line)
		c.Op = ccl.OpAllReduce
		return c, nil
	}
	for _, b := range commBases {
		suffix, ok := strings.CutPrefix(tok, b.name)
		if !ok {
			continue
		}
		switch suffix {
		case "":
			c.Group = ccl.GroupTP
			if ph == WG {
				c.Group = ccl.GroupDP
			}
		case "_EP":
			c.Group = ccl.GroupEP
		case "_DP_EP":
			c.Group = ccl.GroupDPEP
		default:
			continue
		}
		c.Op = b.op
		return c, nil
	}
	return c, p.errf(t.Line, ph.String()+" comm type",
		"unknown comm type %q (layer %q); expected NONE, BROADCAST, or ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, each optionally with _EP or _DP_EP", tok, layer)
}

func (p *parser) noteOdd(key string, line int) {
	if p.odd == nil {
		p.odd, p.oddLine = map[string]int{}, map[string]int{}
	}
	if p.odd[key] == 0 {
		p.oddLine[key] = line
		p.oddOrder = append(p.oddOrder, key)
	}
	p.odd[key]++
}
