package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"simd/cmd/simd/flagtable"
	"simd/cmd/simd/plots"
	"simd/cmd/simd/process"
	"simd/topo"
	"simd/workloads/sim"
	"simd/workloads/sweep"
)

// simd sweep runs a grid of simulations described by a YAML spec, one folder and manifest per
// run, optionally one shard of it per job of a job array; simd sweep merge gathers the
// manifests into one table. The spec, the expansion, the shards and the table live in package
// workloads/sweep, with the preparation of each run (sweep.Plan: its topology generated, its
// SimAI.conf written, its request built); this file runs the grid in-process, each run through
// sim.Execute, and turns the runs' errors into their exit statuses.

var sweepForms = []string{"simd sweep SPEC.yaml -o DIR [-shard i/n | -shards N] [-j N]", "simd sweep merge DIR... [-o table.csv]"}

const sweepAbout = `simd sweep expands the spec's grid (workloads × topologies × overrides × modes, nested in that
order, the mode varying fastest) into runs numbered from 0 and executes run k in DIR/run-%04d:
the topology is generated there (or a file is used as it is), SimAI.conf with the overrides
applied is written there, the run's outputs go to out/, its console to stdout.txt and
stderr.txt, and manifest.json records the parameters, the exact simd command line, the exit
code, the wall-clock seconds, the output files and the iteration's breakdown. The spec:

  workloads: [a.txt, example:microAllReduce.txt]
  jobs: [packed.yaml, spread.yaml]          # optional: jobs files (simd -jobs), after the workloads
  topologies: [{topo: Spectrum-X, g: 8}, {topo: DCN+, g: 8}, {file: my_topo}]  # optional
  conf: SimAI.conf                          # optional; else the shipped one
  overrides: [{CC_MODE: 0}, {CC_MODE: 1}]   # optional SimAI.conf keys to replace or add
  modes: [analytical, event]                # optional; default event

A topology is a topology file ({file: F}) or simd topo's flags without their dash. A jobs
file is a point of the grid as a workload is: several of them sweep the jobs' placements
(compare is not a mode for them). Relative paths are taken from the spec's folder. Unknown
keys are errors.

Shards: run k belongs to shard k mod n. -shard i/n runs shard i; without it the index comes
from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array,
--array=0-(n-1)) and the count from -shards N, else SLURM_ARRAY_TASK_COUNT. Shards may write to
the same DIR or to different ones.

simd sweep merge reads every run-*/manifest.json under the folders and writes one CSV row per
run, sorted by run index: parameters, exit code, iteration, compute and exposed communication
(total and per group) in µs, wall-clock seconds; a jobs file's run gives a row per job, with
its iteration together and alone and the slowdown. A run index found twice is an error.

Exit status: 0 every run succeeded, 1 some failed (the sweep goes on; their manifests say why),
2 bad spec or usage.`

// sweepCommand is a parsed simd sweep command line.
type sweepCommand struct {
	spec   string
	out    string
	shard  string
	shards int
	jobs   int
}

func sweepFlagSet(c *sweepCommand) *flag.FlagSet {
	fs := flag.NewFlagSet("simd sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.out, "o", "", "output `DIR` of the runs (required)")
	fs.StringVar(&c.shard, "shard", "", "run only shard `i/n` (0 ≤ i < n): the runs k with k mod n = i")
	fs.Var(flagtable.Decimal(&c.shards), "shards", "shard count `N` when the index comes from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID (0: SLURM_ARRAY_TASK_COUNT)")
	fs.Var(flagtable.Decimal(&c.jobs), "j", "run up to `N` runs at once (the results do not depend on it)")
	return fs
}

func printSweepHelp(w io.Writer) {
	c := sweepCommand{jobs: 1}
	flagtable.Help(w, sweepForms, sweepAbout, sweepFlagSet(&c))
	fmt.Fprintln(w, "\nFlags of simd sweep merge:")
	flagtable.WriteFlags(w, sweepMergeFlagSet(new(string)))
}

// sweepMergeFlagSet defines simd sweep merge's flags.
func sweepMergeFlagSet(out *string) *flag.FlagSet {
	fs := flag.NewFlagSet("simd sweep merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(out, "o", "", "write the table to `table.csv` (atomically) instead of stdout")
	return fs
}

// runSweep is simd sweep: it returns the exit status. A signal stops the runs under way cleanly
// and starts no more.
func runSweep(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	lim := limitMemory(0) // the runs at once share the machine's memory
	defer lim.Restore()
	ctx, release := process.SignalContext(context.Background())
	defer release()
	return sweepContext(ctx, args, stdout, stderr)
}

// sweepContext runs a sweep until ctx is done; a run under way when it is done is stopped
// cleanly and no run starts after it.
func sweepContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := sweepCommand{jobs: 1}
	pos, err := flagtable.ParseInterleaved(sweepFlagSet(&c), args)
	switch {
	case errors.Is(err, flag.ErrHelp): // commandStatus writes the help
	case err != nil:
		err = badInputf("%v (simd sweep -h lists the flags)", err)
	case len(pos) != 1:
		err = badInputf("expected one spec file, got %d arguments (simd sweep -h)", len(pos))
	case c.out == "":
		err = badInputf("-o DIR is required (simd sweep -h)")
	case c.jobs < 1:
		err = badInputf("-j %d: expected 1 or more", c.jobs)
	case c.shards < 0:
		err = badInputf("-shards %d: expected 1 or more", c.shards)
	}
	if err == nil {
		c.spec = pos[0]
		var failed int
		failed, err = c.execute(ctx, stdout, os.Getenv)
		if cause := context.Cause(ctx); err == nil && cause != nil {
			fmt.Fprintf(stderr, "simd sweep: stopped by %s; the runs under way wrote partial outputs (marked incomplete), the rest did not start\n", cause)
			return stopCode(cause)
		}
		if err == nil && failed > 0 {
			fmt.Fprintf(stderr, "simd sweep: %d runs failed; their manifests and stderr.txt say why\n", failed)
			return exitFailure
		}
	}
	return commandStatus("simd sweep", err, printSweepHelp, stdout, stderr)
}

// execute runs the shard's runs, up to c.jobs at once, and returns how many failed: each run
// prepared by the sweep's plan (sweep.Plan.Prepare) and simulated in-process by sim.Execute,
// as simd with the flags its manifest records would.
func (c *sweepCommand) execute(ctx context.Context, stdout io.Writer, getenv func(string) string) (int, error) {
	o := defaultOptions()
	p := &sweep.Plan{Out: c.out, Request: o.request(), Generator: func(args []string) (topo.GeneratorOptions, error) {
		tc, err := parseTopoFlags(args)
		if err != nil {
			return topo.GeneratorOptions{}, badInput(errors.New(strings.TrimSuffix(err.Error(), " (simd topo -h lists the flags)")))
		}
		return tc.gen, nil
	}}
	if err := p.Read(c.spec, c.shard, c.shards, getenv); err != nil {
		return 0, err
	}
	simulate := func(ctx context.Context, r sweep.Run, dir string, m *sweep.Manifest, stdout, stderr io.Writer) int {
		req, err := p.Prepare(r, dir, m, stdout, stderr)
		var ge sweep.GeneratorError
		switch {
		case errors.As(err, &ge):
			return topoStatus(ge.Err, false, stderr)
		case err != nil:
			fmt.Fprintf(stderr, "simd sweep: %v\n", err)
			return exitFailure
		}
		log, err := newLogger(o.logLevel, stderr)
		if err != nil {
			return exitStatus("simd", err, stderr)
		}
		_, err = sim.Execute(ctx, req, sim.Hooks{Log: log, Stdout: stdout}) // -quiet: no progress; no -plot or -report
		return exitStatus("simd", err, stderr)
	}
	e := sweep.Executor{Spec: p.Spec, Shard: p.Shard, Out: p.Out, Jobs: c.jobs, Point: simulate, Slowdowns: plots.FCTSlowdowns}
	return e.Execute(ctx, stdout)
}

// runSweepMerge is simd sweep merge.
func runSweepMerge(args []string, stdout, stderr io.Writer) int {
	out := new(string)
	dirs, err := flagtable.ParseInterleaved(sweepMergeFlagSet(out), args)
	var n int
	switch {
	case errors.Is(err, flag.ErrHelp): // commandStatus writes the help
	case err != nil:
		err = badInputf("%v (simd sweep -h)", err)
	case len(dirs) == 0:
		err = badInputf("expected the sweep folders (simd sweep -h)")
	default:
		n, err = sweep.Merge(dirs, *out, stdout)
	}
	if err == nil && *out != "" {
		fmt.Fprintf(stdout, "%d runs: %s\n", n, *out)
	}
	return commandStatus("simd sweep merge", err, printSweepHelp, stdout, stderr)
}
