package configs

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"simd/configs/lex"
)

func TestParseBusBWExample(t *testing.T) {
	data, err := os.ReadFile("testdata/busbw.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBusBW(bytes.NewReader(data), "busbw.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := BusBW{
		TP:      BusBWSection{AllReduce: 300, AllGather: 280, ReduceScatter: 280, AllToAll: 230},
		DP:      BusBWSection{AllReduce: 0, AllGather: 380, ReduceScatter: 380, AllToAll: 0},
		EP:      BusBWSection{AllReduce: 0, AllGather: 45, ReduceScatter: 45, AllToAll: 80},
		PPBusBW: 47.5,
		File:    "busbw.yaml",
	}
	if b != want {
		t.Errorf("got  %+v\nwant %+v", b, want)
	}
	// The same file with CRLF line ends, comments and indentation reads the same.
	text := strings.ReplaceAll(string(data), "\n", "\r\n")
	text = strings.Replace(text, "TP:", "# bandwidths in GB/s\r\n\r\nTP:", 1)
	text = strings.ReplaceAll(text, "\r\nallreduce", "\r\n  allreduce")
	if b2, err := ParseBusBW(strings.NewReader(text), "busbw.yaml"); err != nil || b2 != want {
		t.Errorf("CRLF variant: %+v, %v", b2, err)
	}
}

func TestParseBusBW(t *testing.T) {
	cases := []struct {
		name, text string
		want       BusBW
	}{
		{"name line only", "anything: at all,\n", BusBW{}},
		{"the first line is skipped even if it looks like a section", "PP:\nPP:\nbusbw: 1\n", BusBW{PPBusBW: 1}},
		{"keys without commas, later value wins", "n\nEP:\nalltoall: 5\n alltoall , x : 6.5 \n", BusBW{EP: BusBWSection{AllToAll: 6.5}}},
		{"sections in any order, repeated", "n\nDP:\nallgather,: 1\nTP:\nallgather,: 2\nDP:\nreducescatter,: 3\n",
			BusBW{TP: BusBWSection{AllGather: 2}, DP: BusBWSection{AllGather: 1, ReduceScatter: 3}}},
		{"null resets", "n\nTP:\nallreduce: 5\nallreduce: null\n", BusBW{}},
		{"comment lines", "n\n# TP:\nTP:\n  # allreduce: x\nallreduce: 2e2\n", BusBW{TP: BusBWSection{AllReduce: 200}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBusBW(strings.NewReader(tc.text), "b.yaml")
			if err != nil {
				t.Fatal(err)
			}
			tc.want.File = "b.yaml"
			if b != tc.want {
				t.Errorf("got %+v, want %+v", b, tc.want)
			}
		})
	}
}

func TestParseBusBWErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		field, msg string
	}{
		{"empty file", "", 0, "", "the file is empty"},
		{"unknown section", "test\nTP:\nallreduce: 1\nXP:\n", 4, "", `unknown section "XP" (expected TP, DP, EP or PP)`},
		{"lower-case section", "test\ntp:\n", 2, "", `unknown section "tp"`},
		{"unknown key", "test\nTP:\nallreduce: 1\nbroadcast,: 4\n", 4, "TP.broadcast", `unknown key "broadcast" in section TP (expected allreduce, allgather, reducescatter or alltoall)`},
		{"PP key in TP", "test\nTP:\nbusbw: 4\n", 3, "TP.busbw", "unknown key"},
		{"TP key in PP", "test\nPP:\nallreduce: 4\n", 3, "PP.allreduce", "(expected busbw)"},
		{"key before any section", "test\nallreduce: 4\n", 2, "allreduce", "before any section"},
		{"not a number", "test\nDP:\nallgather,: fast\n", 3, "DP.allgather", `expected a positive number of GB/s or null, got "fast"`},
		{"zero", "test\nDP:\nallgather,: 0\n", 3, "DP.allgather", `got "0"`},
		{"negative", "test\nEP:\nalltoall,: -80\n", 3, "EP.alltoall", `got "-80"`},
		{"NaN", "test\nEP:\nalltoall,: NaN\n", 3, "EP.alltoall", `got "NaN"`},
		{"infinity", "test\nPP:\nbusbw: 1e999\n", 3, "PP.busbw", `got "1e999"`},
		{"Null capitalised", "test\nPP:\nbusbw: Null\n", 3, "PP.busbw", `got "Null"`},
		{"missing value", "test\nPP:\nbusbw:\n", 3, "busbw", "expected a value after ':'"},
		{"missing value with comma", "test\nTP:\nallreduce,:\n", 3, "allreduce", "expected a value after ':'"},
		{"empty value with spaces", "test\nTP:\nallreduce,:   \n", 3, "allreduce", "expected a value after ':'"},
		{"no colon", "test\nTP:\nallreduce 300\n", 3, "", `expected a section such as "TP:" or "key: value", got "allreduce 300"`},
		{"value with a unit", "test\nTP:\nallreduce: 300GB/s\n", 3, "TP.allreduce", "expected a positive number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBusBW(strings.NewReader(tc.text), "b.yaml")
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *lex.Error", err)
			}
			if le.File != "b.yaml" || le.Line != tc.line || le.Field != tc.field || !strings.Contains(le.Msg, tc.msg) {
				t.Errorf("err = %q (line %d, field %q)\nwant line %d, field %q, containing %q", err, le.Line, le.Field, tc.line, tc.field, tc.msg)
			}
		})
	}
}

// FuzzParseBusBW: seeded with SimAI's example busbw.yaml; never panics; an error is a *lex.Error naming
// the file and a line of it; what is accepted holds values in range.
//
//	go test -run '^$' -fuzz FuzzParseBusBW -fuzztime 60s ./configs
func FuzzParseBusBW(f *testing.F) {
	if data, err := os.ReadFile("testdata/busbw.yaml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{"", "test\nXP:\n", "test\nTP:\nfoo: 1\n", "test\nPP:\nbusbw:\n", "t\r\nEP:\r\nalltoall,: null\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBusBW(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is %T, not *lex.Error", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.File != "fuzz.yaml" || le.Line < 0 || le.Line > lines {
				t.Fatalf("error %q does not name the file and a line of its %d", err, lines)
			}
			return
		}
		for _, v := range []float64{b.TP.AllReduce, b.TP.AllGather, b.TP.ReduceScatter, b.TP.AllToAll,
			b.DP.AllReduce, b.DP.AllGather, b.DP.ReduceScatter, b.DP.AllToAll,
			b.EP.AllReduce, b.EP.AllGather, b.EP.ReduceScatter, b.EP.AllToAll, b.PPBusBW} {
			if v < 0 || v != v || v > 1e308 {
				t.Fatalf("bad value %v accepted: %+v", v, b)
			}
		}
	})
}
