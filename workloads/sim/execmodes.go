package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/configs"
	"simd/engine"
	"simd/workloads"
	"simd/workloads/chakra"
)

// Execute's modes: each reads its inputs, attaches the output files, the timeline and the
// progress report, runs, commits the files, writes the reports and prints the summary.

// session is what every mode of a workload needs: the inputs read and checked, the cluster
// settled and the workload laid out on it.
type session struct {
	r      *Request
	h      Hooks
	conf   configs.SimAIConf
	w      *workloads.Workload
	wname  string
	cl     Cluster
	sim    *Simulation
	layout ccl.Layout
	prefix string // the result prefix (-r or derived)
}

func (r *Request) newSession(h Hooks) (*session, error) {
	s := &session{r: r, h: h}
	if err := checkOverlap(r.Overlap); err != nil {
		return nil, err
	}
	if r.Lang != "en" && r.Lang != "ja" {
		return nil, BadInputf("-l %q: expected en or ja", r.Lang)
	}
	var err error
	if s.conf, err = ReadConf(r.Conf, "-c", h.Log); err != nil {
		return nil, err
	}
	name := r.Workload
	if name == "" {
		name = configs.ExamplePrefix + DefaultExample
		fmt.Fprintf(h.Stdout, "no -w given: running the shipped example %s\n", DefaultExample)
	}
	if s.w, s.wname, err = ReadWorkload(name, "-w", r.Parse, h.Log); err != nil {
		return nil, err
	}
	if s.cl, err = r.Cluster.Resolve(s.w, h.Log); err != nil {
		return nil, err
	}
	var busbw *configs.BusBW // -busbw, nil without
	if r.BusBW != "" {
		b, err := ReadBusBW(r.BusBW, "-busbw")
		if err != nil {
			return nil, err
		}
		busbw = &b
	}
	s.prefix = r.Prefix // -r
	if !r.PrefixGiven {
		s.prefix = workloads.ResultPrefix(s.wname, s.cl.GPUsPerServer, s.cl.NICGBps, r.Overlap.DP)
	}
	fileName := s.prefix[strings.LastIndex(s.prefix, "/")+1:] // the report's "File name": the prefix after its last '/'
	s.sim, err = New(Inputs{Workload: s.w, WorkloadName: s.wname, Cluster: s.cl, Conf: s.conf, ConfPath: r.Conf, Log: h.Log},
		Options{Overlap: r.Overlap, BusBW: busbw, FileName: fileName})
	if err != nil {
		return nil, err
	}
	s.layout = s.sim.Layout()
	return s, nil
}

// checkOverlap checks the overlap ratios: SimAI documents them as 0 to 1, and outside that
// range its single-precision scaling produces negative exposed times.
func checkOverlap(ov workloads.Overlap) error {
	for _, r := range []struct {
		name string
		v    float32
	}{{"-dp_o", ov.DP}, {"-ep_o", ov.EP}, {"-tp_o", ov.TP}, {"-pp_o", ov.PP}} {
		if !(r.v >= 0 && r.v <= 1) {
			return BadInputf("%s %g: an overlap ratio must be between 0 and 1", r.name, r.v)
		}
	}
	return nil
}

// chart is the language of the pie chart, "" for none.
func (r *Request) chart() string {
	if r.Chart {
		return r.Lang
	}
	return ""
}

// outDir is the folder of the outputs: -o and -r_f.
func (r *Request) outDir() string { return filepath.Join(r.OutDir, r.ResultFolder) }

// files places an event run's files (see -o in simd -h): with -o every file goes into the
// output folder under its standard name and SimAI.conf's *_OUTPUT_FILE and *_MON_FILE keys only
// switch outputs on or off; without -o the paths a user's SimAI.conf gives are used as they
// are, and the rest goes to results/. With the shipped SimAI.conf, whose paths are SimAI's
// /etc/astra-sim ones, everything goes to the output folder.
func (r *Request) files(prefix string, conf *configs.SimAIConf, h Hooks) *Files {
	fs := NewFiles(r.outDir(), prefix, !r.OutDirGiven && r.Conf != "", conf, r.Conf)
	fs.Concurrent = UseSecondCore(r.Event.Threads)
	fs.Log = h.Log
	fs.Links = r.Links
	return fs
}

// eventFiles are the session's event run's files; every one gets -r's prefix.
func (s *session) eventFiles() *Files {
	prefix := ""
	if s.r.PrefixGiven {
		prefix = s.r.Prefix
	}
	return s.r.files(prefix, &s.conf, s.h)
}

func (s *session) analytical() (Outcome, error) {
	r := s.r
	tl := newTimeline(r.Timeline, r.TimelineAllRanks, "mode", "analytical", "workload", s.wname, "topology", s.cl.Fabric)
	rep, err := tl.Analytical(s.wname, s.sim)
	if err != nil {
		return Outcome{}, err
	}
	base := filepath.Join(r.outDir(), s.prefix)
	if strings.HasSuffix(s.prefix, "/") {
		base += string(filepath.Separator)
	}
	written, err := WriteAnalytical(rep, base, r.chart())
	if err != nil {
		return Outcome{}, err
	}
	if written, err = tl.finishInto(written, r.Timeline, ""); err != nil {
		return Outcome{}, err
	}
	s.printAnalytical(rep, written)
	return Outcome{Analytical: rep, Files: written, Folders: []Folder{{Dir: r.outDir(), Prefix: s.prefix}}}, nil
}

func (s *session) printAnalytical(rep *workloads.AnalyticalReport, files []string) {
	w, l, cl, sm := s.h.Stdout, s.layout, s.cl, rep.Summary
	fmt.Fprintf(w, "simd analytical: %s, %d layers, %s\n", s.wname, len(s.w.Layers), s.w.Header.Policy)
	fmt.Fprintf(w, "  cluster: %d GPUs, %d per server, TP %d PP %d EP %d DP %d; NVLink %g GB/s, %d NICs of %g GB/s per server (%s)\n",
		l.GPUs, l.GPUsPerServer, l.TP, l.PP, l.EP, l.DP(), cl.NVLinkGBps, cl.NICsPerServer, cl.NICGBps, cl.Fabric)
	fmt.Fprintf(w, "  iteration: %s us = compute %s + exposed comm %s + bubble %s + PP comm %d\n",
		f0(sm.Total), f0(sm.Compute), f0(sm.Exposed), f0(sm.Bubble), sm.PPComm)
	fmt.Fprintf(w, "  exposed comm by group (us): TP %s, DP %s, DP_EP %s, EP %s\n", f0(sm.TPComm), f0(sm.DPComm), f0(sm.DPEPComm), f0(sm.EPComm))
	printFiles(w, files)
}

// f0 writes a figure in whole units.
func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// printFiles prints the files written, one "results:" line each.
func printFiles(w io.Writer, files []string) {
	for _, p := range files {
		fmt.Fprintf(w, "results: %s\n", p)
	}
}

// simulate runs the event mode (compare: the comparison) with the files, the timeline and the
// progress report attached; it returns the files it committed. The run's own result is in res
// or c.
func (s *session) simulate(ctx context.Context, fs *Files, compare bool) (res *Result, c *Comparison, files []string, err error) {
	r := s.r
	opt, err := r.eventOptions(false)
	if err != nil {
		return nil, nil, nil, err
	}
	att := fs.Attachments()
	defer fs.Abort()
	mode := "event"
	if compare {
		mode = "compare"
	}
	tl := newTimeline(r.Timeline, r.TimelineAllRanks, "mode", mode, "workload", s.wname, "topology", s.cl.Fabric)
	if tl != nil {
		att = tl.Attach(att, []Job{{Name: s.wname, Sim: s.sim}})
	}
	// The analytical mode prices the same iteration in milliseconds; its total is the progress
	// report's yardstick for the time left when the flows are not counted.
	expect := func() engine.Time {
		if rep, err := s.sim.Analytical(); err == nil && rep.Summary.Total > 0 {
			return engine.Time(rep.Summary.Total * float64(engine.Microsecond))
		}
		return 0
	}
	var finish func()
	att.Watch, finish = s.h.progress("steps", expect)
	ctx, cancel := WallLimit(ctx, r.Event.MaxWall)
	defer cancel()
	if compare {
		c, err = s.sim.Compare(ctx, opt, att)
		if c != nil {
			res = c.Event
		}
	} else {
		res, err = s.sim.Event(ctx, opt, att)
	}
	finish()
	if err != nil {
		return nil, nil, nil, err
	}
	if files, err = fs.Commit(); err != nil {
		return nil, nil, nil, err
	}
	if tl != nil {
		tl.Collectives(0, res.Collectives, res.End)
	}
	if files, err = tl.finishInto(files, r.Timeline, res.Note); err != nil {
		return nil, nil, nil, err
	}
	return res, c, files, nil
}

func (s *session) event(ctx context.Context) (Outcome, error) {
	fs := s.eventFiles()
	if err := fs.Check(); err != nil {
		return Outcome{}, err
	}
	res, _, files, err := s.simulate(ctx, fs, false)
	if err != nil {
		return Outcome{}, err
	}
	written, err := fs.WriteEvent(res, s.summaryHeader("event"), s.r.chart())
	if err != nil {
		return Outcome{}, err
	}
	files = append(files, written...)
	w, sm := s.h.Stdout, res.Report.Summary
	fmt.Fprintf(w, "simd event: %s, %d layers, %s\n", s.wname, len(s.w.Layers), s.w.Header.Policy)
	fmt.Fprintf(w, "  cluster: %d GPUs, %d per server, TP %d PP %d EP %d DP %d on %s\n",
		s.layout.GPUs, s.layout.GPUsPerServer, s.layout.TP, s.layout.PP, s.layout.EP, s.layout.DP(), s.cl.Fabric)
	iteration := "iteration"
	if res.Stopped != nil {
		iteration = "iteration up to the stop"
	}
	fmt.Fprintf(w, "  %s: %s us = compute %s + exposed comm %s + bubble %s + PP comm %d\n",
		iteration, f0(sm.Total), f0(sm.Compute), f0(sm.Exposed), f0(sm.Bubble), sm.PPComm)
	g := sm.WholeGroupsUs() // DP, DP_EP, TP, EP, adding up to the exposed comm printed above
	fmt.Fprintf(w, "  exposed comm by group (us): TP %s, DP %s, DP_EP %s, EP %s\n", f0(g[2]), f0(g[0]), f0(g[1]), f0(g[3]))
	fmt.Fprintf(w, "  simulated %d flows, %d events in %.2f s\n", res.Sim.Flows(), res.Events, res.Wall.Seconds())
	printFiles(w, files)
	if res.Stopped != nil {
		fmt.Fprintf(w, "  incomplete: %s\n", res.Report.Incomplete)
	}
	LogCounters(s.h.Log, res.Sim, res.Events)
	out := Outcome{Event: res, Files: files, Folders: []Folder{{Dir: fs.Dir(), Prefix: fs.Prefix()}}}
	return out, Stopped(res.Stopped, res.End, "the outputs hold what was computed and are marked incomplete")
}

// summaryHeader is what summary.json says of the session's run in mode.
func (s *session) summaryHeader(mode string) SummaryHeader {
	return SummaryHeader{Mode: mode, Workload: s.wname, Topology: s.cl.Fabric, GPUs: s.layout.GPUs}
}

// compare runs the analytical and the event mode on the same inputs (Compare) and writes
// compare.csv: per collective (layer and phase) and per layer, the analytical time, the event
// time, their ratio and, from the event run, the links that carried most of the collective's
// bytes as their slowest hop.
func (s *session) compare(ctx context.Context) (Outcome, error) {
	fs := s.eventFiles()
	if err := fs.Check(); err != nil {
		return Outcome{}, err
	}
	res, c, files, err := s.simulate(ctx, fs, true)
	if err != nil {
		return Outcome{}, err
	}
	written, err := fs.WriteComparison(c, s.summaryHeader("event"))
	if err != nil {
		return Outcome{}, err
	}
	files = append(files, written...)
	s.printCompare(c.Analytical, res.Report, c.Rows)
	printFiles(s.h.Stdout, files)
	if res.Stopped != nil {
		fmt.Fprintf(s.h.Stdout, "  incomplete: %s\n", res.Note)
	}
	out := Outcome{Analytical: c.Analytical, Event: res, Comparison: c, Files: files, Folders: []Folder{{Dir: fs.Dir(), Prefix: fs.Prefix()}}}
	return out, Stopped(res.Stopped, res.End, "the outputs hold the layers that finished and are marked incomplete")
}

func (s *session) printCompare(arep *workloads.AnalyticalReport, erep *workloads.EventReport, rows []CompareRow) {
	w := s.h.Stdout
	fmt.Fprintf(w, "simd compare: %s on %d GPUs (%s)\n", s.wname, s.layout.GPUs, s.cl.Fabric)
	fmt.Fprintf(w, "  iteration: analytical %s us, event %s us\n", f0(arep.Summary.Total), f0(erep.Summary.Total))
	fmt.Fprintf(w, "  %-5s %-24s %-5s %-13s %-5s %12s %12s %7s  %s\n", "layer", "name", "phase", "op", "group", "analyt. us", "event us", "ratio", "bottleneck links")
	const maxLines = 40
	for i, r := range rows {
		if i == maxLines {
			fmt.Fprintf(w, "  ... %d more rows in compare.csv\n", len(rows)-maxLines)
			break
		}
		ratio := "-"
		if r.AnalyticalUs > 0 {
			ratio = strconv.FormatFloat(r.EventUs/r.AnalyticalUs, 'f', 2, 64)
		}
		fmt.Fprintf(w, "  %-5d %-24.24s %-5s %-13s %-5s %12.1f %12.1f %7s  %s\n", r.Layer, r.Name, r.Phase, r.Op, r.Group, r.AnalyticalUs, r.EventUs, ratio, r.Bottlenecks)
	}
}

// runFlows runs the flows of an ns-3/HPCC flow file over the fabric of Cluster.TopologyFile,
// without a workload, for network studies (RunFlows); it writes fct.txt (and pfc.txt,
// summary.json) as the event mode does.
func (r *Request) runFlows(ctx context.Context, h Hooks) (Outcome, error) {
	if r.Workload != "" {
		return Outcome{}, BadInputf("-flows and -w are alternatives: give one")
	}
	topoFile := r.Cluster.TopologyFile
	if topoFile == "" {
		return Outcome{}, BadInputf("-flows needs a topology (-n TOPO): the flow file names its nodes")
	}
	conf, err := ReadConf(r.Conf, "-c", h.Log)
	if err != nil {
		return Outcome{}, err
	}
	t, err := ReadTopology(topoFile, "-n")
	if err != nil {
		return Outcome{}, err
	}
	flows, err := ReadFlowFile(r.Flows, "-flows")
	if err != nil {
		return Outcome{}, err
	}
	opt, err := r.eventOptions(false)
	if err != nil {
		return Outcome{}, err
	}
	prefix := ""
	if r.PrefixGiven {
		prefix = r.Prefix
	}
	fs := r.files(prefix, &conf, h)
	if err := fs.Check(); err != nil {
		return Outcome{}, err
	}
	att := fs.Attachments()
	defer fs.Abort()
	var finish func()
	att.Watch, finish = h.progress("flows", nil)
	ctx, cancel := WallLimit(ctx, r.Event.MaxWall)
	defer cancel()
	res, err := RunFlows(ctx, FlowInputs{Flows: flows, FlowsName: r.Flows, Topology: t, TopologyName: topoFile, Conf: conf, ConfPath: r.Conf, Log: h.Log}, opt, att)
	finish()
	if err != nil {
		return Outcome{}, err
	}
	files, err := fs.Commit()
	if err != nil {
		return Outcome{}, err
	}
	p, err := fs.WriteFlows(res, SummaryHeader{Mode: "flows", Workload: r.Flows, Topology: topoFile, GPUs: t.NumGPUs()})
	if err != nil {
		return Outcome{}, err
	}
	files = append(files, p)
	fmt.Fprintf(h.Stdout, "simd flows: %s on %s: %d flows, the last arriving at %.3f us; %d events in %.2f s\n",
		r.Flows, topoFile, len(flows), res.End.Microseconds(), res.Events, res.Wall.Seconds())
	printFiles(h.Stdout, files)
	if res.Stopped != nil {
		fmt.Fprintf(h.Stdout, "  incomplete: %s\n", res.Note)
	}
	LogCounters(h.Log, res.Sim, res.Events)
	return Outcome{Event: res, Files: files}, Stopped(res.Stopped, res.End, "fct.txt holds the flows that arrived; summary.json is marked incomplete")
}

// runJobs runs the jobs of a jobs file placed on the cluster (Cluster.TopologyFile, or the
// default fabric of its GPUs) together on it (RunJobs). The event mode runs them together and,
// unless JobsAlone says otherwise, each alone on the same GPUs, and writes jobs.csv (together,
// alone, slowdown), JOB/EndToEnd.csv and JOB/summary.json per job, and the shared run's fct.txt,
// pfc.txt, monitors and summary.json. The analytical mode prices each job with SimAI's
// formulas: jobs do not interfere there, so together and alone are the same.
func (r *Request) runJobs(ctx context.Context, h Hooks) (Outcome, error) {
	if r.Workload != "" || r.Flows != "" {
		return Outcome{}, BadInputf("-jobs runs the workloads its file lists: -w and -flows do not go with it")
	}
	if r.Mode == "compare" {
		return Outcome{}, BadInputf("-mode compare: not for -jobs (run -mode analytical and the event mode apart)")
	}
	f, err := ReadJobs(r.Jobs, "-jobs")
	if err != nil {
		return Outcome{}, err
	}
	if err := checkOverlap(r.Overlap); err != nil {
		return Outcome{}, err
	}
	conf, err := ReadConf(r.Conf, "-c", h.Log)
	if err != nil {
		return Outcome{}, err
	}
	cl, err := r.Cluster.Resolve(nil, h.Log)
	if err != nil {
		return Outcome{}, err
	}
	js, err := NewJobs(JobsInputs{File: f, Cluster: cl, Conf: conf, ConfPath: r.Conf, Options: Options{Overlap: r.Overlap}, ParseOptions: r.Parse})
	if err != nil {
		return Outcome{}, err
	}
	dir := r.outDir()
	if r.Mode == "analytical" {
		return r.jobsAnalytical(js, dir, cl.Fabric, h.Stdout)
	}
	alone, err := jobsAlone(r.JobsAlone, js)
	if err != nil {
		return Outcome{}, err
	}
	opt, err := r.eventOptions(false)
	if err != nil {
		return Outcome{}, err
	}
	fs := r.files("", &conf, h)
	if err := fs.Check(); err != nil {
		return Outcome{}, err
	}
	att := fs.Attachments()
	defer fs.Abort()
	tl := newTimeline(r.Timeline, r.TimelineAllRanks, "mode", "event", "jobs", r.Jobs, "topology", cl.Fabric)
	if tl != nil {
		att = tl.Attach(att, js)
	}
	var finish func()
	att.Watch, finish = h.progress("steps", nil)
	rctx, cancel := WallLimit(ctx, r.Event.MaxWall)
	defer cancel()
	res, err := RunJobs(rctx, js, opt, att)
	finish()
	if err != nil {
		return Outcome{}, err
	}
	LogCounters(h.Log, res.Sim, res.Events)
	if alone == nil && res.Stopped == nil {
		// Each job alone on its GPUs, with the same options and nothing written.
		var a *JobsResult
		if alone, a, err = RunAlone(rctx, js, opt); err != nil {
			return Outcome{}, err
		}
		if a != nil {
			return Outcome{}, Stopped(a.Stopped, a.End, fmt.Sprintf("job %s alone was stopped; the together run's files are written, jobs.csv is not", a.Jobs[0].Name))
		}
	}
	files, err := fs.Commit()
	if err != nil {
		return Outcome{}, err
	}
	if tl != nil {
		for i, j := range res.Jobs {
			tl.Collectives(i, j.Collectives, res.End)
		}
	}
	if files, err = tl.finishInto(files, r.Timeline, res.Note); err != nil {
		return Outcome{}, err
	}
	rows := JobRows(js, res, alone)
	written, err := WriteJobs(dir, res, rows, cl.Fabric)
	if err != nil {
		return Outcome{}, err
	}
	if data, err := res.SummaryJSON(cl.Fabric); err != nil {
		return Outcome{}, err
	} else if p, err := fs.Write("summary.json", data); err != nil {
		return Outcome{}, err
	} else {
		files = append(files, p)
	}
	fmt.Fprintf(h.Stdout, "simd jobs: %s, %d jobs on %s (%d GPUs)\n", r.Jobs, len(js), cl.Fabric, cl.GPUs)
	printJobRows(h.Stdout, rows)
	fmt.Fprintf(h.Stdout, "  the jobs together: simulated %d flows, %d events in %.2f s\n", res.Sim.Flows(), res.Events, res.Wall.Seconds())
	files = append(files, written...)
	printFiles(h.Stdout, files)
	out := Outcome{Jobs: res, JobRows: rows, Files: files}
	if res.Stopped != nil {
		fmt.Fprintf(h.Stdout, "  incomplete: %s\n", res.Note)
		return out, Stopped(res.Stopped, res.End, "the outputs hold what was computed and are marked incomplete")
	}
	// The shared run's folder (FCT slowdowns, links), then each job's layers in its folder.
	out.Folders = []Folder{{Dir: dir}}
	for _, j := range js {
		out.Folders = append(out.Folders, Folder{Dir: filepath.Join(dir, j.Name), Job: true})
	}
	return out, nil
}

// jobsAlone reads -jobs-alone: "run" (nil: run each job alone), "none" (unknown), or an
// earlier run's jobs.csv, whose alone figures are matched by job name.
func jobsAlone(v string, js []Job) ([]engine.Time, error) {
	switch v {
	case "run", "":
		return nil, nil
	case "none":
		out := make([]engine.Time, len(js))
		for i := range out {
			out[i] = -1
		}
		return out, nil
	}
	return ReadAlone(v, "-jobs-alone", js)
}

// jobsAnalytical prices every job with SimAI's formulas (JobsAnalytical) and writes jobs.csv
// and each job's EndToEnd.csv; together and alone are the same there.
func (r *Request) jobsAnalytical(js []Job, dir, fabric string, stdout io.Writer) (Outcome, error) {
	tl := newTimeline(r.Timeline, r.TimelineAllRanks, "mode", "analytical", "jobs", r.Jobs, "topology", fabric)
	rows, written, err := JobsAnalytical(js, dir, tl)
	if err != nil {
		return Outcome{}, err
	}
	p, err := WriteJobsCSVFile(dir, rows)
	if err != nil {
		return Outcome{}, err
	}
	if written, err = tl.finishInto(written, r.Timeline, ""); err != nil {
		return Outcome{}, err
	}
	fmt.Fprintf(stdout, "simd jobs (analytical): %d jobs on %s; the analytical mode prices each job alone, so jobs do not slow each other (the event mode shares the fabric)\n", len(js), fabric)
	printJobRows(stdout, rows)
	written = append(written, p)
	printFiles(stdout, written)
	return Outcome{JobRows: rows, Files: written}, nil
}

// printJobRows prints jobs.csv's figures as a table.
func printJobRows(w io.Writer, rows []JobRow) {
	fmt.Fprintf(w, "  %-16s %6s %8s %11s %14s %14s %9s\n", "job", "GPUs", "servers", "iterations", "together (us)", "alone (us)", "slowdown")
	f := func(v float64, ok bool) string {
		if !ok {
			return "-"
		}
		return f0(v)
	}
	for _, r := range rows {
		sd, ok := r.Slowdown()
		slow := "-"
		if ok {
			slow = strconv.FormatFloat(sd, 'f', 3, 64)
		}
		fmt.Fprintf(w, "  %-16s %6d %8d %11d %14s %14s %9s\n", r.Name, len(r.GPUs), r.Servers, r.Iterations, f(r.TogetherUs, r.HasTogether), f(r.AloneUs, r.HasAlone), slow)
	}
}

// traceInputs reads the Chakra trace and settles the cluster: the GPU count given fixes the
// rank count (else the files found), and the default fabric is built for it when no topology is
// given.
func (r *Request) traceInputs(h Hooks) (TraceInputs, error) {
	var in TraceInputs
	deps, err := chakra.ParseDeps(r.Chakra.Deps)
	if err != nil {
		return in, BadInputf("-chakra-deps: %v", err)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"-roofline-tflops", r.Chakra.RooflineTFLOPS}, {"-roofline-gbps", r.Chakra.RooflineGBps}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return in, BadInputf("%s %g: expected a finite number, 0 or more", f.name, f.v)
		}
	}
	copt := chakra.Options{CommGroups: r.Chakra.CommGroups, Deps: deps}
	if r.Cluster.GPUs != nil {
		copt.Ranks = *r.Cluster.GPUs
	}
	tr, err := chakra.Load(r.Workload, copt)
	if err != nil {
		return in, BadInputf("-w: %v", err)
	}
	if in.Conf, err = ReadConf(r.Conf, "-c", h.Log); err != nil {
		return in, err
	}
	req := r.Cluster
	if req.GPUs == nil && req.TopologyFile == "" {
		n := tr.Ranks()
		req.GPUs = &n
	}
	if in.Cluster, err = req.Resolve(nil, h.Log); err != nil {
		return in, err
	}
	in.Trace, in.ConfPath, in.Log = tr, r.Conf, h.Log
	in.Exec = chakra.ExecOptions{PeakTFLOPS: r.Chakra.RooflineTFLOPS, MemGBps: r.Chakra.RooflineGBps}
	return in, nil
}

// runTrace runs a Chakra trace in the analytical or the event mode (RunTraceAnalytical,
// RunTrace) and writes summary.json and ranks.csv (and in the event mode the files SimAI.conf
// asks for, as a workload run does).
func (r *Request) runTrace(ctx context.Context, h Hooks) (Outcome, error) {
	in, err := r.traceInputs(h)
	if err != nil {
		return Outcome{}, err
	}
	prefix := ""
	if r.PrefixGiven {
		prefix = r.Prefix
	}
	fs := r.files(prefix, &in.Conf, h)
	if r.Mode == "analytical" {
		fs = NewFiles(fs.Dir(), fs.Prefix(), false, &in.Conf, r.Conf)
		fs.Log = h.Log
	}
	if err := fs.Check(); err != nil {
		return Outcome{}, err
	}
	defer fs.Abort()
	tl := newTimeline(r.Timeline, r.TimelineAllRanks, "mode", r.Mode, "workload", r.Workload, "topology", in.Cluster.Fabric)
	if tl != nil {
		in.Observer = tl.TraceRanks("trace", in.Trace.Ranks())
	}
	var res *TraceResult
	var files []string
	switch r.Mode {
	case "analytical":
		if res, err = RunTraceAnalytical(in); err != nil {
			return Outcome{}, err
		}
	case "event":
		opt, err := r.eventOptions(true)
		if err != nil {
			return Outcome{}, err
		}
		att := fs.Attachments()
		if tl != nil {
			att = tl.AttachLinks(att)
		}
		var finish func()
		att.Watch, finish = h.progress("nodes", nil)
		rctx, cancel := WallLimit(ctx, r.Event.MaxWall)
		defer cancel()
		res, err = RunTrace(rctx, in, opt, att)
		finish()
		if err != nil {
			return Outcome{}, err
		}
		if files, err = fs.Commit(); err != nil {
			return Outcome{}, err
		}
	default:
		return Outcome{}, BadInputf("-mode %q: a Chakra trace runs in the analytical or event mode", r.Mode)
	}
	if files, err = tl.finishInto(files, r.Timeline, res.Note); err != nil {
		return Outcome{}, err
	}
	written, err := fs.WriteTrace(res, SummaryHeader{Mode: res.Mode, Workload: r.Workload, Topology: in.Cluster.Fabric, GPUs: in.Trace.Ranks()})
	if err != nil {
		return Outcome{}, err
	}
	files = append(files, written...)
	w, slow := h.Stdout, res.Slowest()
	f3 := func(t engine.Time) string { return strconv.FormatFloat(t.Microseconds(), 'f', 3, 64) }
	fmt.Fprintf(w, "simd %s: Chakra trace %s, %d ranks, %d nodes\n", res.Mode, r.Workload, in.Trace.Ranks(), in.Trace.Nodes())
	fmt.Fprintf(w, "  cluster: %d GPUs, %d per server on %s\n", in.Cluster.GPUs, in.Cluster.GPUsPerServer, in.Cluster.Fabric)
	end := "finished"
	if res.Stopped != nil {
		end = "up to the stop"
	}
	fmt.Fprintf(w, "  last rank %s: rank %d at %s us = compute %s + exposed comm %s\n", end, slow.Rank, f3(slow.Finish), f3(slow.Compute), f3(slow.Exposed))
	if res.Sim != nil {
		fmt.Fprintf(w, "  simulated %d collectives and sends, %d flows, %d events in %.2f s\n", len(res.Collectives), res.Sim.Flows(), res.Events, res.Wall.Seconds())
	} else {
		fmt.Fprintf(w, "  priced %d collectives and sends in %.2f s\n", len(res.Collectives), res.Wall.Seconds())
	}
	printFiles(w, files)
	if res.Stopped != nil {
		fmt.Fprintf(w, "  incomplete: %s\n", res.Note)
	}
	return Outcome{Trace: res, Files: files}, Stopped(res.Stopped, res.End, "the outputs hold what was computed and are marked incomplete")
}
