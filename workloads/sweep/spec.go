// Package sweep describes parameter sweeps of simd: a spec (workloads × topologies × SimAI.conf
// overrides × modes) read from a small YAML file, its expansion into numbered runs, the split of
// the runs into shards, the manifest each run leaves in its folder, and the merge of manifests
// into one table. It knows runs and their parameters, not links: Plan reads a spec and its
// shard and readies each run (Prepare: its topology generated, its SimAI.conf written, its
// sim.Request built), and Executor runs a shard's runs, each through the Point its caller
// gives (simd sweep's runs the prepared request in-process).
package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"simd/configs/lex"
	"simd/configs/units"
)

// Modes are the simulation modes a spec may list.
var Modes = []string{"analytical", "event", "compare"}

// Param is one key and its value, in the order the spec gives them.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Topology is one entry of topologies: a file used as it is, or the flags of simd topo's
// generator (names without the dash). Neither is simd's default fabric.
type Topology struct {
	File  string  // {file: F}
	Flags []Param // {topo: Spectrum-X, g: 8, ...}
	Line  int     // line of the entry in the spec
}

// Generated reports whether the topology is made by the generator.
func (t Topology) Generated() bool { return t.File == "" && len(t.Flags) > 0 }

// String describes the topology: "file:F", the generator flags as "topo=X g=8", or "default".
func (t Topology) String() string {
	switch {
	case t.File != "":
		return "file:" + t.File
	case len(t.Flags) == 0:
		return "default"
	}
	parts := make([]string, len(t.Flags))
	for i, f := range t.Flags {
		parts[i] = f.Key + "=" + f.Value
	}
	return strings.Join(parts, " ")
}

// GeneratorArgs is the generator's command line for the topology: -name=value per flag.
func (t Topology) GeneratorArgs() []string {
	args := make([]string, len(t.Flags))
	for i, f := range t.Flags {
		args[i] = "-" + f.Key + "=" + f.Value
	}
	return args
}

// Override is one entry of overrides: SimAI.conf keys and the values that replace theirs.
type Override struct {
	Params []Param
	Line   int
}

// String is the override as K=V;K=V, or "" for none.
func (o Override) String() string {
	parts := make([]string, len(o.Params))
	for i, p := range o.Params {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, ";")
}

// Spec is a parsed sweep spec.
type Spec struct {
	Name      string // file name, for messages
	Dir       string // folder of the spec; relative paths in it are relative to this folder
	Workloads []string
	WorkLines []int // line of each workload in the spec
	// Jobs are jobs files (simd -jobs): each is a point of the grid as a workload is, so that
	// placements of several jobs can be swept; JobLines are their lines.
	Jobs       []string
	JobLines   []int
	Topologies []Topology
	Conf       string
	Overrides  []Override
	Modes      []string
}

// Resolve turns a path of the spec into one usable from the current folder: relative paths are
// taken from the spec's folder; example:NAME and absolute paths are kept.
func (s *Spec) Resolve(p string) string {
	if p == "" || strings.HasPrefix(p, "example:") || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// Error is a problem in a spec: the file, line and field (simd's input error, as the other
// parsers give it).
type Error = lex.Error

var (
	confKey    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	genFlagKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
)

// Parse reads a spec. name is the file's path, used in messages and to resolve relative paths.
// Every error is an *Error.
func Parse(data []byte, name string) (*Spec, error) {
	s := &Spec{Name: name, Dir: filepath.Dir(name)}
	fail := func(n *yaml.Node, field, format string, args ...any) error {
		line := 1
		if n != nil {
			line = n.Line
		}
		return &Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail(nil, "", "empty spec: expected workloads, topologies, modes, ...")
		}
		return nil, lex.FromYAML(name, err)
	}
	if len(doc.Content) == 0 {
		return nil, fail(nil, "", "empty spec: expected workloads, topologies, modes, ...")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root, "", "expected a mapping of workloads, jobs, topologies, conf, overrides and modes")
	}
	seen := map[string]bool{}
	var hasWorkloads bool
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, fail(k, k.Value, "given twice")
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "workloads":
			hasWorkloads = true
			s.Workloads, err = scalarList(v, "workloads", fail)
			for _, e := range v.Content {
				s.WorkLines = append(s.WorkLines, e.Line)
			}
			if err == nil && len(s.Workloads) == 0 {
				err = fail(v, "workloads", "expected at least one workload file")
			}
		case "jobs":
			hasWorkloads = true
			s.Jobs, err = scalarList(v, "jobs", fail)
			for _, e := range v.Content {
				s.JobLines = append(s.JobLines, e.Line)
			}
			if err == nil && len(s.Jobs) == 0 {
				err = fail(v, "jobs", "expected at least one jobs file")
			}
		case "modes":
			s.Modes, err = scalarList(v, "modes", fail)
			if err == nil && len(s.Modes) == 0 {
				err = fail(v, "modes", "expected at least one mode (%s)", strings.Join(Modes, ", "))
			}
			for j, m := range s.Modes {
				if err == nil && !isMode(m) {
					err = fail(v.Content[j], fmt.Sprintf("modes[%d]", j), "%q: expected %s", m, strings.Join(Modes, ", "))
				}
			}
		case "conf":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				err = fail(v, "conf", "expected the path of a SimAI.conf")
			}
			s.Conf = v.Value
		case "topologies":
			s.Topologies, err = parseTopologies(v, fail)
		case "overrides":
			s.Overrides, err = parseOverrides(v, fail)
		default:
			err = fail(k, k.Value, "unknown key: expected workloads, jobs, topologies, conf, overrides or modes")
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasWorkloads {
		return nil, fail(root, "workloads", "missing: expected a list of workload files (or jobs, a list of jobs files)")
	}
	if len(s.Jobs) > 0 && slices.Contains(s.Modes, "compare") {
		return nil, fail(root, "modes", "compare does not run jobs files (jobs): list analytical or event")
	}
	if s.Topologies == nil {
		s.Topologies = []Topology{{Line: root.Line}}
	}
	if s.Overrides == nil {
		s.Overrides = []Override{{Line: root.Line}}
	}
	if s.Modes == nil {
		s.Modes = []string{"event"}
	}
	w, t, o, m := len(s.Workloads)+len(s.Jobs), len(s.Topologies), len(s.Overrides), len(s.Modes)
	if n, ok := units.Product(int64(w), int64(t), int64(o), int64(m)); !ok || n > MaxRuns {
		return nil, fail(root, "", "%d workloads × %d topologies × %d overrides × %d modes is more than the %d runs a sweep may have",
			w, t, o, m, MaxRuns)
	}
	return s, nil
}

// MaxRuns bounds the runs of a spec (the product of its lists' lengths): each run is a folder
// of outputs, and a million is far beyond any sweep that can be run.
const MaxRuns = 1 << 20

type failFunc func(n *yaml.Node, field, format string, args ...any) error

func isMode(m string) bool {
	for _, x := range Modes {
		if m == x {
			return true
		}
	}
	return false
}

func scalarList(v *yaml.Node, field string, fail failFunc) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, fail(v, field, "expected a list, such as [a, b]")
	}
	out := make([]string, 0, len(v.Content))
	for j, e := range v.Content {
		if e.Kind != yaml.ScalarNode || e.Value == "" {
			return nil, fail(e, fmt.Sprintf("%s[%d]", field, j), "expected a non-empty value")
		}
		out = append(out, e.Value)
	}
	return out, nil
}

// params reads a flow or block mapping of scalars.
func params(v *yaml.Node, field string, key *regexp.Regexp, keyWhat string, fail failFunc) ([]Param, error) {
	if v.Kind != yaml.MappingNode {
		return nil, fail(v, field, "expected a mapping, such as {key: value}")
	}
	var out []Param
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		f := field + "." + k.Value
		if !key.MatchString(k.Value) {
			return nil, fail(k, f, "expected %s", keyWhat)
		}
		if seen[k.Value] {
			return nil, fail(k, f, "given twice")
		}
		seen[k.Value] = true
		if val.Kind != yaml.ScalarNode || val.Value == "" || strings.ContainsAny(val.Value, " \t\n") {
			return nil, fail(val, f, "expected a single value without spaces")
		}
		out = append(out, Param{Key: k.Value, Value: val.Value})
	}
	return out, nil
}

func parseTopologies(v *yaml.Node, fail failFunc) ([]Topology, error) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, fail(v, "topologies", "expected a list of {file: F} or generator flags such as {topo: Spectrum-X, g: 8}")
	}
	var out []Topology
	for j, e := range v.Content {
		field := fmt.Sprintf("topologies[%d]", j)
		ps, err := params(e, field, genFlagKey, "a flag of simd topo without its dash", fail)
		if err != nil {
			return nil, err
		}
		t := Topology{Line: e.Line}
		for i, p := range ps {
			switch p.Key {
			case "file":
				if len(ps) > 1 {
					return nil, fail(e.Content[2*i], field+".file", "a topology file takes no generator flags")
				}
				t.File = p.Value
			case "o", "info", "paths", "path-limit", "h", "help":
				return nil, fail(e.Content[2*i], field+"."+p.Key, "not a generator flag the sweep can set")
			default:
				t.Flags = append(t.Flags, p)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func parseOverrides(v *yaml.Node, fail failFunc) ([]Override, error) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, fail(v, "overrides", "expected a list of SimAI.conf keys to replace, such as [{CC_MODE: 0}, {CC_MODE: 1}]")
	}
	var out []Override
	for j, e := range v.Content {
		ps, err := params(e, fmt.Sprintf("overrides[%d]", j), confKey, "a SimAI.conf key such as CC_MODE", fail)
		if err != nil {
			return nil, err
		}
		out = append(out, Override{Params: ps, Line: e.Line})
	}
	return out, nil
}
