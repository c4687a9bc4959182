package configs

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"simd/configs/lex"
	"simd/configs/units"
	"simd/engine"
)

// SimAIConf is SimAI.conf, the settings of SimAI's ns-3 backend, one field per key.
//
// Units: rates in bits per second, times in engine.Time picoseconds (the file gives them in
// microseconds), sizes in bytes. Keys SimAI reads but does not act on are kept, and marked so.
type SimAIConf struct {
	// ENABLE_QCN: ECN marking on switch ports and QCN on NICs. Code default 1.
	EnableQCN bool
	// USE_DYNAMIC_PFC_THRESHOLD: read but ignored by SimAI (the attribute it sets has no
	// effect; the switch MMU always uses a dynamic threshold). Code default 1.
	UseDynamicPFCThreshold bool
	// PACKET_PAYLOAD_SIZE: payload bytes of one data packet (the MTU). Code default 1000.
	PacketPayloadSize int
	// PAUSE_TIME, µs: the value written into PFC PAUSE frames. Receivers only test it for
	// zero, so it has no timed effect. Code default 5 µs.
	PauseTime engine.Time
	// DATA_RATE: read but ignored by SimAI (stored into a variable no one reads); verbatim.
	DataRate string
	// LINK_DELAY: read but ignored by SimAI; verbatim.
	LinkDelay string
	// L2_CHUNK_SIZE, bytes: receivers acknowledge whenever the expected sequence number is a
	// multiple of it; the go-back granularity. Code default 0.
	L2ChunkSize int
	// L2_ACK_INTERVAL, bytes: receivers acknowledge every this many bytes (1 = every packet).
	// Code default 0.
	L2AckInterval int
	// L2_BACK_TO_ZERO: on a NACK go back to the start of the chunk. Code default 0.
	L2BackToZero bool

	// FLOW_FILE: opened by SimAI, its first integer read, otherwise unused. Verbatim path.
	FlowFile string
	// TRACE_FILE: "<n> id1 … idn", the nodes whose packets go to the binary trace. Verbatim path.
	TraceFile string
	// TRACE_OUTPUT_FILE: binary packet trace output. Verbatim path.
	TraceOutputFile string
	// FCT_OUTPUT_FILE: per-QP completion log. Verbatim path; code default "fct.txt".
	FCTOutputFile string
	// PFC_OUTPUT_FILE: PFC event log. Verbatim path; code default "pfc.txt".
	PFCOutputFile string
	// SIMULATOR_STOP_TIME, seconds: read but ignored by SimAI (a run ends when its events
	// drain). Code default 3.01.
	SimulatorStopTime float64

	// CC_MODE: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT; any other value means no
	// rate control. Code default 1.
	CCMode int
	// ALPHA_RESUME_INTERVAL, µs: DCQCN α update period. Code default 55 µs.
	AlphaResumeInterval engine.Time
	// RATE_DECREASE_INTERVAL, µs: DCQCN rate-decrease check period. Code default 4 µs.
	RateDecreaseInterval engine.Time
	// CLAMP_TARGET_RATE: DCQCN clamps the target rate on every decrease. Code default 0.
	ClampTargetRate bool
	// RP_TIMER, µs: DCQCN rate-increase timer. Code default 0 (a zero-initialised global).
	RPTimer engine.Time
	// EWMA_GAIN: DCQCN g. SimAI's code default is the C++ expression 1/16, which is integer
	// division and so 0, a gain that would freeze α; DefaultSimAIConf uses the intended 0.0625.
	EWMAGain float64
	// FAST_RECOVERY_TIMES: DCQCN fast-recovery stages. Code default 5.
	FastRecoveryTimes int
	// RATE_AI, bits per second: additive-increase step (DCQCN, HPCC). SimAI's code default is
	// an empty string, which ns-3 cannot use, so the key must be given; 0 here means unset
	// (see Present).
	RateAIBps float64
	// RATE_HAI, bits per second: hyper-increase step. As RATE_AI, 0 means unset.
	RateHAIBps float64
	// MIN_RATE, bits per second: the rate floor. Code default 100Mb/s.
	MinRateBps float64
	// DCTCP_RATE_AI, bits per second: DCTCP additive increase. Code default 1000Mb/s.
	DCTCPRateAIBps float64

	// ERROR_RATE_PER_LINK: default per-packet receive error probability. Code default 0.
	ErrorRatePerLink float64
	// HAS_WIN: 1 = every QP has a window of maxBdp bytes, 0 = no window. Code default 1.
	HasWin bool
	// GLOBAL_T: read but ignored by SimAI, which forces it to 1 right after reading it, so this
	// is always true (global maxBdp/maxRtt). The file's value is in Raw["GLOBAL_T"].
	GlobalT bool
	// VAR_WIN: the window scales with the current rate over the maximum rate. Code default 0.
	VarWin bool
	// FAST_REACT: HPCC fast react. Code default 1.
	FastReact bool
	// U_TARGET: HPCC target utilisation. Code default 0.95.
	UTarget float64
	// MI_THRESH: HPCC multiplicative-increase threshold. Code default 5.
	MIThresh int
	// INT_MULTI: INT byte and queue-length unit multiplier. Code default 1.
	IntMulti int
	// MULTI_RATE: HPCC per-hop rates. Code default 1.
	MultiRate bool
	// SAMPLE_FEEDBACK: HPCC sampled feedback. Code default 0.
	SampleFeedback bool
	// PINT_LOG_BASE: HPCC-PINT log base. Code default 1.05.
	PINTLogBase float64
	// PINT_PROB: HPCC-PINT sampling probability. Code default 1.0.
	PINTProb float64
	// RATE_BOUND: pace packets at the QP's current rate (otherwise line rate). Code default 1.
	RateBound bool
	// ACK_HIGH_PRIO: ACKs and NACKs use the highest-priority queue. Code default 0.
	AckHighPrio bool
	// NIC_TOTAL_PAUSE_TIME, µs: an RdmaHw attribute SimAI passes through. Code default 0.
	NICTotalPauseTime engine.Time
	// LINK_DOWN t a b: take link a–b down. Code default 0 0 0 (none).
	LinkDown LinkDown
	// ENABLE_TRACE: write the binary packet trace for TRACE_FILE's nodes. Code default 1.
	EnableTrace bool

	// ECN is KMAX_MAP, KMIN_MAP and PMAX_MAP merged by port rate, sorted by rate. SimAI
	// requires all three for the rate of every switch port; code default: empty.
	ECN []ECNThreshold
	// BUFFER_SIZE: the shared buffer of each switch and NVSwitch in bytes (the file gives MB,
	// multiplied by 1024 × 1024). Code default 16 MB.
	BufferSizeBytes int64

	// QLEN_MON_FILE, BW_MON_FILE, RATE_MON_FILE, CNP_MON_FILE: monitor outputs, verbatim as
	// written. SimAI rewrites these names on reading (see the format notes) but never starts
	// the monitors.
	QlenMonFile, BWMonFile, RateMonFile, CNPMonFile string
	// MON_START, MON_END, µs: monitor window; unused by SimAI. Code defaults 0 and 2.1e9 µs.
	MonStart, MonEnd engine.Time
	// QP_MON_INTERVAL, BW_MON_INTERVAL, QLEN_MON_INTERVAL, µs: monitor periods; unused by
	// SimAI. Code defaults 100, 10000, 10000 µs.
	QPMonInterval, BWMonInterval, QlenMonInterval engine.Time

	// Present holds the keys that appeared in the file.
	Present map[string]bool
	// Lines holds, for each key that appeared, the line of its last appearance.
	Lines map[string]int
	// Raw holds, for each key that appeared, its value tokens verbatim (last appearance).
	Raw map[string][]string
}

// LinkDown is LINK_DOWN: SimAI takes the link between nodes A and B down at 2 s + At
// (only when At > 0; "0 0 0" means no link goes down).
type LinkDown struct {
	At   engine.Time // the file's t, µs, converted
	A, B int         // node ids
}

// Active reports whether a link is to be taken down (SimAI tests t > 0).
func (l LinkDown) Active() bool { return l.At > 0 }

// ECNThreshold is the ECN configuration for switch egress ports of one rate.
type ECNThreshold struct {
	RateBps   float64 // port rate in bits per second, the maps' key
	KMinBytes int64   // KMIN_MAP value, KB × 1000; valid when HasKMin
	KMaxBytes int64   // KMAX_MAP value, KB × 1000; valid when HasKMax
	PMax      float64 // PMAX_MAP value, marking probability at KMax; valid when HasPMax

	HasKMin, HasKMax, HasPMax bool
}

// Complete reports whether all three maps gave a value for this rate.
func (e ECNThreshold) Complete() bool { return e.HasKMin && e.HasKMax && e.HasPMax }

// ECNFor returns the ECN settings for ports of the given rate; ok is false unless all three
// maps have an entry for exactly that rate.
func (c *SimAIConf) ECNFor(rateBps float64) (ECNThreshold, bool) {
	i := sort.Search(len(c.ECN), func(i int) bool { return c.ECN[i].RateBps >= rateBps })
	if i < len(c.ECN) && c.ECN[i].RateBps == rateBps {
		return c.ECN[i], c.ECN[i].Complete()
	}
	return ECNThreshold{}, false
}

// DefaultSimAIConf returns the values SimAI's code uses for keys a file does not give
// (common.h's initialisers), with one fix: EWMA_GAIN is 0.0625, not the 0 that SimAI's
// integer expression 1/16 yields. RATE_AI and RATE_HAI have no usable default and are left 0;
// Unset lists them.
func DefaultSimAIConf() SimAIConf {
	return SimAIConf{
		EnableQCN:              true,
		UseDynamicPFCThreshold: true,
		PacketPayloadSize:      1000,
		PauseTime:              5 * engine.Microsecond,
		FCTOutputFile:          "fct.txt",
		PFCOutputFile:          "pfc.txt",
		SimulatorStopTime:      3.01,
		CCMode:                 1,
		AlphaResumeInterval:    55 * engine.Microsecond,
		RateDecreaseInterval:   4 * engine.Microsecond,
		RPTimer:                0,
		EWMAGain:               0.0625, // SimAI: 1 / 16 in C++ integer arithmetic = 0; 1/16 is meant
		FastRecoveryTimes:      5,
		MinRateBps:             100e6,
		DCTCPRateAIBps:         1000e6,
		HasWin:                 true,
		GlobalT:                true,
		FastReact:              true,
		UTarget:                0.95,
		MIThresh:               5,
		IntMulti:               1,
		MultiRate:              true,
		PINTLogBase:            1.05,
		PINTProb:               1.0,
		RateBound:              true,
		EnableTrace:            true,
		BufferSizeBytes:        16 * 1024 * 1024,
		MonStart:               0,
		MonEnd:                 2100000000 * engine.Microsecond,
		QPMonInterval:          100 * engine.Microsecond,
		BWMonInterval:          10000 * engine.Microsecond,
		QlenMonInterval:        10000 * engine.Microsecond,
		Present:                map[string]bool{},
		Lines:                  map[string]int{},
		Raw:                    map[string][]string{},
	}
}

// noDefaultKeys are the keys whose SimAI code default is unusable (an empty DataRate string),
// so that a file has to give them.
var noDefaultKeys = []string{"RATE_AI", "RATE_HAI"}

// Unset returns the keys without a usable code default that the file did not give, in the
// order RATE_AI, RATE_HAI; their fields are 0. Whether that matters depends on CC_MODE, which
// is for the caller to judge.
func (c *SimAIConf) Unset() []string {
	var unset []string
	for _, k := range noDefaultKeys {
		if !c.Present[k] {
			unset = append(unset, k)
		}
	}
	return unset
}

// MaxMapEntries bounds the entry count of KMAX_MAP, KMIN_MAP and PMAX_MAP.
const MaxMapEntries = 64

// maxRateKey bounds the rate keys of the maps so that they are exact as float64 bit rates.
const maxRateKey = 1 << 53

// confReader reads one key's values into c. key is the key's token.
type confReader func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error

// confKeys maps every key SimAI.conf knows to its reader; filled by init to avoid an
// initialisation cycle (readers consult confKeys).
var confKeys map[string]confReader

func init() {
	u32 := int64(math.MaxUint32)
	confKeys = map[string]confReader{
		"ENABLE_QCN":                boolKey(func(c *SimAIConf) *bool { return &c.EnableQCN }),
		"USE_DYNAMIC_PFC_THRESHOLD": boolKey(func(c *SimAIConf) *bool { return &c.UseDynamicPFCThreshold }),
		"CLAMP_TARGET_RATE":         boolKey(func(c *SimAIConf) *bool { return &c.ClampTargetRate }),
		"PAUSE_TIME":                microsKey(false, func(c *SimAIConf) *engine.Time { return &c.PauseTime }),
		"DATA_RATE":                 stringKey("a data rate", func(c *SimAIConf) *string { return &c.DataRate }),
		"LINK_DELAY":                stringKey("a link delay", func(c *SimAIConf) *string { return &c.LinkDelay }),
		"PACKET_PAYLOAD_SIZE":       intKey(1, u32, func(c *SimAIConf) *int { return &c.PacketPayloadSize }),
		"L2_CHUNK_SIZE":             intKey(0, u32, func(c *SimAIConf) *int { return &c.L2ChunkSize }),
		"L2_ACK_INTERVAL":           intKey(0, u32, func(c *SimAIConf) *int { return &c.L2AckInterval }),
		"L2_BACK_TO_ZERO":           boolKey(func(c *SimAIConf) *bool { return &c.L2BackToZero }),
		"FLOW_FILE":                 stringKey("a file name", func(c *SimAIConf) *string { return &c.FlowFile }),
		"TRACE_FILE":                stringKey("a file name", func(c *SimAIConf) *string { return &c.TraceFile }),
		"TRACE_OUTPUT_FILE":         stringKey("a file name", func(c *SimAIConf) *string { return &c.TraceOutputFile }),
		"FCT_OUTPUT_FILE":           stringKey("a file name", func(c *SimAIConf) *string { return &c.FCTOutputFile }),
		"PFC_OUTPUT_FILE":           stringKey("a file name", func(c *SimAIConf) *string { return &c.PFCOutputFile }),
		"SIMULATOR_STOP_TIME":       floatKey(-math.MaxFloat64, math.MaxFloat64, "", func(c *SimAIConf) *float64 { return &c.SimulatorStopTime }),
		"CC_MODE":                   intKey(0, u32, func(c *SimAIConf) *int { return &c.CCMode }),
		"ALPHA_RESUME_INTERVAL":     microsKey(false, func(c *SimAIConf) *engine.Time { return &c.AlphaResumeInterval }),
		"RATE_DECREASE_INTERVAL":    microsKey(false, func(c *SimAIConf) *engine.Time { return &c.RateDecreaseInterval }),
		"RP_TIMER":                  microsKey(false, func(c *SimAIConf) *engine.Time { return &c.RPTimer }),
		"EWMA_GAIN":                 floatKey(0, 1, "a number from 0 to 1", func(c *SimAIConf) *float64 { return &c.EWMAGain }),
		"FAST_RECOVERY_TIMES":       intKey(0, u32, func(c *SimAIConf) *int { return &c.FastRecoveryTimes }),
		"RATE_AI":                   rateKey(func(c *SimAIConf) *float64 { return &c.RateAIBps }),
		"RATE_HAI":                  rateKey(func(c *SimAIConf) *float64 { return &c.RateHAIBps }),
		"MIN_RATE":                  rateKey(func(c *SimAIConf) *float64 { return &c.MinRateBps }),
		"DCTCP_RATE_AI":             rateKey(func(c *SimAIConf) *float64 { return &c.DCTCPRateAIBps }),
		"ERROR_RATE_PER_LINK":       floatKey(0, 1, "a probability from 0 to 1", func(c *SimAIConf) *float64 { return &c.ErrorRatePerLink }),
		"HAS_WIN":                   boolKey(func(c *SimAIConf) *bool { return &c.HasWin }),
		"GLOBAL_T":                  readGlobalT,
		"VAR_WIN":                   boolKey(func(c *SimAIConf) *bool { return &c.VarWin }),
		"FAST_REACT":                boolKey(func(c *SimAIConf) *bool { return &c.FastReact }),
		"U_TARGET":                  floatKey(math.SmallestNonzeroFloat64, math.MaxFloat64, "a positive number", func(c *SimAIConf) *float64 { return &c.UTarget }),
		"MI_THRESH":                 intKey(0, u32, func(c *SimAIConf) *int { return &c.MIThresh }),
		"INT_MULTI":                 intKey(0, u32, func(c *SimAIConf) *int { return &c.IntMulti }),
		"MULTI_RATE":                boolKey(func(c *SimAIConf) *bool { return &c.MultiRate }),
		"SAMPLE_FEEDBACK":           boolKey(func(c *SimAIConf) *bool { return &c.SampleFeedback }),
		"PINT_LOG_BASE":             floatKey(math.Nextafter(1, 2), math.MaxFloat64, "a number greater than 1", func(c *SimAIConf) *float64 { return &c.PINTLogBase }),
		"PINT_PROB":                 floatKey(0, 1, "a probability from 0 to 1", func(c *SimAIConf) *float64 { return &c.PINTProb }),
		"RATE_BOUND":                boolKey(func(c *SimAIConf) *bool { return &c.RateBound }),
		"ACK_HIGH_PRIO":             boolKey(func(c *SimAIConf) *bool { return &c.AckHighPrio }),
		"NIC_TOTAL_PAUSE_TIME":      microsKey(true, func(c *SimAIConf) *engine.Time { return &c.NICTotalPauseTime }),
		"LINK_DOWN":                 readLinkDown,
		"ENABLE_TRACE":              boolKey(func(c *SimAIConf) *bool { return &c.EnableTrace }),
		"KMAX_MAP":                  mapKey(mapKMax),
		"KMIN_MAP":                  mapKey(mapKMin),
		"PMAX_MAP":                  mapKey(mapPMax),
		"BUFFER_SIZE":               readBufferSize,
		"QLEN_MON_FILE":             stringKey("a file name", func(c *SimAIConf) *string { return &c.QlenMonFile }),
		"BW_MON_FILE":               stringKey("a file name", func(c *SimAIConf) *string { return &c.BWMonFile }),
		"RATE_MON_FILE":             stringKey("a file name", func(c *SimAIConf) *string { return &c.RateMonFile }),
		"CNP_MON_FILE":              stringKey("a file name", func(c *SimAIConf) *string { return &c.CNPMonFile }),
		"MON_START":                 microsKey(true, func(c *SimAIConf) *engine.Time { return &c.MonStart }),
		"MON_END":                   microsKey(true, func(c *SimAIConf) *engine.Time { return &c.MonEnd }),
		"QP_MON_INTERVAL":           microsKey(true, func(c *SimAIConf) *engine.Time { return &c.QPMonInterval }),
		"BW_MON_INTERVAL":           microsKey(true, func(c *SimAIConf) *engine.Time { return &c.BWMonInterval }),
		"QLEN_MON_INTERVAL":         microsKey(true, func(c *SimAIConf) *engine.Time { return &c.QlenMonInterval }),
	}
}

// SimAIConfKeys returns the key names SimAI.conf knows, sorted.
func SimAIConfKeys() []string {
	keys := make([]string, 0, len(confKeys))
	for k := range confKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseSimAIConf reads a SimAI.conf from r; file names it in messages.
//
// The file is a stream of "KEY value..." tokens; line breaks do not matter, but every message
// names the line of the token concerned. Each key takes a fixed number of values (the ECN maps
// take a count n and then n pairs; LINK_DOWN takes three). A line whose first token starts
// with '#' is a comment (an extension: SimAI has none). A key given twice takes its last value
// (the maps merge, later entries winning), as in SimAI, with a warning.
//
// An unknown key is a warning, not an error: it and the tokens after it, up to the next known
// key, are skipped (SimAI reads those tokens as keys and ignores them). A malformed or missing
// value is an error. Warnings and errors are *lex.Error. On error the returned SimAIConf is
// the zero value.
func ParseSimAIConf(r io.Reader, file string) (SimAIConf, []*lex.Error, error) {
	p := &confParser{sc: lex.NewScanner(r, file), file: file}
	c := DefaultSimAIConf()
	for {
		t, ok := p.next()
		if !ok {
			break
		}
		read, known := confKeys[t.Text]
		if !known {
			p.skipUnknown(t)
			continue
		}
		if prev, dup := c.Lines[t.Text]; dup {
			how := "the later value is used, as in SimAI"
			if strings.HasSuffix(t.Text, "_MAP") {
				how = "the entries are merged, later ones winning, as in SimAI"
			}
			p.warn(t.Line, t.Text, "given again (first on line %d); %s", prev, how)
		}
		p.raw = nil
		if err := read(p, &c, t); err != nil {
			return SimAIConf{}, p.warnings, err
		}
		c.Present[t.Text] = true
		c.Lines[t.Text] = t.Line
		c.Raw[t.Text] = p.raw
		p.lastKey, p.lastKeyEnd = t.Text, p.lastLine
	}
	if err := p.sc.Err(); err != nil {
		return SimAIConf{}, p.warnings, lex.Errorf(file, p.lastLine, "", "reading failed: %v", err)
	}
	return c, p.warnings, nil
}

// confParser holds the state of one ParseSimAIConf call.
type confParser struct {
	sc       *lex.Scanner
	file     string
	prevLine int        // line of the last token taken from the scanner, comments included
	lastLine int        // line of the last token returned by next
	unread   *lex.Token // a token handed back by skipUnknown
	// lastKey is the last known key read and lastKeyEnd the line of its last value: an unknown
	// key on that line is most likely the rest of a value written with spaces.
	lastKey    string
	lastKeyEnd int
	raw        []string // value tokens of the key being read
	ctx        string   // prefix for messages about the current value, e.g. "entry 2 of 6: "
	warnings   []*lex.Error
}

// next returns the next token that is not part of a comment line.
func (p *confParser) next() (lex.Token, bool) {
	if p.unread != nil {
		t := *p.unread
		p.unread = nil
		return t, true
	}
	for {
		t, ok := p.sc.Next()
		if !ok {
			return t, false
		}
		first := t.Line != p.prevLine
		p.prevLine = t.Line
		if first && strings.HasPrefix(t.Text, "#") {
			p.sc.RestOfLine()
			continue
		}
		p.lastLine = t.Line
		return t, true
	}
}

func (p *confParser) warn(line int, field, format string, args ...any) {
	p.warnings = append(p.warnings, lex.Errorf(p.file, line, field, format, args...))
}

func (p *confParser) errf(t lex.Token, key lex.Token, format string, args ...any) *lex.Error {
	return lex.Errorf(p.file, t.Line, key.Text, p.ctx+format, args...)
}

// badValue reports a value token that is not what was expected.
func (p *confParser) badValue(t, key lex.Token, what string) *lex.Error {
	hint := ""
	if _, isKey := confKeys[t.Text]; isKey {
		hint = " (is the value missing?)"
	}
	return p.errf(t, key, "expected %s, got %q%s", what, t.Text, hint)
}

// skipUnknown skips an unknown key and the tokens after it up to the next known key.
func (p *confParser) skipUnknown(key lex.Token) {
	var skipped []string
	n := 0
	for {
		t, ok := p.next()
		if !ok {
			break
		}
		if _, known := confKeys[t.Text]; known {
			p.unread = &t
			break
		}
		if len(skipped) < 10 {
			skipped = append(skipped, strconv.Quote(t.Text))
		}
		n++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown key %q ignored", key.Text)
	if strings.HasPrefix(key.Text, "#") {
		b.WriteString(" ('#' starts a comment only as the first word of a line; SimAI reads these words as keys)")
	} else if p.lastKey != "" && key.Line == p.lastKeyEnd {
		fmt.Fprintf(&b, " (it follows %s's value on the same line: a value with spaces is read as several words, as SimAI reads it)", p.lastKey)
	}
	if n > 0 {
		fmt.Fprintf(&b, "; skipped %s", strings.Join(skipped, " "))
		if n > len(skipped) {
			fmt.Fprintf(&b, " and %d more", n-len(skipped))
		}
	}
	p.warn(key.Line, key.Text, "%s", b.String())
}

// value returns the next value token of key; what says what was expected, for the message
// when the file ends first.
func (p *confParser) value(key lex.Token, what string) (lex.Token, *lex.Error) {
	t, ok := p.next()
	if !ok {
		return t, lex.Errorf(p.file, p.lastLine, key.Text, "%sexpected %s, found the end of the file", p.ctx, what)
	}
	p.raw = append(p.raw, t.Text)
	return t, nil
}

var (
	integerRE = regexp.MustCompile(`^[+-]?[0-9]+$`)
	decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
)

// intValue reads an integer value in [lo, hi].
func (p *confParser) intValue(key lex.Token, what string, lo, hi int64) (int64, *lex.Error) {
	t, err := p.value(key, what)
	if err != nil {
		return 0, err
	}
	if !integerRE.MatchString(t.Text) {
		return 0, p.badValue(t, key, what)
	}
	v, perr := strconv.ParseInt(t.Text, 10, 64)
	if perr != nil || v < lo || v > hi {
		return 0, p.errf(t, key, "expected an integer from %d to %d, got %q", lo, hi, t.Text)
	}
	return v, nil
}

// floatValue reads a finite decimal number.
func (p *confParser) floatValue(key lex.Token, what string) (float64, lex.Token, *lex.Error) {
	t, err := p.value(key, what)
	if err != nil {
		return 0, t, err
	}
	if !decimalRE.MatchString(t.Text) {
		return 0, t, p.badValue(t, key, what)
	}
	v, perr := strconv.ParseFloat(t.Text, 64)
	if perr != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, t, p.errf(t, key, "expected %s, got %q (out of range)", what, t.Text)
	}
	return v, t, nil
}

// microsValue reads a non-negative number of microseconds; integer for keys SimAI reads into
// an unsigned integer.
func (p *confParser) microsValue(key lex.Token, integer bool) (engine.Time, *lex.Error) {
	what := "a number (microseconds)"
	re := decimalRE
	if integer {
		what = "an integer (microseconds)"
		re = integerRE
	}
	t, err := p.value(key, what)
	if err != nil {
		return 0, err
	}
	if !re.MatchString(t.Text) {
		return 0, p.badValue(t, key, what)
	}
	v, uerr := units.FromMicroseconds(t.Text)
	if uerr != nil {
		return 0, p.errf(t, key, "expected %s: %v", what, uerr)
	}
	return v, nil
}

func boolKey(field func(*SimAIConf) *bool) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		v, err := p.intValue(key, "an integer (0 = off, 1 = on)", 0, math.MaxUint32)
		if err != nil {
			return err
		}
		*field(c) = v != 0
		return nil
	}
}

func intKey(lo, hi int64, field func(*SimAIConf) *int) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		v, err := p.intValue(key, "an integer", lo, hi)
		if err != nil {
			return err
		}
		*field(c) = int(v)
		return nil
	}
}

// floatKey reads a number in [lo, hi]; rangeWhat describes the range for the message.
func floatKey(lo, hi float64, rangeWhat string, field func(*SimAIConf) *float64) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		v, t, err := p.floatValue(key, "a number")
		if err != nil {
			return err
		}
		if v < lo || v > hi {
			return p.errf(t, key, "expected %s, got %q", rangeWhat, t.Text)
		}
		*field(c) = v
		return nil
	}
}

func microsKey(integer bool, field func(*SimAIConf) *engine.Time) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		v, err := p.microsValue(key, integer)
		if err != nil {
			return err
		}
		*field(c) = v
		return nil
	}
}

func rateKey(field func(*SimAIConf) *float64) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		const what = "a rate such as 50Mb/s"
		t, err := p.value(key, what)
		if err != nil {
			return err
		}
		v, rerr := units.ParseRate(t.Text)
		if rerr != nil {
			return p.badValue(t, key, what)
		}
		*field(c) = v
		return nil
	}
}

// stringKey reads one token verbatim. A token that is itself a key name is refused: it means
// the value is missing (SimAI would take the key name as the value).
func stringKey(what string, field func(*SimAIConf) *string) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		t, err := p.value(key, what)
		if err != nil {
			return err
		}
		if _, isKey := confKeys[t.Text]; isKey {
			return p.errf(t, key, "expected %s, got the key name %q (is the value missing?)", what, t.Text)
		}
		*field(c) = t.Text
		return nil
	}
}

// readGlobalT reads GLOBAL_T's integer and, as SimAI does, ignores it.
func readGlobalT(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
	if _, err := p.intValue(key, "an integer", 0, math.MaxUint32); err != nil {
		return err
	}
	c.GlobalT = true
	return nil
}

func readLinkDown(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
	at, err := p.microsValue(key, true)
	if err != nil {
		return err
	}
	a, err := p.intValue(key, "an integer (node id)", 0, math.MaxUint32)
	if err != nil {
		return err
	}
	b, err := p.intValue(key, "an integer (node id)", 0, math.MaxUint32)
	if err != nil {
		return err
	}
	c.LinkDown = LinkDown{At: at, A: int(a), B: int(b)}
	return nil
}

func readBufferSize(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
	mb, err := p.intValue(key, "an integer (MB)", 0, math.MaxUint32)
	if err != nil {
		return err
	}
	c.BufferSizeBytes = mb * 1024 * 1024
	return nil
}

// ecnMap says which of the three ECN maps a key fills.
type ecnMap int

const (
	mapKMax ecnMap = iota
	mapKMin
	mapPMax
)

func mapKey(which ecnMap) confReader {
	return func(p *confParser, c *SimAIConf, key lex.Token) *lex.Error {
		n, err := p.intValue(key, "an integer (the number of entries)", 0, MaxMapEntries)
		if err != nil {
			return err
		}
		defer func() { p.ctx = "" }()
		for i := 1; i <= int(n); i++ {
			p.ctx = fmt.Sprintf("entry %d of %d: ", i, n)
			rt, err := p.value(key, "a port rate in bit/s")
			if err != nil {
				return err
			}
			if !integerRE.MatchString(rt.Text) {
				return p.badValue(rt, key, "a port rate in bit/s as an integer such as 400000000000")
			}
			rate, perr := strconv.ParseInt(rt.Text, 10, 64)
			if perr != nil || rate < 1 || rate > maxRateKey {
				return p.errf(rt, key, "expected a port rate in bit/s from 1 to %d, got %q", int64(maxRateKey), rt.Text)
			}
			e := c.ecnEntry(float64(rate))
			switch which {
			case mapKMax, mapKMin:
				kb, err := p.intValue(key, "an integer (KB)", 0, math.MaxUint32)
				if err != nil {
					return err
				}
				if which == mapKMax {
					e.KMaxBytes, e.HasKMax = kb*1000, true
				} else {
					e.KMinBytes, e.HasKMin = kb*1000, true
				}
			case mapPMax:
				v, t, err := p.floatValue(key, "a number (a probability from 0 to 1)")
				if err != nil {
					return err
				}
				if v < 0 || v > 1 {
					return p.errf(t, key, "expected a probability from 0 to 1, got %q", t.Text)
				}
				e.PMax, e.HasPMax = v, true
			}
		}
		return nil
	}
}

// ecnEntry returns the entry for rate, inserting it in rate order if needed.
func (c *SimAIConf) ecnEntry(rate float64) *ECNThreshold {
	i := sort.Search(len(c.ECN), func(i int) bool { return c.ECN[i].RateBps >= rate })
	if i == len(c.ECN) || c.ECN[i].RateBps != rate {
		c.ECN = append(c.ECN, ECNThreshold{})
		copy(c.ECN[i+1:], c.ECN[i:])
		c.ECN[i] = ECNThreshold{RateBps: rate}
	}
	return &c.ECN[i]
}
