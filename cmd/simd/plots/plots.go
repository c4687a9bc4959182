// Package plots draws the plots of a simd output folder from its files (fct.txt,
// link_classes.csv, links.csv, bw.txt, EndToEnd.csv, compare.csv, summary.json), so that a
// run's -plot, simd plot DIR and the HTML report (Figures) share one code path. Each plot is written as NAME.png and NAME.svg, with a
// title, axis labels with units, a legend in a strip below the plot (never over the data) and,
// under it, notes that say what the plot leaves out, cuts or aggregates and how to read it; the
// same files give byte-identical plots. Every plot's numbers come from a data function
// (fctData, layerData, compareData) that the tests check, the drawing only lays them out.
//
// The plots and the choices behind them:
//
//   - fct_slowdown_cdf: the CDF of each flow's slowdown, fct / standalone fct (fct.txt), split by
//     kind, and for all flows when there are two kinds. fct.txt does not say which flows cross
//     NVLink, so a source–destination pair is "NVLink (same server)" when its largest flow's
//     standalone FCT implies at least 1 Tbit/s (size·8 / standalone fct; NICs are slower, NVLink
//     faster) and "network" otherwise. The x axis always spans every flow (nothing is cut); it
//     is logarithmic when the slowdowns span more than LogDecades decades; a note gives the
//     range, median and P99. Flows with a standalone FCT of 0 are left out, and counted in a
//     note. Curves of more than 2,000 flows are drawn through 2,000 evenly spaced quantiles.
//     A dashed line marks slowdown 1. Slowdowns below 1 are real and common: the standalone
//     FCT is SimAI's formula (netmodel.FCTLog), base RTT + size/bandwidth, whose base RTT
//     charges a full packet's serialisation at every hop, so the size term counts the first
//     hop twice and a flow smaller than a packet is charged a whole one; a flow that meets no
//     contention pays one serialisation of its bytes, its last packet's store-and-forward and
//     the ACK, and finishes up to about one packet time per hop sooner. The column keeps
//     SimAI's meaning; a note on the plot says how many flows are below 1 and why.
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
//     whole-iteration figures in EndToEnd.csv, so they make one extra bar, "pipeline" (a note
//     says so). More than 60 layers are aggregated into at most 60 bars of consecutive layers,
//     in order; the title and a note say how many layers a bar holds.
//   - compare: analytical vs event time per collective (compare.csv), grouped horizontal bars;
//     of more than 60 collectives, the 60 with the largest time are drawn, in file order, and
//     the title and a note say so ("60 of 412 collectives, the largest by time") with the
//     largest and total time of those left out. The time axis is logarithmic when the times
//     drawn span more than LogDecades decades, as one large data-parallel collective otherwise
//     flattens every other bar.
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

// Figure is one plot of a folder as SVG, for a page that shows it inline.
type Figure struct {
	Name  string   // file name without prefix and extension: fct_slowdown_cdf, ...
	Title string   // the plot's title
	Notes []string // what the plot leaves out or how to read it, also drawn under it
	SVG   []byte   // the SVG document, as NAME.svg holds it
}

// job is one plot: its name, its input file and how to make it from the input's path.
type job struct {
	name, input string
	make        func(string) (*figure, error)
}

// jobs are the plots of a folder, in order; in names the folder's files under the prefix.
func jobs(in func(string) string) []job {
	return []job{
		{"fct_slowdown_cdf", "fct.txt", fctCDF},
		{"link_utilisation", "link_classes.csv", func(p string) (*figure, error) { return linkUtilisationPlot(p, in("bw.txt")) }},
		{"busiest_links", "links.csv", busiestLinks},
		{"layer_breakdown", "EndToEnd.csv", func(p string) (*figure, error) {
			return layerBreakdown(p, in("summary.json"), in("compare.csv"))
		}},
		{"compare", "compare.csv", comparePlot},
	}
}

// made is a plot made from its input.
type made struct {
	name string
	fig  *figure
}

// build makes the plots of dir under prefix; missing inputs and empty ones are skipped, with
// the reason.
func build(dir, prefix string) ([]made, []string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a folder", dir)
	}
	in := func(name string) string { return filepath.Join(dir, prefix+name) }
	var out []made
	var skipped []string
	for _, j := range jobs(in) {
		f, err := j.make(in(j.input))
		if errors.Is(err, fs.ErrNotExist) {
			skipped = append(skipped, fmt.Sprintf("%s: no %s", j.name, prefix+j.input))
			continue
		}
		if err != nil {
			return out, skipped, InputError{err}
		}
		if f == nil {
			skipped = append(skipped, fmt.Sprintf("%s: %s holds nothing to plot", j.name, prefix+j.input))
			continue
		}
		out = append(out, made{j.name, f})
	}
	return out, skipped, nil
}

// Draw reads the output files of dir whose names start with prefix and writes the plots into
// out (created if needed) under the same prefix. Missing inputs skip their plot; an input that
// is present but malformed is an error.
func Draw(dir, out, prefix string) (*Result, error) {
	figs, skipped, err := build(dir, prefix)
	res := &Result{}
	for _, s := range skipped {
		if strings.Contains(s, ": no ") {
			s += " in " + dir
		}
		res.Skipped = append(res.Skipped, s)
	}
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, err
	}
	for _, m := range figs {
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(out, prefix+m.name+"."+format)
			if err := save(m.fig, format, path); err != nil {
				return res, err
			}
			res.Written = append(res.Written, path)
		}
	}
	return res, nil
}

// Figures makes the plots of dir under prefix as SVG, in the order Draw writes them, and says
// which it skipped and why (without naming dir, so that the words do not depend on where the
// folder is).
func Figures(dir, prefix string) ([]Figure, []string, error) {
	figs, skipped, err := build(dir, prefix)
	if err != nil {
		return nil, skipped, err
	}
	out := make([]Figure, 0, len(figs))
	for _, m := range figs {
		svg, err := m.fig.svg()
		if err != nil {
			return nil, skipped, err
		}
		out = append(out, Figure{Name: m.name, Title: m.fig.p.Title.Text, Notes: m.fig.notes, SVG: svg})
	}
	return out, skipped, nil
}

// InputError marks an input file of the folder that could not be read as its format.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

const width = 8 * vg.Inch

// save writes the figure under a temporary name and renames it.
func save(fig *figure, format, path string) error {
	wt, err := fig.writerTo(format)
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

// cdfCurve is one curve of the slowdown CDF: a kind of flows and their slowdowns, sorted.
type cdfCurve struct {
	name string
	v    []float64
}

// cdfData is what the slowdown CDF draws: its curves, its x axis and its notes.
type cdfData struct {
	curves []cdfCurve
	logX   bool
	lo, hi float64 // the smallest and largest slowdown
	notes  []string
}

// fctData reads fct.txt and splits the flows' slowdowns by kind.
func fctData(path string) (*cdfData, error) {
	flows, err := readFCT(path)
	if err != nil {
		return nil, err
	}
	// Classify each (sip, dip) pair by the rate its largest flow's standalone FCT implies.
	type pair struct{ s, d uint32 }
	best := map[pair]flow{}
	zero := 0
	for _, f := range flows {
		if f.standaloneNs == 0 {
			zero++
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
	all := groups["all flows"]
	if len(all) == 0 {
		return nil, nil
	}
	sort.Float64s(all)
	d := &cdfData{}
	for _, name := range []string{"all flows", "NVLink (same server)", "network"} {
		v := groups[name]
		if len(v) == 0 || name == "all flows" && len(groups) < 3 {
			continue // all flows are of one kind: its curve is the same
		}
		sort.Float64s(v)
		d.curves = append(d.curves, cdfCurve{name, v})
	}
	_, _, decades := logSpan(all)
	d.lo, d.hi = all[0], all[len(all)-1]
	d.logX = decades > LogDecades && d.lo > 0
	scale := "linear"
	if d.logX {
		scale = "logarithmic"
	}
	d.notes = append(d.notes, fmt.Sprintf("x axis (%s): the whole range, slowdown %s× to %s× (median %s×, P99 %s×).",
		scale, num(d.lo), num(d.hi), num(quantile(all, 0.5)), num(quantile(all, 0.99))))
	below := sort.SearchFloat64s(all, 1)
	if below > 0 {
		d.notes = append(d.notes, fmt.Sprintf("%d of %d flows (%s%%) have a slowdown below 1: fct.txt's standalone FCT is SimAI's "+
			"formula, base RTT + size/bandwidth, whose base RTT charges a full packet's serialisation at every hop (the size "+
			"term counts the first hop again, and a flow smaller than a packet sends less): a flow that meets no contention "+
			"finishes up to about one full packet time per hop sooner.",
			below, len(all), num(100*float64(below)/float64(len(all)))))
	}
	if zero > 0 {
		d.notes = append(d.notes, fmt.Sprintf("%d flows with a standalone FCT of 0 are left out.", zero))
	}
	if len(all) > MaxCDFPoints {
		d.notes = append(d.notes, fmt.Sprintf("Curves of more than %d flows are drawn through %d evenly spaced quantiles.", MaxCDFPoints, MaxCDFPoints))
	}
	return d, nil
}

// quantile is the q-quantile of sorted v (the smallest value with at least q of v at or below it).
func quantile(v []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(k, len(v)-1))]
}

// num formats x with 3 significant digits.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

// fctCDF draws the slowdown CDF of fct.txt.
func fctCDF(path string) (*figure, error) {
	d, err := fctData(path)
	if err != nil || d == nil {
		return nil, err
	}
	p := newPlot("FCT slowdown CDF", "slowdown (fct / standalone fct, ×)", "fraction of flows")
	p.Y.Min, p.Y.Max = 0, 1
	f := &figure{p: p, notes: d.notes, height: 5 * vg.Inch}
	if d.logX {
		setLogX(p, d.lo, d.hi)
	}
	for i, c := range d.curves {
		l, err := plotter.NewLine(cdfPoints(c.v))
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		l.StepStyle = plotter.PostStep
		p.Add(l)
		f.add(fmt.Sprintf("%s (%d)", c.name, len(c.v)), l)
	}
	if d.lo < 1 && d.hi > 1 {
		ref, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return nil, err
		}
		ref.Color = color.Gray{Y: 0x80}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ref)
		f.add("slowdown 1: the standalone FCT", ref)
	}
	return f, nil
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

// layerBars are the bars of the layer plot: a name and the segments' µs per bar, top down.
type layerBars struct {
	names []string
	bars  [][]float64
	step  int // layers per bar
	notes []string
}

// layerData reads EndToEnd.csv and makes the bars of the layer plot.
func layerData(path, summaryPath, comparePath string) (*layerBars, error) {
	e, per, err := layerValues(path, summaryPath, comparePath)
	if err != nil {
		return nil, err
	}
	if len(e.layers) == 0 {
		return nil, nil
	}
	// Aggregate consecutive layers into at most MaxBars bars.
	step := (len(per) + MaxBars - 1) / MaxBars
	d := &layerBars{step: step}
	for a := 0; a < len(per); a += step {
		b := min(a+step, len(per))
		v := make([]float64, len(segments))
		for i := a; i < b; i++ {
			for k := range v {
				v[k] += per[i][k]
			}
		}
		if b-a == 1 {
			d.names = append(d.names, fmt.Sprintf("%d %s", a, e.layers[a].name))
		} else {
			d.names = append(d.names, fmt.Sprintf("layers %d–%d", a, b-1))
		}
		d.bars = append(d.bars, v)
	}
	if step > 1 {
		last := len(per) - (len(d.bars)-1)*step
		note := fmt.Sprintf("%d layers aggregated into %d bars of %d consecutive layers each", len(per), len(d.bars), step)
		if last != step {
			note += fmt.Sprintf(" (the last of %d)", last)
		}
		d.notes = append(d.notes, note+"; a bar is the sum of its layers.")
	}
	if e.bubble > 0 || e.ppComm > 0 {
		v := make([]float64, len(segments))
		v[5], v[7] = e.ppComm, e.bubble
		d.names = append(d.names, "pipeline")
		d.bars = append(d.bars, v)
		d.notes = append(d.notes, "The pipeline bar is the whole iteration's bubble and exposed PP communication, which EndToEnd.csv does not split by layer.")
	}
	return d, nil
}

// layerBreakdown draws EndToEnd.csv's layers as stacked bars.
func layerBreakdown(path, summaryPath, comparePath string) (*figure, error) {
	d, err := layerData(path, summaryPath, comparePath)
	if err != nil || d == nil {
		return nil, err
	}
	// Horizontal bars listed top-down: reverse so the first layer is at the top.
	n := len(d.bars)
	rev := func(k int) plotter.Values {
		vals := make(plotter.Values, n)
		for i := range d.bars {
			vals[n-1-i] = d.bars[i][k]
		}
		return vals
	}
	labels := make([]string, n)
	for i := range d.names {
		labels[n-1-i] = d.names[i]
	}
	title := "Time per layer"
	if d.step > 1 {
		title += fmt.Sprintf(" (%d layers per bar)", d.step)
	}
	p := newPlot(title, "time (µs)", "layer")
	f := &figure{p: p, notes: d.notes, height: barsHeight(n)}
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
			return nil, err
		}
		bc.Horizontal = true
		bc.Color = segmentColor(k)
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		f.add(name, bc)
	}
	if below == nil {
		return nil, nil
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -1, float64(n)
	p.X.Min = 0
	return f, nil
}

func segmentColor(k int) color.Color { return plotutil.Color(k) }

func barWidth(n int) vg.Length { return vg.Points(min(12, math.Max(3, 300/float64(n)))) }

func barsHeight(n int) vg.Length {
	// The conversion rounds the product, so no platform fuses it into the sum (docs/models.md,
	// Determinism).
	return max(5*vg.Inch, vg.Length(vg.Length(n)*barWidth(n)*1.6)+2*vg.Inch)
}

// compareBars are the collectives the compare plot draws, in file order, and how.
type compareBars struct {
	rows   []compareRow
	total  int // collectives in compare.csv
	logX   bool
	lo, hi float64 // the smallest and largest positive time drawn, µs
	notes  []string
}

// compareData reads compare.csv and picks the collectives to draw: of more than MaxBars, the
// MaxBars largest by time (the larger of analytical and event).
func compareData(path string) (*compareBars, error) {
	rows, err := readCompare(path)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	d := &compareBars{total: len(rows)}
	big := func(r compareRow) float64 { return max(r.analyticalUs, r.eventUs) }
	if len(rows) > MaxBars {
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return big(rows[idx[a]]) > big(rows[idx[b]]) })
		var restMax, restSum float64
		for _, k := range idx[MaxBars:] {
			restMax = max(restMax, big(rows[k]))
			restSum += big(rows[k])
		}
		idx = idx[:MaxBars]
		sort.Ints(idx)
		kept := make([]compareRow, len(idx))
		for i, k := range idx {
			kept[i] = rows[k]
		}
		d.notes = append(d.notes, fmt.Sprintf("%d of %d collectives, the largest by time; the %d others take at most %s µs each, %s µs in all (a collective's time is the larger of its analytical and event times; bars in file order).",
			MaxBars, len(rows), len(rows)-MaxBars, num(restMax), num(restSum)))
		rows = kept
	}
	d.rows = rows
	var all []float64
	for _, r := range rows {
		all = append(all, r.analyticalUs, r.eventUs)
	}
	lo, hi, decades := logSpan(all)
	d.lo, d.hi = lo, hi
	if decades > LogDecades {
		d.logX = true
		d.notes = append(d.notes, fmt.Sprintf("Time axis logarithmic: the times span %s µs to %s µs, %.1f decades.", num(lo), num(hi), decades))
	}
	return d, nil
}

// comparePlot draws analytical vs event time per collective from compare.csv.
func comparePlot(path string) (*figure, error) {
	d, err := compareData(path)
	if err != nil || d == nil {
		return nil, err
	}
	n := len(d.rows)
	an, ev := make([]float64, n), make([]float64, n)
	labels := make([]string, n)
	for i, r := range d.rows {
		j := n - 1 - i
		an[j], ev[j] = max(r.analyticalUs, 0), max(r.eventUs, 0)
		labels[j] = strings.TrimSpace(fmt.Sprintf("%d %s %s %s", r.layer, r.phase, r.op, r.group))
	}
	title := "Analytical vs event time per collective"
	if n < d.total {
		title += fmt.Sprintf(" (%d of %d, the largest)", n, d.total)
	}
	p := newPlot(title, "time (µs)", "collective (layer phase op group)")
	f := &figure{p: p, notes: d.notes, height: barsHeight(n)}
	base := 0.0
	if d.logX {
		setLogX(p, d.lo, d.hi)
		base = p.X.Min
	} else {
		p.X.Min = 0
	}
	w := barWidth(n) / 1.5
	for k, s := range []struct {
		name string
		v    []float64
	}{{"analytical", an}, {"event", ev}} {
		b := &hbars{vals: s.v, base: base, width: w, offset: vg.Length(2*k-1) * w / 2, color: plotutil.Color(k)}
		p.Add(b)
		f.add(s.name, b)
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -1, float64(n)
	return f, nil
}
