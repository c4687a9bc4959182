package configs

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"simd/configs/lex"
	"simd/engine"
)

const us = engine.Microsecond

func parseConf(t *testing.T, text string) (SimAIConf, []*lex.Error) {
	t.Helper()
	c, warns, err := ParseSimAIConf(strings.NewReader(text), "test.conf")
	if err != nil {
		t.Fatalf("ParseSimAIConf(%q): %v", text, err)
	}
	return c, warns
}

// withoutBookkeeping clears the Present, Lines and Raw maps so that two parses can be compared
// on their values alone.
func withoutBookkeeping(c SimAIConf) SimAIConf {
	c.Present, c.Lines, c.Raw = nil, nil, nil
	return c
}

func TestShippedSimAIConf(t *testing.T) {
	c, warns, err := ParseSimAIConf(bytes.NewReader(ShippedSimAIConfText()), "SimAI.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings on the repository file: %v", warns)
	}
	want := SimAIConf{
		EnableQCN:              true,
		UseDynamicPFCThreshold: true,
		PacketPayloadSize:      9000,
		PauseTime:              5 * us, // not in the file: code default
		FlowFile:               "/etc/astra-sim/simulation/flow1.txt",
		TraceFile:              "/etc/astra-sim/simulation/trace1.txt",
		TraceOutputFile:        "/etc/astra-sim/simulation/llama_hpn7_mix.tr",
		FCTOutputFile:          "/etc/astra-sim/simulation/llama_hpn7_fct.txt",
		PFCOutputFile:          "/etc/astra-sim/simulation/llama_hpn7_pfc.txt",
		SimulatorStopTime:      4e13,
		CCMode:                 1,
		AlphaResumeInterval:    1 * us,
		RateDecreaseInterval:   4 * us,
		ClampTargetRate:        false,
		RPTimer:                900 * us,
		EWMAGain:               0.00390625,
		FastRecoveryTimes:      1,
		RateAIBps:              50e6,
		RateHAIBps:             100e6,
		MinRateBps:             100e6,
		DCTCPRateAIBps:         1000e6,
		ErrorRatePerLink:       0,
		L2ChunkSize:            4000,
		L2AckInterval:          1,
		L2BackToZero:           false,
		HasWin:                 true,
		GlobalT:                true, // the file says 0; SimAI forces 1
		VarWin:                 true,
		FastReact:              true,
		UTarget:                0.95,
		MIThresh:               0,
		IntMulti:               1,
		MultiRate:              false,
		SampleFeedback:         false,
		PINTLogBase:            1.05,
		PINTProb:               1.0,
		RateBound:              true,
		AckHighPrio:            false,
		NICTotalPauseTime:      0,
		LinkDown:               LinkDown{},
		EnableTrace:            true,
		ECN: []ECNThreshold{
			{RateBps: 25e9, KMaxBytes: 400000, KMinBytes: 100000, PMax: 0.2, HasKMax: true, HasKMin: true, HasPMax: true},
			{RateBps: 50e9, KMaxBytes: 800000, KMinBytes: 200000, PMax: 0.2, HasKMax: true, HasKMin: true, HasPMax: true},
			{RateBps: 100e9, KMaxBytes: 1600000, KMinBytes: 400000, PMax: 0.2, HasKMax: true, HasKMin: true, HasPMax: true},
			{RateBps: 200e9, KMaxBytes: 1200000, KMinBytes: 300000, PMax: 0.8, HasKMax: true, HasKMin: true, HasPMax: true},
			{RateBps: 400e9, KMaxBytes: 3200000, KMinBytes: 800000, PMax: 0.2, HasKMax: true, HasKMin: true, HasPMax: true},
			{RateBps: 1600e9, KMaxBytes: 2400000, KMinBytes: 600000, PMax: 0.2, HasKMax: true, HasKMin: true, HasPMax: true},
		},
		BufferSizeBytes: 33554432,
		QlenMonFile:     "/etc/astra-sim/simulation/llama_hpn7_qlen.txt",
		BWMonFile:       "/etc/astra-sim/simulation/llama_hpn7_bw.txt",
		RateMonFile:     "/etc/astra-sim/simulation/llama_hpn7_rate.txt",
		CNPMonFile:      "/etc/astra-sim/simulation/llama_hpn7_cnp.txt",
		MonStart:        0,
		MonEnd:          20000 * us,
		QPMonInterval:   100 * us,
		QlenMonInterval: 10000 * us,
		BWMonInterval:   10000 * us,
	}
	if got := withoutBookkeeping(c); !reflect.DeepEqual(got, want) {
		t.Errorf("repository SimAI.conf:\n got %+v\nwant %+v", got, want)
	}

	// Every key of the file is Present, with its line and raw value; absent keys are not.
	inFile := map[string]int{}
	for i, line := range strings.Split(string(ShippedSimAIConfText()), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			inFile[f[0]] = i + 1
		}
	}
	if len(inFile) != 52 {
		t.Errorf("the repository file has %d keys, expected 52", len(inFile))
	}
	for k, line := range inFile {
		if !c.Present[k] || c.Lines[k] != line {
			t.Errorf("key %s: Present %v, Lines %d; want true, %d", k, c.Present[k], c.Lines[k], line)
		}
	}
	for _, k := range SimAIConfKeys() {
		if _, ok := inFile[k]; !ok && c.Present[k] {
			t.Errorf("key %s is not in the file but Present", k)
		}
	}
	if len(c.Present) != len(inFile) {
		t.Errorf("Present has %d keys, want %d", len(c.Present), len(inFile))
	}
	for k, v := range map[string][]string{
		"RP_TIMER":            {"900"},
		"GLOBAL_T":            {"0"},
		"RATE_AI":             {"50Mb/s"},
		"LINK_DOWN":           {"0", "0", "0"},
		"SIMULATOR_STOP_TIME": {"40000000000000.00"},
		"PMAX_MAP":            strings.Fields("6 25000000000 0.2 50000000000 0.2 100000000000 0.2 200000000000 0.8 400000000000 0.2 1600000000000 0.2"),
	} {
		if !reflect.DeepEqual(c.Raw[k], v) {
			t.Errorf("Raw[%s] = %q, want %q", k, c.Raw[k], v)
		}
	}
	if u := c.Unset(); len(u) != 0 {
		t.Errorf("Unset() = %q on the repository file", u)
	}
	if c.LinkDown.Active() {
		t.Error("LINK_DOWN 0 0 0 is active")
	}
	if e, ok := c.ECNFor(400e9); !ok || e.KMaxBytes != 3200000 || e.KMinBytes != 800000 || e.PMax != 0.2 {
		t.Errorf("ECNFor(400G) = %+v, %v", e, ok)
	}
	if _, ok := c.ECNFor(800e9); ok {
		t.Error("ECNFor(800G) found an entry")
	}

	s, err := ShippedSimAIConf()
	if err != nil || !reflect.DeepEqual(s, c) {
		t.Errorf("ShippedSimAIConf() differs from parsing ShippedSimAIConfText(): %v", err)
	}
}

func TestSimAIConfKeys(t *testing.T) {
	keys := SimAIConfKeys()
	// 52 keys of the repository file + PAUSE_TIME, DATA_RATE, LINK_DELAY, NIC_TOTAL_PAUSE_TIME.
	if len(keys) != 56 {
		t.Errorf("%d keys: %v", len(keys), keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Errorf("keys not sorted: %q before %q", keys[i-1], keys[i])
		}
	}
}

func TestDefaultSimAIConf(t *testing.T) {
	d := DefaultSimAIConf()
	checks := []struct {
		name      string
		got, want any
	}{
		{"EWMAGain", d.EWMAGain, 0.0625},
		{"RateAIBps", d.RateAIBps, 0.0},
		{"RateHAIBps", d.RateHAIBps, 0.0},
		{"MinRateBps", d.MinRateBps, 100e6},
		{"DCTCPRateAIBps", d.DCTCPRateAIBps, 1000e6},
		{"RPTimer", d.RPTimer, engine.Time(0)},
		{"AlphaResumeInterval", d.AlphaResumeInterval, 55 * us},
		{"RateDecreaseInterval", d.RateDecreaseInterval, 4 * us},
		{"PauseTime", d.PauseTime, 5 * us},
		{"PacketPayloadSize", d.PacketPayloadSize, 1000},
		{"L2AckInterval", d.L2AckInterval, 0},
		{"BufferSizeBytes", d.BufferSizeBytes, int64(16 << 20)},
		{"MonEnd", d.MonEnd, 2100000000 * us},
		{"QPMonInterval", d.QPMonInterval, 100 * us},
		{"MIThresh", d.MIThresh, 5},
		{"FastRecoveryTimes", d.FastRecoveryTimes, 5},
		{"MultiRate", d.MultiRate, true},
		{"VarWin", d.VarWin, false},
		{"GlobalT", d.GlobalT, true},
		{"FCTOutputFile", d.FCTOutputFile, "fct.txt"},
		{"PFCOutputFile", d.PFCOutputFile, "pfc.txt"},
		{"SimulatorStopTime", d.SimulatorStopTime, 3.01},
		{"ECN", len(d.ECN), 0},
		{"Present", len(d.Present), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}

	// An empty file and a file of comments give exactly the defaults.
	for _, text := range []string{"", "\n\n", "# nothing here\n  # nor here CC_MODE 3\n"} {
		c, warns := parseConf(t, text)
		if len(warns) != 0 || !reflect.DeepEqual(c, d) {
			t.Errorf("%q: got %+v (warnings %v), want the defaults", text, c, warns)
		}
	}

	// A key that is absent keeps its default; a given one does not.
	c, _ := parseConf(t, "CC_MODE 3\nRATE_AI 5Gbps\n")
	want := DefaultSimAIConf()
	want.CCMode, want.RateAIBps = 3, 5e9
	if !reflect.DeepEqual(withoutBookkeeping(c), withoutBookkeeping(want)) {
		t.Errorf("got %+v", c)
	}
	if !c.Present["RATE_AI"] || c.Present["RATE_HAI"] {
		t.Errorf("Present = %v", c.Present)
	}
	if u := c.Unset(); !reflect.DeepEqual(u, []string{"RATE_HAI"}) {
		t.Errorf("Unset() = %q, want [RATE_HAI]", u)
	}
	if u := d.Unset(); !reflect.DeepEqual(u, []string{"RATE_AI", "RATE_HAI"}) {
		t.Errorf("default Unset() = %q", u)
	}
}

func TestParseSimAIConfValues(t *testing.T) {
	cases := []struct {
		name, text string
		check      func(SimAIConf) bool
	}{
		{"two keys on one line", "CC_MODE 3 RP_TIMER 10", func(c SimAIConf) bool { return c.CCMode == 3 && c.RPTimer == 10*us }},
		{"a whole file on one line",
			"KMAX_MAP 1 25000000000 400 KMIN_MAP 1 25000000000 100 PMAX_MAP 1 25000000000 0.2 BUFFER_SIZE 8",
			func(c SimAIConf) bool {
				e, ok := c.ECNFor(25e9)
				return ok && e.KMaxBytes == 400000 && e.KMinBytes == 100000 && e.PMax == 0.2 && c.BufferSizeBytes == 8<<20
			}},
		{"values on later lines", "LINK_DOWN\n1500\n3 4\n", func(c SimAIConf) bool {
			return c.LinkDown == LinkDown{At: 1500 * us, A: 3, B: 4} && c.LinkDown.Active() && c.Lines["LINK_DOWN"] == 1
		}},
		{"fractional microseconds", "ALPHA_RESUME_INTERVAL 0.5 RATE_DECREASE_INTERVAL 1e1 PAUSE_TIME 0.000001",
			func(c SimAIConf) bool {
				return c.AlphaResumeInterval == 500*engine.Nanosecond && c.RateDecreaseInterval == 10*us && c.PauseTime == engine.Picosecond
			}},
		{"bool from any non-zero integer, as SimAI", "ENABLE_QCN 0 VAR_WIN 2 HAS_WIN 0", func(c SimAIConf) bool {
			return !c.EnableQCN && c.VarWin && !c.HasWin
		}},
		{"GLOBAL_T forced to 1", "GLOBAL_T 0", func(c SimAIConf) bool { return c.GlobalT && c.Raw["GLOBAL_T"][0] == "0" }},
		{"rates", "RATE_AI 1.5Gbps RATE_HAI 2Gb/s MIN_RATE 1000 DCTCP_RATE_AI 1GBps", func(c SimAIConf) bool {
			return c.RateAIBps == 1.5e9 && c.RateHAIBps == 2e9 && c.MinRateBps == 1000 && c.DCTCPRateAIBps == 8e9
		}},
		{"ignored keys kept", "DATA_RATE 100Gbps LINK_DELAY 1us USE_DYNAMIC_PFC_THRESHOLD 0 SIMULATOR_STOP_TIME 2", func(c SimAIConf) bool {
			return c.DataRate == "100Gbps" && c.LinkDelay == "1us" && !c.UseDynamicPFCThreshold && c.SimulatorStopTime == 2
		}},
		{"maps sorted by rate", "KMAX_MAP 3 400000000000 3200 25000000000 400 100000000000 1600", func(c SimAIConf) bool {
			return len(c.ECN) == 3 && c.ECN[0].RateBps == 25e9 && c.ECN[1].RateBps == 100e9 && c.ECN[2].RateBps == 400e9 &&
				c.ECN[2].KMaxBytes == 3200000 && !c.ECN[2].HasKMin && !c.ECN[2].Complete()
		}},
		{"an empty map", "KMAX_MAP 0 CC_MODE 8", func(c SimAIConf) bool { return len(c.ECN) == 0 && c.CCMode == 8 && c.Present["KMAX_MAP"] }},
		{"a map entry repeated: the last wins", "PMAX_MAP 2 25000000000 0.1 25000000000 0.3", func(c SimAIConf) bool {
			return len(c.ECN) == 1 && c.ECN[0].PMax == 0.3
		}},
		{"CRLF", "CC_MODE 7\r\nRP_TIMER 300\r\n", func(c SimAIConf) bool { return c.CCMode == 7 && c.RPTimer == 300*us }},
		{"tabs and trailing spaces", "\tCC_MODE\t10   \n", func(c SimAIConf) bool { return c.CCMode == 10 }},
		{"comment lines, also inside a map", "# DCQCN\nCC_MODE 1\nKMAX_MAP 2\n# 25G\n25000000000 400\n  #50G\n50000000000 800\n",
			func(c SimAIConf) bool { return len(c.ECN) == 2 && c.ECN[1].KMaxBytes == 800000 }},
		{"a comment line naming a key is ignored", "#CC_MODE 3\nCC_MODE 7", func(c SimAIConf) bool { return c.CCMode == 7 }},
		{"no final line break", "MON_END 5", func(c SimAIConf) bool { return c.MonEnd == 5*us }},
		{"large times", "MON_END 2100000000 LINK_DOWN 9000000000000 1 2", func(c SimAIConf) bool {
			return c.MonEnd == 2100000000*us && c.LinkDown.At == 9000000000000*us
		}},
		{"file names verbatim", "FCT_OUTPUT_FILE ./out/fct-1.txt QLEN_MON_FILE q.txt", func(c SimAIConf) bool {
			return c.FCTOutputFile == "./out/fct-1.txt" && c.QlenMonFile == "q.txt"
		}},
		{"signs", "CC_MODE +3 EWMA_GAIN +.5 PAUSE_TIME -0", func(c SimAIConf) bool {
			return c.CCMode == 3 && c.EWMAGain == 0.5 && c.PauseTime == 0
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, warns := parseConf(t, tc.text)
			if len(warns) != 0 {
				t.Errorf("warnings: %v", warns)
			}
			if !tc.check(c) {
				t.Errorf("unexpected result: %+v", c)
			}
		})
	}

	// A CRLF copy of the repository file reads exactly like the file.
	lf, _ := parseConf(t, string(ShippedSimAIConfText()))
	crlf, _ := parseConf(t, strings.ReplaceAll(string(ShippedSimAIConfText()), "\n", "\r\n"))
	if !reflect.DeepEqual(lf, crlf) {
		t.Error("the CRLF copy of the repository file reads differently")
	}
}

func TestParseSimAIConfWarnings(t *testing.T) {
	cases := []struct {
		name, text string
		warnings   []lex.Error // Msg is a substring
		check      func(SimAIConf) bool
	}{
		{"unknown key with values, then known keys", "FOO 1 2\nCC_MODE 3\nBAR\nRP_TIMER 10\n",
			[]lex.Error{{Line: 1, Field: "FOO", Msg: `unknown key "FOO" ignored; skipped "1" "2"`}, {Line: 3, Field: "BAR", Msg: `unknown key "BAR" ignored`}},
			func(c SimAIConf) bool { return c.CCMode == 3 && c.RPTimer == 10*us && !c.Present["FOO"] }},
		{"unknown key over lines", "CC_MODE 3 SEND_LAT 6\n7 8\n9 ENABLE_QCN 0",
			[]lex.Error{{Line: 1, Field: "SEND_LAT", Msg: `skipped "6" "7" "8" "9"`}},
			func(c SimAIConf) bool { return c.CCMode == 3 && !c.EnableQCN }},
		{"unknown key at the end", "CC_MODE 3\nlowercase_key",
			[]lex.Error{{Line: 2, Field: "lowercase_key", Msg: "unknown key"}},
			func(c SimAIConf) bool { return c.CCMode == 3 }},
		{"a trailing '#' comment is read as SimAI does", "CC_MODE 1 # was CC_MODE 3\n",
			[]lex.Error{{Line: 1, Field: "#", Msg: "only as the first word of a line"}, {Line: 1, Field: "CC_MODE", Msg: "given again (first on line 1)"}},
			func(c SimAIConf) bool { return c.CCMode == 3 }},
		{"a value with a space", "FLOW_FILE <run dir>/flow1.txt\nCC_MODE 3\n",
			[]lex.Error{{Line: 1, Field: "dir>/flow1.txt", Msg: `unknown key "dir>/flow1.txt" ignored (it follows FLOW_FILE's value on the same line: a value with spaces is read as several words`}},
			func(c SimAIConf) bool { return c.CCMode == 3 }},
		{"many skipped values are counted", "X 1 2 3 4 5 6 7 8 9 10 11 12",
			[]lex.Error{{Line: 1, Field: "X", Msg: `"10" and 2 more`}},
			func(c SimAIConf) bool { return true }},
		{"a key given twice", "CC_MODE 1\nCC_MODE 3",
			[]lex.Error{{Line: 2, Field: "CC_MODE", Msg: "given again (first on line 1); the later value is used"}},
			func(c SimAIConf) bool { return c.CCMode == 3 && c.Lines["CC_MODE"] == 2 }},
		{"a map given twice merges", "KMAX_MAP 1 25000000000 400\nKMAX_MAP 1 50000000000 800",
			[]lex.Error{{Line: 2, Field: "KMAX_MAP", Msg: "entries are merged"}},
			func(c SimAIConf) bool { return len(c.ECN) == 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, warns := parseConf(t, tc.text)
			if len(warns) != len(tc.warnings) {
				t.Fatalf("warnings %v, want %d", warns, len(tc.warnings))
			}
			for i, w := range warns {
				want := tc.warnings[i]
				if w.File != "test.conf" || w.Line != want.Line || w.Field != want.Field || !strings.Contains(w.Msg, want.Msg) {
					t.Errorf("warning %d = %q (line %d, field %q), want line %d, field %q, containing %q",
						i, w.Error(), w.Line, w.Field, want.Line, want.Field, want.Msg)
				}
			}
			if !tc.check(c) {
				t.Errorf("unexpected result: %+v", c)
			}
		})
	}
}

func TestParseSimAIConfErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		field, msg string
	}{
		{"not a number", "CC_MODE 1\nRP_TIMER abc", 2, "RP_TIMER", `expected a number (microseconds), got "abc"`},
		{"missing map pair at EOF", "KMAX_MAP 2 25000000000 400", 1, "KMAX_MAP", "entry 2 of 2: expected a port rate in bit/s, found the end of the file"},
		{"missing map value at EOF", "KMIN_MAP 2 25000000000 100\n50000000000\n\n", 2, "KMIN_MAP", "entry 2 of 2: expected an integer (KB), found the end of the file"},
		{"negative count", "PMAX_MAP -1", 1, "PMAX_MAP", `expected an integer from 0 to 64, got "-1"`},
		{"count over the bound", "KMAX_MAP 65 1 1", 1, "KMAX_MAP", `expected an integer from 0 to 64, got "65"`},
		{"count not an integer", "KMAX_MAP two", 1, "KMAX_MAP", `expected an integer (the number of entries), got "two"`},
		{"value missing at EOF", "ENABLE_QCN 1\nRP_TIMER", 2, "RP_TIMER", "expected a number (microseconds), found the end of the file"},
		{"value missing at EOF after blank lines", "CC_MODE\n\n\n", 1, "CC_MODE", "expected an integer, found the end of the file"},
		{"int key given a fraction", "PACKET_PAYLOAD_SIZE 4.5", 1, "PACKET_PAYLOAD_SIZE", `expected an integer, got "4.5"`},
		{"int key given a negative", "L2_CHUNK_SIZE -4000", 1, "L2_CHUNK_SIZE", `expected an integer from 0 to 4294967295, got "-4000"`},
		{"int key over uint32", "CC_MODE 4294967296", 1, "CC_MODE", "from 0 to 4294967295"},
		{"int key over int64", "CC_MODE 99999999999999999999", 1, "CC_MODE", "from 0 to 4294967295"},
		{"zero payload", "PACKET_PAYLOAD_SIZE 0", 1, "PACKET_PAYLOAD_SIZE", "from 1 to 4294967295"},
		{"bool given a word", "ENABLE_QCN yes", 1, "ENABLE_QCN", `expected an integer (0 = off, 1 = on), got "yes"`},
		{"bool given a negative", "VAR_WIN -1", 1, "VAR_WIN", "from 0 to 4294967295"},
		{"rate without a number", "RATE_AI fast", 1, "RATE_AI", `expected a rate such as 50Mb/s, got "fast"`},
		{"rate with a bad unit", "MIN_RATE 100Mbit", 1, "MIN_RATE", "expected a rate such as 50Mb/s"},
		{"zero rate", "RATE_HAI 0Mb/s", 1, "RATE_HAI", "expected a rate such as 50Mb/s"},
		{"rate missing at EOF", "RATE_AI", 1, "RATE_AI", "expected a rate such as 50Mb/s, found the end of the file"},
		{"value is the next key", "RP_TIMER\nEWMA_GAIN 0.1", 2, "RP_TIMER", `got "EWMA_GAIN" (is the value missing?)`},
		{"file name is the next key", "FLOW_FILE\nTRACE_FILE x", 2, "FLOW_FILE", `got the key name "TRACE_FILE"`},
		{"negative time", "PAUSE_TIME -1", 1, "PAUSE_TIME", "negative"},
		{"time too long", "MON_END 99999999999999", 1, "MON_END", "too long"},
		{"time with a huge exponent", "ALPHA_RESUME_INTERVAL 1e999", 1, "ALPHA_RESUME_INTERVAL", "expected a number (microseconds)"},
		{"integer time given a fraction", "MON_START 1.5", 1, "MON_START", `expected an integer (microseconds), got "1.5"`},
		{"time with a unit", "RP_TIMER 900us", 1, "RP_TIMER", `expected a number (microseconds), got "900us"`},
		{"NaN", "U_TARGET nan", 1, "U_TARGET", `expected a number, got "nan"`},
		{"infinity", "SIMULATOR_STOP_TIME inf", 1, "SIMULATOR_STOP_TIME", `expected a number, got "inf"`},
		{"float overflow", "SIMULATOR_STOP_TIME 1e400", 1, "SIMULATOR_STOP_TIME", "out of range"},
		{"hex float", "EWMA_GAIN 0x1p-4", 1, "EWMA_GAIN", "expected a number"},
		{"gain over 1", "EWMA_GAIN 2", 1, "EWMA_GAIN", `expected a number from 0 to 1, got "2"`},
		{"error rate over 1", "ERROR_RATE_PER_LINK 1.5", 1, "ERROR_RATE_PER_LINK", "expected a probability from 0 to 1"},
		{"zero utilisation target", "U_TARGET 0", 1, "U_TARGET", "expected a positive number"},
		{"PINT log base 1", "PINT_LOG_BASE 1", 1, "PINT_LOG_BASE", "greater than 1"},
		{"map rate with a unit", "KMAX_MAP 1 25Gbps 400", 1, "KMAX_MAP", `entry 1 of 1: expected a port rate in bit/s as an integer such as 400000000000, got "25Gbps"`},
		{"map rate zero", "KMIN_MAP 1 0 400", 1, "KMIN_MAP", "from 1 to"},
		{"map KB fraction", "KMAX_MAP 2 25000000000 400\n50000000000 8.5", 2, "KMAX_MAP", `entry 2 of 2: expected an integer (KB), got "8.5"`},
		{"map probability over 1", "PMAX_MAP 1 25000000000 1.5", 1, "PMAX_MAP", `entry 1 of 1: expected a probability from 0 to 1, got "1.5"`},
		{"map cut short by the next key", "PMAX_MAP 2 25000000000 0.2\nBUFFER_SIZE 32", 2, "PMAX_MAP", `got "BUFFER_SIZE" (is the value missing?)`},
		{"LINK_DOWN short", "LINK_DOWN 5 1", 1, "LINK_DOWN", "expected an integer (node id), found the end of the file"},
		{"LINK_DOWN negative time", "LINK_DOWN -5 1 2", 1, "LINK_DOWN", "negative"},
		{"BUFFER_SIZE fraction", "BUFFER_SIZE 1.5", 1, "BUFFER_SIZE", `expected an integer (MB), got "1.5"`},
		{"error after an unknown key", "FOO 1\nCC_MODE x", 2, "CC_MODE", "expected an integer"},
		{"CRLF error line", "CC_MODE 1\r\nINT_MULTI x\r\n", 2, "INT_MULTI", `got "x"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := ParseSimAIConf(strings.NewReader(tc.text), "test.conf")
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v (%T), want a *lex.Error", err, err)
			}
			if le.File != "test.conf" || le.Line != tc.line || le.Field != tc.field || !strings.Contains(le.Msg, tc.msg) {
				t.Errorf("err = %q (line %d, field %q)\nwant line %d, field %q, containing %q", err, le.Line, le.Field, tc.line, tc.field, tc.msg)
			}
			if !reflect.DeepEqual(c, SimAIConf{}) {
				t.Errorf("on error the result is not the zero value: %+v", c)
			}
		})
	}
}

// failingReader returns some text, then an error that is not the end of the input.
type failingReader struct{ done bool }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.done {
		return 0, errors.New("disk on fire")
	}
	f.done = true
	return copy(p, "CC_MODE 3\n"), nil
}

func TestParseSimAIConfReadError(t *testing.T) {
	_, _, err := ParseSimAIConf(&failingReader{}, "test.conf")
	if !lex.IsInputError(err) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v", err)
	}
}

// FuzzParseSimAIConf: seeded with SimAI's shipped SimAI.conf; an error names the file, the key
// and a line of the file; an accepted config holds values in range.
//
//	go test -run '^$' -fuzz FuzzParseSimAIConf -fuzztime 60s ./configs
func FuzzParseSimAIConf(f *testing.F) {
	f.Add(ShippedSimAIConfText())
	for _, s := range []string{
		"", "RP_TIMER abc", "KMAX_MAP 2 25000000000 400", "KMAX_MAP -1", "KMAX_MAP 65",
		"RP_TIMER", "PACKET_PAYLOAD_SIZE 4.5", "FOO 1 2\nCC_MODE 3", "CC_MODE 3 RP_TIMER 10",
		"CC_MODE 1\r\nRP_TIMER 5\r\n", "# c\nLINK_DOWN 1 2 3", "PMAX_MAP 1 25000000000 0.2 # x",
		"MON_END 1e3", "RATE_AI 1e999Gbps", "ALPHA_RESUME_INTERVAL 1e-999",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, warns, err := ParseSimAIConf(bytes.NewReader(data), "fuzz.conf")
		for _, w := range warns {
			if w == nil || w.File != "fuzz.conf" || w.Line < 1 {
				t.Fatalf("bad warning %#v", w)
			}
		}
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is %T, not *lex.Error", err, err)
			}
			if le.File != "fuzz.conf" || le.Field == "" {
				t.Fatalf("error %q does not name file and key", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.Line < 0 || le.Line > lines {
				t.Fatalf("error %q names line %d of %d", err, le.Line, lines)
			}
			return
		}
		for i := 1; i < len(c.ECN); i++ {
			if !(c.ECN[i-1].RateBps < c.ECN[i].RateBps) {
				t.Fatalf("ECN not sorted: %+v", c.ECN)
			}
		}
		if c.PacketPayloadSize < 1 || c.BufferSizeBytes < 0 || c.PauseTime < 0 || c.MonEnd < 0 || c.LinkDown.At < 0 {
			t.Fatalf("out-of-range value accepted: %+v", c)
		}
	})
}
