package topo

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"simd/configs/lex"
)

// FuzzParse: Parse never panics; an error names the file (and a line, except for a file that is
// empty or lacks links); whatever it accepts passes Validate and CheckStructure and writes back
// into a file that parses to the same topology and writes back identically.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./topo
func FuzzParse(f *testing.F) {
	for _, name := range simaiTopologyFiles(f) { // SimAI's seven topology files
		f.Add(readFile(f, filepath.Join("testdata", name)))
	}
	f.Add([]byte(small))
	f.Add([]byte(strings.ReplaceAll(small, "\n", "\r\n")))
	f.Add([]byte("3 1 0 1 2 H100\n2 \n2 0 200Gbps 1ns 0\n2 1 400Gbps 1ns 1e-3\n"))
	f.Add([]byte("2 1 0 0 0 X\n"))
	f.Add([]byte("4 2 1 1 3 H100\n2 3 \n0 2 2880Gbps 0.000025ms 0\n1 2 2880Gbps 0.000025ms 0\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			if topo != nil {
				t.Fatal("a topology came back with an error")
			}
			var le *lex.Error
			if !errors.As(err, &le) || le.File != "fuzz" {
				t.Fatalf("error %v is not a *lex.Error naming the file", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.Line < 0 || le.Line > lines {
				t.Fatalf("error %v names line %d of a file of %d lines", err, le.Line, lines)
			}
			return
		}
		if err := topo.Validate(); err != nil {
			t.Fatalf("Parse accepted a topology Validate refuses: %v", err)
		}
		if err := topo.CheckStructure(); err != nil {
			t.Fatalf("Parse accepted a topology CheckStructure refuses: %v", err)
		}
		if _, err := topo.ServerBandwidth(); err != nil {
			t.Fatalf("ServerBandwidth: %v", err)
		}
		var out bytes.Buffer
		if err := topo.Write(&out); err != nil {
			t.Fatalf("Write: %v", err)
		}
		back, err := Parse(bytes.NewReader(out.Bytes()), "written")
		if err != nil {
			t.Fatalf("Parse(Write(t)): %v\n%s", err, out.Bytes())
		}
		if !reflect.DeepEqual(back, topo) {
			t.Fatalf("Parse(Write(t)) differs from t\nfirst: %+v\nagain: %+v", topo, back)
		}
		var again bytes.Buffer
		if err := back.Write(&again); err != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatalf("Write is not stable: %v", err)
		}
	})
}
