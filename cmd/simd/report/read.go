package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// InputError marks a file of the folder that could not be read as its format.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error { return InputError{fmt.Errorf(format, args...)} }

// summaryJSON is what the report uses of summary.json (the wall-clock time is left out: the
// report is the same for the same folder).
type summaryJSON struct {
	Mode        string `json:"mode"`
	Workload    string `json:"workload"`
	Topology    string `json:"topology"`
	GPUs        int    `json:"gpus"`
	Collectives []struct {
		Group string `json:"group"`
	} `json:"collectives"`
	Breakdown *struct {
		IterationUs float64 `json:"iteration_us"`
	} `json:"breakdown"`
	Run *struct {
		Complete   bool    `json:"complete"`
		Incomplete string  `json:"incomplete"`
		EndUs      float64 `json:"end_us"`
		Events     uint64  `json:"events"`
		Flows      uint64  `json:"flows"`
	} `json:"run"`
}

// readSummary reads summary.json; a missing file is (nil, nil).
func readSummary(path string) (*summaryJSON, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s summaryJSON
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, inputErrorf("%s: %v", path, err)
	}
	return &s, nil
}

// endToEnd is EndToEnd.csv as the report shows it: the note of a stopped run, the summary
// line with its header, and the per-layer table.
type endToEnd struct {
	incomplete string
	sumHead    []string
	sum        []string
	layerHead  []string
	layers     [][]string
}

// readEndToEnd reads EndToEnd.csv (either of SimAI's layouts); a missing file is (nil, nil).
func readEndToEnd(path string) (*endToEnd, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e := &endToEnd{}
	text := string(data)
	for strings.HasPrefix(text, "#") {
		line, rest, _ := strings.Cut(text, "\n")
		e.incomplete = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		text = rest
	}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	recs, err := r.ReadAll()
	if err != nil {
		return nil, inputErrorf("%s: %v", path, err)
	}
	if len(recs) < 2 || len(recs[0]) < 10 || len(recs[1]) != len(recs[0]) {
		return nil, inputErrorf("%s: expected a summary header of at least 10 fields and its line", path)
	}
	e.sumHead, e.sum = recs[0], recs[1]
	if len(recs) > 2 {
		e.layerHead = recs[2]
		for _, rec := range recs[3:] {
			e.layers = append(e.layers, rec)
		}
	}
	return e, nil
}

// csvFile is a CSV file with a header read by column name.
type csvFile struct {
	path string
	head []string
	rows [][]string
}

// readCSV reads a CSV file whose header must hold the columns want; a missing file is
// (nil, nil).
func readCSV(path string, want ...string) (*csvFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	c := &csvFile{path: path}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, inputErrorf("%s: %v", path, err)
		}
		if line == 1 {
			c.head = rec
			for _, w := range want {
				if c.col(w) < 0 {
					return nil, inputErrorf("%s:1: no column %q (expected %s)", path, w, strings.Join(want, ","))
				}
			}
			continue
		}
		if len(rec) != len(c.head) {
			return nil, inputErrorf("%s:%d: expected %d fields, got %d", path, line, len(c.head), len(rec))
		}
		c.rows = append(c.rows, rec)
	}
	if c.head == nil {
		return nil, inputErrorf("%s: empty, expected a header", path)
	}
	return c, nil
}

// col is the index of the column name, -1 if none.
func (c *csvFile) col(name string) int {
	for i, h := range c.head {
		if strings.TrimSpace(h) == name {
			return i
		}
	}
	return -1
}
