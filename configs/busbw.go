package configs

import (
	"io"
	"strings"

	"simd/configs/lex"
)

// BusBW is a busbw.yaml file: the bus bandwidths the analytical backend used before it computed
// them itself (SimAI before 26b4574b; simd accepts the file with -busbw). All values are GB/s
// as written; 0 means null or not given.
type BusBW struct {
	TP, DP, EP BusBWSection
	PPBusBW    float64 // PP: busbw; 0 = not given
	File       string  // the file name given to ParseBusBW
}

// BusBWSection is the TP, DP or EP section of busbw.yaml, GB/s; 0 = null or not given.
// (SimAI parsed reducescatter but never used it.)
type BusBWSection struct {
	AllReduce, AllGather, ReduceScatter, AllToAll float64
}

// ParseBusBW reads a busbw.yaml in the line-oriented way SimAI did (it is not general YAML):
//
//   - line 1 is a free-form name and is skipped;
//   - blank lines and lines starting with '#' are ignored;
//   - a line ending with ':' starts a section: TP, DP, EP or PP;
//   - any other line is "key: value" inside a section; the key is the text before ':' with
//     anything from ',' on removed, trimmed (so "allreduce,: 300" is allreduce). TP, DP and EP
//     take allreduce, allgather, reducescatter and alltoall; PP takes busbw. The value is a
//     positive number of GB/s or null. A key given twice takes its last value.
//
// Errors are *lex.Error naming the file and line.
func ParseBusBW(r io.Reader, file string) (BusBW, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return BusBW{}, lex.Errorf(file, 0, "", "reading failed: %v", err)
	}
	b := BusBW{File: file}
	if len(data) == 0 {
		return BusBW{}, lex.Errorf(file, 0, "", "the file is empty (expected a name line and then sections TP:, DP:, EP:, PP:)")
	}
	section := ""
	for i, line := range strings.Split(string(data), "\n") {
		lineNo := i + 1
		text := strings.TrimSpace(line)
		if lineNo == 1 || text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if name, ok := strings.CutSuffix(text, ":"); ok {
			name = strings.TrimSpace(name)
			switch name {
			case "TP", "DP", "EP", "PP":
				section = name
				continue
			}
			if key, _, _ := strings.Cut(name, ","); busbwKeyKnown(strings.TrimSpace(key)) {
				return BusBW{}, lex.Errorf(file, lineNo, strings.TrimSpace(key), "expected a value after ':' (a number of GB/s or null)")
			}
			return BusBW{}, lex.Errorf(file, lineNo, "", "unknown section %q (expected TP, DP, EP or PP)", name)
		}
		rawKey, value, ok := strings.Cut(text, ":")
		if !ok {
			return BusBW{}, lex.Errorf(file, lineNo, "", "expected a section such as \"TP:\" or \"key: value\", got %q", text)
		}
		key, _, _ := strings.Cut(rawKey, ",")
		key = strings.TrimSpace(key)
		value = strings.TrimSpace(value)
		if section == "" {
			return BusBW{}, lex.Errorf(file, lineNo, key, "a key before any section (expected TP:, DP:, EP: or PP: first)")
		}
		field := section + "." + key
		var dst *float64
		if section == "PP" {
			if key == "busbw" {
				dst = &b.PPBusBW
			}
		} else {
			s := map[string]*BusBWSection{"TP": &b.TP, "DP": &b.DP, "EP": &b.EP}[section]
			switch key {
			case "allreduce":
				dst = &s.AllReduce
			case "allgather":
				dst = &s.AllGather
			case "reducescatter":
				dst = &s.ReduceScatter
			case "alltoall":
				dst = &s.AllToAll
			}
		}
		if dst == nil {
			want := "allreduce, allgather, reducescatter or alltoall"
			if section == "PP" {
				want = "busbw"
			}
			return BusBW{}, lex.Errorf(file, lineNo, field, "unknown key %q in section %s (expected %s)", key, section, want)
		}
		if value == "null" {
			*dst = 0
			continue
		}
		v, ok := parseNumber(value)
		if !ok || !(v > 0) {
			return BusBW{}, lex.Errorf(file, lineNo, field, "expected a positive number of GB/s or null, got %q", value)
		}
		*dst = v
	}
	return b, nil
}

// busbwKeyKnown reports whether key is a key of some busbw.yaml section.
func busbwKeyKnown(key string) bool {
	switch key {
	case "allreduce", "allgather", "reducescatter", "alltoall", "busbw":
		return true
	}
	return false
}
