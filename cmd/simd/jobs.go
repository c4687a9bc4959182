package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"simd/engine"
	"simd/workloads"
	"simd/workloads/sim"
)

// runJobs is simd -jobs FILE: the jobs of a jobs file placed on the cluster (-n, or the default
// fabric of -g GPUs) and run together on it (sim.RunJobs). The event mode runs them together
// and, unless -jobs-alone says otherwise, each alone on the same GPUs, and writes jobs.csv
// (together, alone, slowdown), JOB/EndToEnd.csv and JOB/summary.json per job, and the shared
// run's fct.txt, pfc.txt, monitors and summary.json. The analytical mode prices each job with
// SimAI's formulas: jobs do not interfere there, so together and alone are the same.
func runJobs(ctx context.Context, o *options, log *zap.Logger, stdout, stderr io.Writer) error {
	if o.workload != "" || o.flows != "" {
		return badInputf("-jobs runs the workloads its file lists: -w and -flows do not go with it")
	}
	if o.mode == "compare" {
		return badInputf("-mode compare: not for -jobs (run -mode analytical and the event mode apart)")
	}
	f, err := sim.ReadJobs(o.jobs, "-jobs")
	if err != nil {
		return err
	}
	ov, err := overlaps(o)
	if err != nil {
		return err
	}
	conf, err := sim.ReadConf(o.conf, "-c", log)
	if err != nil {
		return err
	}
	cl, err := clusterRequest(o).Resolve(nil, log)
	if err != nil {
		return err
	}
	js, err := sim.NewJobs(sim.JobsInputs{File: f, Cluster: cl, Conf: conf, ConfPath: o.conf, Options: sim.Options{Overlap: ov},
		ParseOptions: workloads.ParseOptions{AllowShortCount: o.allowShortWorkload}})
	if err != nil {
		return err
	}
	dir := filepath.Join(o.outDir, o.resultFolder)
	if o.mode == "analytical" {
		return jobsAnalytical(js, dir, cl.Fabric, stdout, newTimeline(o.trace, o.traceAllRanks, "mode", "analytical", "jobs", o.jobs, "topology", cl.Fabric), o.trace)
	}
	alone, err := jobsAlone(o.jobsAlone, js)
	if err != nil {
		return err
	}
	opt, err := eventOptions(o)
	if err != nil {
		return err
	}
	fs := sim.NewFiles(dir, "", !o.set["o"] && o.conf != "", &conf, o.conf)
	fs.Concurrent = secondCore(o.threads)
	fs.Log = log
	fs.Links = o.plot || o.report // the link plots and the report read links.csv and link_classes.csv
	if err := fs.Check(); err != nil {
		return err
	}
	att := fs.Attachments()
	defer fs.Abort()
	tl := newTimeline(o.trace, o.traceAllRanks, "mode", "event", "jobs", o.jobs, "topology", cl.Fabric)
	if tl != nil {
		att = tl.Attach(att, js)
	}
	prog := newProgress(stderr, o.quiet, o.progressEvery, "steps")
	att.Watch = prog.watch()
	rctx, cancel := o.limits.runContext(ctx)
	defer cancel()
	r, err := sim.RunJobs(rctx, js, opt, att)
	prog.finish()
	if err != nil {
		return err
	}
	sim.LogCounters(log, r.Sim, r.Events)
	if alone == nil && r.Stopped == nil {
		// Each job alone on its GPUs, with the same options and nothing written.
		var a *sim.JobsResult
		if alone, a, err = sim.RunAlone(rctx, js, opt); err != nil {
			return err
		}
		if a != nil {
			return stopped(a.Stopped, a.End, fmt.Sprintf("job %s alone was stopped; the together run's files are written, jobs.csv is not", a.Jobs[0].Name))
		}
	}
	files, err := fs.Commit()
	if err != nil {
		return err
	}
	if tl != nil {
		for i, j := range r.Jobs {
			tl.Collectives(i, j.Collectives, r.End)
		}
		if err := tl.Finish(o.trace, r.Note); err != nil {
			return err
		}
		files = append(files, o.trace)
	}
	rows := sim.JobRows(js, r, alone)
	written, err := sim.WriteJobs(dir, r, rows, cl.Fabric)
	if err != nil {
		return err
	}
	if data, err := r.SummaryJSON(cl.Fabric); err != nil {
		return err
	} else if p, err := fs.Write("summary.json", data); err != nil {
		return err
	} else {
		files = append(files, p)
	}
	fmt.Fprintf(stdout, "simd jobs: %s, %d jobs on %s (%d GPUs)\n", o.jobs, len(js), cl.Fabric, cl.GPUs)
	printJobRows(stdout, rows)
	fmt.Fprintf(stdout, "  the jobs together: simulated %d flows, %d events in %.2f s\n", r.Sim.Flows(), r.Events, r.Wall.Seconds())
	for _, p := range append(files, written...) {
		fmt.Fprintf(stdout, "results: %s\n", p)
	}
	if r.Stopped != nil {
		fmt.Fprintf(stdout, "  incomplete: %s\n", r.Note)
		return stopped(r.Stopped, r.End, "the outputs hold what was computed and are marked incomplete")
	}
	// -plot and -report: the shared run's in dir (FCT slowdowns, links), each job's layers in
	// its folder.
	s := &session{o: o, log: log, stdout: stdout, stderr: stderr}
	if err := s.afterRun(dir, ""); err != nil {
		return err
	}
	job := *s
	job.stderr = io.Discard // a job's folder has no network files: they are the shared run's
	for _, j := range js {
		if err := job.afterRun(filepath.Join(dir, j.Name), ""); err != nil {
			return err
		}
	}
	return nil
}

// jobsAlone reads -jobs-alone: "run" (nil: run each job alone), "none" (unknown), or an
// earlier run's jobs.csv, whose alone figures are matched by job name.
func jobsAlone(v string, js []sim.Job) ([]engine.Time, error) {
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
	return sim.ReadAlone(v, "-jobs-alone", js)
}

// jobsAnalytical prices every job with SimAI's formulas (sim.JobsAnalytical) and writes jobs.csv
// and each job's EndToEnd.csv; together and alone are the same there.
func jobsAnalytical(js []sim.Job, dir, fabric string, stdout io.Writer, tl *sim.Timeline, trace string) error {
	rows, written, err := sim.JobsAnalytical(js, dir, tl)
	if err != nil {
		return err
	}
	p, err := sim.WriteJobsCSVFile(dir, rows)
	if err != nil {
		return err
	}
	if tl != nil {
		if err := tl.Write(trace); err != nil {
			return err
		}
		written = append(written, trace)
	}
	fmt.Fprintf(stdout, "simd jobs (analytical): %d jobs on %s; the analytical mode prices each job alone, so jobs do not slow each other (the event mode shares the fabric)\n", len(js), fabric)
	printJobRows(stdout, rows)
	for _, p := range append(written, p) {
		fmt.Fprintf(stdout, "results: %s\n", p)
	}
	return nil
}

// printJobRows prints jobs.csv's figures as a table.
func printJobRows(w io.Writer, rows []sim.JobRow) {
	fmt.Fprintf(w, "  %-16s %6s %8s %11s %14s %14s %9s\n", "job", "GPUs", "servers", "iterations", "together (us)", "alone (us)", "slowdown")
	f := func(v float64, ok bool) string {
		if !ok {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
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
