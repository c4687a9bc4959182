package sim

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"simd/configs/atomicfile"
	"simd/engine"
	"simd/netmodel"
	"simd/netmodel/ccfluid"
	"simd/workloads"
)

// The reports written from a run's result once it is over, each file atomically (atomicfile.Write):
// EndToEnd.csv, chart.html, summary.json, compare.csv, ranks.csv, jobs.csv and the jobs'
// folders. The files written while a run goes on (fct.txt, pfc.txt, the monitors) are the
// observers of files.go.

// WriteWith writes a whole report under its standard name with write, buffered, and returns its
// path.
func (fs *Files) WriteWith(std string, write func(io.Writer) error) (string, error) {
	p := fs.path("", std)
	return p, writeReport(p, write)
}

// writeReport writes the file path atomically through a buffer filled by write.
func writeReport(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<16)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// bytesOf is a writer of data, for WriteWith.
func bytesOf(data []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(data); return err }
}

// writeAll writes the reports named in order, each with its writer, and returns their paths; it
// stops at the first error.
func (fs *Files) writeAll(reports []report) ([]string, error) {
	var paths []string
	for _, r := range reports {
		p, err := fs.WriteWith(r.std, r.write)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// report is one report to write: its standard name and its writer.
type report struct {
	std   string
	write func(io.Writer) error
}

// summaryReport is summary.json of a result with header h.
func summaryReport(summary func(SummaryHeader) ([]byte, error), h SummaryHeader) report {
	return report{"summary.json", func(w io.Writer) error {
		data, err := summary(h)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}}
}

// WriteEvent writes an event run's reports: EndToEnd.csv, summary.json (with header h) and, when
// chartLang is not "", chart.html, the pie chart of the time breakdown in that language (en or
// ja). It returns their paths in that order.
func (fs *Files) WriteEvent(r *Result, h SummaryHeader, chartLang string) ([]string, error) {
	reports := []report{{"EndToEnd.csv", r.Report.WriteCSV}, summaryReport(r.SummaryJSON, h)}
	if chartLang != "" {
		reports = append(reports, report{"chart.html", func(w io.Writer) error {
			return r.Report.Summary.WriteChart(w, r.Report.FileName, chartLang)
		}})
	}
	return fs.writeAll(reports)
}

// WriteComparison writes a comparison's reports: compare.csv, the event run's EndToEnd.csv, the
// analytical mode's analytical-EndToEnd.csv and the event run's summary.json (with header h).
// It returns their paths in that order.
func (fs *Files) WriteComparison(c *Comparison, h SummaryHeader) ([]string, error) {
	return fs.writeAll([]report{
		{"compare.csv", func(w io.Writer) error { c.WriteCSV(w); return nil }},
		{"EndToEnd.csv", c.Event.Report.WriteCSV},
		{"analytical-EndToEnd.csv", c.Analytical.WriteCSV},
		summaryReport(c.Event.SummaryJSON, h),
	})
}

// WriteFlows writes a flow file's summary.json (with header h) and returns its path.
func (fs *Files) WriteFlows(r *Result, h SummaryHeader) (string, error) {
	paths, err := fs.writeAll([]report{summaryReport(r.SummaryJSON, h)})
	if err != nil {
		return "", err
	}
	return paths[0], nil
}

// WriteTrace writes a Chakra trace run's reports: summary.json (with header h) and ranks.csv. It
// returns their paths in that order.
func (fs *Files) WriteTrace(r *TraceResult, h SummaryHeader) ([]string, error) {
	return fs.writeAll([]report{summaryReport(r.SummaryJSON, h), {"ranks.csv", r.WriteRanksCSV}})
}

// WriteAnalytical writes the analytical mode's report as SimAI_analytical names it, base +
// "EndToEnd.csv" (base is the output folder joined with the result prefix), and when chartLang
// is not "" the chart, base + "chart.html". It returns their paths in that order.
func WriteAnalytical(rep *workloads.AnalyticalReport, base, chartLang string) ([]string, error) {
	paths := []string{base + "EndToEnd.csv"}
	if err := writeReport(paths[0], rep.WriteCSV); err != nil {
		return nil, err
	}
	if chartLang != "" {
		p := base + "chart.html"
		if err := writeReport(p, func(w io.Writer) error { return rep.Summary.WriteChart(w, rep.FileName, chartLang) }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteJobs writes a multi-job run's reports in dir: each job's EndToEnd.csv and summary.json in
// its folder (dir/JOB), then jobs.csv of rows (JobRows); topology names the fabric. It returns
// their paths in that order.
func WriteJobs(dir string, r *JobsResult, rows []JobRow, topology string) ([]string, error) {
	var written []string
	for i, j := range r.Jobs {
		p := filepath.Join(dir, j.Name, "EndToEnd.csv")
		if err := writeReport(p, j.Report.WriteCSV); err != nil {
			return nil, err
		}
		data, err := r.JobSummaryJSON(i, rows[i], topology)
		if err != nil {
			return nil, err
		}
		q := filepath.Join(dir, j.Name, "summary.json")
		if err := writeReport(q, bytesOf(data)); err != nil {
			return nil, err
		}
		written = append(written, p, q)
	}
	p, err := WriteJobsCSVFile(dir, rows)
	if err != nil {
		return nil, err
	}
	return append(written, p), nil
}

// WriteJobsCSVFile writes dir/jobs.csv of rows (WriteJobsCSV) and returns its path.
func WriteJobsCSVFile(dir string, rows []JobRow) (string, error) {
	p := filepath.Join(dir, "jobs.csv")
	return p, writeReport(p, func(w io.Writer) error { return WriteJobsCSV(w, rows) })
}

// JobsAnalytical prices every job with SimAI's formulas, each from time 0 (jobs do not
// interfere in the analytical mode, so together and alone are the same), under the timeline tl
// when it is not nil, and writes each job's report to dir/JOB/EndToEnd.csv. It returns jobs.csv's
// rows, with each job's iteration together and alone, and the reports' paths.
func JobsAnalytical(jobs []Job, dir string, tl *Timeline) ([]JobRow, []string, error) {
	rows := JobRows(jobs, nil, nil)
	var written []string
	for i, j := range jobs {
		rep, err := tl.Analytical(j.Name, j.Sim)
		if err != nil {
			return nil, nil, err
		}
		rows[i].TogetherUs, rows[i].HasTogether = rep.Summary.Total, true
		rows[i].AloneUs, rows[i].HasAlone = rep.Summary.Total, true
		p := filepath.Join(dir, j.Name, "EndToEnd.csv")
		if err := writeReport(p, rep.WriteCSV); err != nil {
			return nil, nil, err
		}
		written = append(written, p)
	}
	return rows, written, nil
}

// RunAlone runs each job alone on its GPUs, with opt and nothing attached, one after the other,
// and returns each one's mean iteration time (-1 when none of its iterations completed): the
// alone figures of jobs.csv. When ctx stops a run, RunAlone returns that run's result (its one
// job named) instead, and no times.
func RunAlone(ctx context.Context, jobs []Job, opt EventOptions) (alone []engine.Time, stopped *JobsResult, err error) {
	alone = make([]engine.Time, len(jobs))
	for i, j := range jobs {
		a, err := RunJobs(ctx, []Job{j}, opt, Attachments{})
		if err != nil {
			return nil, nil, err
		}
		if a.Stopped != nil {
			return nil, a, nil
		}
		t, ok := a.Jobs[0].MeanIteration()
		if !ok {
			t = -1
		}
		alone[i] = t
	}
	return alone, nil, nil
}

// LogCounters logs the network model's counters after a run of events events: the solver's at
// debug level, congestion control's (and the packet model's of the NVLink, when it carried
// flows) at info level.
func LogCounters(log *zap.Logger, m *netmodel.Simulator, events uint64) {
	if n := m.Network(); n != nil {
		st := n.Stats()
		log.Debug("event run", zap.Uint64("flows", m.Flows()), zap.Uint64("events", events),
			zap.Uint64("recomputes", st.Recomputes), zap.Uint64("solves", st.Solves), zap.Uint64("rerated", st.Rerated),
			zap.Uint64("region_flows", st.RegionFlows), zap.Uint64("solved_flows", st.SolvedFlows), zap.Uint64("expansions", st.Expansions), zap.Uint64("bundled", st.Bundled),
			zap.Uint64("twins", st.Shadows),
			zap.Uint64s("recomputes_by_links", st.RecomputesByLinks[:]), zap.Uint64s("region_flows_by_links", st.RegionFlowsByLinks[:]))
	}
	if n := m.CCNetwork(); n != nil {
		st := n.Stats()
		log.Info("congestion control", zap.Uint64("marks", st.Marks), zap.Uint64("cnps", st.CNPs), zap.Uint64("rate_changes", st.RateChanges),
			zap.Uint64("pfc_pauses", st.Pauses), zap.Uint64("pfc_resumes", st.Resumes), zap.Uint64("switch_checks", st.SwitchChecks), zap.Uint64("switch_checks_bounded", st.SwitchChecksBounded),
			zap.Uint64("port_shares", st.Shares), zap.Uint64("shares_kept", st.SharesKept), zap.Uint64("targets_kept", st.TargetsKept), zap.Uint64("demands", st.Demands), zap.Uint64("window_targets", st.WindowTargets),
			zap.Uint64("events", st.Events))
		if ce := log.Check(zap.DebugLevel, "congestion control events"); ce != nil {
			fields := make([]zap.Field, 0, ccfluid.EventKinds)
			for k, name := range ccfluid.EventKindNames {
				fields = append(fields, zap.Uint64(name, st.EventsByKind[k]))
			}
			ce.Write(fields...)
		}
		if ps := n.PacketStats(); ps.Flows > 0 {
			log.Info("NVLink packet by packet", zap.Uint64("flows", ps.Flows), zap.Uint64("packets", ps.Packets),
				zap.Uint64("acks", ps.ACKs), zap.Uint64("events", ps.Events))
		}
	}
}
