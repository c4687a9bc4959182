// Command simd simulates AI training clusters from the input files SimAI users already have.
//
//	simd -w workload.txt [-n topo] [-c SimAI.conf] [-mode analytical] [-o DIR] [-r PREFIX]
//
// It also accepts SimAI_analytical's flags with the same meaning (-g, -g_p_s, -nv, -nic, -n_p_s,
// -nic_t, -g_type, -dp_o, -ep_o, -tp_o, -pp_o, -r, -r_f, -v). simd -h lists every flag.
//
// This package is a thin shell over workloads/sim, which runs a simulation: it parses the
// command line, reads the inputs through their packages, asks for the cluster the flags
// describe (sim.ClusterRequest), attaches the output files and the progress report to the run,
// prints the summary and turns errors into exit statuses. It holds no simulation logic.
//
// default.pgo is a CPU profile the go tool uses for profile-guided optimisation of every build
// of simd (inlining and layout of the event loop's hot path): the 1,024-GPU ring all-reduce and
// the 768-GPU MoE workload of bench/run with congestion control off, and a 40-layer slice of the
// MoE workload on 384 GPUs under DCQCN, merged with go tool pprof -proto. It makes those runs
// 4–8% faster with byte-identical outputs (measured by running a default build and one made
// with go build -pgo=off side by side on bench/run's scenarios).
// Regenerate it with -cpuprofile on those runs after large changes to the hot path.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"simd/workloads/sim"
)

func main() {
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
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, helpText())
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "simd: %v\n", err)
		return exitBadInput
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "simd: -log-level: %v\n", err)
		return exitBadInput
	}
	stopProfile, err := startProfiles(o)
	if err != nil {
		fmt.Fprintf(stderr, "simd: %v\n", err)
		return exitFailure
	}
	defer stopProfile()
	ctx, release := signalContext(context.Background())
	defer release()
	return exitStatus("simd", execute(ctx, o, log, stdout, stderr), stderr)
}

// execute runs the simulation o asks for: a flow file, or a workload in one of the modes.
// Cancelling ctx stops it cleanly.
func execute(ctx context.Context, o *options, log *zap.Logger, stdout, stderr io.Writer) error {
	if err := checkTrace(o.trace, o.traceAllRanks); err != nil {
		return err
	}
	if o.trace != "" && o.flows != "" && o.jobs == "" {
		return badInputf("-trace: not for -flows (a flow file has no compute or collectives to draw)")
	}
	switch {
	case o.jobs != "":
		return runJobs(ctx, o, log, stdout, stderr)
	case o.flows != "":
		return runFlowFile(ctx, o, log, stdout, stderr)
	case isTrace(o):
		return runTrace(ctx, o, log, stdout, stderr)
	case o.mode == "analytical" || o.mode == "event" || o.mode == "compare":
		s, err := newSession(o, log, stdout)
		if err != nil {
			return err
		}
		s.stderr = stderr
		switch o.mode {
		case "analytical":
			return runAnalytical(s)
		case "event":
			return runEvent(ctx, s)
		}
		return runCompare(ctx, s)
	}
	return badInputf("-mode %q: expected analytical, event or compare", o.mode)
}

// exitStatus reports err on stderr after the command's name and returns the exit status it
// calls for: 0 without an error, a stopped run's status, 2 for bad input, 1 otherwise.
func exitStatus(cmd string, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
	var se stoppedError
	switch {
	case errors.As(err, &se):
		return stopCode(se.cause)
	case sim.IsInputError(err):
		return exitBadInput
	}
	return exitFailure
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

// startProfiles starts -cpuprofile and returns the function that ends it and writes
// -memprofile.
func startProfiles(o *options) (func(), error) {
	var cpu *os.File
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		cpu = f
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if o.memProfile != "" {
			if f, err := os.Create(o.memProfile); err == nil {
				runtime.GC()
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}, nil
}
