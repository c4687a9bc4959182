// Package report writes report.html, one self-contained page about a simd run, from the files
// of its output folder, so that a run's -report and simd report DIR share one code path and a
// folder copied elsewhere can be reported on later, offline.
//
// The page needs no network: its style sheet is inline, it has no script, and its plots are
// the SVG documents of package plots inlined into the page. It shows, in order:
//
//   - the run: mode, workload, topology, GPUs, iteration time, flows and events, and whether
//     the run is complete (summary.json; an analytical folder has only EndToEnd.csv, whose
//     summary line gives the file name and the iteration time);
//   - the exposed communication by group (TP, DP, EP, DP_EP, PP) with the bubble, compute and
//     total, from EndToEnd.csv's summary line;
//   - the plots of package plots, each with its notes, and the plots skipped and why;
//   - the links, when links.csv and link_classes.csv are there: per class the busiest links
//     (by busy time, then bytes, then name) and the class's utilisation over the run;
//   - the collectives of compare.csv, analytical vs event, when the folder has one;
//   - the per-layer table of EndToEnd.csv, as the file has it.
//
// It lives apart from package plots, which it uses, because it is a page layout (html/template)
// over several files, not a plot, and cmd/simd only picks the folder and the output path.
//
// The same folder gives the same bytes: no timestamps (summary.json's wall-clock time is left
// out), every list in file order or sorted, numbers formatted by strconv.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"simd/cmd/simd/plots"
)

// Limits of the page's tables.
const (
	BusiestPerClass = 5   // links shown per link class
	MaxCompareRows  = 200 // collectives of compare.csv shown (the largest by event time)
	MaxLayerRows    = 1000
)

// table is one table of the page.
type table struct {
	Head []string
	Num  []bool // right-aligned columns
	Rows [][]string
	Note string // what the table leaves out
}

// figure is one plot of the page.
type figure struct {
	Name, Title string
	SVG         template.HTML
}

// page is what the template shows.
type page struct {
	Title      string
	Run        [][2]string
	Incomplete string
	Groups     *table
	Figures    []figure
	Skipped    []string
	Links      []linkClass
	LinkNote   string
	Classes    *table
	Compare    *table
	Jobs       *table // jobs.csv of a multi-job run
	Layers     *table
	Missing    []string // optional inputs not found
}

// linkClass is the busiest links of one class.
type linkClass struct {
	Class string
	Links *table
}

// Build reads the output files of dir whose names start with prefix and returns the page.
// A folder with neither EndToEnd.csv nor summary.json is an error; an input that is present
// but malformed is an InputError.
func Build(dir, prefix string) ([]byte, error) {
	in := func(name string) string { return filepath.Join(dir, prefix+name) }
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	sum, err := readSummary(in("summary.json"))
	if err != nil {
		return nil, err
	}
	e2e, err := readEndToEnd(in("EndToEnd.csv"))
	if err != nil {
		return nil, err
	}
	if sum == nil && e2e == nil {
		return nil, InputError{fmt.Errorf("%s: no %sEndToEnd.csv or %ssummary.json: not the output folder of a run", dir, prefix, prefix)}
	}
	p := &page{}
	p.Title, p.Run, p.Incomplete = runRows(sum, e2e)
	if e2e != nil {
		p.Groups = groupTable(e2e)
		p.Layers = layerTable(e2e)
	} else {
		p.Missing = append(p.Missing, prefix+"EndToEnd.csv")
	}
	figs, skipped, err := plots.Figures(dir, prefix)
	if err != nil {
		var ie plots.InputError
		if errors.As(err, &ie) {
			return nil, InputError{ie.Err}
		}
		return nil, err
	}
	p.Skipped = skipped
	for _, f := range figs {
		// The notes are drawn under the plot, in its SVG.
		p.Figures = append(p.Figures, figure{Name: f.Name, Title: f.Title, SVG: inlineSVG(f.SVG, f.Title)})
	}
	if err := p.links(in("links.csv"), in("link_classes.csv"), prefix); err != nil {
		return nil, err
	}
	cmp, err := readCSV(in("compare.csv"), "layer", "name", "phase", "op", "group", "bytes", "analytical_us", "event_us")
	if err != nil {
		return nil, err
	}
	if cmp != nil {
		if p.Compare, err = compareTable(cmp); err != nil {
			return nil, err
		}
	}
	jobs, err := readCSV(in("jobs.csv"), "job", "gpus", "servers", "placement", "iterations", "iteration_us_together", "iteration_us_alone", "slowdown")
	if err != nil {
		return nil, err
	}
	if jobs != nil {
		cols := []string{"job", "workload", "gpus", "servers", "placement", "iterations", "start_us", "iteration_us_together", "iteration_us_alone", "slowdown"}
		p.Jobs = &table{Head: cols, Num: []bool{false, false, true, true, false, true, true, true, true, true}}
		for _, row := range jobs.rows {
			var cells []string
			for _, h := range cols {
				if k := jobs.col(h); k >= 0 {
					cells = append(cells, row[k])
				} else {
					cells = append(cells, "")
				}
			}
			p.Jobs.Rows = append(p.Jobs.Rows, cells)
		}
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write builds the page of dir under prefix and writes it to out under a temporary name,
// then renames it: a failed report leaves nothing behind.
func Write(dir, prefix, out string) error {
	data, err := Build(dir, prefix)
	if err != nil {
		return err
	}
	if d := filepath.Dir(out); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// runRows are the page's title and the rows of the run table.
func runRows(sum *summaryJSON, e2e *endToEnd) (string, [][2]string, string) {
	var rows [][2]string
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	title := "simd run"
	incomplete := ""
	if sum != nil {
		add("mode", sum.Mode)
		add("workload", sum.Workload)
		add("topology", sum.Topology)
		if sum.GPUs > 0 {
			add("GPUs", strconv.Itoa(sum.GPUs))
		}
		if sum.Workload != "" {
			title = "simd: " + sum.Workload
		}
	} else {
		add("mode", "analytical")
	}
	if e2e != nil {
		add("file name", e2e.sum[0])
		if sum == nil && e2e.sum[0] != "" {
			title = "simd: " + e2e.sum[0]
		}
		add("iteration time", us(lead(e2e.sum[len(e2e.sum)-1])))
	} else if sum != nil && sum.Breakdown != nil {
		add("iteration time", us(sum.Breakdown.IterationUs))
	}
	if sum != nil && sum.Run != nil {
		add("collectives", strconv.Itoa(len(sum.Collectives)))
		add("flows", strconv.FormatUint(sum.Run.Flows, 10))
		add("events", strconv.FormatUint(sum.Run.Events, 10))
		add("simulated time", us(sum.Run.EndUs))
		if sum.Run.Complete {
			add("completeness", "complete")
		} else {
			add("completeness", "incomplete")
			incomplete = sum.Run.Incomplete
		}
	}
	if e2e != nil && e2e.incomplete != "" {
		incomplete = e2e.incomplete
		if sum == nil {
			add("completeness", "incomplete")
		}
	}
	return title, rows, incomplete
}

// us formats µs.
func us(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " µs" }

// lead is the number that starts s ("138 (19.87%)" → 138), 0 if none.
func lead(s string) float64 {
	v, _ := strconv.ParseFloat(strings.Fields(s + " 0")[0], 64)
	return v
}

// groupTable is the exposed communication by group from EndToEnd.csv's summary line, whose
// columns are SimAI's: file name, exposed DP, DP_EP, TP, EP, PP comm, bubble, total compute,
// total exposed comm, total time.
func groupTable(e *endToEnd) *table {
	t := &table{Head: []string{"", "µs", "share of the iteration"}, Num: []bool{false, true, true}}
	share := func(s string) string {
		if _, pct, ok := strings.Cut(s, "("); ok {
			return strings.TrimSuffix(strings.TrimSpace(pct), ")")
		}
		return ""
	}
	for _, r := range []struct {
		name string
		col  int
	}{{"exposed TP comm", 3}, {"exposed DP comm", 1}, {"exposed EP comm", 4}, {"exposed DP_EP comm", 2}, {"exposed PP comm", 5},
		{"bubble", 6}, {"total exposed comm", 8}, {"total compute", 7}, {"iteration", 9}} {
		v := e.sum[r.col]
		t.Rows = append(t.Rows, []string{r.name, strconv.FormatFloat(lead(v), 'f', -1, 64), share(v)})
	}
	return t
}

// layerTable is EndToEnd.csv's per-layer table as the file has it.
func layerTable(e *endToEnd) *table {
	if len(e.layerHead) == 0 {
		return nil
	}
	t := &table{Head: e.layerHead, Num: make([]bool, len(e.layerHead))}
	for i := 2; i < len(t.Num); i++ {
		t.Num[i] = true
	}
	rows := e.layers
	if len(rows) > MaxLayerRows {
		t.Note = fmt.Sprintf("The first %d of %d rows; EndToEnd.csv has them all.", MaxLayerRows, len(rows))
		rows = rows[:MaxLayerRows]
	}
	t.Rows = rows
	return t
}

// number parses field col of row i of c (line i+2 of the file).
func number(c *csvFile, i, col int) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(c.rows[i][col]), 64)
	if err != nil {
		return 0, inputErrorf("%s:%d: field %s: expected a number, got %q", c.path, i+2, c.head[col], c.rows[i][col])
	}
	return v, nil
}

// links fills the link tables from links.csv and link_classes.csv, or says they are absent.
func (p *page) links(linksPath, classesPath, prefix string) error {
	links, err := readCSV(linksPath, "link", "from", "to", "class", "name", "capacity_gbps", "bytes", "busy_us", "mean_util_pct", "peak_util_pct")
	if err != nil {
		return err
	}
	classes, err := readCSV(classesPath, "start_us", "end_us", "class", "links", "mean_util_pct", "p50_util_pct", "p90_util_pct", "max_util_pct")
	if err != nil {
		return err
	}
	if links == nil && classes == nil {
		p.LinkNote = fmt.Sprintf("No %slinks.csv or %slink_classes.csv in the folder: the run wrote no per-link figures.", prefix, prefix)
		return nil
	}
	if links != nil {
		busy, bytesCol, classCol, name := links.col("busy_us"), links.col("bytes"), links.col("class"), links.col("name")
		type row struct {
			i           int
			busy, bytes float64
		}
		byClass := map[string][]row{}
		for i := range links.rows {
			b, err := number(links, i, busy)
			if err != nil {
				return err
			}
			n, err := number(links, i, bytesCol)
			if err != nil {
				return err
			}
			c := links.rows[i][classCol]
			byClass[c] = append(byClass[c], row{i, b, n})
		}
		names := make([]string, 0, len(byClass))
		for c := range byClass {
			names = append(names, c)
		}
		sort.Strings(names)
		cols := []string{"name", "capacity_gbps", "bytes", "busy_us", "mean_util_pct", "peak_util_pct"}
		for _, c := range names {
			rs := byClass[c]
			sort.SliceStable(rs, func(a, b int) bool {
				if rs[a].busy != rs[b].busy {
					return rs[a].busy > rs[b].busy
				}
				if rs[a].bytes != rs[b].bytes {
					return rs[a].bytes > rs[b].bytes
				}
				return links.rows[rs[a].i][name] < links.rows[rs[b].i][name]
			})
			t := &table{Head: cols, Num: []bool{false, true, true, true, true, true}}
			if len(rs) > BusiestPerClass {
				t.Note = fmt.Sprintf("The %d busiest of %d links.", BusiestPerClass, len(rs))
				rs = rs[:BusiestPerClass]
			}
			for _, r := range rs {
				var cells []string
				for _, h := range cols {
					cells = append(cells, links.rows[r.i][links.col(h)])
				}
				t.Rows = append(t.Rows, cells)
			}
			p.Links = append(p.Links, linkClass{Class: c, Links: t})
		}
	} else {
		p.LinkNote = fmt.Sprintf("No %slinks.csv in the folder.", prefix)
	}
	if classes != nil {
		t, err := classTable(classes)
		if err != nil {
			return err
		}
		p.Classes = t
	} else {
		p.LinkNote = fmt.Sprintf("No %slink_classes.csv in the folder.", prefix)
	}
	return nil
}

// classTable sums link_classes.csv's windows up per class: the windows, the links, the
// time-weighted mean utilisation and the highest P90 and maximum of any window.
func classTable(c *csvFile) (*table, error) {
	type acc struct {
		windows       int
		links         string
		dur, weighted float64
		p90, maxU     float64
	}
	byClass := map[string]*acc{}
	var order []string
	for i := range c.rows {
		var v [6]float64
		for k, h := range []string{"start_us", "end_us", "mean_util_pct", "p90_util_pct", "max_util_pct", "links"} {
			x, err := number(c, i, c.col(h))
			if err != nil {
				return nil, err
			}
			v[k] = x
		}
		name := c.rows[i][c.col("class")]
		a := byClass[name]
		if a == nil {
			a = &acc{}
			byClass[name] = a
			order = append(order, name)
		}
		d := v[1] - v[0]
		a.windows++
		a.links = c.rows[i][c.col("links")]
		a.dur += d
		a.weighted += float64(d * v[2])
		a.p90 = max(a.p90, v[3])
		a.maxU = max(a.maxU, v[4])
	}
	sort.Strings(order)
	t := &table{Head: []string{"class", "links", "windows", "mean util %", "highest P90 util %", "max util %"},
		Num: []bool{false, true, true, true, true, true}}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for _, name := range order {
		a := byClass[name]
		mean := 0.0
		if a.dur > 0 {
			mean = a.weighted / a.dur
		}
		t.Rows = append(t.Rows, []string{name, a.links, strconv.Itoa(a.windows), f(mean), f(a.p90), f(a.maxU)})
	}
	return t, nil
}

// compareTable is the collective rows of compare.csv; of more than MaxCompareRows, the largest
// by event time, in file order.
func compareTable(c *csvFile) (*table, error) {
	phase, ev := c.col("phase"), c.col("event_us")
	var idx []int
	times := map[int]float64{}
	for i, r := range c.rows {
		if r[phase] == "layer" {
			continue
		}
		v, err := number(c, i, ev)
		if err != nil {
			return nil, err
		}
		times[i] = v
		idx = append(idx, i)
	}
	t := &table{Head: c.head, Num: make([]bool, len(c.head))}
	for k, h := range c.head {
		t.Num[k] = h == "layer" || h == "bytes" || strings.HasSuffix(h, "_us") || h == "event/analytical"
	}
	if len(idx) > MaxCompareRows {
		t.Note = fmt.Sprintf("The %d of %d collectives with the largest event time, in file order; compare.csv has them all.", MaxCompareRows, len(idx))
		sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]] > times[idx[b]] })
		idx = idx[:MaxCompareRows]
		sort.Ints(idx)
	}
	for _, i := range idx {
		t.Rows = append(t.Rows, c.rows[i])
	}
	return t, nil
}

var svgSize = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)

// inlineSVG makes an SVG document an element of the page: no XML prolog, sized by the page.
func inlineSVG(doc []byte, title string) template.HTML {
	s := string(doc)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = svgSize.ReplaceAllString(s, `<svg class="plot" role="img" aria-label="`+template.HTMLEscapeString(title)+`"`)
	return template.HTML(s) // gonum's SVG writer escapes the text it draws
}
