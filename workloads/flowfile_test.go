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

// FuzzParseFlowFile: ParseFlowFile never panics; an error is a *lex.Error naming the file, a
// line of it and a field; an accepted flow has a positive size within the bound, a start time
// not negative, two different ends, and the line it came from.
//
//	go test -run '^$' -fuzz FuzzParseFlowFile -fuzztime 60s ./workloads
func FuzzParseFlowFile(f *testing.F) {
	f.Add([]byte("2\n0 1 3 100 1000000 2.0\n4 5 3 100 64 2.000001\n"))
	f.Add([]byte("1\n0 1 3 100 10 1e-9\n"))
	f.Add([]byte("3\r\n0 1 3 100 4503599627370496 0\r\n1 0 3 100 1 0.000000000001\r\n2 3 0 65535 7 1\r\n"))
	f.Add([]byte("2 0 1 3 100 10 0 1 0 3 100 10 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := ParseFlowFile(bytes.NewReader(data), "fuzz")
		lines := bytes.Count(data, []byte("\n")) + 1
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("not a *lex.Error: %v", err)
			}
			if le.File != "fuzz" || le.Line < 1 || le.Line > lines || le.Field == "" {
				t.Fatalf("error %q does not name the file, a line of its %d and a field", err, lines)
			}
			return
		}
		for _, x := range fs {
			if x.Bytes < 1 || x.Bytes > maxBytes || x.Start < 0 || x.Src == x.Dst || x.Src < 0 || x.Dst < 0 || x.Line < 1 || x.Line > lines {
				t.Fatalf("accepted %+v", x)
			}
		}
	})
}
