package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"simd/engine"
)

// JobRow is one row of jobs.csv: a job of a multi-job run, its iteration time together with the
// other jobs and alone on the same GPUs, and the slowdown the sharing cost it.
type JobRow struct {
	Name, Workload string
	GPUs           []int32 // its placement, rank order
	Servers        int     // servers its GPUs are on
	Iterations     int
	StartUs        float64
	// TogetherUs is the mean of its complete iterations together (HasTogether false: none
	// completed); AloneUs the same alone (HasAlone false: not known).
	TogetherUs, AloneUs   float64
	HasTogether, HasAlone bool
}

// Slowdown is together / alone; ok is false when either is unknown.
func (r JobRow) Slowdown() (float64, bool) {
	if !r.HasTogether || !r.HasAlone || r.AloneUs <= 0 {
		return 0, false
	}
	return r.TogetherUs / r.AloneUs, true
}

// JobRows builds jobs.csv's rows from the run of jobs together and, per job, its mean
// iteration alone (alone[i] < 0: unknown; alone may be nil).
func JobRows(jobs []Job, together *JobsResult, alone []engine.Time) []JobRow {
	rows := make([]JobRow, len(jobs))
	for i, j := range jobs {
		l := j.Sim.layout
		gpus := make([]int32, l.GPUs)
		servers := map[int32]bool{}
		for r := range gpus {
			gpus[r] = l.GPU(r)
			servers[gpus[r]/int32(l.GPUsPerServer)] = true
		}
		row := JobRow{Name: j.Name, Workload: j.Sim.in.WorkloadName, GPUs: gpus, Servers: len(servers), Iterations: j.Iterations, StartUs: j.Start.Microseconds()}
		if together != nil {
			if t, ok := together.Jobs[i].MeanIteration(); ok {
				row.TogetherUs, row.HasTogether = t.Microseconds(), true
			}
		}
		if alone != nil && alone[i] >= 0 {
			row.AloneUs, row.HasAlone = alone[i].Microseconds(), true
		}
		rows[i] = row
	}
	return rows
}

// JobsCSVHeader is jobs.csv's header: times in µs, the placement as ascending GPU ranges.
var JobsCSVHeader = []string{"job", "workload", "gpus", "servers", "placement", "iterations", "start_us",
	"iteration_us_together", "iteration_us_alone", "slowdown"}

// WriteJobsCSV writes jobs.csv: a row per job, in the jobs file's order; an unknown figure is
// an empty field.
func WriteJobsCSV(w io.Writer, rows []JobRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(JobsCSVHeader); err != nil {
		return err
	}
	us := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	for _, r := range rows {
		sd, ok := r.Slowdown()
		slow := ""
		if ok {
			slow = strconv.FormatFloat(sd, 'f', 4, 64)
		}
		rec := []string{r.Name, r.Workload, strconv.Itoa(len(r.GPUs)), strconv.Itoa(r.Servers), GPURanges(r.GPUs),
			strconv.Itoa(r.Iterations), us(r.StartUs, true), us(r.TogetherUs, r.HasTogether), us(r.AloneUs, r.HasAlone), slow}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// GPURanges writes GPU ids as ascending ranges, "0-7 16-23" (space-separated, as a CSV field
// needs no quotes).
func GPURanges(gpus []int32) string {
	s := slices.Sorted(slices.Values(gpus))
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(int(s[i])))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// JobFigures are a jobs.csv row's figures; a pointer is nil for an empty field.
type JobFigures struct {
	Job        string   `json:"job"`
	TogetherUs *float64 `json:"iteration_us_together,omitempty"`
	AloneUs    *float64 `json:"iteration_us_alone,omitempty"`
	Slowdown   *float64 `json:"slowdown,omitempty"`
}

// ReadJobsCSV reads a jobs.csv (name names it in messages): each row's job and figures.
func ReadJobsCSV(r io.Reader, name string) ([]JobFigures, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(JobsCSVHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: %v", name, csvMessage(err))
	}
	if strings.Join(head, ",") != strings.Join(JobsCSVHeader, ",") {
		return nil, fmt.Errorf("%s:1: not a jobs.csv header (expected %s)", name, strings.Join(JobsCSVHeader, ","))
	}
	var out []JobFigures
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, csvMessage(err))
		}
		f := JobFigures{Job: rec[0]}
		for k, p := range []**float64{&f.TogetherUs, &f.AloneUs, &f.Slowdown} {
			field := rec[7+k]
			if field == "" {
				continue
			}
			v, err := strconv.ParseFloat(field, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: %s %q: expected a positive number", name, line, JobsCSVHeader[7+k], field)
			}
			*p = &v
		}
		out = append(out, f)
	}
}

// ReadJobsAlone reads the alone iteration times of an earlier run's jobs.csv (name names it in
// messages): per job name, µs. Jobs whose alone figure is empty are left out.
func ReadJobsAlone(r io.Reader, name string) (map[string]float64, error) {
	rows, err := ReadJobsCSV(r, name)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range rows {
		if f.AloneUs != nil {
			out[f.Job] = *f.AloneUs
		}
	}
	return out, nil
}

// csvMessage is a CSV reader's error without the position it repeats.
func csvMessage(err error) string {
	if pe, ok := err.(*csv.ParseError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// JobSummaryJSON is the summary.json of job i of a multi-job run (row is its jobs.csv row): its
// placement, every iteration's start and time, its figures together and alone, the breakdown of
// its last iteration and its collectives that finished.
func (r *JobsResult) JobSummaryJSON(i int, row JobRow, topology string) ([]byte, error) {
	j := &r.Jobs[i]
	type iteration struct {
		StartUs     float64 `json:"start_us"`
		IterationUs float64 `json:"iteration_us"`
		Complete    bool    `json:"complete"`
	}
	summary := struct {
		Mode        string         `json:"mode"`
		Job         string         `json:"job"`
		Workload    string         `json:"workload"`
		Topology    string         `json:"topology"`
		GPUs        int            `json:"gpus"`
		Placement   string         `json:"placement"`
		Iterations  []iteration    `json:"iterations"`
		TogetherUs  *float64       `json:"iteration_us_together"`
		AloneUs     *float64       `json:"iteration_us_alone"`
		Slowdown    *float64       `json:"slowdown"`
		Breakdown   *breakdownJSON `json:"breakdown,omitempty"`
		Collectives []Collective   `json:"collectives"`
	}{Mode: "jobs", Job: j.Name, Workload: row.Workload, Topology: topology, GPUs: len(row.GPUs), Placement: GPURanges(row.GPUs)}
	for k, it := range j.Iterations {
		summary.Iterations = append(summary.Iterations, iteration{StartUs: j.Starts[k].Microseconds(), IterationUs: it.End.Microseconds(), Complete: !it.Stopped})
	}
	if row.HasTogether {
		summary.TogetherUs = &row.TogetherUs
	}
	if row.HasAlone {
		summary.AloneUs = &row.AloneUs
	}
	if s, ok := row.Slowdown(); ok {
		summary.Slowdown = &s
	}
	if j.Report != nil {
		summary.Breakdown = breakdown(&j.Report.Summary)
	}
	summary.Collectives = finished(j.Collectives)
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// SummaryJSON is the summary.json of the whole multi-job run: the run's totals, as a single
// run's summary.json has them, and the jobs' names.
func (r *JobsResult) SummaryJSON(topology string) ([]byte, error) {
	summary := struct {
		Mode     string   `json:"mode"`
		Topology string   `json:"topology"`
		Jobs     []string `json:"jobs"`
		Run      runJSON  `json:"run"`
	}{Mode: "jobs", Topology: topology, Run: totals(r.Stopped, r.Note, r.End, r.Events, r.Sim, r.Wall)}
	for _, j := range r.Jobs {
		summary.Jobs = append(summary.Jobs, j.Name)
	}
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
