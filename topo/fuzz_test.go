package topo

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it accepts writes back into a file that parses
// to the same topology and writes back identically.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata", outsideDir} {
		ents, err := os.ReadDir(dir) // the shared inputs may be absent: then only testdata seeds
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				f.Add(b)
			}
		}
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
