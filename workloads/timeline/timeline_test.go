package timeline

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const us = engine.Microsecond

// small is a trace of two stages of four ranks, the second recorded rank by rank (so its
// ranks collapse), with overlapping communication and a counter.
func small() *Trace {
	t := New()
	t.Meta = []Arg{{"workload", "test"}}
	p := t.Process("job a")
	s0 := p.Track("stage 0", []int32{3, 2, 1, 0})
	s0.Span("L0 embedding fwd compute", "compute", 0, 10*us, Arg{"layer", 0})
	s0.Comm("L0 fwd allreduce TP 1 MiB (ring)", "comm", 10*us, 15*us, Arg{"bytes", uint64(1 << 20)}, Arg{"flows", int64(24)})
	s0.Span("wait L0 fwd", "wait", 10*us, 15*us)
	s0.Comm("L0 wg allreduce DP 4 MiB (ring)", "comm", 12*us, 30*us)
	s0.Comm("L0 pp_fwd send → stage 1", "comm", 15*us, 15*us+1234567)
	s0.Span("L0 fwd compute", "compute", 15*us, 20*us)
	for r := int32(4); r < 8; r++ {
		tr := p.Track("stage 1", []int32{r})
		tr.Span("bubble", "wait", 0, 15*us+1234567)
		tr.Span("L0 fwd compute", "compute", 15*us+1234567, 25*us)
	}
	n := t.Process("network")
	n.Counter("util NVLink %", 0, Arg{"max", 50.5}, Arg{"p90", 12.0})
	n.Counter("util NVLink %", 10*us, Arg{"max", 0.0}, Arg{"p90", 0.0})
	return t
}

func TestWriteJSON(t *testing.T) {
	for _, tc := range []struct {
		name     string
		allRanks bool
		golden   string
		threads  int
	}{
		{"collapsed", false, "small.json", 4},
		{"all ranks", true, "small-all-ranks.json", 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := small()
			tr.AllRanks = tc.allRanks
			var b bytes.Buffer
			if err := tr.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if err := Check(b.Bytes()); err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			if got := strings.Count(b.String(), `"thread_name"`); got != tc.threads {
				t.Errorf("%d threads, want %d", got, tc.threads)
			}
			var again bytes.Buffer
			small().WriteJSON(&again)
			if !tc.allRanks && !bytes.Equal(b.Bytes(), again.Bytes()) {
				t.Error("two writes of the same trace differ")
			}
			golden(t, tc.golden, b.Bytes())
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output:\n%s", p, got)
	}
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int32
		want string
	}{
		{nil, ""},
		{[]int32{5}, "5"},
		{[]int32{0, 1, 2, 3}, "0-3"},
		{[]int32{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
	} {
		if got := Ranges(tc.in); got != tc.want {
			t.Errorf("Ranges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMicros(t *testing.T) {
	for _, tc := range []struct {
		in   engine.Time
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {1500 * engine.Nanosecond, "1.5"}, {3 * us, "3"}, {-2500000, "-2.5"},
	} {
		if got := Micros(tc.in); got != tc.want {
			t.Errorf("Micros(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// lanes keeps spans on one lane nested or disjoint, however they overlap.
func TestLanes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans [][2]engine.Time
		lanes int
	}{
		{"disjoint", [][2]engine.Time{{0, 1}, {1, 2}, {5, 6}}, 1},
		{"nested", [][2]engine.Time{{0, 10}, {2, 3}, {3, 9}, {4, 5}}, 1},
		{"crossing", [][2]engine.Time{{0, 5}, {3, 8}, {6, 9}}, 2},
		{"zero length", [][2]engine.Time{{0, 0}, {0, 0}, {0, 4}}, 1},
		{"three deep", [][2]engine.Time{{0, 5}, {1, 6}, {2, 7}}, 3},
	} {
		if n := len(lanes(nil, false)); n != 0 {
			t.Fatalf("%d lanes for no span", n)
		}
		t.Run(tc.name, func(t *testing.T) {
			var in []span
			for i, s := range tc.spans {
				in = append(in, span{start: s[0], end: s[1], seq: i})
			}
			ls := lanes(in, true)
			if len(ls) != tc.lanes {
				t.Errorf("%d lanes, want %d", len(ls), tc.lanes)
			}
			n := 0
			for _, l := range ls {
				n += len(l)
				for i := range l {
					for j := range i {
						a, b := l[j], l[i]
						nested := b.start >= a.start && b.end <= a.end || a.start >= b.start && a.end <= b.end
						if !nested && a.end > b.start && b.end > a.start {
							t.Errorf("spans %v and %v cross on one lane", a, b)
						}
					}
				}
			}
			if n != len(in) {
				t.Errorf("%d spans placed, want %d", n, len(in))
			}
		})
	}
}

// Check refuses what breaks the format's rules.
func TestCheckRefuses(t *testing.T) {
	ok := `{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"p"}},{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"t"}}`
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{"traceEvents":[`, "not a JSON object"},
		{"no events", `{"displayTimeUnit":"ns"}`, "no traceEvents"},
		{"unit", `{"displayTimeUnit":"s","traceEvents":[]}`, "displayTimeUnit"},
		{"negative dur", `{"displayTimeUnit":"ns","traceEvents":[` + ok + `,{"name":"a","ph":"X","ts":1,"dur":-1,"pid":1,"tid":1}]}`, "dur -1"},
		{"no ts", `{"displayTimeUnit":"ns","traceEvents":[` + ok + `,{"name":"a","ph":"X","dur":1,"pid":1,"tid":1}]}`, `no "ts"`},
		{"crossing", `{"displayTimeUnit":"ns","traceEvents":[` + ok + `,{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},{"name":"b","ph":"X","ts":3,"dur":5,"pid":1,"tid":1}]}`, "overlaps"},
		{"unsorted", `{"displayTimeUnit":"ns","traceEvents":[` + ok + `,{"name":"a","ph":"X","ts":5,"dur":1,"pid":1,"tid":1},{"name":"b","ph":"X","ts":3,"dur":1,"pid":1,"tid":1}]}`, "before the previous"},
		{"unnamed thread", `{"displayTimeUnit":"ns","traceEvents":[` + ok + `,{"name":"a","ph":"X","ts":5,"dur":1,"pid":1,"tid":2}]}`, "no thread_name"},
		{"unnamed process", `{"displayTimeUnit":"ns","traceEvents":[{"name":"c","ph":"C","ts":5,"pid":2,"args":{"v":1}}]}`, "no process_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
