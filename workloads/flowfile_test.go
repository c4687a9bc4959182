package workloads

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"simd/configs/lex"
	"simd/engine"
)

func TestParseFlowFile(t *testing.T) {
	fs, err := ParseFlowFile(strings.NewReader("2\n0 1 3 100 1000000 2.0\r\n4 5 3 100 64 2.000001\n"), "flow.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []TrafficFlow{
		{Src: 0, Dst: 1, Priority: 3, DPort: 100, Bytes: 1000000, Start: 2 * engine.Second, Line: 2},
		{Src: 4, Dst: 5, Priority: 3, DPort: 100, Bytes: 64, Start: 2*engine.Second + engine.Microsecond, Line: 3},
	}
	if len(fs) != 2 || fs[0] != want[0] || fs[1] != want[1] {
		t.Errorf("got %+v", fs)
	}
}

func TestParseFlowFileErrors(t *testing.T) {
	cases := []struct {
		text, field string
		line        int
	}{
		{"", "flow count", 1},
		{"x\n", "flow count", 1},
		{"3\n0 1 3 100 10 0\n", "src", 2},
		{"1\n0 1 3 100 10\n", "start", 2},
		{"1\n0 0 3 100 10 0\n", "dst", 2},
		{"1\n0 -1 3 100 10 0\n", "dst", 2},
		{"1\n0 1 9 100 10 0\n", "pg", 2},
		{"1\n0 1 3 70000 10 0\n", "dport", 2},
		{"1\n0 1 3 100 0 0\n", "size", 2},
		{"1\n0 1 3 100 10 -1\n", "start", 2},
		{"99999999999\n", "flow count", 1},
	}
	for _, c := range cases {
		_, err := ParseFlowFile(strings.NewReader(c.text), "f")
		var le *lex.Error
		if !errors.As(err, &le) || le.Field != c.field || le.Line != c.line {
			t.Errorf("%q: %v; want line %d field %q", c.text, err, c.line, c.field)
		}
	}
}

func FuzzParseFlowFile(f *testing.F) {
	f.Add([]byte("2\n0 1 3 100 1000000 2.0\n4 5 3 100 64 2.000001\n"))
	f.Add([]byte("1\n0 1 3 100 10 1e-9\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := ParseFlowFile(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !lex.IsInputError(err) {
				t.Fatalf("not a *lex.Error: %v", err)
			}
			return
		}
		for _, x := range fs {
			if x.Bytes < 1 || x.Start < 0 || x.Src == x.Dst {
				t.Fatalf("accepted %+v", x)
			}
		}
	})
}
