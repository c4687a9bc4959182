// Package sim runs simd's simulations: it is the API a program uses to run one, and the
// command line (cmd/simd) is a thin shell over it.
//
// # Using it
//
// A run is built from typed inputs and run with a context:
//
//	s, err := sim.New(sim.Inputs{Workload: w, Cluster: cl, Conf: conf}, sim.Options{})
//	rep, err := s.Analytical()                              // SimAI_analytical's closed forms
//	res, err := s.Event(ctx, sim.EventOptions{SendLatency: -1}, att) // every flow on the fabric
//	cmp, err := s.Compare(ctx, opt, att)                    // both, collective by collective
//
// w is a parsed workload (workloads.Parse), cl the cluster (ClusterOf derives it from a
// topology; ClusterRequest.Resolve from a topology or none, the figures given and SimAI's
// tables, as simd's flags do), conf a parsed SimAI.conf (configs.ParseSimAIConf, or the shipped one). RunFlows
// runs an ns-3 flow file instead of a workload, RunMoE the DeepEP or FAST plans of simd moe gen's
// workloads, and RunJobs several workloads placed on disjoint GPUs of one fabric, together
// (Options.Placement places one; NewJobs places a jobs file's, package workloads/jobs). Cancelling ctx stops a run cleanly between two events: the result then holds what
// was computed up to there, Result.Stopped is the context's cause and Result.Note says where it
// stopped, as the outputs say it. Errors caused by the inputs are InputErrors.
//
// Outputs are never written by the run. Attachments hang observers on it: Open gives the PFC
// observer before the simulator is built, Attach adds flow observers (netmodel.FCTLog) and
// monitors once it is, Watch sees the run's Status every WatchEvents events (the progress
// report), and Ended is told when the workload's run is over (the simulator may go on for the
// monitors). Files is the set of observers that writes SimAI's files (fct.txt, pfc.txt, qlen.txt,
// bw.txt, rate.txt, cnp.txt) where SimAI.conf or an output folder puts them, under temporary
// names until Commit, and with Files.Links the link sampler's links.csv and link_classes.csv
// (netmodel.LinkSampler: every link's bytes over the whole run, in both network models, read
// without changing the run); the reports (EndToEnd.csv, compare.csv, summary.json) are written
// from the result (Result.Report, Comparison.WriteCSV, Result.SummaryJSON). Timeline records
// a run as a Chrome trace (package workloads/timeline): Attach hangs it on an event run, several
// jobs or an MoE run (the passes' workloads.Observer through Attachments.Observe, the link
// sampler, the MoE layers through Attachments.Dispatched); Collectives adds the run's records
// after it, Analytical runs the analytical mode under it, and Write writes the file.
//
// A whole run from files, as simd's command line describes it, is one call: Execute reads the
// inputs a Request names, builds the run, runs it with the files, the timeline and the caller's
// progress report (Hooks) attached, commits or aborts the files, writes the reports and prints
// the summary, and returns the results the summary was made from as values (Outcome: the
// analytical report, the event Result, the Comparison, the jobs' rows or the trace's result,
// and the files written); simd and simd sweep's runs both go through it. ExecuteMoE does the
// same for simd moe run's event mode, and ExecuteMoERun is the whole of simd moe run from its
// flags' values (MoERunRequest): the estimates or the event mode, the summary and metrics.json.
//
// # Where things are
//
//   - The event loop is engine.Scheduler's run loop (engine/scheduler.go): one clock, one heap
//     of events ordered by (time, sequence). Event builds a scheduler and a
//     netmodel.Simulator on it, starts the iteration, workloads.Ranks, a Runner per rank
//     (a single workloads.Runner with -ranks lockstep, workloads.Pipeline when PP > 1, rank
//     by rank with -ranks own-stages: newIteration), and runs the loop; RunJobs starts one per job and
//     iteration on the same loop. The watcher (watch.go) looks at the loop between events;
//     ETA (eta.go) estimates from what it sees the wall time a run still needs, for the
//     progress report.
//   - A collective becomes flows in collectiveNetwork.Start (event.go), or StartRank (ranks.go)
//     when the ranks run on their own, the first rank to reach it starting its runs
//     (netmodel.Simulator.RunRanks) and each joining as it reaches it: the algorithm selector
//     (ccl/algo) plans one flow DAG per group of the collective's kind (ccl/nccl, ccl/alltoall,
//     ccl/rhd, ...; DeepEP or FAST dispatches from workloads/moe for EP all-to-alls under
//     EventOptions.EPDispatch), plans are shared by every collective of the same operation, group
//     kind and size, and netmodel.Simulator.Run releases each DAG's flows onto the fabric as
//     their parents arrive; the fluid network (netmodel/fluid, netmodel/ccfluid) moves them.
//   - Execute (execute.go: the Request, its event settings and its errors, the wall-clock limit
//     and StoppedError; execmodes.go: each mode's reading, running, writing and summary) is
//     the glue of simd's modes: what the command line keeps is its flags, help, messages, exit
//     statuses and progress report.
//   - A run's input files are read in inputs.go (ReadConf, ReadWorkload, ReadTopology,
//     ReadBusBW, ReadFlowFile, ReadJobs and ReadAlone), with errors naming the flag that gave
//     them.
//   - Outputs are written in files.go (Files: the streamed logs while a run goes on) and
//     reports.go (every mode's reports from its result, once it is over: Files.WriteEvent,
//     WriteComparison, WriteFlows, WriteTrace, WriteAnalytical, WriteJobs and JobsAnalytical,
//     each file written atomically by configs/atomicfile), with summary.go (summary.json) and
//     jobsreport.go (jobs.csv); the per-layer reports are built by workloads.EventEndToEnd and
//     workloads.AnalyticalEndToEnd. RunAlone runs each job of a multi-job run alone for
//     jobs.csv's alone figures (ReadAlone reads them from an earlier run's instead);
//     EstimateMoE (moe.go) is simd moe run's estimate mode.
//   - The subcommands' other logic lives with what it is about: simd dag's study of one
//     collective in ccl/algo (Study, StudyRequest), simd topo's generator, its value readers
//     and its writer into a folder (GeneratorOptions.GenerateFile) in topo and its -info in
//     topo/route (Info), simd sweep's grid in workloads/sweep, and the folder readers of simd
//     plot and simd report in cmd/simd/plots and cmd/simd/report.
//   - The memory guard (memory.go) estimates a run's peak from closed forms before anything
//     is simulated and refuses one the machine cannot hold.
//
// # Why here
//
// The package wires workloads (the iteration runner), ccl (collective plans), netmodel (the
// network models), topo and configs together, so it has to sit above all of them. The top-level
// folders are fixed and the data flows workloads → ccl → netmodel (DESIGN.md), so a package
// under workloads/ that imports the others only points down the flow; one under netmodel/ would
// point up to workloads and ccl. Package workloads itself still never imports a network model:
// it asks its Network interface, which this package implements with netmodel behind it. The
// one reading of the wall clock is for Result.Wall and a context's deadline; no result that the
// simulation computes depends on it.
package sim
