// Package jobs reads a jobs file, the list of training jobs that share one fabric in a
// multi-job run (simd -jobs FILE), and places each job on the cluster's GPUs.
//
// A jobs file is YAML:
//
//	jobs:
//	  - {name: a, workload: gpt13b.txt, gpus: "0-31"}
//	  - {name: b, workload: moe.txt, count: 64, placement: spread, seed: 7, start_us: 500, iterations: 2}
//
// Each job has a name (letters, digits, '.', '_' and '-': it names the job's output files), a
// workload file (SimAI's format; a relative path is taken from the jobs file's folder) and
// either gpus, an explicit list of GPU ids (a string of ids and ranges, "0-31,40,48-55", or a
// YAML list of ids and such strings), or count, a number of GPUs that placement chooses:
//
//   - packed (the default): the lowest-numbered free GPUs, so a job fills whole servers when it
//     can, as a scheduler that packs jobs does;
//   - spread: one free GPU from each server in turn (server 0, 1, 2, ..., then again), the lowest
//     free one of each, so the job has as few GPUs per server as the free GPUs allow;
//   - random: count free GPUs drawn uniformly with the job's seed (a PCG stream; seed 1 unless
//     given), in ascending order.
//
// A job's rank i runs on the i-th GPU of its placement, in the order the list gives (explicit)
// or ascending (chosen). Explicit placements are taken first, in file order, then the chosen
// ones in file order from the GPUs left. start_us (default 0) delays the job's first iteration;
// iterations (default 1) is how many it runs back to back.
//
// Every error is an *Error naming the file, line and field.
package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"simd/configs/lex"
)

// Placement is how a job given a count of GPUs gets them.
type Placement int

const (
	Packed Placement = iota
	Spread
	Random
)

var placementNames = [...]string{"packed", "spread", "random"}

func (p Placement) String() string { return placementNames[p] }

// Job is one entry of a jobs file.
type Job struct {
	Name     string
	Workload string // as written in the file
	// GPUs is the explicit placement (nil when Count is used instead).
	GPUs      []int32
	Count     int
	Placement Placement
	Seed      uint64
	// StartUs delays the job's first iteration; Iterations runs that many back to back.
	StartUs    float64
	Iterations int
	Line       int // the job's line in the file
	fieldLine  map[string]int
}

// FieldLine is the line of field in the job's entry (the entry's line if the field is absent).
func (j *Job) FieldLine(field string) int {
	if l, ok := j.fieldLine[field]; ok {
		return l
	}
	return j.Line
}

// File is a parsed jobs file.
type File struct {
	Name string // the path it was read from
	Jobs []Job
}

// Error is a problem in a jobs file: the file, line and field (simd's input error, as the
// other parsers give it).
type Error = lex.Error

// MaxGPUs bounds a GPU id or count in a jobs file (a larger one is certainly a mistake, and
// bounding it keeps a range such as "0-9999999999" from allocating).
const MaxGPUs = 1 << 20

var (
	jobName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

const jobKeys = "name, workload, gpus, count, placement, seed, start_us or iterations"

// Parse reads a jobs file; name is its path, for messages.
func Parse(data []byte, name string) (*File, error) {
	fail := func(n *yaml.Node, field, format string, args ...any) error {
		line := 1
		if n != nil {
			line = n.Line
		}
		return &Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail(nil, "", "empty jobs file: expected jobs: followed by a list of jobs")
		}
		return nil, lex.FromYAML(name, err)
	}
	if len(doc.Content) == 0 {
		return nil, fail(nil, "", "empty jobs file: expected jobs: followed by a list of jobs")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root, "", "expected a mapping with the key jobs")
	}
	f := &File{Name: name}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "jobs" {
			return nil, fail(k, k.Value, "unknown key: expected jobs")
		}
		if list != nil {
			return nil, fail(k, "jobs", "given twice")
		}
		list = v
	}
	if list == nil {
		return nil, fail(root, "jobs", "missing: expected a list of jobs")
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, fail(list, "jobs", "expected a list of at least one job")
	}
	names := map[string]int{}
	for i, e := range list.Content {
		j, err := parseJob(e, i, fail)
		if err != nil {
			return nil, err
		}
		if prev, ok := names[j.Name]; ok {
			return nil, fail(e, fmt.Sprintf("jobs[%d].name", i), "%q is also the name of the job on line %d", j.Name, prev)
		}
		names[j.Name] = j.Line
		f.Jobs = append(f.Jobs, j)
	}
	return f, nil
}

type failFunc func(n *yaml.Node, field, format string, args ...any) error

func parseJob(e *yaml.Node, i int, fail failFunc) (Job, error) {
	j := Job{Line: e.Line, Seed: 1, Iterations: 1, fieldLine: map[string]int{}}
	at := func(key string) string { return fmt.Sprintf("jobs[%d].%s", i, key) }
	if e.Kind != yaml.MappingNode {
		return j, fail(e, fmt.Sprintf("jobs[%d]", i), "expected a mapping of %s", jobKeys)
	}
	scalar := func(v *yaml.Node, key string) (string, error) {
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return "", fail(v, at(key), "expected a value")
		}
		return v.Value, nil
	}
	keys := map[string]*yaml.Node{}
	for k := 0; k+1 < len(e.Content); k += 2 {
		key, v := e.Content[k], e.Content[k+1]
		if _, dup := keys[key.Value]; dup {
			return j, fail(key, at(key.Value), "given twice")
		}
		keys[key.Value] = key
		j.fieldLine[key.Value] = key.Line
		var s string
		var err error
		if key.Value != "gpus" {
			if s, err = scalar(v, key.Value); err != nil {
				return j, err
			}
		}
		switch key.Value {
		case "name":
			if !jobName.MatchString(s) {
				err = fail(v, at("name"), "%q: expected letters, digits, '.', '_' or '-' (it names the job's output files)", s)
			}
			j.Name = s
		case "workload":
			j.Workload = s
		case "gpus":
			j.GPUs, err = parseGPUs(v, at("gpus"), fail)
		case "count":
			n, perr := strconv.Atoi(s)
			if perr != nil || n < 1 || n > MaxGPUs {
				err = fail(v, at("count"), "%q: expected a number of GPUs from 1 to %d", s, MaxGPUs)
			}
			j.Count = n
		case "placement":
			p := slices.Index(placementNames[:], s)
			if p < 0 {
				err = fail(v, at("placement"), "%q: expected packed, spread or random", s)
			}
			j.Placement = Placement(max(p, 0))
		case "seed":
			j.Seed, err = strconv.ParseUint(s, 10, 64)
			if err != nil {
				err = fail(v, at("seed"), "%q: expected a whole number from 0 to %d", s, uint64(math.MaxUint64))
			}
		case "start_us":
			x, perr := strconv.ParseFloat(s, 64)
			if perr != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) || x > 1e12 {
				err = fail(v, at("start_us"), "%q: expected microseconds, 0 or more (at most 10¹²)", s)
			}
			j.StartUs = x
		case "iterations":
			n, perr := strconv.Atoi(s)
			if perr != nil || n < 1 || n > 1<<20 {
				err = fail(v, at("iterations"), "%q: expected a number of iterations from 1 to %d", s, 1<<20)
			}
			j.Iterations = n
		default:
			err = fail(key, at(key.Value), "unknown key: expected %s", jobKeys)
		}
		if err != nil {
			return j, err
		}
	}
	switch {
	case j.Name == "":
		return j, fail(e, at("name"), "missing: every job needs a name")
	case j.Workload == "":
		return j, fail(e, at("workload"), "missing: expected the job's workload file")
	case j.GPUs == nil && j.Count == 0:
		return j, fail(e, at("gpus"), "missing: expected gpus (a list of GPU ids) or count (a number of GPUs to place)")
	case j.GPUs != nil && j.Count != 0:
		return j, fail(e, at("count"), "give either gpus or count, not both")
	}
	if j.GPUs != nil {
		if k, ok := keys["placement"]; ok {
			return j, fail(k, at("placement"), "only for a job placed by count")
		}
	}
	if k, ok := keys["seed"]; ok && (j.GPUs != nil || j.Placement != Random) {
		return j, fail(k, at("seed"), "only for a job placed by count with placement: random")
	}
	return j, nil
}

// parseGPUs reads gpus: a string "0-31,40" or a list of ids and such strings. Every id is
// different.
func parseGPUs(v *yaml.Node, field string, fail failFunc) ([]int32, error) {
	var parts []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		parts = []*yaml.Node{v}
	case yaml.SequenceNode:
		parts = v.Content
	default:
		return nil, fail(v, field, "expected GPU ids: a string such as \"0-31,40\" or a list")
	}
	var ids []int32
	seen := map[int32]bool{}
	for _, p := range parts {
		if p.Kind != yaml.ScalarNode {
			return nil, fail(p, field, "expected a GPU id or a range such as 0-31")
		}
		for item := range strings.SplitSeq(p.Value, ",") {
			item = strings.TrimSpace(item)
			lo, hi, isRange := strings.Cut(item, "-")
			a, errA := strconv.Atoi(strings.TrimSpace(lo))
			b := a
			var errB error
			if isRange {
				b, errB = strconv.Atoi(strings.TrimSpace(hi))
			}
			if errA != nil || errB != nil || a < 0 || b < a || b >= MaxGPUs {
				return nil, fail(p, field, "%q: expected a GPU id or a range lo-hi with 0 ≤ lo ≤ hi < %d", item, MaxGPUs)
			}
			for g := a; g <= b; g++ {
				if seen[int32(g)] {
					return nil, fail(p, field, "GPU %d is listed twice", g)
				}
				seen[int32(g)] = true
				ids = append(ids, int32(g))
			}
		}
	}
	if len(ids) == 0 {
		return nil, fail(v, field, "expected at least one GPU id")
	}
	return ids, nil
}

// Place gives every job its GPUs on a cluster of totalGPUs GPUs in servers of gpusPerServer:
// explicit placements first, in file order, then the counted ones in file order from the GPUs
// left (see the package doc). The result has one list per job, rank order. It is an *Error
// when an explicit placement names a GPU beyond the cluster or one another job has, or when
// too few GPUs are left for a count.
func (f *File) Place(totalGPUs, gpusPerServer int) ([][]int32, error) {
	if gpusPerServer < 1 || totalGPUs < 1 || totalGPUs%gpusPerServer != 0 {
		return nil, fmt.Errorf("jobs: a cluster of %d GPUs in servers of %d cannot be placed on", totalGPUs, gpusPerServer)
	}
	owner := make([]int, totalGPUs) // job index + 1, 0 when free
	out := make([][]int32, len(f.Jobs))
	bad := func(j *Job, i int, field, format string, args ...any) error {
		return &Error{File: f.Name, Line: j.FieldLine(field), Field: fmt.Sprintf("jobs[%d].%s", i, field), Msg: fmt.Sprintf(format, args...)}
	}
	for i := range f.Jobs {
		j := &f.Jobs[i]
		if j.GPUs == nil {
			continue
		}
		for _, g := range j.GPUs {
			if int(g) >= totalGPUs {
				return nil, bad(j, i, "gpus", "GPU %d is beyond the topology's %d GPUs (0 to %d)", g, totalGPUs, totalGPUs-1)
			}
			if o := owner[g]; o != 0 {
				return nil, bad(j, i, "gpus", "GPU %d is also in job %q (line %d): placements must not overlap", g, f.Jobs[o-1].Name, f.Jobs[o-1].Line)
			}
			owner[g] = i + 1
		}
		out[i] = slices.Clone(j.GPUs)
	}
	for i := range f.Jobs {
		j := &f.Jobs[i]
		if j.GPUs != nil {
			continue
		}
		free := 0
		for _, o := range owner {
			if o == 0 {
				free++
			}
		}
		if j.Count > free {
			return nil, bad(j, i, "count", "%d GPUs asked for, but only %d of the topology's %d are free after the jobs before it", j.Count, free, totalGPUs)
		}
		var got []int32
		switch j.Placement {
		case Packed:
			for g := 0; len(got) < j.Count; g++ {
				if owner[g] == 0 {
					got = append(got, int32(g))
				}
			}
		case Spread:
			servers := totalGPUs / gpusPerServer
			next := make([]int, servers) // the next GPU of each server to look at
			for len(got) < j.Count {
				for s := 0; s < servers && len(got) < j.Count; s++ {
					for next[s] < gpusPerServer && owner[s*gpusPerServer+next[s]] != 0 {
						next[s]++
					}
					if next[s] < gpusPerServer {
						g := s*gpusPerServer + next[s]
						got = append(got, int32(g))
						owner[g] = -1 // taken (marked for this job below)
						next[s]++
					}
				}
			}
		case Random:
			var pool []int32
			for g, o := range owner {
				if o == 0 {
					pool = append(pool, int32(g))
				}
			}
			r := rand.New(rand.NewPCG(j.Seed, 0x6a6f6273)) // "jobs"
			// A partial Fisher–Yates shuffle: the first Count of the pool are a uniform draw.
			for k := 0; k < j.Count; k++ {
				m := k + r.IntN(len(pool)-k)
				pool[k], pool[m] = pool[m], pool[k]
			}
			got = pool[:j.Count]
			slices.Sort(got)
		}
		slices.Sort(got)
		for _, g := range got {
			owner[g] = i + 1
		}
		out[i] = got
	}
	return out, nil
}
