package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"simd/engine"
	"simd/netmodel"
	"simd/workloads"
)

// Several jobs on one fabric: each job is a Simulation of its own workload placed on some of
// the topology's GPUs (Options.Placement); RunJobs runs them together in the event mode, on one
// clock and one network, so their flows share links as the flows of one job do. A job runs its
// iterations back to back from its start time; every iteration is a pass of its own (its
// figures count from its start), and the job's report is its last iteration's.

// Job is one job of a multi-job run.
type Job struct {
	Name string
	// Sim is the job's workload on the shared cluster, with its placement; every job of a run
	// has the same topology and SimAI.conf.
	Sim *Simulation
	// Start is when the job's first iteration begins; Iterations how many it runs (at least 1).
	Start      engine.Time
	Iterations int
}

// JobResult is what one job of a multi-job run did.
type JobResult struct {
	Name string
	// Iterations holds each iteration's figures, counted from its start (Starts): as many as
	// began; when the run was stopped the last may be partial (its Stopped set).
	Iterations []*workloads.RunResult
	Starts     []engine.Time
	// Report is EndToEnd.csv for the last iteration.
	Report      *workloads.EventReport
	Collectives []Collective
}

// Complete reports whether every iteration the job asked for ran to its end.
func (j *JobResult) Complete(want int) bool {
	return len(j.Iterations) == want && !j.Iterations[want-1].Stopped
}

// MeanIteration is the mean time of the job's complete iterations; ok is false when none is.
func (j *JobResult) MeanIteration() (t engine.Time, ok bool) {
	var sum engine.Time
	n := 0
	for _, it := range j.Iterations {
		if !it.Stopped {
			sum += it.End
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / engine.Time(n), true
}

// JobsResult is what a multi-job run produced.
type JobsResult struct {
	Jobs   []JobResult
	Sim    *netmodel.Simulator
	Events uint64
	Wall   time.Duration
	// Stopped and Note are as in Result; End is the simulated time the run reached.
	Stopped error
	Note    string
	End     engine.Time
}

// RunJobs runs jobs together on their shared fabric in the event mode; opt and att are as for
// Simulation.Event (one simulator, so one fct.txt and one set of monitors for all jobs).
// Placements must not overlap.
func RunJobs(ctx context.Context, jobs []Job, opt EventOptions, att Attachments) (*JobsResult, error) {
	if len(jobs) == 0 {
		return nil, BadInputf("no jobs to run")
	}
	first := jobs[0].Sim
	cl := &first.in.Cluster
	owner := map[int32]string{}
	for _, j := range jobs {
		in := &j.Sim.in
		if in.Cluster.Topology != cl.Topology {
			return nil, BadInputf("job %s: every job of a run must be on the same topology", j.Name)
		}
		if j.Iterations < 1 {
			return nil, BadInputf("job %s: %d iterations: at least 1", j.Name, j.Iterations)
		}
		if j.Start < 0 {
			return nil, BadInputf("job %s: starts at %v, before the run", j.Name, j.Start)
		}
		l := j.Sim.layout
		if cl.Topology.NumGPUs() < l.GPUs {
			return nil, BadInputf("job %s runs on %d GPUs but the topology (%s) has %d", j.Name, l.GPUs, cl.Fabric, cl.Topology.NumGPUs())
		}
		for r := range l.GPUs {
			g := l.GPU(r)
			if o, taken := owner[g]; taken {
				return nil, BadInputf("jobs %s and %s are both placed on GPU %d", o, j.Name, g)
			}
			owner[g] = j.Name
		}
	}
	fab, sel, err := cl.fabricAndSelector(opt.Algorithms)
	if err != nil {
		return nil, err
	}
	// Memory: the jobs' plans and flows in flight may all be there at once.
	ccOn := netmodel.CCOn(&first.in.Conf)
	var total memoryEstimate
	var flows int64
	for _, j := range jobs {
		est, err := j.Sim.estimateMemory(sel, cl.Topology.NumLinks(), fab.TotalGPUs(), ccOn, opt.Chunks, opt.QPsPerConnection)
		if err != nil {
			return nil, BadInput(err)
		}
		if total.Bytes == 0 {
			total = est
		} else {
			total.Bytes += est.Bytes - bytesBase - int64(cl.Topology.NumLinks())*bytesPerLink
		}
		flows += est.Flows * int64(j.Iterations)
	}
	if err := checkMemory(total, opt.MaxMemory); err != nil {
		return nil, err
	}
	sched, sim, err := att.simulator(&first.in.Conf, first.in.ConfPath, fab, false, opt, true, first.log)
	if err != nil {
		return nil, err
	}
	runs := make([]*jobRun, len(jobs))
	running := len(jobs) // jobs with iterations to go
	jobEnded := func() {
		if running--; running == 0 && att.Ended != nil {
			att.Ended()
		}
	}
	for i, j := range jobs {
		net := &collectiveNetwork{s: sched, sim: sim, sel: sel, w: j.Sim.in.Workload, layout: j.Sim.layout, total: fab.TotalGPUs(), chunks: opt.Chunks,
			latency: latency(opt.SendLatency), dispatch: opt.EPDispatch, model: opt.DispatchModel, ranked: !opt.RanksInLockstep,
			stageRanks: opt.StageRanksOnTheirOwn}
		if net.dispatch != 0 {
			net.model.Seed ^= opt.Seed
		}
		jr := &jobRun{job: j, net: net, s: sched, ended: jobEnded, index: i, att: &att}
		it, err := j.Sim.newIteration(sched, net)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
		_, jr.steps = it.Progress()
		jr.next(j.Start)
		runs[i] = jr
	}
	began := time.Now()
	flowsDone := newFlowsDone(sim.Progress, sim.ProgressCounted)
	status := func() Status {
		st := flowsDone.status(Status{Events: sched.Processed(), Now: sched.Now(), Flows: flows, Started: sim.Flows() > 0})
		for _, jr := range runs {
			done, _ := jr.runner.Progress()
			st.Done += jr.steps*(len(jr.runners)-1) + done
			st.Total += jr.steps * jr.job.Iterations
		}
		return st
	}
	g := watchRun(ctx, sched, opt.MaxEvents, att.Watch, status)
	sched.Run()
	stopped := g.finish()
	wall := time.Since(began)
	res := &JobsResult{Sim: sim, Events: sched.Processed(), Wall: wall, Stopped: stopped, End: sched.Now()}
	runErr := sim.Err()
	// A job's error stops every job: report the job that had it.
	for _, jr := range runs {
		for k, r := range jr.runners {
			if err := r.Err(); err != nil && runErr == nil {
				runErr = fmt.Errorf("job %s, iteration %d: %w", jr.job.Name, k+1, err)
			}
		}
	}
	for _, jr := range runs {
		out := JobResult{Name: jr.job.Name, Starts: jr.starts, Collectives: jr.net.records}
		for k, r := range jr.runners {
			it, err := r.Result()
			if err != nil && runErr == nil && stopped == nil {
				runErr = fmt.Errorf("job %s, iteration %d: %w", jr.job.Name, k+1, err)
			}
			if err != nil {
				it = r.Partial()
			}
			out.Iterations = append(out.Iterations, it)
		}
		res.Jobs = append(res.Jobs, out)
	}
	if err := linkDownResult(&first.in.Conf, first.in.ConfPath, runErr, res.End, first.log); err != nil {
		return nil, err
	}
	if stopped != nil {
		res.Note = res.jobsNote(jobs)
	}
	for i := range res.Jobs {
		jr := &res.Jobs[i]
		last := jr.Iterations[len(jr.Iterations)-1]
		rep, err := workloads.EventEndToEnd(jobs[i].Sim.in.Workload, last, jobs[i].Sim.reportOptions())
		if err != nil {
			return nil, BadInput(err)
		}
		if last.Stopped {
			rep.Incomplete = res.Note
		}
		jr.Report = rep
	}
	return res, nil
}

// jobRun is a job's iterations as they run: a runner per iteration that has begun.
type jobRun struct {
	job     Job
	net     *collectiveNetwork
	s       *engine.Scheduler
	steps   int // plan steps of one iteration, for progress
	runner  iteration
	runners []iteration
	starts  []engine.Time
	ended   func() // called when the job's last iteration ends
	index   int    // the job's place in the run
	att     *Attachments
}

// next begins the job's next iteration at time at.
func (jr *jobRun) next(at engine.Time) {
	r, err := jr.job.Sim.newIteration(jr.s, jr.net)
	if err != nil {
		panic(err) // checked by RunJobs before the run, with the same workload and layout
	}
	jr.att.observe(r, jr.index, len(jr.runners))
	jr.runner = r
	jr.runners = append(jr.runners, r)
	jr.starts = append(jr.starts, at)
	r.Start(at, func() {
		if len(jr.runners) < jr.job.Iterations {
			jr.next(jr.s.Now())
		} else {
			jr.ended()
		}
	})
}

// jobsNote is the note of a stopped multi-job run: why and where it stopped, and how far each
// job came.
func (r *JobsResult) jobsNote(jobs []Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopped by %s after %d events at %s us simulated;", r.Stopped, r.Events, strconv.FormatFloat(r.End.Microseconds(), 'f', 3, 64))
	for i, j := range r.Jobs {
		done := 0
		for _, it := range j.Iterations {
			if !it.Stopped {
				done++
			}
		}
		fmt.Fprintf(&b, " job %s %d of %d iterations finished;", j.Name, done, jobs[i].Iterations)
	}
	return strings.TrimSuffix(b.String(), ";")
}
