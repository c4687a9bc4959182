package topo

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"simd/configs/lex"
	"simd/configs/units"
	"simd/engine"
)

// headerFields are the names of the six header fields, as errors call them.
var headerFields = [6]string{"node_num", "gpus_per_server", "nvswitch_num", "switch_num", "link_num", "gpu_type"}

const headerHelp = "node_num gpus_per_server nvswitch_num switch_num link_num gpu_type"

// maxInterned bounds the table of distinct link field texts Parse shares between links.
const maxInterned = 1 << 12

// ReadFile reads the SimAI topology file at path (Parse); flag names the option that gave the
// path when the file cannot be opened, as in "-n: open x: no such file or directory". Every
// error is an input error: a lex.InputError, or Parse's *lex.Error.
func ReadFile(path, flag string) (*Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, lex.BadInputf("%s: %v", flag, err)
	}
	defer f.Close()
	t, err := Parse(f, path)
	if err != nil {
		return nil, lex.BadInput(err)
	}
	return t, nil
}

// Parse reads a SimAI topology file from r; file names it in errors. Bad input is reported as a
// *lex.Error naming the file, the line of the offending token (of the last token, when the file
// ends too early; of the header's link_num when links are missing) and the field: "header
// node_num" ... "header gpu_type", "nvswitch id list", "switch id list", or "link N src",
// "link N dst", "link N rate", "link N delay", "link N error_rate" with N counted from 1 ("link
// N" alone for an unexpected link after the last one, or for a link that joins the same two
// nodes as an earlier one). A GPU that reaches no other GPU over the links (when there are
// several) is refused too, naming the GPU and the lines of its links, without a field (see
// CheckStructure). A failure to read r is returned wrapped, not as a *lex.Error.
//
// Parse checks the header against MaxNodes and MaxLinks before it allocates anything and grows
// the link list as links arrive, so memory follows the size of the input, not what its header
// claims (apart from one byte per announced node).
func Parse(r io.Reader, file string) (*Topology, error) {
	p := &parser{s: lex.NewScanner(r, file), file: file}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	return t, nil
}

type parser struct {
	s        *lex.Scanner
	file     string
	lastLine int // line of the last token read
	linkLine int // line of the src of the link being read
	tokens   int // tokens read so far

	rates  map[string]rateVal
	delays map[string]delayVal
	errs   map[string]errVal
}

type rateVal struct {
	text string
	v    float64
}

type delayVal struct {
	text string
	v    engine.Time
}

type errVal struct {
	text string
	v    float64
}

func (p *parser) errf(line int, field, format string, args ...any) error {
	return lex.Errorf(p.file, line, field, format, args...)
}

// next returns the next token. At the end of the input it returns ok false, and err is set if
// reading failed.
func (p *parser) next() (tok lex.Token, ok bool, err error) {
	tok, ok = p.s.Next()
	if !ok {
		if e := p.s.Err(); e != nil {
			return tok, false, fmt.Errorf("%s: %w", p.file, e)
		}
		return tok, false, nil
	}
	p.lastLine = tok.Line
	p.tokens++
	return tok, true, nil
}

// eofLine is the line an error about a missing token names: the line of the last token read,
// or the last line of the input when there was none.
func (p *parser) eofLine() int {
	if p.lastLine > 0 {
		return p.lastLine
	}
	return p.s.Line()
}

func (p *parser) parse() (*Topology, error) {
	// Header.
	var hdr [5]int
	var hdrLine [6]int
	for i := range hdr {
		tok, ok, err := p.next()
		if err != nil {
			return nil, err
		}
		field := "header " + headerFields[i]
		if !ok {
			return nil, p.headerEOF(i)
		}
		hdrLine[i] = tok.Line
		v, err := strconv.Atoi(tok.Text)
		if err != nil {
			return nil, p.errf(tok.Line, field, "expected a non-negative integer, found %q", tok.Text)
		}
		if v < 0 {
			return nil, p.errf(tok.Line, field, "%d is negative (expected a non-negative integer)", v)
		}
		switch i {
		case 0:
			if v > MaxNodes {
				return nil, p.errf(tok.Line, field, "%d nodes are more than simd supports (at most %d)", v, MaxNodes)
			}
		case 1:
			if v < 1 {
				return nil, p.errf(tok.Line, field, "%d GPUs per server (expected at least 1)", v)
			}
		case 4:
			if v > MaxLinks {
				return nil, p.errf(tok.Line, field, "%d links are more than simd supports (at most %d)", v, MaxLinks)
			}
		}
		hdr[i] = v
	}
	tok, ok, err := p.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, p.headerEOF(5)
	}
	hdrLine[5] = tok.Line
	gpuType := tok.Text

	nodeNum, gps, nvsNum, swNum, linkNum := hdr[0], hdr[1], hdr[2], hdr[3], hdr[4]
	if nvsNum > nodeNum || swNum > nodeNum-nvsNum {
		return nil, p.errf(hdrLine[0], "header node_num",
			"node_num %d is less than nvswitch_num %d + switch_num %d", nodeNum, nvsNum, swNum)
	}
	if nodeNum == nvsNum+swNum {
		return nil, p.errf(hdrLine[0], "header node_num",
			"node_num %d = nvswitch_num %d + switch_num %d leaves no GPUs", nodeNum, nvsNum, swNum)
	}

	t := &Topology{
		GPUsPerServer: gps,
		GPUType:       gpuType,
		Kinds:         make([]NodeKind, nodeNum),
		NVSwitches:    make([]int32, 0, min(nvsNum, 1<<12)),
		Switches:      make([]int32, 0, min(swNum, 1<<12)),
		Links:         make([]Link, 0, min(linkNum, 1<<12)),
	}

	// Line 2: the NVSwitch ids, then the switch ids.
	nIDs := nvsNum + swNum
	for k := 0; k < nIDs; k++ {
		kind, field := NVSwitch, "nvswitch id list"
		if k >= nvsNum {
			kind, field = Switch, "switch id list"
		}
		tok, ok, err := p.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, p.errf(p.eofLine(), field,
				"the file ends after %d of the %d ids the header announces (nvswitch_num %d + switch_num %d)",
				k, nIDs, nvsNum, swNum)
		}
		id, err := p.nodeID(tok, field, nodeNum)
		if err != nil {
			return nil, err
		}
		if t.Kinds[id] != GPU {
			first := "an NVSwitch"
			if t.Kinds[id] == Switch {
				first = "a switch"
			}
			return nil, p.errf(tok.Line, field, "node %d is listed twice (first as %s)", id, first)
		}
		t.Kinds[id] = kind
		if kind == NVSwitch {
			t.NVSwitches = append(t.NVSwitches, id)
		} else {
			t.Switches = append(t.Switches, id)
		}
	}

	// Links.
	p.rates = make(map[string]rateVal)
	p.delays = make(map[string]delayVal)
	p.errs = make(map[string]errVal)
	lines := make([]int32, 0, min(linkNum, 1<<12)) // the line of each link's src
	for i := 1; i <= linkNum; i++ {
		l, line, err := p.link(i, nodeNum, linkNum, hdrLine[4])
		if err != nil {
			return nil, err
		}
		t.Links = append(t.Links, l)
		lines = append(lines, int32(line))
	}

	// Nothing may follow the last link.
	tok, ok, err = p.next()
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, p.errf(tok.Line, fmt.Sprintf("link %d", linkNum+1),
			"the header says %d links, but the file goes on with %q (expected the end of the file)", linkNum, tok.Text)
	}
	if e := t.checkStructure(); e != nil {
		lineOf := func(i int) int { return int(lines[i]) }
		if e.Link >= 0 {
			return nil, p.errf(lineOf(e.Link), fmt.Sprintf("link %d", e.Link+1), "%s", e.message(lineOf))
		}
		line := 0
		if len(e.GPULinks) > 0 {
			line = lineOf(e.GPULinks[0])
		}
		return nil, p.errf(line, "", "%s", e.message(lineOf))
	}
	return t, nil
}

// headerEOF is the error for a file that ends before header field i.
func (p *parser) headerEOF(i int) error {
	field := "header " + headerFields[i]
	if p.tokens == 0 {
		return p.errf(p.eofLine(), field, "the file is empty (expected the header: %s)", headerHelp)
	}
	return p.errf(p.eofLine(), field, "the header ends after %d of its 6 fields (expected %s)", i, headerHelp)
}

// nodeID reads a node id in [0,n).
func (p *parser) nodeID(tok lex.Token, field string, n int) (int32, error) {
	v, err := strconv.Atoi(tok.Text)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, p.errf(tok.Line, field, "node %s is out of range [0,%d)", tok.Text, n)
		}
		return 0, p.errf(tok.Line, field, "expected a node id in [0,%d), found %q", n, tok.Text)
	}
	if v < 0 || v >= n {
		return 0, p.errf(tok.Line, field, "node %d is out of range [0,%d)", v, n)
	}
	return int32(v), nil
}

// linkFields are the five fields of a link line.
var linkFields = [5]string{"src", "dst", "rate", "delay", "error_rate"}

// link reads link i (1-based) of linkNum; it returns the link and the line of its src.
func (p *parser) link(i, nodeNum, linkNum, linkNumLine int) (Link, int, error) {
	l, err := p.linkFields(i, nodeNum, linkNum, linkNumLine)
	return l, p.linkLine, err
}

func (p *parser) linkFields(i, nodeNum, linkNum, linkNumLine int) (Link, error) {
	var l Link
	var toks [5]lex.Token
	for f := range toks {
		tok, ok, err := p.next()
		if err != nil {
			return l, err
		}
		if !ok {
			if f == 0 {
				return l, p.errf(linkNumLine, "header link_num", "the header says %d links, the file has %d", linkNum, i-1)
			}
			return l, p.errf(p.eofLine(), fmt.Sprintf("link %d %s", i, linkFields[f]),
				"the file ends in the middle of link %d (expected src dst rate delay error_rate; the header says %d links)",
				i, linkNum)
		}
		toks[f] = tok
	}
	p.linkLine = toks[0].Line
	field := func(f int) string { return fmt.Sprintf("link %d %s", i, linkFields[f]) }

	src, err := p.nodeID(toks[0], field(0), nodeNum)
	if err != nil {
		return l, err
	}
	dst, err := p.nodeID(toks[1], field(1), nodeNum)
	if err != nil {
		return l, err
	}
	if src == dst {
		return l, p.errf(toks[1].Line, field(1), "the link goes from node %d to itself", src)
	}
	l.Src, l.Dst = src, dst

	r, ok := p.rates[toks[2].Text]
	if !ok {
		v, err := units.ParseRate(toks[2].Text)
		if err != nil {
			return l, p.errf(toks[2].Line, field(2), "%v", err)
		}
		r = rateVal{text: toks[2].Text, v: v}
		if len(p.rates) < maxInterned {
			p.rates[r.text] = r
		}
	}
	l.Rate, l.RateText = r.v, r.text

	d, ok := p.delays[toks[3].Text]
	if !ok {
		v, err := units.ParseTime(toks[3].Text)
		if err != nil {
			return l, p.errf(toks[3].Line, field(3), "%v", err)
		}
		d = delayVal{text: toks[3].Text, v: v}
		if len(p.delays) < maxInterned {
			p.delays[d.text] = d
		}
	}
	l.Delay, l.DelayText = d.v, d.text

	e, ok := p.errs[toks[4].Text]
	if !ok {
		v, err := parseErrorRate(toks[4].Text)
		if err != nil {
			return l, p.errf(toks[4].Line, field(4), "%v", err)
		}
		e = errVal{text: toks[4].Text, v: v}
		if len(p.errs) < maxInterned {
			p.errs[e.text] = e
		}
	}
	l.ErrorRate, l.ErrorText = e.v, e.text
	return l, nil
}

// parseErrorRate reads a packet loss probability: a decimal number in [0,1].
func parseErrorRate(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !(math.IsInf(v, 0) && err.(*strconv.NumError).Err == strconv.ErrRange) {
		return 0, fmt.Errorf("expected a packet loss probability in [0,1], found %q", s)
	}
	if !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("%q is not a probability (expected a number in [0,1])", s)
	}
	return v, nil
}
