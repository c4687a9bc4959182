package topo

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"simd/configs/lex"
)

// small is a valid file: GPUs 0 and 1, NVSwitch 2, switch 3.
const small = "4 2 1 1 3 H100\n" +
	"2 3 \n" +
	"0 2 2880Gbps 0.000025ms 0\n" +
	"1 2 2880Gbps 0.000025ms 0\n" +
	"0 3 400Gbps 0.0005ms 0\n"

const smallHead = "4 2 1 1 3 H100\n2 3 \n"

func TestParseSmall(t *testing.T) {
	topo := mustParse(t, []byte(small), "small")
	if topo.NumGPUs() != 2 || topo.NumLinks() != 3 || topo.Kind(2) != NVSwitch || topo.Kind(3) != Switch {
		t.Fatalf("unexpected topology %+v", topo)
	}
	if got := writeString(t, topo); got != small {
		t.Errorf("Write: %s", firstDiff(got, small))
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		line  int
		field string
		msg   string // a part of the message
	}{
		// Header.
		{"empty file", "", 0, "header node_num", "empty"},
		{"blank lines only", "\n \n", 2, "header node_num", "empty"},
		{"short header", "4 2 1\n", 1, "header switch_num", "after 3 of its 6 fields"},
		{"no gpu type", "4 2 1 1 3\n", 1, "header gpu_type", "after 5 of its 6 fields"},
		{"non-integer node_num", "4.0 2 1 1 3 H100\n", 1, "header node_num", `"4.0"`},
		{"non-integer gps", "4 x 1 1 3 H100\n", 1, "header gpus_per_server", `"x"`},
		{"header over lines", "4 2\n1\nx 3 H100\n", 3, "header switch_num", `"x"`},
		{"negative nvswitch_num", "4 2 -1 1 3 H100\n", 1, "header nvswitch_num", "negative"},
		{"negative link_num", "4 2 1 1 -3 H100\n", 1, "header link_num", "negative"},
		{"huge integer", "4 2 1 99999999999999999999 3 H100\n", 1, "header switch_num", "integer"},
		{"gps zero", "4 0 1 1 3 H100\n", 1, "header gpus_per_server", "at least 1"},
		{"absurd node_num", "1000000000000 8 1 1 3 H100\n", 1, "header node_num", "more than simd supports"},
		{"absurd link_num", "4 2 1 1 1000000000000 H100\n", 1, "header link_num", "more than simd supports"},
		{"node_num too small", "4 2 3 2 0 H100\n", 1, "header node_num", "less than"},
		{"node_num too small overflow", "4 2 4 9223372036854775807 0 H100\n", 1, "header node_num", "less than"},
		{"no gpus", "2 2 1 1 0 H100\n0 1 \n", 1, "header node_num", "no GPUs"},

		// Line 2.
		{"id list short", "4 2 1 1 0 H100\n2 \n", 2, "switch id list", "after 1 of the 2 ids"},
		{"nvswitch id list empty", "4 2 1 1 0 H100\n", 1, "nvswitch id list", "after 0 of the 2 ids"},
		{"nvswitch id out of range", "4 2 1 1 0 H100\n4 3 \n", 2, "nvswitch id list", "out of range [0,4)"},
		{"negative id", "4 2 1 1 0 H100\n-1 3 \n", 2, "nvswitch id list", "out of range"},
		{"switch id out of range", "4 2 1 1 0 H100\n2 7 \n", 2, "switch id list", "out of range [0,4)"},
		{"switch id overflow", "4 2 1 1 0 H100\n2 99999999999999999999 \n", 2, "switch id list", "out of range"},
		{"non-integer id", "4 2 1 1 0 H100\n2 s3 \n", 2, "switch id list", `"s3"`},
		{"id listed twice", "4 2 1 1 0 H100\n2 2 \n", 2, "switch id list", "twice"},
		{"id listed twice on next line", "5 2 1 2 0 H100\n2 3\n3 \n", 3, "switch id list", "twice"},

		// Link count.
		{"fewer links", strings.Replace(small, " 3 H100", " 5 H100", 1), 1, "header link_num", "the header says 5 links, the file has 3"},
		{"no links at all", smallHead, 1, "header link_num", "the header says 3 links, the file has 0"},
		{"link cut short", strings.Replace(small, " 3 H100", " 4 H100", 1) + "1 3 400Gbps\n", 6, "link 4 delay", "middle of link 4"},
		{"link cut after src", strings.Replace(small, " 3 H100", " 4 H100", 1) + "1\n\n", 6, "link 4 dst", "middle of link 4"},
		{"extra link", strings.Replace(small, " 3 H100", " 2 H100", 1), 5, "link 3", "the header says 2 links"},
		{"extra token", small + "\n junk\n", 7, "link 4", `"junk"`},

		// Link fields.
		{"src out of range", smallHead + "4 2 2880Gbps 0.000025ms 0\n", 3, "link 1 src", "out of range [0,4)"},
		{"negative src", smallHead + "-1 2 2880Gbps 0.000025ms 0\n", 3, "link 1 src", "out of range"},
		{"non-integer src", smallHead + "a 2 2880Gbps 0.000025ms 0\n", 3, "link 1 src", `"a"`},
		{"dst out of range", smallHead + "0 9 2880Gbps 0.000025ms 0\n", 3, "link 1 dst", "out of range [0,4)"},
		{"self link", smallHead + "0 2 2880Gbps 0.000025ms 0\n2 2 1Gbps 1ns 0\n", 4, "link 2 dst", "to itself"},
		{"bad rate unit", smallHead + "0 2 2880Gbs 0.000025ms 0\n", 3, "link 1 rate", "unknown rate unit"},
		{"zero rate", smallHead + "0 2 2880Gbps 0.000025ms 0\n1 2 0Gbps 0.000025ms 0\n", 4, "link 2 rate", "positive"},
		{"rate not a number", smallHead + "0 2 fast 0.000025ms 0\n", 3, "link 1 rate", "not a rate"},
		{"bad delay", smallHead + "0 2 2880Gbps soon 0\n", 3, "link 1 delay", "not a time"},
		{"negative delay", smallHead + "0 2 2880Gbps -1ns 0\n", 3, "link 1 delay", "negative"},
		{"delay unit", smallHead + "0 2 2880Gbps 1parsec 0\n", 3, "link 1 delay", "unknown time unit"},
		{"error rate not a number", smallHead + "0 2 2880Gbps 1ns 0\n1 2 2880Gbps 1ns 0\n0 3 1Gbps 1ns x\n", 5, "link 3 error_rate", `"x"`},
		{"error rate above 1", smallHead + "0 2 2880Gbps 1ns 1.5\n", 3, "link 1 error_rate", "[0,1]"},
		{"error rate negative", smallHead + "0 2 2880Gbps 1ns -0.1\n", 3, "link 1 error_rate", "[0,1]"},
		{"error rate nan", smallHead + "0 2 2880Gbps 1ns NaN\n", 3, "link 1 error_rate", "[0,1]"},
		{"error rate inf", smallHead + "0 2 2880Gbps 1ns 1e999\n", 3, "link 1 error_rate", "[0,1]"},
		{"link over lines", smallHead + "0 2 2880Gbps 1ns 0\n1\n2\n2880Xbps\n1ns 0\n", 6, "link 2 rate", "unknown rate unit"},

		// CRLF keeps line numbers.
		{"crlf", strings.ReplaceAll(smallHead+"0 2 2880Gbps 1ns 0\n1 2 bad 1ns 0\n", "\n", "\r\n"), 4, "link 2 rate", "not a rate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo, err := Parse(strings.NewReader(c.in), "f.topo")
			if err == nil {
				t.Fatalf("accepted: %+v", topo)
			}
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T) is not a *lex.Error", err, err)
			}
			if le.File != "f.topo" || le.Line != c.line || le.Field != c.field {
				t.Errorf("error %q: file %q line %d field %q; want line %d field %q", err, le.File, le.Line, le.Field, c.line, c.field)
			}
			if !strings.Contains(le.Msg, c.msg) {
				t.Errorf("message %q does not contain %q", le.Msg, c.msg)
			}
			if topo != nil {
				t.Errorf("a topology came back with the error")
			}
		})
	}
}

// failingReader returns some data, then an error other than EOF.
type failingReader struct{ data string }

var errDisk = errors.New("disk on fire")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errDisk
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestParseReadError(t *testing.T) {
	for _, cut := range []int{0, 5, len(smallHead) + 3, len(small)} {
		_, err := Parse(&failingReader{small[:cut]}, "f")
		if !errors.Is(err, errDisk) {
			t.Errorf("cut at %d: error %v, want the read error", cut, err)
		}
		if lex.IsInputError(err) {
			t.Errorf("cut at %d: a read error reported as bad input", cut)
		}
	}
}

// TestParseAbsurdHeaderAllocations: a header announcing a huge file does not make Parse reserve
// memory for it.
func TestParseAbsurdHeaderAllocations(t *testing.T) {
	cases := []struct {
		in       string
		maxBytes uint64
	}{
		{"1000000000000 8 0 0 0 H100\n", 1 << 20},
		{"4 2 1 1 268435456 H100\n2 3 \n0 2 1Gbps 1ns 0\n", 1 << 20},   // link_num at the limit
		{"67108864 8 0 67108863 0 H100\n", 80 << 20},                   // one Kinds table, no id lists
		{"67108864 8 0 0 268435456 H100\n0 1 1Gbps 1ns 0\n", 80 << 20}, // one Kinds table, no link table
		{"4 2 1 1 1000000000 H100\n2 3 \n" + strings.Repeat("0 2 1Gbps 1ns 0\n", 100), 1 << 20},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Parse(strings.NewReader(c.in), "f")
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%.40q: accepted", c.in)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > c.maxBytes {
			t.Errorf("%.40q: allocated %d bytes, want at most %d", c.in, got, c.maxBytes)
		}
	}
}
