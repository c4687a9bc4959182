package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"simd/configs/atomicfile"
	"simd/workloads/sim"
)

// Point runs one grid point r in its folder dir: it prepares the run's inputs there, fills the
// manifest's inputs (TopoFile, Conf) and the command line that runs it alone (Args), and
// returns the run's exit status; the run's console goes to stdout and stderr, its outputs to
// dir/out.
type Point func(ctx context.Context, r Run, dir string, m *Manifest, stdout, stderr io.Writer) int

// Executor runs the runs of a shard of a spec's grid, each in its folder under Out.
type Executor struct {
	Spec  *Spec
	Shard Shard
	Out   string
	Jobs  int // runs at once (at least 1)
	Point Point
	// Slowdowns reads the FCT slowdowns (fct / standalone fct, sorted) of a run's fct.txt for
	// its manifest's network figures; nil leaves them out.
	Slowdowns func(fctPath string) ([]float64, error)
}

// Execute runs the shard's runs, up to Jobs at once, printing a line per run on stdout, and
// returns how many failed. Once ctx is done no run starts; the runs under way get the done
// context (and stop cleanly). The error is about the sweep's own folders and manifests: a
// failing run is recorded in its manifest and counted.
func (e *Executor) Execute(ctx context.Context, stdout io.Writer) (int, error) {
	runs := e.Shard.Select(e.Spec.Expand())
	if err := os.MkdirAll(e.Out, 0o755); err != nil {
		return 0, err
	}
	jobs := max(e.Jobs, 1)
	fmt.Fprintf(stdout, "sweep %s: %d runs, shard %s has %d, %d at once, in %s\n", e.Spec.Name, len(e.Spec.Expand()), e.Shard, len(runs), jobs, e.Out)
	var (
		mu     sync.Mutex
		failed int
		first  error
		wg     sync.WaitGroup
		next   = make(chan Run)
	)
	for range min(jobs, max(len(runs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				m, err := e.run(ctx, r)
				mu.Lock()
				switch {
				case err != nil:
					failed++
					if first == nil {
						first = err
					}
				case m.ExitCode != 0:
					failed++
					fmt.Fprintf(stdout, "%s: exit %d (%s): %s\n", r.Folder(), m.ExitCode, describe(r), m.Error)
				case r.Jobs:
					var parts []string
					for _, j := range m.Jobs {
						sd := "?"
						if j.Slowdown != nil {
							sd = strconv.FormatFloat(*j.Slowdown, 'f', 3, 64) + "×"
						}
						parts = append(parts, j.Job+" "+sd)
					}
					fmt.Fprintf(stdout, "%s: slowdown %s (%s)\n", r.Folder(), strings.Join(parts, ", "), describe(r))
				default:
					it := "?"
					if m.Result != nil {
						it = strconv.FormatFloat(m.Result.IterationUs, 'f', -1, 64)
					}
					fmt.Fprintf(stdout, "%s: %s us per iteration (%s)\n", r.Folder(), it, describe(r))
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			break
		}
		next <- r
	}
	close(next)
	wg.Wait()
	return failed, first
}

// run does one run in its folder and writes its manifest. An error is returned only when the
// folder or the manifest cannot be written; a failing simulation is recorded in the manifest.
func (e *Executor) run(ctx context.Context, r Run) (*Manifest, error) {
	dir := filepath.Join(e.Out, r.Folder())
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	m := &Manifest{Run: r.Index, Shard: e.Shard.String(), Workload: r.Workload, Topology: r.Topology.String(),
		TopoFlags: r.Topology.Flags, Overrides: r.Override.Params, Mode: r.Mode, Outputs: []string{}, JobsFile: r.Jobs}
	if m.Overrides == nil {
		m.Overrides = []Param{}
	}
	stdoutF, err := os.Create(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		return nil, err
	}
	defer stdoutF.Close()
	var errBuf bytes.Buffer
	start := time.Now()
	m.ExitCode = e.Point(ctx, r, dir, m, stdoutF, &errBuf)
	m.WallSeconds = time.Since(start).Seconds()
	if err := atomicfile.Write(filepath.Join(dir, "stderr.txt"), func(f *os.File) error { _, err := f.Write(errBuf.Bytes()); return err }); err != nil {
		return nil, err
	}
	if m.ExitCode != 0 {
		m.Error = lastLine(errBuf.String())
	}
	out := filepath.Join(dir, "out")
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			m.Outputs = append(m.Outputs, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(m.Outputs)
	if r.Jobs {
		m.Jobs = jobsResults(out)
	}
	for _, o := range m.Outputs {
		if r.Jobs {
			break // a jobs file's runs have a result per job
		}
		if strings.HasSuffix(o, "EndToEnd.csv") {
			f, err := os.Open(filepath.Join(dir, o))
			if err != nil {
				continue
			}
			res, err := ParseEndToEnd(f, o)
			f.Close()
			if err == nil {
				m.Result = &res
				break
			}
		}
	}
	m.Network = e.networkFigures(out)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	err = atomicfile.Write(filepath.Join(dir, ManifestFile), func(f *os.File) error { _, err := f.Write(append(data, '\n')); return err })
	return m, err
}

// jobsResults reads a jobs-file run's jobs.csv and each job's EndToEnd.csv in its output folder
// out; nil when the run wrote no jobs.csv (it failed).
func jobsResults(out string) []JobResult {
	f, err := os.Open(filepath.Join(out, "jobs.csv"))
	if err != nil {
		return nil
	}
	rows, err := sim.ReadJobsCSV(f, "jobs.csv")
	f.Close()
	if err != nil {
		return nil
	}
	res := make([]JobResult, len(rows))
	for i, row := range rows {
		res[i].JobFigures = row
		if f, err := os.Open(filepath.Join(out, row.Job, "EndToEnd.csv")); err == nil {
			if r, err := ParseEndToEnd(f, row.Job+"/EndToEnd.csv"); err == nil {
				res[i].Result = &r
			}
			f.Close()
		}
	}
	return res
}

// describe is the run's parameters in one line.
func describe(r Run) string {
	d := r.Workload + ", " + r.Topology.String() + ", " + r.Mode
	if r.Jobs {
		d = "jobs " + d
	}
	if o := r.Override.String(); o != "" {
		d += ", " + o
	}
	return d
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// networkFigures reads a run's fct.txt and pfc.txt, where the run wrote them: the median and
// 99th-percentile FCT slowdown and the number of PFC pauses (lines of type 1). nil when neither
// is there (the analytical mode).
func (e *Executor) networkFigures(out string) *Network {
	var n Network
	if e.Slowdowns != nil {
		if sl, err := e.Slowdowns(filepath.Join(out, "fct.txt")); err == nil && len(sl) > 0 {
			p50, p99 := Quantile(sl, 0.5), Quantile(sl, 0.99)
			n.FCTSlowdownP50, n.FCTSlowdownP99 = &p50, &p99
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "pfc.txt")); err == nil {
		pauses := 0
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 5 && f[4] == "1" {
				pauses++
			}
		}
		n.PFCPauses = &pauses
	}
	if n == (Network{}) {
		return nil
	}
	return &n
}
