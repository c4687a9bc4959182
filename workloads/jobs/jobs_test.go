package jobs

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f, err := Parse([]byte(`jobs:
  - {name: a, workload: gpt13b.txt, gpus: "0-3,8"}
  - name: b
    workload: moe.txt
    count: 64
    placement: spread
    start_us: 500
    iterations: 2
  - {name: c.1, workload: w.txt, count: 4, placement: random, seed: 7}
  - {name: d, workload: w.txt, gpus: [16, "18-19"]}
`), "jobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Name: "a", Workload: "gpt13b.txt", GPUs: []int32{0, 1, 2, 3, 8}, Seed: 1, Iterations: 1, Line: 2},
		{Name: "b", Workload: "moe.txt", Count: 64, Placement: Spread, Seed: 1, StartUs: 500, Iterations: 2, Line: 3},
		{Name: "c.1", Workload: "w.txt", Count: 4, Placement: Random, Seed: 7, Iterations: 1, Line: 9},
		{Name: "d", Workload: "w.txt", GPUs: []int32{16, 18, 19}, Seed: 1, Iterations: 1, Line: 10},
	}
	if len(f.Jobs) != len(want) {
		t.Fatalf("%d jobs", len(f.Jobs))
	}
	for i, w := range want {
		g := f.Jobs[i]
		g.fieldLine = nil
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("job %d = %+v, want %+v", i, g, w)
		}
	}
	if l := f.Jobs[1].FieldLine("count"); l != 5 {
		t.Errorf("job b's count is on line %d, want 5", l)
	}
}

// Every bad file is an *Error naming the line and field.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "j.yaml:1: empty jobs file"},
		{"jobs: [", "j.yaml:1: did not find expected node content"},
		{"- a\n", "j.yaml:1: expected a mapping with the key jobs"},
		{"job: []\n", "j.yaml:1: job: unknown key: expected jobs"},
		{"other: 1\n", "j.yaml:1: other: unknown key"},
		{"jobs: []\n", "j.yaml:1: jobs: expected a list of at least one job"},
		{"jobs:\n  - x\n", "j.yaml:2: jobs[0]: expected a mapping"},
		{"jobs:\n  - {name: a, workload: w, gpus: 0, colour: red}\n", "j.yaml:2: jobs[0].colour: unknown key: expected name, workload"},
		{"jobs:\n  - {workload: w, gpus: 0}\n", "j.yaml:2: jobs[0].name: missing"},
		{"jobs:\n  - {name: a b, workload: w, gpus: 0}\n", "jobs[0].name: \"a b\": expected letters"},
		{"jobs:\n  - {name: a, gpus: 0}\n", "jobs[0].workload: missing"},
		{"jobs:\n  - {name: a, workload: w}\n", "jobs[0].gpus: missing: expected gpus"},
		{"jobs:\n  - {name: a, workload: w, gpus: 0, count: 2}\n", "jobs[0].count: give either gpus or count"},
		{"jobs:\n  - {name: a, workload: w, gpus: \"3-1\"}\n", "jobs[0].gpus: \"3-1\": expected a GPU id or a range"},
		{"jobs:\n  - {name: a, workload: w, gpus: \"0-99999999999\"}\n", "jobs[0].gpus: \"0-99999999999\""},
		{"jobs:\n  - {name: a, workload: w, gpus: \"0,1,0\"}\n", "jobs[0].gpus: GPU 0 is listed twice"},
		{"jobs:\n  - {name: a, workload: w, gpus: {a: 1}}\n", "jobs[0].gpus: expected GPU ids"},
		{"jobs:\n  - {name: a, workload: w, count: 0}\n", "jobs[0].count: \"0\": expected a number of GPUs"},
		{"jobs:\n  - {name: a, workload: w, count: 2, placement: tight}\n", "jobs[0].placement: \"tight\": expected packed, spread or random"},
		{"jobs:\n  - {name: a, workload: w, count: 2, seed: 3}\n", "jobs[0].seed: only for a job placed by count with placement: random"},
		{"jobs:\n  - {name: a, workload: w, gpus: 1,\n     placement: packed}\n", "j.yaml:3: jobs[0].placement: only for a job placed by count"},
		{"jobs:\n  - {name: a, workload: w, count: 2, start_us: -1}\n", "jobs[0].start_us: \"-1\": expected microseconds"},
		{"jobs:\n  - {name: a, workload: w, count: 2, iterations: 0}\n", "jobs[0].iterations: \"0\""},
		{"jobs:\n  - {name: a, workload: w, count: 2, count: 3}\n", "jobs[0].count: given twice"},
		{"jobs:\n  - {name: a, workload: w, count: 2}\n  - {name: a, workload: w, count: 2}\n", "j.yaml:3: jobs[1].name: \"a\" is also the name of the job on line 2"},
	} {
		_, err := Parse([]byte(tc.text), "j.yaml")
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func place(t *testing.T, text string, gpus, gps int) ([][]int32, error) {
	t.Helper()
	f, err := Parse([]byte(text), "j.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return f.Place(gpus, gps)
}

func TestPlace(t *testing.T) {
	r := func(lo, hi int32) []int32 {
		var v []int32
		for g := lo; g <= hi; g++ {
			v = append(v, g)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		text string
		want [][]int32
	}{
		{"explicit first, then packed around it", `jobs:
  - {name: p, workload: w, count: 6}
  - {name: e, workload: w, gpus: "2-4"}
`, [][]int32{{0, 1, 5, 6, 7, 8}, {2, 3, 4}}},
		{"explicit keeps its order", `jobs:
  - {name: e, workload: w, gpus: "9,1,5"}
`, [][]int32{{9, 1, 5}}},
		{"spread takes one GPU per server in turn", `jobs:
  - {name: e, workload: w, gpus: "0-3"}
  - {name: s, workload: w, count: 8, placement: spread}
`, [][]int32{r(0, 3), {4, 5, 8, 9, 12, 13, 16, 20}}},
		{"packed fills whole servers", `jobs:
  - {name: a, workload: w, count: 8}
  - {name: b, workload: w, count: 8}
`, [][]int32{r(0, 7), r(8, 15)}},
	} {
		got, err := place(t, tc.text, 24, 4)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A random placement is the seed's: the same seed, the same GPUs; another seed, others (for
// these two seeds); always count distinct free GPUs, ascending.
func TestPlaceRandom(t *testing.T) {
	text := func(seed int) string {
		return fmt.Sprintf("jobs:\n  - {name: e, workload: w, gpus: \"0-7\"}\n  - {name: r, workload: w, count: 16, placement: random, seed: %d}\n", seed)
	}
	a, err := place(t, text(7), 64, 8)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := place(t, text(7), 64, 8)
	c, _ := place(t, text(8), 64, 8)
	if !slices.Equal(a[1], b[1]) {
		t.Errorf("seed 7 placed %v, then %v", a[1], b[1])
	}
	if slices.Equal(a[1], c[1]) {
		t.Errorf("seeds 7 and 8 both placed %v", a[1])
	}
	for _, p := range [][]int32{a[1], c[1]} {
		if len(p) != 16 || !slices.IsSorted(p) || len(slices.Compact(slices.Clone(p))) != 16 || p[0] < 8 {
			t.Errorf("random placement %v: want 16 distinct free GPUs, ascending", p)
		}
	}
}

func TestPlaceErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"jobs:\n  - {name: a, workload: w, gpus: \"0-15\"}\n  - {name: b, workload: w,\n     gpus: \"15-16\"}\n",
			"j.yaml:4: jobs[1].gpus: GPU 15 is also in job \"a\" (line 2): placements must not overlap"},
		{"jobs:\n  - {name: a, workload: w, gpus: \"30-32\"}\n", "j.yaml:2: jobs[0].gpus: GPU 32 is beyond the topology's 32 GPUs (0 to 31)"},
		{"jobs:\n  - {name: a, workload: w, count: 20}\n  - {name: b, workload: w,\n     count: 13}\n",
			"j.yaml:4: jobs[1].count: 13 GPUs asked for, but only 12 of the topology's 32 are free"},
	} {
		_, err := place(t, tc.text, 32, 8)
		var e *Error
		if !errors.As(err, &e) || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// Whatever the file, placements never overlap and never leave the cluster.
func FuzzParsePlace(f *testing.F) {
	f.Add([]byte("jobs:\n  - {name: a, workload: w, gpus: \"0-3\"}\n  - {name: b, workload: w, count: 8, placement: spread}\n"))
	f.Add([]byte("jobs:\n  - {name: r, workload: w, count: 5, placement: random, seed: 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jf, err := Parse(data, "f.yaml")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out, err := jf.Place(64, 8)
		if err != nil {
			return
		}
		used := map[int32]bool{}
		for i, p := range out {
			if jf.Jobs[i].Count > 0 && len(p) != jf.Jobs[i].Count {
				t.Fatalf("job %d got %d GPUs, asked %d", i, len(p), jf.Jobs[i].Count)
			}
			for _, g := range p {
				if g < 0 || g >= 64 || used[g] {
					t.Fatalf("GPU %d placed twice or outside the cluster: %v", g, out)
				}
				used[g] = true
			}
		}
	})
}
