package chakra

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Deps says which dependencies a run honours.
type Deps uint8

const (
	// DepsBoth honours ctrl_deps and data_deps, as ASTRA-sim's FeederV3 does.
	DepsBoth Deps = iota
	// DepsData honours data_deps only, as MLCommons' ETFeeder does; older PyTorch traces
	// whose ctrl_deps name nodes the converter dropped (or the node itself) run this way.
	DepsData
)

// ParseDeps reads "both" or "data".
func ParseDeps(s string) (Deps, error) {
	switch s {
	case "both", "":
		return DepsBoth, nil
	case "data":
		return DepsData, nil
	}
	return 0, fmt.Errorf("%q: expected both (ctrl_deps and data_deps, ASTRA-sim's rule) or data (data_deps only)", s)
}

func (d Deps) String() string {
	if d == DepsData {
		return "data"
	}
	return "both"
}

// Options are how a trace is read.
type Options struct {
	// Ranks is the rank count; 0: the files found (ranks 0..N-1, contiguous).
	Ranks int
	// CommGroups is ASTRA-sim's communicator-group file ({"1": [0, 1], ...}); "" for none.
	CommGroups string
	Deps       Deps
}

// Trace is a checked Chakra trace: one file per rank, the communicator groups and the compiled
// per-rank programs the executor runs.
type Trace struct {
	// Name is how messages and reports name the trace (the pattern given).
	Name  string
	Files []*File
	// Groups are the communicator groups by pg_name; GroupsFrom says where they came from.
	Groups     map[string][]int32
	GroupsFrom string
	Deps       Deps
	ranks      []rankProg
	groupList  []group // group 0 is every rank
}

// Ranks is the trace's rank count.
func (t *Trace) Ranks() int { return len(t.Files) }

// Nodes is the node count over every rank.
func (t *Trace) Nodes() int {
	n := 0
	for _, f := range t.Files {
		n += len(f.Nodes)
	}
	return n
}

// FilePattern turns what the user gave into a printf pattern with one %d for the rank:
// PREFIX.%d.et as it is, or ASTRA-sim's bare prefix (PREFIX → PREFIX.%d.et).
func FilePattern(s string) (string, error) {
	switch strings.Count(s, "%d") {
	case 1:
		if strings.Count(s, "%") != 1 {
			return "", fmt.Errorf("%q: the only %% allowed is the rank's %%d", s)
		}
		return s, nil
	case 0:
		if strings.Contains(s, "%") {
			return "", fmt.Errorf("%q: the only %% allowed is the rank's %%d", s)
		}
		return strings.ReplaceAll(s, "%", "%%") + ".%d.et", nil
	}
	return "", fmt.Errorf("%q: more than one %%d", s)
}

// IsPattern reports whether s names a Chakra trace: a PREFIX.%d.et pattern, or a prefix whose
// rank 0 file PREFIX.0.et exists.
func IsPattern(s string) bool {
	if strings.Contains(s, "%d") {
		return true
	}
	_, err := os.Stat(s + ".0.et")
	return err == nil
}

// RankFiles lists the files of pattern (FilePattern's form): ranks 0..ranks-1 when ranks > 0,
// else the files found, which must be contiguous from 0.
func RankFiles(pattern string, ranks int) ([]string, error) {
	name := func(r int) string { return fmt.Sprintf(pattern, r) }
	if ranks > 0 {
		out := make([]string, ranks)
		for r := range ranks {
			out[r] = name(r)
			if _, err := os.Stat(out[r]); err != nil {
				return nil, fmt.Errorf("rank %d of %d: %v", r, ranks, err)
			}
		}
		return out, nil
	}
	// Every file the pattern matches, whatever its rank.
	i := strings.Index(pattern, "%d")
	before := strings.ReplaceAll(pattern[:i], "%%", "%")
	after := strings.ReplaceAll(pattern[i+2:], "%%", "%")
	glob := escapeGlob(before) + "*" + escapeGlob(after)
	found, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", pattern, err)
	}
	re := regexp.MustCompile("^" + regexp.QuoteMeta(before) + "(0|[1-9][0-9]*)" + regexp.QuoteMeta(after) + "$")
	var rs []int
	for _, f := range found {
		if m := re.FindStringSubmatch(f); m != nil {
			if r, err := strconv.Atoi(m[1]); err == nil {
				rs = append(rs, r)
			}
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s: no trace files (expected %s, %s, ...)", pattern, name(0), name(1))
	}
	slices.Sort(rs)
	for i, r := range rs {
		if r != i {
			return nil, fmt.Errorf("%s: the rank files are not contiguous from 0: %s is missing but %s exists (give the rank count with -g to use the first ranks)", pattern, name(i), name(r))
		}
	}
	out := make([]string, len(rs))
	for r := range rs {
		out[r] = name(r)
	}
	return out, nil
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// Load reads and checks the trace that pattern names (see FilePattern and RankFiles).
func Load(pattern string, opt Options) (*Trace, error) {
	p, err := FilePattern(pattern)
	if err != nil {
		return nil, err
	}
	names, err := RankFiles(p, opt.Ranks)
	if err != nil {
		return nil, err
	}
	files := make([]*File, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for r, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f, err := os.Open(n)
			if err != nil {
				errs[r] = err
				return
			}
			defer f.Close()
			files[r], errs[r] = ReadFile(f, n)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
	}
	var groups map[string][]int32
	from := ""
	if opt.CommGroups != "" {
		data, err := os.ReadFile(opt.CommGroups)
		if err != nil {
			return nil, err
		}
		if groups, err = ParseGroups(data, opt.CommGroups, len(files)); err != nil {
			return nil, err
		}
		from = opt.CommGroups
	}
	return New(pattern, files, groups, from, opt.Deps)
}

// ParseGroups reads ASTRA-sim's communicator-group file: a JSON object from group id (an
// integer above 0, as a string) to its ranks. name names the file in messages.
func ParseGroups(data []byte, name string, ranks int) (map[string][]int32, error) {
	var raw map[string][]int64
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: expected a JSON object of group id → ranks, e.g. {\"1\": [0, 1]}: %v", name, err)
	}
	out := make(map[string][]int32, len(raw))
	keys := slices.Sorted(maps.Keys(raw))
	for _, k := range keys {
		id, err := strconv.Atoi(k)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%s: group %q: ids are integers above 0 (0 and \"\" mean every rank)", name, k)
		}
		g, err := checkMembers(raw[k], ranks)
		if err != nil {
			return nil, fmt.Errorf("%s: group %q: %v", name, k, err)
		}
		out[strconv.Itoa(id)] = g
	}
	return out, nil
}

func checkMembers(rs []int64, ranks int) ([]int32, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("no ranks")
	}
	seen := map[int64]bool{}
	out := make([]int32, len(rs))
	for i, r := range rs {
		if r < 0 || r >= int64(ranks) {
			return nil, fmt.Errorf("rank %d is not one of the trace's %d ranks", r, ranks)
		}
		if seen[r] {
			return nil, fmt.Errorf("rank %d is listed twice", r)
		}
		seen[r] = true
		out[i] = int32(r)
	}
	return out, nil
}

// pytorchGroups reads the process-group list PyTorch's converter puts in a METADATA_NODE's
// inputs.values: [{"pg_name": "<id>", "ranks": [...]}, ...] wrapped in two characters on each
// side (ASTRA-sim strips them); empty ranks means every rank.
func pytorchGroups(values string, ranks int) (map[string][]int32, bool, error) {
	s := strings.TrimSpace(values)
	if !strings.Contains(s, "pg_name") {
		return nil, false, nil
	}
	type pg struct {
		Name  json.RawMessage `json:"pg_name"`
		Ranks []int64         `json:"ranks"`
	}
	var list []pg
	err := json.Unmarshal([]byte(s), &list)
	if err != nil && len(s) >= 4 {
		err = json.Unmarshal([]byte(s[2:len(s)-2]), &list)
	}
	if err != nil {
		return nil, true, fmt.Errorf("inputs.values: expected PyTorch's process-group list [{\"pg_name\": ..., \"ranks\": [...]}, ...]: %v", err)
	}
	out := map[string][]int32{}
	for _, g := range list {
		var name string
		if json.Unmarshal(g.Name, &name) != nil {
			name = string(g.Name) // a number
		}
		if len(g.Ranks) == 0 {
			continue // every rank: group "" already
		}
		m, err := checkMembers(g.Ranks, ranks)
		if err != nil {
			return nil, true, fmt.Errorf("inputs.values: process group %q: %v", name, err)
		}
		out[name] = m
	}
	return out, true, nil
}

// nodeErr is an error about node i of rank r's file: file, rank, node id and name, field.
func (t *Trace) nodeErr(r int, n *Node, field, format string, args ...any) error {
	f := t.Files[r]
	return fmt.Errorf("%s: rank %d: node %d (%s %q): %s: %s", f.Name, r, n.ID, n.Type, n.Name, field, fmt.Sprintf(format, args...))
}

// New checks files (rank r's trace at index r) with the communicator groups (nil: none, or
// those of a METADATA_NODE) and compiles them for the executor. name names the trace.
func New(name string, files []*File, groups map[string][]int32, groupsFrom string, deps Deps) (*Trace, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no ranks", name)
	}
	if len(files) > math.MaxInt32 {
		return nil, fmt.Errorf("%s: %d ranks", name, len(files))
	}
	t := &Trace{Name: name, Files: files, Groups: groups, GroupsFrom: groupsFrom, Deps: deps}
	if t.Groups == nil {
		// PyTorch's process groups, from the first METADATA_NODE that lists them.
	search:
		for r, f := range files {
			for i := range f.Nodes {
				n := &f.Nodes[i]
				if n.Type != MetadataNode || n.Inputs == nil {
					continue
				}
				g, ok, err := pytorchGroups(n.Inputs.Values, len(files))
				if err != nil {
					return nil, t.nodeErr(r, n, "inputs.values", "%v", err)
				}
				if ok {
					t.Groups = g
					t.GroupsFrom = fmt.Sprintf("%s: node %d", f.Name, n.ID)
					break search
				}
			}
		}
	}
	t.groupList = []group{{name: "", members: allRanks(len(files))}}
	for _, k := range slices.SortedFunc(maps.Keys(t.Groups), func(a, b string) int {
		ia, ea := strconv.Atoi(a)
		ib, eb := strconv.Atoi(b)
		if ea == nil && eb == nil {
			return cmp.Compare(ia, ib)
		}
		return strings.Compare(a, b)
	}) {
		t.groupList = append(t.groupList, group{name: k, members: t.Groups[k]})
	}
	t.ranks = make([]rankProg, len(files))
	for r := range files {
		if err := t.compile(r); err != nil {
			return nil, err
		}
	}
	if err := t.checkP2P(); err != nil {
		return nil, err
	}
	if err := t.checkGroups(); err != nil {
		return nil, err
	}
	return t, nil
}

func allRanks(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// sortNodes orders a file's nodes by id (the issue order), refusing a repeated id.
func (t *Trace) sortNodes(r int) error {
	f := t.Files[r]
	sort.SliceStable(f.Nodes, func(i, j int) bool { return f.Nodes[i].ID < f.Nodes[j].ID })
	for i := 1; i < len(f.Nodes); i++ {
		if f.Nodes[i].ID == f.Nodes[i-1].ID {
			return t.nodeErr(r, &f.Nodes[i], "id", "the id appears twice in the file")
		}
	}
	return nil
}
