package sweep

import (
	"fmt"
	"os"
	"strings"

	"simd/configs"
	"simd/workloads/jobs"
)

// CheckInputs makes sure every input the spec names exists before a run starts: each workload
// file (or shipped example, "example:NAME"), each jobs file (and that it parses; its
// placements are checked against each run's topology), each topology file, and each generated topology's
// flags, which checkGenerator parses (simd topo's flags without their dash, as GeneratorArgs
// gives them; its error's text is the message). A problem is an *Error naming the spec's line
// and field.
func (s *Spec) CheckInputs(checkGenerator func(args []string) error) error {
	fail := func(line int, field, format string, args ...any) error {
		return &Error{File: s.Name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	for i, w := range s.Workloads {
		field := fmt.Sprintf("workloads[%d]", i)
		if ex, ok := strings.CutPrefix(w, "example:"); ok {
			if _, found := configs.ExampleWorkload(ex); !found {
				return fail(s.WorkLines[i], field, "%q: no such example (%s)", w, strings.Join(configs.ExampleWorkloadNames(), ", "))
			}
		} else if _, err := os.Stat(s.Resolve(w)); err != nil {
			return fail(s.WorkLines[i], field, "%v", err)
		}
	}
	for i, j := range s.Jobs {
		data, err := os.ReadFile(s.Resolve(j))
		if err == nil {
			_, err = jobs.Parse(data, s.Resolve(j))
		}
		if err != nil {
			return fail(s.JobLines[i], fmt.Sprintf("jobs[%d]", i), "%v", err)
		}
	}
	for i, t := range s.Topologies {
		field := fmt.Sprintf("topologies[%d]", i)
		if t.File != "" {
			if _, err := os.Stat(s.Resolve(t.File)); err != nil {
				return fail(t.Line, field+".file", "%v", err)
			}
		} else if t.Generated() {
			if err := checkGenerator(t.GeneratorArgs()); err != nil {
				return fail(t.Line, field, "%s", err)
			}
		}
	}
	return nil
}

// BaseConf is the SimAI.conf text the runs' overrides apply to: the spec's conf file, or the
// shipped SimAI.conf when it names none.
func (s *Spec) BaseConf() ([]byte, error) {
	if s.Conf == "" {
		return configs.ShippedSimAIConfText(), nil
	}
	data, err := os.ReadFile(s.Resolve(s.Conf))
	if err != nil {
		return nil, fmt.Errorf("%s: conf: %v", s.Name, err)
	}
	return data, nil
}
