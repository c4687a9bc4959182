package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/workloads/timeline"
)

// -trace writes a timeline that keeps the format's rules in every mode and input, the same
// bytes twice, and holds what each run is made of.
func TestTraceEveryMode(t *testing.T) {
	llama, err := filepath.Abs(chakraData + "stg/llama_dp2_tp2_pp2/workload")
	if err != nil {
		t.Fatal(err)
	}
	dir := jobsFolder(t, `jobs:
  - {name: a, workload: dp.txt, gpus: "0-7"}
  - {name: b, workload: dp.txt, gpus: "8-15", start_us: 10}
`)
	if code, _, errOut := runCLI(t, dir, "moe", "gen", "-nodes", "2", "-gps", "4", "-batch", "2", "-layers", "2", "-iters", "1", "-o", "moew"); code != 0 {
		t.Fatalf("moe gen: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		holds []string
	}{
		{"analytical", []string{"-mode", "analytical", "-o", "an"}, []string{`(analytical)"`, `fwd compute"`, `exposed communication (analytical`}},
		{"event", []string{"-o", "ev", "-quiet"}, []string{`fwd compute"`, `wait allreduce TP"`, `"flows":`, `"util `}},
		{"compare", []string{"-mode", "compare", "-o", "cmp", "-quiet"}, []string{`fwd compute"`, `"algorithm":`}},
		{"all ranks", []string{"-o", "all", "-quiet", "-trace-all-ranks"}, []string{`"rank 7"`}},
		{"jobs", []string{"-jobs", "jobs.yaml", "-g", "32", "-c", "cc0.conf", "-quiet", "-o", "jobs", "-jobs-alone", "none"}, []string{`{"name":"a"}`, `{"name":"b"}`, `"network"`}},
		{"jobs analytical", []string{"-jobs", "jobs.yaml", "-g", "32", "-mode", "analytical", "-o", "jan"}, []string{`{"name":"a"}`, `{"name":"b"}`}},
		{"moe event", []string{"moe", "run", "-plan", "deepep", "-mode", "event", "-w", "moew"}, []string{`"iteration 0 layer 1 dispatch"`, `"kind":`}},
		{"chakra event", []string{"-w", llama, "-comm-groups", llama + ".json", "-roofline-tflops", "400", "-o", "ch", "-quiet"}, []string{`{"name":"trace"}`, `"cat":"compute"`, `"type":"COMM_COLL_NODE"`, `"type":"COMM_SEND_NODE"`, `"util `}},
		{"chakra analytical", []string{"-w", llama, "-comm-groups", llama + ".json", "-roofline-tflops", "400", "-mode", "analytical", "-o", "cha"}, []string{`{"name":"trace"}`, `"type":"COMM_RECV_NODE"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs []string
			for i := range 2 {
				p := filepath.Join("tr", strings.ReplaceAll(tc.name, " ", "-")+string(rune('0'+i))+".json")
				args := append(tc.args, "-trace", p)
				if code, _, errOut := runCLI(t, dir, args...); code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				runs = append(runs, readFile(t, filepath.Join(dir, p)))
			}
			if runs[0] != runs[1] {
				t.Error("two runs wrote different timelines")
			}
			if err := timeline.Check([]byte(runs[0])); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.holds {
				if !strings.Contains(runs[0], want) {
					t.Errorf("the timeline does not hold %s", want)
				}
			}
		})
	}
}

// A -trace that cannot be honoured is refused before the run, with exit 2 and nothing written.
func TestTraceRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "flows.txt", "1\n0 1 3 100 1000 0\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a folder", []string{"-trace", "folder", "-o", "out"}, "-trace folder: a folder"},
		{"all ranks alone", []string{"-trace-all-ranks", "-o", "out"}, "-trace-all-ranks: only with -trace"},
		{"flow file", []string{"-flows", "flows.txt", "-trace", "t.json", "-o", "out"}, "-trace: not for -flows"},
		{"moe estimate", []string{"moe", "run", "-plan", "deepep", "-w", "none", "-trace", "t.json"}, "-trace: only with -mode event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, dir, tc.args...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "t.json")); err == nil {
				t.Error("t.json was written")
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("out was written")
			}
		})
	}
}

// The browser reads the timeline: headless Chromium's JSON.parse takes the file, and every
// event has the fields its phase needs. (Perfetto's UI itself is not reachable offline.)
// Skipped when no Chromium is installed.
func TestTraceInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "-o", "out", "-quiet", "-trace", "t.json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data := strings.ReplaceAll(readFile(t, filepath.Join(dir, "t.json")), "</", `<\/`)
	page := `<!doctype html><html><body><pre id="out">not parsed</pre>
<script id="trace" type="application/json">` + data + `</script>
<script>
const t = JSON.parse(document.getElementById("trace").textContent);
let bad = 0;
for (const e of t.traceEvents) {
  const need = {X: ["ts", "dur", "pid", "tid"], C: ["ts", "pid", "args"], M: ["pid", "args"]}[e.ph];
  if (!need || need.some(k => !(k in e)) || (e.ph === "X" && e.dur < 0)) bad++;
}
document.getElementById("out").textContent = "parsed " + t.traceEvents.length + " events, " + bad + " bad, unit " + t.displayTimeUnit;
</script></body></html>`
	writeFile(t, dir, "trace.html", page)
	dom, log := runChromium(t, bin, "--dump-dom", "file://"+filepath.Join(dir, "trace.html"))
	if !strings.Contains(dom, " events, 0 bad, unit ns") || strings.Contains(dom, "parsed 0 events") {
		t.Errorf("the browser did not parse the timeline: %s", dom)
	}
	for _, line := range strings.Split(log, "\n") {
		if browserErrors.MatchString(line) {
			t.Errorf("browser: %s", line)
		}
	}
}
