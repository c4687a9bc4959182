// Command simd simulates AI training clusters from the input files SimAI users already have.
//
//	simd -w workload.txt [-n topo] [-c SimAI.conf] [-mode analytical] [-o DIR] [-r PREFIX]
//
// It also accepts SimAI_analytical's flags with the same meaning (-g, -g_p_s, -nv, -nic, -n_p_s,
// -nic_t, -g_type, -dp_o, -ep_o, -tp_o, -pp_o, -r, -r_f, -v). simd -h lists every flag.
//
// This package is a thin shell over workloads/sim, which runs a simulation: it parses the
// command line into a sim.Request (flags.go), runs it with sim.Execute with the progress report
// attached (progress.go), draws the plots and the report a run asks for, and turns errors into
// exit statuses (guard.go for stopped runs). It holds no simulation logic. The subcommands are
// shells too, each over the package that owns its job: simd topo over topo and topo/route
// (GeneratorOptions.GenerateFile, route.Info), simd dag over ccl/algo (StudyRequest), simd moe
// over workloads/moe and sim.ExecuteMoERun, simd sweep over workloads/sweep (Plan, Executor).
// The command-line machinery they all share (grouped flag tables with aliases, the layout of
// -h, typed flag values, flags after positional arguments) is package cmd/simd/flagtable, and
// what the process arranges with the runtime and the system (the first garbage collection,
// -cpuprofile and -memprofile, the signals that stop a run) is package cmd/simd/process; this
// package keeps the flags themselves, their help texts, the messages and the exit statuses.
//
// default.pgo is a CPU profile the go tool uses for profile-guided optimisation of every build
// of simd (inlining and layout of the event loop's hot path): nine of bench/run's scenarios,
// with congestion control off and under DCQCN, at most 20 s each, merged with go tool pprof
// -proto; bench/pgo lists them and writes the profile anew. Outputs are byte-identical with or
// without it; it makes runs 5–9% faster than a build with go build -pgo=off
// (docs/performance.md, "What was changed and what it gained"). Regenerate it with bench/pgo
// after large changes to the hot path, and keep the new one only if it is faster side by side.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"simd/cmd/simd/process"
	"simd/configs/units"
	"simd/workloads/sim"
)

func main() {
	process.AdviseHugePages() // for the process's life: os.Exit ends it
	process.DeferFirstCollection()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1 // something other than the input went wrong (e.g. writing a file)
	exitBadInput = 2 // bad input or usage
	// exitStopped (3) and 128 + a signal's number: see guard.go.
)

// badInput marks an error caused by the user's input or command line (exit status 2).
func badInput(err error) error { return sim.BadInput(err) }

func badInputf(format string, args ...any) error { return sim.BadInputf(format, args...) }

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-version", "--version", "version":
			fmt.Fprintln(stdout, versionLine())
			return exitOK
		case "topo":
			return runTopo(args[1:], stdout, stderr)
		case "dag":
			return runDAG(args[1:], stdout, stderr)
		case "moe":
			return runMoE(args[1:], stdout, stderr)
		case "plot":
			return runPlot(args[1:], stdout, stderr)
		case "report":
			return runReport(args[1:], stdout, stderr)
		case "sweep":
			return runSweep(args[1:], stdout, stderr)
		}
	}
	o, err := parseFlags(args)
	if err != nil {
		return commandStatus("simd", err, usage, stdout, stderr)
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "simd: -log-level: %v\n", err)
		return exitBadInput
	}
	prof, err := process.StartProfiles(o.cpuProfile, o.memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "simd: -cpuprofile: %v\n", err)
		return exitFailure
	}
	defer func() {
		if err := prof.Stop(); err != nil {
			fmt.Fprintf(stderr, "simd: -memprofile: %v\n", err)
		}
	}()
	lim := limitMemory(o.req.Event.MaxMemory)
	defer lim.Restore()
	ctx, release := process.SignalContext(context.Background())
	defer release()
	err = execute(ctx, o, log, stdout, stderr, prof)
	if pressed, share := lim.Pressed(); pressed {
		why := "the memory available as it began"
		if o.req.Event.MaxMemory > 0 {
			why = "-max-memory; a larger one spares the collector"
		}
		log.Warn(fmt.Sprintf("the run held nearly all the memory it may use, %s (%s): the garbage collector took %.0f%% of its CPU time",
			units.FormatBytes(lim.Bytes()), why, 100*share))
	}
	return exitStatus("simd", err, stderr)
}

// limitMemory makes the memory the process may use the Go runtime's soft limit until Restore
// (process.LimitMemory): budget (-max-memory) if above 0, else what the machine has available
// as the process begins; none where that is unknown. The memory guard refuses a run whose
// estimate exceeds the same figure; the limit keeps the heap's garbage, which the collector
// would otherwise let grow to as much as what is live, within it.
func limitMemory(budget int64) *process.MemoryLimit {
	if budget <= 0 {
		budget, _, _ = sim.AvailableMemory()
	}
	return process.LimitMemory(budget)
}

// execute runs the simulation o asks for (sim.Execute), then draws the plots (-plot) and writes
// the report (-report) of its output folders. Cancelling ctx stops it cleanly. The heap profile
// (-memprofile) is written as each simulation ends, before its outputs, while its model is still
// held: a run stopped by -max-wall or -max-events shows what the model held there.
func execute(ctx context.Context, o *options, log *zap.Logger, stdout, stderr io.Writer, prof *process.Profiles) error {
	progress := progressHook(stderr, o.quiet, o.progressEvery)
	if o.memProfile != "" {
		progress = heapAtEnd(progress, func() {
			if err := prof.Heap(); err != nil {
				fmt.Fprintf(stderr, "simd: -memprofile: %v\n", err)
			}
		})
	}
	h := sim.Hooks{Log: log, Stdout: stdout, Progress: progress}
	out, err := sim.Execute(ctx, o.request(), h)
	if err != nil {
		return err
	}
	for _, f := range out.Folders {
		notes := stderr
		if f.Job {
			notes = io.Discard // a job's folder has no network files: they are the shared run's
		}
		if err := afterRun(o, f, stdout, notes); err != nil {
			return err
		}
	}
	return nil
}

// exitStatus reports err on stderr after the command's name and returns the exit status it
// calls for: 0 without an error, a stopped run's status, 2 for bad input, 1 otherwise.
func exitStatus(cmd string, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
	var se sim.StoppedError
	switch {
	case errors.As(err, &se):
		return stopCode(se.Cause)
	case sim.IsInputError(err):
		return exitBadInput
	}
	return exitFailure
}

// parseArgs reads a command's flags from args, which hold nothing else: -h is flag.ErrHelp; a
// flag it cannot read is bad input, its message followed by hint, and so is an argument that is
// not a flag, its message followed by argHint.
func parseArgs(fs *flag.FlagSet, args []string, hint, argHint string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return badInputf("%v%s", err, hint)
	case fs.NArg() > 0:
		return badInputf("unexpected argument %q%s", fs.Arg(0), argHint)
	}
	return nil
}

// commandStatus is the exit status of a command that ended with err: -h (flag.ErrHelp) writes
// the command's help on stdout and exits with 0; any other error is exitStatus's.
func commandStatus(cmd string, err error, help func(io.Writer), stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return exitOK
	}
	return exitStatus(cmd, err, stderr)
}

// newLogger logs to w without timestamps, so that two runs print the same lines.
func newLogger(level string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
		LevelKey:         "level",
		MessageKey:       "msg",
		EncodeLevel:      zapcore.LowercaseLevelEncoder,
		ConsoleSeparator: " ",
	})
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), lvl)), nil
}
