// Package plots draws the plots of a simd output folder from its files (fct.txt,
// link_classes.csv, links.csv, bw.txt, EndToEnd.csv, compare.csv, summary.json), so that a
// run's -plot and simd plot DIR share one code path. Each plot is written as NAME.png and
// NAME.svg, with a title, axis labels with units and a legend; the same files give
// byte-identical plots.
//
// The plots and the choices behind them:
//
//   - fct_slowdown_cdf: the CDF of each flow's slowdown, fct / standalone fct (fct.txt), split by
//     kind, and for all flows when there are two kinds. fct.txt does not say which flows cross NVLink, so a source–
//     destination pair is "NVLink (same server)" when its largest flow's standalone FCT implies at
//     least 1 Tbit/s (size·8 / standalone fct; NICs are slower, NVLink faster) and "network"
//     otherwise. Flows with a standalone FCT of 0 are left out. Curves of more than 2,000 flows
//     are drawn through 2,000 evenly spaced quantiles.
//   - link_utilisation: utilisation over time, as % of capacity, of each link class (NVLink,
//     NIC→ASW, ASW→PSW, ... each direction apart) from link_classes.csv (written by a run with
//     -plot, in both network models): per class the p50 (solid), p90 (dashed) and largest
//     (dotted) utilisation of its links in each bin, so the tier that saturates stands out.
//     A folder without link_classes.csv falls back to bw.txt (congestion control only): the
//     throughput of the 8 ports that sent the most bytes, ties broken by node and port, the
//     title saying so; without either the plot is skipped with a note.
//   - busiest_links: the 3 links of each class with the highest peak utilisation (links.csv),
//     by name ("server 0 GPU 3 NIC → ASW 3"), with their peak over one bin and their mean while
//     busy (links.go).
//   - layer_breakdown: per layer of EndToEnd.csv, stacked horizontal bars of compute and exposed
//     communication by group (TP, DP, DP_EP, EP, PP): each phase's exposed column goes to the
//     group of that phase's collective as summary.json or compare.csv gives it ("group unknown"
//     without either), which is how the event report splits its exposed total, so the bars of
//     a group add up to the report's figure for it. The bubble and PP communication are
//     whole-iteration figures in EndToEnd.csv, so they make one extra bar, "pipeline". More
//     than 60 layers are aggregated into 60 bars of consecutive layers, in order.
//   - compare: analytical vs event time per collective (compare.csv), grouped horizontal bars;
//     of more than 60 collectives, the 60 with the largest time are drawn, in file order.
package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Limits of the plots (see the package doc).
const (
	NVLinkGbps   = 1000 // implied standalone rate from which a pair counts as NVLink
	MaxCDFPoints = 2000
	BusiestPorts = 8
	MaxBars      = 60
)

// Result lists what Draw wrote and what it skipped, with the reason.
type Result struct {
	Written []string
	Skipped []string
}

// Draw reads the output files of dir whose names start with prefix and writes the plots into
// out (created if needed) under the same prefix. Missing inputs skip their plot; an input that
// is present but malformed is an error.
func Draw(dir, out, prefix string) (*Result, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	res := &Result{}
	in := func(name string) string { return filepath.Join(dir, prefix+name) }
	type job struct {
		name, input string
		make        func(string) (*plot.Plot, vg.Length, error)
	}
	jobs := []job{
		{"fct_slowdown_cdf", "fct.txt", func(p string) (*plot.Plot, vg.Length, error) { return fctCDF(p) }},
		{"link_utilisation", "link_classes.csv", func(p string) (*plot.Plot, vg.Length, error) { return linkUtilisationPlot(p, in("bw.txt")) }},
		{"busiest_links", "links.csv", func(p string) (*plot.Plot, vg.Length, error) { return busiestLinks(p) }},
		{"layer_breakdown", "EndToEnd.csv", func(p string) (*plot.Plot, vg.Length, error) {
			return layerBreakdown(p, in("summary.json"), in("compare.csv"))
		}},
		{"compare", "compare.csv", func(p string) (*plot.Plot, vg.Length, error) { return comparePlot(p) }},
	}
	for _, j := range jobs {
		p, h, err := j.make(in(j.input))
		if errors.Is(err, fs.ErrNotExist) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: no %s in %s", j.name, prefix+j.input, dir))
			continue
		}
		if err != nil {
			return res, InputError{err}
		}
		if p == nil {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %s holds nothing to plot", j.name, prefix+j.input))
			continue
		}
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(out, prefix+j.name+"."+format)
			if err := save(p, h, format, path); err != nil {
				return res, err
			}
			res.Written = append(res.Written, path)
		}
	}
	return res, nil
}

// InputError marks an input file of the folder that could not be read as its format.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

const width = 8 * vg.Inch

// save writes the plot under a temporary name and renames it.
func save(p *plot.Plot, h vg.Length, format, path string) error {
	wt, err := p.WriterTo(width, h, format)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = wt.WriteTo(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// fctCDF draws the slowdown CDF of fct.txt.
func fctCDF(path string) (*plot.Plot, vg.Length, error) {
	flows, err := readFCT(path)
	if err != nil {
		return nil, 0, err
	}
	// Classify each (sip, dip) pair by the rate its largest flow's standalone FCT implies.
	type pair struct{ s, d uint32 }
	best := map[pair]flow{}
	for _, f := range flows {
		if f.standaloneNs == 0 {
			continue
		}
		k := pair{f.sip, f.dip}
		if b, ok := best[k]; !ok || f.size > b.size {
			best[k] = f
		}
	}
	groups := map[string][]float64{}
	for _, f := range flows {
		if f.standaloneNs == 0 {
			continue
		}
		b := best[pair{f.sip, f.dip}]
		kind := "network"
		if float64(b.size)*8/float64(b.standaloneNs) >= NVLinkGbps {
			kind = "NVLink (same server)"
		}
		sd := float64(f.fctNs) / float64(f.standaloneNs)
		groups["all flows"] = append(groups["all flows"], sd)
		groups[kind] = append(groups[kind], sd)
	}
	if len(groups) == 0 {
		return nil, 0, nil
	}
	p := newPlot("FCT slowdown CDF", "slowdown (fct / standalone fct, ×)", "fraction of flows")
	p.Legend.Top = false
	p.Legend.Left = false
	p.Y.Min, p.Y.Max = 0, 1
	for i, name := range []string{"all flows", "NVLink (same server)", "network"} {
		v := groups[name]
		if len(v) == 0 || name == "all flows" && len(groups) < 3 {
			continue // all flows are of one kind: its curve is the same
		}
		sort.Float64s(v)
		l, err := plotter.NewLine(cdfPoints(v))
		if err != nil {
			return nil, 0, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		l.StepStyle = plotter.PostStep
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d)", name, len(v)), l)
	}
	return p, 5 * vg.Inch, nil
}

// cdfPoints gives the empirical CDF of sorted v, through at most MaxCDFPoints quantiles.
func cdfPoints(v []float64) plotter.XYs {
	n := len(v)
	m := min(n, MaxCDFPoints)
	xy := make(plotter.XYs, 0, m+1)
	xy = append(xy, plotter.XY{X: v[0], Y: 0})
	for i := 1; i <= m; i++ {
		k := (i*n + m - 1) / m // flows at or below the i-th quantile
		xy = append(xy, plotter.XY{X: v[k-1], Y: float64(k) / float64(n)})
	}
	return xy
}

// linkUtilisation draws the busiest ports' throughput over time from bw.txt.
func linkUtilisation(path string) (*plot.Plot, vg.Length, error) {
	samples, err := readBW(path)
	if err != nil {
		return nil, 0, err
	}
	if len(samples) == 0 {
		return nil, 0, nil
	}
	type port struct{ node, port int64 }
	total := map[port]float64{}
	timeSet := map[int64]bool{}
	for _, s := range samples {
		total[port{s.node, s.port}] += s.gbps
		timeSet[s.timeNs] = true
	}
	ports := make([]port, 0, len(total))
	for p := range total {
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool {
		a, b := ports[i], ports[j]
		if total[a] != total[b] {
			return total[a] > total[b]
		}
		if a.node != b.node {
			return a.node < b.node
		}
		return a.port < b.port
	})
	ports = ports[:min(len(ports), BusiestPorts)]
	times := make([]int64, 0, len(timeSet))
	for t := range timeSet {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	index := map[int64]int{}
	for i, t := range times {
		index[t] = i
	}
	p := newPlot(fmt.Sprintf("Link throughput, the %d busiest ports", len(ports)), "time (µs)", "throughput (Gbit/s)")
	p.Y.Min = 0
	for i, pt := range ports {
		vals := make([]float64, len(times))
		for _, s := range samples {
			if s.node == pt.node && s.port == pt.port {
				vals[index[s.timeNs]] += s.gbps
			}
		}
		xy := make(plotter.XYs, len(times))
		for k, t := range times {
			xy[k] = plotter.XY{X: float64(t) / 1000, Y: vals[k]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, 0, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("node %d port %d", pt.node, pt.port), l)
	}
	p.Legend.Top = true
	return p, 5 * vg.Inch, nil
}

// segments of the layer bars, in stacking order.
var segments = []string{"compute", "exposed TP comm", "exposed DP comm", "exposed DP_EP comm", "exposed EP comm", "exposed PP comm", "exposed comm (group unknown)", "bubble"}

var phases = [3]string{"fwd", "wg", "ig"}

// layerValues reads EndToEnd.csv's layers and splits each into the segments of the layer bars,
// in µs: compute, and each phase's exposed communication in the segment of its group.
func layerValues(path, summaryPath, comparePath string) (*endToEnd, [][]float64, error) {
	e, err := readEndToEnd(path)
	if err != nil {
		return nil, nil, err
	}
	groups := phaseGroups(summaryPath, comparePath)
	seg := func(group string) int {
		for i, s := range segments {
			if s == "exposed "+group+" comm" {
				return i
			}
		}
		return 6
	}
	per := make([][]float64, len(e.layers))
	for i, l := range e.layers {
		v := make([]float64, len(segments))
		v[0] = l.compute
		for ph, x := range l.exposed {
			v[seg(groups[[2]string{strconv.Itoa(i), phases[ph]}])] += x
		}
		per[i] = v
	}
	return e, per, nil
}

// LayerTotals are the sums over the layers of the segments the layer_breakdown plot of dir
// stacks (compute and exposed communication by group, µs), by legend name; the pipeline bar
// (bubble and PP communication) is left out.
func LayerTotals(dir, prefix string) (map[string]float64, error) {
	in := func(name string) string { return filepath.Join(dir, prefix+name) }
	_, per, err := layerValues(in("EndToEnd.csv"), in("summary.json"), in("compare.csv"))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, v := range per {
		for k, x := range v {
			out[segments[k]] += x
		}
	}
	return out, nil
}

// layerBreakdown draws EndToEnd.csv's layers as stacked bars.
func layerBreakdown(path, summaryPath, comparePath string) (*plot.Plot, vg.Length, error) {
	e, per, err := layerValues(path, summaryPath, comparePath)
	if err != nil {
		return nil, 0, err
	}
	if len(e.layers) == 0 {
		return nil, 0, nil
	}
	// Aggregate consecutive layers into at most MaxBars bars.
	step := (len(per) + MaxBars - 1) / MaxBars
	var names []string
	var bars [][]float64
	for a := 0; a < len(per); a += step {
		b := min(a+step, len(per))
		v := make([]float64, len(segments))
		for i := a; i < b; i++ {
			for k := range v {
				v[k] += per[i][k]
			}
		}
		if b-a == 1 {
			names = append(names, fmt.Sprintf("%d %s", a, e.layers[a].name))
		} else {
			names = append(names, fmt.Sprintf("layers %d–%d", a, b-1))
		}
		bars = append(bars, v)
	}
	if e.bubble > 0 || e.ppComm > 0 {
		v := make([]float64, len(segments))
		v[5], v[7] = e.ppComm, e.bubble
		names = append(names, "pipeline")
		bars = append(bars, v)
	}
	// Horizontal bars listed top-down: reverse so the first layer is at the top.
	n := len(bars)
	rev := func(k int) plotter.Values {
		vals := make(plotter.Values, n)
		for i := range bars {
			vals[n-1-i] = bars[i][k]
		}
		return vals
	}
	labels := make([]string, n)
	for i := range names {
		labels[n-1-i] = names[i]
	}
	title := "Time per layer"
	if step > 1 {
		title += fmt.Sprintf(" (%d layers per bar)", step)
	}
	p := newPlot(title, "time (µs)", "layer")
	var below *plotter.BarChart
	for k, name := range segments {
		vals := rev(k)
		used := false
		for _, x := range vals {
			used = used || x > 0
		}
		if !used {
			continue
		}
		bc, err := plotter.NewBarChart(vals, barWidth(n))
		if err != nil {
			return nil, 0, err
		}
		bc.Horizontal = true
		bc.Color = segmentColor(k)
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		p.Legend.Add(name, bc)
	}
	if below == nil {
		return nil, 0, nil
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -1, float64(n)
	p.Legend.Top = true
	p.X.Min = 0
	p.X.Max = legendRoom(bars)
	return p, barsHeight(n), nil
}

// legendRoom is the x-axis end that leaves the legend room to the right of the longest bar.
func legendRoom(bars [][]float64) float64 {
	m := 0.0
	for _, v := range bars {
		t := 0.0
		for _, x := range v {
			t += x
		}
		m = max(m, t)
	}
	return m * 1.35
}

func segmentColor(k int) color.Color { return plotutil.Color(k) }

func barWidth(n int) vg.Length { return vg.Points(min(12, math.Max(3, 300/float64(n)))) }

func barsHeight(n int) vg.Length {
	// The conversion rounds the product, so no platform fuses it into the sum (docs/models.md,
	// Determinism).
	return max(5*vg.Inch, vg.Length(vg.Length(n)*barWidth(n)*1.6)+2*vg.Inch)
}

// comparePlot draws analytical vs event time per collective from compare.csv.
func comparePlot(path string) (*plot.Plot, vg.Length, error) {
	rows, err := readCompare(path)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, 0, nil
	}
	if len(rows) > MaxBars {
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		big := func(r compareRow) float64 { return max(r.analyticalUs, r.eventUs) }
		sort.SliceStable(idx, func(a, b int) bool { return big(rows[idx[a]]) > big(rows[idx[b]]) })
		idx = idx[:MaxBars]
		sort.Ints(idx)
		kept := make([]compareRow, len(idx))
		for i, k := range idx {
			kept[i] = rows[k]
		}
		rows = kept
	}
	n := len(rows)
	an, ev := make(plotter.Values, n), make(plotter.Values, n)
	labels := make([]string, n)
	for i, r := range rows {
		j := n - 1 - i
		an[j], ev[j] = max(r.analyticalUs, 0), max(r.eventUs, 0)
		labels[j] = strings.TrimSpace(fmt.Sprintf("%d %s %s %s", r.layer, r.phase, r.op, r.group))
	}
	p := newPlot("Analytical vs event time per collective", "time (µs)", "collective (layer phase op group)")
	w := barWidth(n) / 1.5
	for k, s := range []struct {
		name string
		v    plotter.Values
	}{{"analytical", an}, {"event", ev}} {
		bc, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return nil, 0, err
		}
		bc.Horizontal = true
		bc.Color = plotutil.Color(k)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(2*k-1) * w / 2
		p.Add(bc)
		p.Legend.Add(s.name, bc)
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -1, float64(n)
	p.Legend.Top = true
	p.X.Min = 0
	var longest [][]float64
	for i := range an {
		longest = append(longest, []float64{max(an[i], ev[i])})
	}
	p.X.Max = legendRoom(longest)
	return p, barsHeight(n), nil
}
