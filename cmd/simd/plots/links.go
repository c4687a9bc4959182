package plots

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BusiestPerClass is the number of links of each class the busiest_links plot names.
const BusiestPerClass = 3

// classOrder is the order of the link classes of links.csv and link_classes.csv (simd's
// route.LinkClass ids), with their names in plots.
var classOrder = []struct{ id, label string }{
	{"nvlink", "NVLink"}, {"nic-asw", "NIC→ASW"}, {"asw-nic", "ASW→NIC"}, {"asw-psw", "ASW→PSW"},
	{"psw-asw", "PSW→ASW"}, {"psw-core", "PSW→core"}, {"core-psw", "core→PSW"}, {"other", "other"},
}

func classRank(id string) int {
	for i, c := range classOrder {
		if c.id == id {
			return i
		}
	}
	return len(classOrder)
}

func classLabel(id string) string {
	if r := classRank(id); r < len(classOrder) {
		return classOrder[r].label
	}
	return id
}

// readCSVColumns reads a CSV file with a header and returns, per row, the named columns as
// text; a missing column is an error naming the file.
func readCSVColumns(path string, cols []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty, expected a header", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, h := range head {
			if h == c {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s:1: no %s column in the header", path, c)
		}
	}
	var out [][]string
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		row := make([]string, len(cols))
		for i, j := range idx {
			row[i] = rec[j]
		}
		out = append(out, row)
	}
}

// parseFloats parses fields of a row, naming the file, line and column on error.
func parseFloats(path string, line int, cols []string, fields []string) ([]float64, error) {
	v := make([]float64, len(fields))
	for i, s := range fields {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: expected a number, got %q", path, line, cols[i], s)
		}
		v[i] = x
	}
	return v, nil
}

// ClassSeries is one link class's utilisation over time, from link_classes.csv: per bin its
// start and end (µs) and the p50, p90 and largest utilisation of its links (% of capacity).
type ClassSeries struct {
	Class, Label        string
	Links               int
	Start, End          []float64
	P50, P90, Max, Mean []float64
}

// ReadClassSeries reads link_classes.csv into one series per class, in class order.
func ReadClassSeries(path string) ([]ClassSeries, error) {
	cols := []string{"class", "links", "start_us", "end_us", "p50_util_pct", "p90_util_pct", "max_util_pct", "mean_util_pct"}
	rows, err := readCSVColumns(path, cols)
	if err != nil {
		return nil, err
	}
	by := map[string]*ClassSeries{}
	for i, r := range rows {
		v, err := parseFloats(path, i+2, cols[1:], r[1:])
		if err != nil {
			return nil, err
		}
		s := by[r[0]]
		if s == nil {
			s = &ClassSeries{Class: r[0], Label: classLabel(r[0]), Links: int(v[0])}
			by[r[0]] = s
		}
		s.Start, s.End = append(s.Start, v[1]), append(s.End, v[2])
		s.P50, s.P90, s.Max, s.Mean = append(s.P50, v[3]), append(s.P90, v[4]), append(s.Max, v[5]), append(s.Mean, v[6])
	}
	out := make([]ClassSeries, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := classRank(out[i].Class), classRank(out[j].Class)
		if a != b {
			return a < b
		}
		return out[i].Class < out[j].Class
	})
	return out, nil
}

// steps turns per-bin values into a step line over the bins.
func steps(start, end, v []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, 2*len(v))
	for i := range v {
		xy = append(xy, plotter.XY{X: start[i], Y: v[i]}, plotter.XY{X: end[i], Y: v[i]})
	}
	return xy
}

// linkUtilisationPlot draws link_classes.csv: per class, its links' p50 (solid), p90 (dashed)
// and largest (dotted) utilisation over time, as % of capacity. A folder without it (written
// before simd had the link sampler) falls back to bw.txt's busiest ports, saying so in the
// title.
func linkUtilisationPlot(path, bwPath string) (*figure, error) {
	series, err := ReadClassSeries(path)
	if errors.Is(err, fs.ErrNotExist) {
		p, h, err := linkUtilisation(bwPath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no link_classes.csv (written by a run with -plot or -report) and no bw.txt: %w", fs.ErrNotExist)
		}
		if p != nil {
			p.Title.Text += " (bw.txt; no link_classes.csv in this folder)"
		}
		return plotFigure(p, h, err)
	}
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, nil
	}
	f := &figure{p: newPlot("Link utilisation by tier", "time (µs)", "utilisation (% of capacity)"), height: 5 * vg.Inch}
	f.p.Y.Min, f.p.Y.Max = 0, 105
	end := 0.0
	for i, s := range series {
		for k, v := range [][]float64{s.P50, s.P90, s.Max} {
			l, err := plotter.NewLine(steps(s.Start, s.End, v))
			if err != nil {
				return nil, err
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.2)
			l.Dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1), vg.Points(2)}}[k]
			f.p.Add(l)
			if k == 0 {
				f.add(fmt.Sprintf("%s (%d links)", s.Label, s.Links), l)
			}
		}
		end = max(end, s.End[len(s.End)-1])
	}
	f.p.X.Min, f.p.X.Max = 0, end
	f.p.X.Tick.Marker = linearTicks{}
	f.notes = append(f.notes,
		"Per tier, in each time bin: the median (solid), the 90th percentile (dashed) and the busiest (dotted) of its links' utilisation.",
		"Links that carried nothing in the whole run are left out of their tier.")
	return f, nil
}

// BusyLink is one row of links.csv, as the busiest_links plot uses it.
type BusyLink struct {
	Class, Name             string
	Link                    int
	Bytes, PeakPct, BusyPct float64
}

// Busiest reads links.csv and returns the BusiestPerClass links of each class with the highest
// peak utilisation (ties: more bytes, then the lower link id), in class order.
func Busiest(path string) ([]BusyLink, error) {
	cols := []string{"class", "name", "link", "bytes", "peak_util_pct", "busy_util_pct"}
	rows, err := readCSVColumns(path, cols)
	if err != nil {
		return nil, err
	}
	links := make([]BusyLink, 0, len(rows))
	for i, r := range rows {
		v, err := parseFloats(path, i+2, cols[2:], r[2:])
		if err != nil {
			return nil, err
		}
		links = append(links, BusyLink{Class: r[0], Name: r[1], Link: int(v[0]), Bytes: v[1], PeakPct: v[2], BusyPct: v[3]})
	}
	sort.Slice(links, func(i, j int) bool {
		a, b := links[i], links[j]
		if ra, rb := classRank(a.Class), classRank(b.Class); ra != rb || a.Class != b.Class {
			if ra != rb {
				return ra < rb
			}
			return a.Class < b.Class
		}
		if a.PeakPct != b.PeakPct {
			return a.PeakPct > b.PeakPct
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Link < b.Link
	})
	var out []BusyLink
	for i, l := range links {
		if i >= BusiestPerClass && links[i-BusiestPerClass].Class == l.Class {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// busiestLinks draws the busiest links of each tier by name (links.csv): their peak
// utilisation over a bin and their mean utilisation while busy, % of capacity.
func busiestLinks(path string) (*figure, error) {
	links, err := Busiest(path)
	if err != nil {
		return nil, err
	}
	if len(links) == 0 {
		return nil, nil
	}
	n := len(links)
	peak, busy := make(plotter.Values, n), make(plotter.Values, n)
	labels := make([]string, n)
	for i, l := range links {
		j := n - 1 - i // the first class at the top
		peak[j], busy[j] = l.PeakPct, l.BusyPct
		labels[j] = classLabel(l.Class) + ": " + l.Name
	}
	p := newPlot(fmt.Sprintf("The %d busiest links of each tier", BusiestPerClass), "utilisation (% of capacity)", "")
	f := &figure{p: p, height: barsHeight(n)}
	w := barWidth(n) / 1.5
	for k, s := range []struct {
		name string
		v    plotter.Values
	}{{"peak (one bin)", peak}, {"mean while busy", busy}} {
		bc, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return nil, err
		}
		bc.Horizontal = true
		bc.Color = plotutil.Color(k)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(2*k-1) * w / 2
		p.Add(bc)
		f.add(s.name, bc)
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -1, float64(n)
	p.X.Min, p.X.Max = 0, 105
	p.Y.Tick.Label.XAlign = draw.XRight
	f.notes = append(f.notes, fmt.Sprintf("Per tier, the %d links with the highest peak: the peak is over one time bin of link_classes.csv's width; the mean counts only the time the link carried bytes.", BusiestPerClass))
	return f, nil
}
