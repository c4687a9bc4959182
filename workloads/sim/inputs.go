package sim

import (
	"bytes"
	"errors"
	"io/fs"
	"os"

	"go.uber.org/zap"

	"simd/configs"
	"simd/configs/lex"
	"simd/engine"
	"simd/topo"
	"simd/workloads"
	"simd/workloads/jobs"
)

// Reading a run's input files. Each reader's errors are input errors; an error reading the file
// itself is named by the flag (or field) that gave it, as in "-c: open x.conf: no such file or
// directory", a parser's error by the file's line and field.

// ReadConf reads SimAI.conf at path, or the shipped one when path is "" (configs.ReadSimAIConf),
// logging its warnings. flag names path in messages.
func ReadConf(path, flag string, log *zap.Logger) (configs.SimAIConf, error) {
	log = orNop(log)
	c, warns, err := configs.ReadSimAIConf(path)
	logWarnings(log, warns)
	if err != nil {
		return c, fileError(flag, err)
	}
	if path != "" {
		log.Debug("SimAI.conf read; the analytical mode does not use it", zap.String("file", path))
	}
	return c, nil
}

// ReadWorkload reads and parses a SimAI/AICB workload: a file, or a shipped example
// (configs.ExamplePrefix + NAME), logging the parser's warnings. It returns the workload and its
// name as messages and reports call it. flag names path in messages.
func ReadWorkload(path, flag string, opt workloads.ParseOptions, log *zap.Logger) (*workloads.Workload, string, error) {
	data, name, err := configs.ReadWorkloadText(path)
	if err != nil {
		return nil, "", fileError(flag, err)
	}
	w, warns, err := workloads.ParseWith(bytes.NewReader(data), name, opt)
	logWarnings(orNop(log), warns)
	if err != nil {
		return nil, "", BadInput(err)
	}
	return w, name, nil
}

// ReadTopology reads the SimAI topology file path (topo.ReadFile); flag names it in messages.
func ReadTopology(path, flag string) (*topo.Topology, error) { return topo.ReadFile(path, flag) }

// ReadFlowFile reads an ns-3/HPCC flow file (workloads.ParseFlowFile) at path; flag names it in
// messages.
func ReadFlowFile(path, flag string) ([]workloads.TrafficFlow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, BadInputf("%s: %v", flag, err)
	}
	defer f.Close()
	flows, err := workloads.ParseFlowFile(f, path)
	if err != nil {
		return nil, BadInput(err)
	}
	return flows, nil
}

// ReadJobs reads a jobs file (jobs.Parse) at path; flag names it in messages.
func ReadJobs(path, flag string) (*jobs.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, BadInputf("%s: %v", flag, err)
	}
	f, err := jobs.Parse(data, path)
	if err != nil {
		return nil, BadInput(err)
	}
	return f, nil
}

// ReadAlone reads the alone figures of an earlier multi-job run from its jobs.csv at path
// (ReadJobsAlone) and gives them to jobs by name, for JobRows; flag names path in messages, and
// a job the file has no figure for is an error.
func ReadAlone(path, flag string, jobs []Job) ([]engine.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, BadInputf("%s: %v", flag, err)
	}
	defer f.Close()
	us, err := ReadJobsAlone(f, path)
	if err != nil {
		return nil, BadInput(err)
	}
	out := make([]engine.Time, len(jobs))
	for i, j := range jobs {
		v, ok := us[j.Name]
		if !ok {
			return nil, BadInputf("%s %s: no alone time for job %s", flag, path, j.Name)
		}
		out[i] = engine.Time(v * float64(engine.Microsecond))
	}
	return out, nil
}

// ReadBusBW reads a busbw.yaml of fixed bus bandwidths (configs.ParseBusBW) at path; flag names
// it in messages.
func ReadBusBW(path, flag string) (configs.BusBW, error) {
	f, err := os.Open(path)
	if err != nil {
		return configs.BusBW{}, BadInputf("%s: %v", flag, err)
	}
	defer f.Close()
	b, err := configs.ParseBusBW(f, path)
	if err != nil {
		return b, BadInput(err)
	}
	return b, nil
}

// fileError is an error reading the input flag names, as an input error: "-c: open ...: no such
// file" for a file that cannot be read, "-w example:X: no such example" for an unknown example,
// the parser's file:line message otherwise.
func fileError(flag string, err error) error {
	var pe *fs.PathError
	var ue configs.UnknownExampleError
	switch {
	case errors.As(err, &pe):
		return BadInputf("%s: %v", flag, err)
	case errors.As(err, &ue):
		return BadInputf("%s %v", flag, err)
	}
	return BadInput(err)
}

// logWarnings logs a parser's warnings.
func logWarnings(log *zap.Logger, warns []*lex.Error) {
	for _, w := range warns {
		log.Warn(w.Error())
	}
}
