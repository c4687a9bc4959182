package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"simd/configs"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden results of cmd/simd/testdata/golden")

// goldenScenario is one end-to-end run whose outputs are checked in under
// testdata/golden/NAME: every file the run writes, and its stdout.
type goldenScenario struct {
	name string
	// setup writes the run's inputs into dir and returns the command lines to run there, in
	// order (later ones may read what earlier ones wrote); the last one's outputs go to "out".
	setup func(t *testing.T, dir string) [][]string
	exit  int // the last command's exit status
}

// Normalisations of what varies between two runs of the same inputs: wall-clock time.
var (
	goldenWallJSON   = regexp.MustCompile(`"(wall_clock_seconds|wall_seconds)": [0-9.e+-]+`)
	goldenWallStdout = regexp.MustCompile(`in [0-9]+\.[0-9]+ s\b`)
)

func goldenScenarios() []goldenScenario {
	cc0 := func(t *testing.T, dir string) string {
		return writeFile(t, dir, "SimAI-cc0.conf", regexp.MustCompile(`(?m)^CC_MODE .*$`).ReplaceAllString(string(configs.ShippedSimAIConfText()), "CC_MODE 0"))
	}
	// Inputs are copied into the run's folder and named relative to it, so that the outputs
	// (stdout and summary.json name them) do not depend on where the tree is.
	input := func(t *testing.T, dir, path string) string {
		return filepath.Base(writeFile(t, dir, filepath.Base(path), readFile(t, path)))
	}
	topo := func(t *testing.T, dir, name string) string {
		return input(t, dir, filepath.Join("..", "..", "topo", "testdata", name))
	}
	aicb := func(t *testing.T, dir, name string) string {
		return input(t, dir, filepath.Join("..", "..", "workloads", "testdata", "aicb", name))
	}
	return []goldenScenario{
		{name: "analytical-micro", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-mode", "analytical", "-w", "example:microAllReduce.txt", "-r", "golden-", "-v", "1", "-o", "out"}}
		}},
		{name: "analytical-moe-9216", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-mode", "analytical", "-w", "example:workload_analytical.txt", "-g", "9216", "-nv", "360", "-nic", "48.5", "-n_p_s", "8", "-g_p_s", "8", "-r", "golden-", "-o", "out"}}
		}},
		{name: "event-micro-dcqcn", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-w", "example:microAllReduce.txt", "-o", "out"}}
		}},
		{name: "event-alltoall-dcn16-maxmin", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-w", aicb(t, dir, "all_to_all.txt"), "-n", topo(t, dir, "DCN+SingleToR_16g_8gps_400Gbps_H100"), "-c", filepath.Base(cc0(t, dir)), "-o", "out"}}
		}},
		{name: "event-allreduce-hpn32-dcqcn", setup: func(t *testing.T, dir string) [][]string {
			// A data-parallel all-reduce and reduce-scatter over 16 GPUs of a dual-ToR fabric
			// (ECMP over both ToRs).
			w := writeFile(t, dir, "dp16.txt", "MICRO\n2\n"+
				"grad0\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t1\n"+
				"grad1\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tREDUCESCATTER\t524288\t1\n")
			return [][]string{{"-w", filepath.Base(w), "-g", "16", "-n", topo(t, dir, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"), "-o", "out"}}
		}},
		{name: "event-allreduce-hpn32-dcqcn-lockstep", setup: func(t *testing.T, dir string) [][]string {
			// The same in one program (-ranks lockstep): every rank goes on from a collective
			// once it is done everywhere, and the report is of all ranks.
			w := writeFile(t, dir, "dp16.txt", "MICRO\n2\n"+
				"grad0\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t1\n"+
				"grad1\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tREDUCESCATTER\t524288\t1\n")
			return [][]string{{"-w", filepath.Base(w), "-g", "16", "-n", topo(t, dir, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"), "-ranks", "lockstep", "-o", "out"}}
		}},
		{name: "event-pipeline-hpn32-own-stages", setup: func(t *testing.T, dir string) [][]string {
			// A pipeline of two stages of 16 GPUs (TP 16 over two servers of the dual-ToR
			// fabric, one layer, two micro-batches) in which every rank of a stage runs its own copy of the
			// stage's plan and sends its own messages (-ranks own-stages).
			w := writeFile(t, dir, "pp2-tp16.txt", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 16 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 32 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1048576\n1\n"+
				"layer0\t-1\t1000\tALLREDUCE\t4194304\t1000\tNONE\t0\t1000\tNONE\t0\t0\n")
			return [][]string{{"-w", filepath.Base(w), "-g", "32", "-n", topo(t, dir, "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"), "-ranks", "own-stages", "-o", "out"}}
		}},
		{name: "flows-incast-dcqcn", setup: func(t *testing.T, dir string) [][]string {
			// Eight senders on the other server into GPU 0: the ToR port to it queues, marks and,
			// without SimAI's window to hold the queue (HAS_WIN 0) and with 27 MB switch buffers,
			// pauses. (With the window it would hold eight windows less a round trip there, and
			// mark without pausing.)
			return incastNoWindow(t, dir, topo(t, dir, "DCN+SingleToR_16g_8gps_400Gbps_H100"))
		}},
		{name: "flows-incast-dcqcn-injection", setup: func(t *testing.T, dir string) [][]string {
			// The same incast in the classic fluid model: every link of a path receives the
			// senders' injection at once (-forwarding injection).
			return incastNoWindow(t, dir, topo(t, dir, "DCN+SingleToR_16g_8gps_400Gbps_H100"), "-forwarding", "injection")
		}},
		{name: "compare-micro", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-mode", "compare", "-w", "example:microAllReduce.txt", "-c", filepath.Base(cc0(t, dir)), "-o", "out"}}
		}},
		{name: "stopped-micro", exit: exitStopped, setup: func(t *testing.T, dir string) [][]string {
			return [][]string{{"-w", "example:microAllReduce.txt", "-o", "out", "-max-events", "1500"}}
		}},
		{name: "moe-deepep-event", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{
				{"moe", "gen", "-nodes", "2", "-gps", "4", "-batch", "2", "-layers", "2", "-iters", "1", "-o", "out/workload"},
				{"moe", "run", "-plan", "deepep", "-mode", "event", "-w", "out/workload", "-o", "out"},
			}
		}},
		{name: "moe-fast-exact", setup: func(t *testing.T, dir string) [][]string {
			return [][]string{
				{"moe", "gen", "-nodes", "4", "-gps", "4", "-batch", "2", "-layers", "2", "-iters", "2", "-o", "out/workload"},
				{"moe", "run", "-plan", "fast", "-model", "exact", "-w", "out/workload", "-o", "out"},
			}
		}},
	}
}

// The golden regression suite: small end-to-end scenarios in every mode whose outputs are
// checked in. A change of any output byte fails here; when the change is meant, rerun with
// go test ./cmd/simd -run Golden -update and review the diff of testdata/golden.
func TestGolden(t *testing.T) {
	for _, sc := range goldenScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmds := sc.setup(t, dir)
			var stdout string
			for i, args := range cmds {
				code, out, errOut := runCLI(t, dir, args...)
				want := exitOK
				if i == len(cmds)-1 {
					want = sc.exit
				}
				if code != want {
					t.Fatalf("simd %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, errOut)
				}
				stdout += out
			}
			got := map[string]string{"stdout.txt": normaliseGolden(stdout, dir)}
			outDir := filepath.Join(dir, "out")
			for _, f := range listFiles(t, outDir) {
				got[filepath.ToSlash(f)] = normaliseGolden(readFile(t, filepath.Join(outDir, f)), dir)
			}
			golden := filepath.Join("testdata", "golden", sc.name)
			if *updateGolden {
				if err := os.RemoveAll(golden); err != nil {
					t.Fatal(err)
				}
				for name, text := range got {
					p := filepath.Join(golden, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			want := map[string]string{}
			for _, f := range listFiles(t, golden) {
				want[filepath.ToSlash(f)] = readFile(t, filepath.Join(golden, f))
			}
			if len(want) == 0 {
				t.Fatalf("no golden files in %s (go test ./cmd/simd -run Golden -update writes them)", golden)
			}
			for _, name := range sortedKeys(got, want) {
				g, okG := got[name]
				w, okW := want[name]
				switch {
				case !okW:
					t.Errorf("%s: written by the run but not in %s", name, golden)
				case !okG:
					t.Errorf("%s: in %s but not written by the run", name, golden)
				case g != w:
					t.Errorf("%s differs from %s: %s", name, golden, firstDifference(g, w))
				}
			}
		})
	}
}

// normaliseGolden blanks what varies between runs: wall-clock figures and the temporary folder.
func normaliseGolden(s, dir string) string {
	s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
	s = goldenWallJSON.ReplaceAllString(s, `"$1": 0`)
	return goldenWallStdout.ReplaceAllString(s, "in X s")
}

func sortedKeys(maps ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// firstDifference says where two texts first differ, by line.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n  got:  %q\n  want: %q", i+1, gl, wl)
		}
	}
	return "same lines, different bytes"
}

// incastNoWindow is the command line of eight senders on the second server of DCN+ 16 (single
// ToR, the topology file tp in dir) into GPU 0, 4 MB each, with SimAI's SimAI.conf without its
// window and with 27 MB switch buffers, and the extra flags.
func incastNoWindow(t *testing.T, dir, tp string, extra ...string) [][]string {
	var b strings.Builder
	b.WriteString("8\n")
	for i := range 8 {
		fmt.Fprintf(&b, "%d 0 3 100 4000000 0.000001\n", 8+i)
	}
	writeFile(t, dir, "flow.txt", b.String())
	conf := regexp.MustCompile(`(?m)^HAS_WIN .*$`).ReplaceAllString(string(configs.ShippedSimAIConfText()), "HAS_WIN 0")
	conf = regexp.MustCompile(`(?m)^BUFFER_SIZE .*$`).ReplaceAllString(conf, "BUFFER_SIZE 27")
	nowin := writeFile(t, dir, "SimAI-nowin.conf", conf)
	args := []string{"-flows", "flow.txt", "-n", tp, "-c", filepath.Base(nowin), "-o", "out"}
	return [][]string{append(args, extra...)}
}
