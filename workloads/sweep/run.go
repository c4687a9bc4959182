package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"simd/configs/atomicfile"
	"simd/workloads/sim"
)

// Run is one point of the grid.
type Run struct {
	Index    int
	Workload string // a workload file, or with Jobs a jobs file
	Jobs     bool
	Topology Topology
	Override Override
	Mode     string
}

// Folder is the run's folder name under the sweep's output folder.
func (r Run) Folder() string { return RunFolder(r.Index) }

// RunFolder is the folder name of run k: run-0000, run-0001, ...
func RunFolder(k int) string { return fmt.Sprintf("run-%04d", k) }

// Expand lists the runs of the grid: (workloads, then jobs files) × topologies × overrides ×
// modes, nested in that order (the mode varies fastest), numbered from 0.
func (s *Spec) Expand() []Run {
	var runs []Run
	add := func(w string, jobs bool) {
		for _, t := range s.Topologies {
			for _, o := range s.Overrides {
				for _, m := range s.Modes {
					runs = append(runs, Run{Index: len(runs), Workload: w, Jobs: jobs, Topology: t, Override: o, Mode: m})
				}
			}
		}
	}
	for _, w := range s.Workloads {
		add(w, false)
	}
	for _, j := range s.Jobs {
		add(j, true)
	}
	return runs
}

// Shard is shard I of N: the runs k with k mod N = I.
type Shard struct{ I, N int }

// All is the shard of every run.
var All = Shard{0, 1}

// Has reports whether run k belongs to the shard.
func (s Shard) Has(k int) bool { return k%s.N == s.I }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Select keeps the runs of the shard.
func (s Shard) Select(runs []Run) []Run {
	var out []Run
	for _, r := range runs {
		if s.Has(r.Index) {
			out = append(out, r)
		}
	}
	return out
}

// ParseShard reads "i/n" with 0 ≤ i < n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: expected i/n with 0 ≤ i < n, such as 0/4", v)
	}
	return Shard{i, n}, nil
}

// Environment variables that give the shard index and count of a job array.
const (
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"   // Kubernetes Indexed Job
	EnvSlurmTaskID        = "SLURM_ARRAY_TASK_ID"    // Slurm job array
	EnvSlurmTaskCount     = "SLURM_ARRAY_TASK_COUNT" // Slurm job array size
)

// ShardFromEnv picks the shard when no -shard is given: the index from JOB_COMPLETION_INDEX,
// else SLURM_ARRAY_TASK_ID; the count from shards when it is positive, else
// SLURM_ARRAY_TASK_COUNT. Without an index it is All; an index without a count is an error.
// (Slurm numbers the tasks of an array from --array's first value; use --array=0-(N-1).)
func ShardFromEnv(getenv func(string) string, shards int) (Shard, error) {
	name, idx := EnvJobCompletionIndex, getenv(EnvJobCompletionIndex)
	if idx == "" {
		name, idx = EnvSlurmTaskID, getenv(EnvSlurmTaskID)
	}
	if idx == "" {
		if shards > 1 {
			return Shard{}, fmt.Errorf("-shards %d without -shard, %s or %s: which shard is this?", shards, EnvJobCompletionIndex, EnvSlurmTaskID)
		}
		return All, nil
	}
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil || i < 0 {
		return Shard{}, fmt.Errorf("%s=%q: expected a shard index of 0 or more", name, idx)
	}
	n := shards
	if n <= 0 {
		c := getenv(EnvSlurmTaskCount)
		if c == "" {
			return Shard{}, fmt.Errorf("%s=%s but no shard count: give -shards N (or set %s)", name, idx, EnvSlurmTaskCount)
		}
		if n, err = strconv.Atoi(strings.TrimSpace(c)); err != nil || n < 1 {
			return Shard{}, fmt.Errorf("%s=%q: expected a count of 1 or more", EnvSlurmTaskCount, c)
		}
	}
	if i >= n {
		return Shard{}, fmt.Errorf("%s=%d: expected an index below the shard count %d", name, i, n)
	}
	return Shard{i, n}, nil
}

// OverrideConf returns SimAI.conf text with the override's keys set: the line of each key
// (the first field of a line) is replaced by "KEY value", keys the text lacks are appended.
func OverrideConf(base []byte, o Override) []byte {
	var out bytes.Buffer
	done := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(base))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		replaced := false
		if len(fields) > 0 {
			for _, p := range o.Params {
				if fields[0] == p.Key {
					if !done[p.Key] {
						fmt.Fprintf(&out, "%s %s\n", p.Key, p.Value)
					}
					done[p.Key], replaced = true, true
					break
				}
			}
		}
		if !replaced {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	for _, p := range o.Params {
		if !done[p.Key] {
			fmt.Fprintf(&out, "%s %s\n", p.Key, p.Value)
		}
	}
	return out.Bytes()
}

// Result is the iteration's breakdown, in µs, from a run's EndToEnd.csv.
type Result struct {
	IterationUs   float64 `json:"iteration_us"`
	ComputeUs     float64 `json:"compute_us"`
	ExposedCommUs float64 `json:"exposed_comm_us"`
	TPUs          float64 `json:"exposed_tp_us"`
	DPUs          float64 `json:"exposed_dp_us"`
	DPEPUs        float64 `json:"exposed_dp_ep_us"`
	EPUs          float64 `json:"exposed_ep_us"`
	PPUs          float64 `json:"exposed_pp_us"`
	BubbleUs      float64 `json:"bubble_us"`
}

// ParseEndToEnd reads the summary row of an EndToEnd.csv (the second line: File name, Expose
// DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time,
// total comp, total exposed comm, Total time; values such as "577 (34.17%)").
func ParseEndToEnd(r io.Reader, name string) (Result, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	head, err := cr.Read()
	if err != nil {
		return Result{}, fmt.Errorf("%s: %v", name, err)
	}
	row, err := cr.Read()
	if err != nil {
		return Result{}, fmt.Errorf("%s:2: %v", name, err)
	}
	if len(head) < 10 || len(row) < 10 || !strings.HasPrefix(strings.TrimSpace(head[9]), "Total time") {
		return Result{}, fmt.Errorf("%s: expected SimAI's EndToEnd.csv summary (File name, Expose DP comm, ..., Total time)", name)
	}
	var v [9]float64
	for i := range v {
		f := strings.Fields(row[i+1])
		if len(f) == 0 {
			return Result{}, fmt.Errorf("%s:2: %s: empty", name, strings.TrimSpace(head[i+1]))
		}
		if v[i], err = strconv.ParseFloat(f[0], 64); err != nil {
			return Result{}, fmt.Errorf("%s:2: %s: %q: expected a number", name, strings.TrimSpace(head[i+1]), f[0])
		}
	}
	return Result{DPUs: v[0], DPEPUs: v[1], TPUs: v[2], EPUs: v[3], PPUs: v[4], BubbleUs: v[5],
		ComputeUs: v[6], ExposedCommUs: v[7], IterationUs: v[8]}, nil
}

// ManifestFile is the name of a run's manifest in its folder.
const ManifestFile = "manifest.json"

// Manifest is what a run leaves in its folder: its parameters, the exact command line, how it
// ended and what it wrote. Paths of outputs are relative to the run's folder.
type Manifest struct {
	Run         int      `json:"run"`
	Shard       string   `json:"shard"`
	Workload    string   `json:"workload"`
	Topology    string   `json:"topology"`
	TopoFlags   []Param  `json:"topology_flags,omitempty"`
	TopoFile    string   `json:"topology_file,omitempty"`
	Conf        string   `json:"conf,omitempty"`
	Overrides   []Param  `json:"overrides"`
	Mode        string   `json:"mode"`
	Args        []string `json:"args"`
	ExitCode    int      `json:"exit_code"`
	Error       string   `json:"error,omitempty"`
	WallSeconds float64  `json:"wall_seconds"`
	Outputs     []string `json:"outputs"`
	Result      *Result  `json:"result,omitempty"`
	Network     *Network `json:"network,omitempty"`
	// JobsFile is set for a run of a jobs file (Workload is then the file), and Jobs holds its
	// jobs.csv rows, each with its last iteration's EndToEnd.csv (Result is then absent).
	JobsFile bool        `json:"jobs_file,omitempty"`
	Jobs     []JobResult `json:"jobs,omitempty"`
}

// JobResult is one job of a jobs-file run: its jobs.csv figures and its EndToEnd.csv's.
type JobResult struct {
	sim.JobFigures
	Result *Result `json:"result,omitempty"`
}

// Network is what an event-mode run's logs say about the fabric: the median and 99th percentile
// of the flows' FCT slowdown (fct / standalone fct, from fct.txt) and the PFC pauses (pfc.txt).
// A field is absent when its log was not written.
type Network struct {
	FCTSlowdownP50 *float64 `json:"fct_slowdown_p50,omitempty"`
	FCTSlowdownP99 *float64 `json:"fct_slowdown_p99,omitempty"`
	PFCPauses      *int     `json:"pfc_pauses,omitempty"`
}

// Quantile is the q-quantile (0 ≤ q ≤ 1) of sorted values by the nearest-rank rule (the
// smallest value with at least q of the values at or below it); NaN for none.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// OverrideString is the overrides as K=V;K=V.
func (m *Manifest) OverrideString() string { return Override{Params: m.Overrides}.String() }

// ReadManifests reads every run-*/manifest.json under the folders, sorted by run index. A run
// index found twice is an error.
func ReadManifests(dirs []string) ([]Manifest, error) {
	var out []Manifest
	where := map[int]string{}
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "run-*", ManifestFile))
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			if _, err := os.Stat(dir); err != nil {
				return nil, err
			}
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			var m Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("%s: %v", p, err)
			}
			if prev, ok := where[m.Run]; ok {
				return nil, fmt.Errorf("run %d is in both %s and %s", m.Run, prev, p)
			}
			where[m.Run] = p
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no run-*/" + ManifestFile + " in the folders given")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// Merge gathers the runs of the sweep folders dirs (ReadManifests) into one table (WriteTable),
// written atomically to the file out, or to stdout when out is "". It returns how many runs the
// table holds. A folder without runs, an unreadable manifest or a run found twice is an input
// error (sim.InputError).
func Merge(dirs []string, out string, stdout io.Writer) (int, error) {
	ms, err := ReadManifests(dirs)
	if err != nil {
		return 0, sim.BadInput(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, ms); err != nil {
		return 0, err
	}
	if out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = atomicfile.Write(out, func(f *os.File) error { _, err := f.Write(buf.Bytes()); return err })
	}
	return len(ms), err
}

// TableHeader is the header of the merged table.
var TableHeader = []string{"run", "workload", "topology", "mode", "overrides", "exit_code",
	"iteration_us", "compute_us", "exposed_comm_us", "exposed_tp_us", "exposed_dp_us",
	"exposed_dp_ep_us", "exposed_ep_us", "exposed_pp_us", "bubble_us",
	"fct_slowdown_p50", "fct_slowdown_p99", "pfc_pauses",
	"job", "iteration_us_together", "iteration_us_alone", "slowdown", "wall_seconds"}

// WriteTable writes one CSV row per manifest, in the order given, and for a jobs file one row
// per job (its EndToEnd.csv's figures, then its jobs.csv figures in the four columns before
// wall_seconds, which are empty for a workload's run). Runs without a result (failed ones) have empty result
// columns.
func WriteTable(w io.Writer, ms []Manifest) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(TableHeader); err != nil {
		return err
	}
	for _, m := range ms {
		if !m.JobsFile || len(m.Jobs) == 0 {
			if err := cw.Write(tableRow(&m, m.Result, nil)); err != nil {
				return err
			}
			continue
		}
		for i := range m.Jobs {
			if err := cw.Write(tableRow(&m, m.Jobs[i].Result, &m.Jobs[i].JobFigures)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableRow is the merged table's row of run m with result r and, for a job, its figures.
func tableRow(m *Manifest, r *Result, job *sim.JobFigures) []string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	row := []string{strconv.Itoa(m.Run), m.Workload, m.Topology, m.Mode, m.OverrideString(), strconv.Itoa(m.ExitCode)}
	if r != nil {
		row = append(row, num(r.IterationUs), num(r.ComputeUs), num(r.ExposedCommUs), num(r.TPUs), num(r.DPUs),
			num(r.DPEPUs), num(r.EPUs), num(r.PPUs), num(r.BubbleUs))
	} else {
		row = append(row, "", "", "", "", "", "", "", "", "")
	}
	var p50, p99, pauses string
	if n := m.Network; n != nil {
		if n.FCTSlowdownP50 != nil {
			p50 = strconv.FormatFloat(*n.FCTSlowdownP50, 'f', 4, 64)
		}
		if n.FCTSlowdownP99 != nil {
			p99 = strconv.FormatFloat(*n.FCTSlowdownP99, 'f', 4, 64)
		}
		if n.PFCPauses != nil {
			pauses = strconv.Itoa(*n.PFCPauses)
		}
	}
	row = append(row, p50, p99, pauses)
	if job == nil {
		row = append(row, "", "", "", "")
	} else {
		opt := func(v *float64) string {
			if v == nil {
				return ""
			}
			return num(*v)
		}
		row = append(row, job.Job, opt(job.TogetherUs), opt(job.AloneUs), opt(job.Slowdown))
	}
	return append(row, strconv.FormatFloat(m.WallSeconds, 'f', 3, 64))
}
