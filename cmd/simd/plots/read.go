package plots

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// flow is one line of fct.txt.
type flow struct {
	sip, dip            uint32
	size                uint64
	fctNs, standaloneNs uint64
}

// readFCT reads fct.txt (sip dip sport dport size start_ns fct_ns standalone_fct_ns, IPs in hex).
func readFCT(path string) ([]flow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var flows []flow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 8 {
			return nil, fmt.Errorf("%s:%d: expected 8 fields (sip dip sport dport size start_ns fct_ns standalone_fct_ns), got %d", path, line, len(fields))
		}
		var fl flow
		var vals [5]uint64
		for i, idx := range []int{0, 1} {
			v, err := strconv.ParseUint(fields[idx], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: field %d: expected a hex IP, got %q", path, line, idx+1, fields[idx])
			}
			vals[i] = v
		}
		for i, idx := range []int{4, 6, 7} {
			v, err := strconv.ParseUint(fields[idx], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: field %d: expected a non-negative integer, got %q", path, line, idx+1, fields[idx])
			}
			vals[2+i] = v
		}
		fl.sip, fl.dip = uint32(vals[0]), uint32(vals[1])
		fl.size, fl.fctNs, fl.standaloneNs = vals[2], vals[3], vals[4]
		flows = append(flows, fl)
	}
	return flows, sc.Err()
}

// bwSample is one row of bw.txt.
type bwSample struct {
	timeNs     int64
	node, port int64
	gbps       float64
}

// readBW reads bw.txt: a header, then "time, node_id, port_id, bandwidth" rows (ns, Gbit/s).
func readBW(path string) ([]bwSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []bwSample
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || line == 1 && strings.HasPrefix(text, "time") {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: expected 4 fields (time, node_id, port_id, bandwidth), got %d", path, line, len(fields))
		}
		var s bwSample
		var err error
		ints := []*int64{&s.timeNs, &s.node, &s.port}
		for i, p := range ints {
			if *p, err = strconv.ParseInt(strings.TrimSpace(fields[i]), 10, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: field %d: expected an integer, got %q", path, line, i+1, fields[i])
			}
		}
		if s.gbps, err = strconv.ParseFloat(strings.TrimSpace(fields[3]), 64); err != nil {
			return nil, fmt.Errorf("%s:%d: field 4: expected a number, got %q", path, line, fields[3])
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// layerRow is one layer row of EndToEnd.csv (both of SimAI's layouts start with the same
// eight columns: layer_name, run name, fwd/wg/ig compute, fwd/wg/ig exposed comm; µs).
type layerRow struct {
	name    string
	compute float64
	exposed [3]float64 // fwd, wg, ig
}

// endToEnd is what the plots use of EndToEnd.csv.
type endToEnd struct {
	layers         []layerRow
	bubble, ppComm float64 // whole iteration, µs
}

// readEndToEnd reads EndToEnd.csv: two summary lines, a header, one row per layer.
func readEndToEnd(path string) (*endToEnd, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#' // a stopped run's "# incomplete: ..." line
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 3 || len(recs[1]) < 10 {
		return nil, fmt.Errorf("%s: expected two summary lines and a header", path)
	}
	e := &endToEnd{}
	lead := func(s string) float64 {
		v, _ := strconv.ParseFloat(strings.Fields(s + " 0")[0], 64)
		return v
	}
	e.ppComm, e.bubble = lead(recs[1][5]), lead(recs[1][6])
	for i, rec := range recs[3:] {
		if rec[0] == "SUM" {
			break // the ns-3 layout's totals follow
		}
		if len(rec) < 8 {
			return nil, fmt.Errorf("%s:%d: expected at least 8 fields, got %d", path, i+4, len(rec))
		}
		row := layerRow{name: rec[0]}
		var v [6]float64
		for j := range v {
			x, err := strconv.ParseFloat(rec[2+j], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: field %d: expected a number, got %q", path, i+4, 3+j, rec[2+j])
			}
			v[j] = max(x, 0)
		}
		row.compute = v[0] + v[1] + v[2]
		row.exposed = [3]float64{v[3], v[4], v[5]}
		e.layers = append(e.layers, row)
	}
	return e, nil
}

// phaseGroups maps (layer index, phase) to the group of its collective, from summary.json or,
// without it, compare.csv. Either may be missing: an empty map.
func phaseGroups(summaryPath, comparePath string) map[[2]string]string {
	out := map[[2]string]string{}
	if data, err := os.ReadFile(summaryPath); err == nil {
		var s struct {
			Collectives []struct {
				Layer int    `json:"layer"`
				Phase string `json:"phase"`
				Group string `json:"group"`
			} `json:"collectives"`
		}
		if json.Unmarshal(data, &s) == nil {
			for _, c := range s.Collectives {
				out[[2]string{strconv.Itoa(c.Layer), c.Phase}] = c.Group
			}
			return out
		}
	}
	if rows, err := readCompare(comparePath); err == nil {
		for _, r := range rows {
			out[[2]string{strconv.Itoa(r.layer), r.phase}] = r.group
		}
	}
	return out
}

// compareRow is one collective row of compare.csv.
type compareRow struct {
	layer                  int
	name, phase, op, group string
	analyticalUs, eventUs  float64
}

// readCompare reads the collective rows (not the per-layer ones) of compare.csv.
func readCompare(path string) ([]compareRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	var out []compareRow
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			continue
		}
		if len(rec) < 8 {
			return nil, fmt.Errorf("%s:%d: expected at least 8 fields, got %d", path, line, len(rec))
		}
		if rec[2] == "layer" {
			continue
		}
		row := compareRow{name: rec[1], phase: rec[2], op: rec[3], group: rec[4]}
		var err1, err2, err3 error
		row.layer, err1 = strconv.Atoi(rec[0])
		row.analyticalUs, err2 = strconv.ParseFloat(rec[6], 64)
		row.eventUs, err3 = strconv.ParseFloat(rec[7], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out = append(out, row)
	}
	return out, nil
}

// FCTSlowdowns returns the FCT slowdown (fct / standalone fct) of every flow of the fct.txt at
// path with a standalone FCT above 0, sorted.
func FCTSlowdowns(path string) ([]float64, error) {
	flows, err := readFCT(path)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(flows))
	for _, f := range flows {
		if f.standaloneNs > 0 {
			out = append(out, float64(f.fctNs)/float64(f.standaloneNs))
		}
	}
	sort.Float64s(out)
	return out, nil
}

// DetectPrefix is the prefix of the run's files in the output folder dir, for simd plot and simd
// report without -r: "" when dir holds EndToEnd.csv or fct.txt, else the X of the only
// XEndToEnd.csv (an analytical run's prefix; a compare run's analytical-EndToEnd.csv does not
// count), else "".
func DetectPrefix(dir string) string {
	for _, name := range []string{"EndToEnd.csv", "fct.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return ""
		}
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*EndToEnd.csv"))
	var found []string
	for _, m := range matches {
		if base := filepath.Base(m); !strings.HasSuffix(base, "analytical-EndToEnd.csv") {
			found = append(found, strings.TrimSuffix(base, "EndToEnd.csv"))
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}
