package workloads

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

var chartLabels = map[string][]string{
	"en": {"Expose DP comm", "Expose DP_EP comm", "Expose TP comm", "Expose_EP_comm", "Total compute", "PP Bubble time", "Expose PP comm"},
	"ja": {"DP通信（露出）", "DP_EP通信（露出）", "TP通信（露出）", "EP通信（露出）", "計算時間合計", "PPバブル時間", "PP通信（露出）"},
}

var chartColors = []string{"#FF6384", "#36A2EB", "#FFCE56", "#4BC0C0", "#9966FF", "#FF9F40", "#FF5733"}

// chartSlice is one value of the chart: its label, µs, share and colour, and the SVG path of
// its slice ("" for an empty one).
type chartSlice struct {
	Label, Value, Share, Color string
	Path                       string
	Whole                      bool // the only non-zero value: a full circle
}

// WriteChart writes SimAI_analytical's chart.html (-v): a pie chart of the time breakdown, in µs
// (SimAI's page says ns, but its numbers are µs), titled fileName, labelled in lang (en or ja).
// SimAI's page draws the pie with Chart.js loaded from a CDN; this one is self-contained: the
// pie is inline SVG computed here, with a table of the values, and viewing it needs no network.
// The same summary gives the same bytes.
func (s EndToEndSummary) WriteChart(w io.Writer, fileName, lang string) error {
	values := []float64{s.DPComm, s.DPEPComm, s.TPComm, s.EPComm, s.Compute, s.Bubble, float64(s.PPComm)}
	labels := chartLabels[lang]
	if labels == nil {
		labels = chartLabels["en"]
	}
	total := 0.0
	for _, v := range values {
		total += max(v, 0)
	}
	const r, c = 100.0, 110.0 // radius and centre of the pie
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	slices := make([]chartSlice, len(values))
	nonzero := 0
	for _, v := range values {
		if v > 0 {
			nonzero++
		}
	}
	angle := 0.0 // from 12 o'clock, clockwise, in turns
	for i, v := range values {
		v = max(v, 0)
		sl := chartSlice{Label: labels[i], Value: trimZeros(strconv.FormatFloat(v, 'f', 3, 64)), Color: chartColors[i]}
		if total > 0 {
			sl.Share = strconv.FormatFloat(100*v/total, 'f', 2, 64) + "%"
		}
		if v > 0 && total > 0 {
			frac := v / total
			if nonzero == 1 {
				sl.Whole = true
			} else {
				a0, a1 := 2*math.Pi*angle, 2*math.Pi*(angle+frac)
				large := 0
				if frac > 0.5 {
					large = 1
				}
				// The conversions round the products, so no platform fuses them into the sums
				// (docs/models.md, Determinism).
				x0, y0 := float64(r*math.Sin(a0)), float64(r*math.Cos(a0))
				x1, y1 := float64(r*math.Sin(a1)), float64(r*math.Cos(a1))
				sl.Path = fmt.Sprintf("M%s,%s L%s,%s A%s,%s 0 %d 1 %s,%s Z", f(c), f(c),
					f(c+x0), f(c-y0), f(r), f(r), large, f(c+x1), f(c-y1))
			}
			angle += frac
		}
		slices[i] = sl
	}
	return chartTmpl.Execute(w, struct {
		Title, Total string
		Slices       []chartSlice
	}{fileName, strconv.FormatFloat(s.Total, 'f', 0, 64), slices})
}

// trimZeros drops the trailing zeros of a decimal ("1.500" → "1.5", "2.000" → "2").
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

var chartTmpl = template.Must(template.New("chart").Parse(strings.TrimLeft(`
<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>simd time breakdown</title>
<style>
body { display: flex; flex-direction: column; align-items: center; margin: 0; padding-top: 3%; font-family: sans-serif; }
svg { width: 50%; max-width: 400px; height: auto; }
h2 { margin: 5px 0; }
table { border-collapse: collapse; margin-top: 1rem; }
td { padding: 0.15rem 0.6rem; }
td.n { text-align: right; }
.key { display: inline-block; width: 0.9rem; height: 0.9rem; vertical-align: middle; }
</style>
</head>
<body>
<svg viewBox="0 0 220 220" role="img" aria-label="time breakdown">
{{range .Slices}}{{if .Whole}}<circle cx="110" cy="110" r="100" fill="{{.Color}}" stroke="#fff"><title>{{.Label}}: {{.Value}} us</title></circle>
{{else if .Path}}<path d="{{.Path}}" fill="{{.Color}}" stroke="#fff"><title>{{.Label}}: {{.Value}} us</title></path>
{{end}}{{end}}</svg>
<h2>Total time: {{.Total}} us</h2>
<h2>model: {{.Title}}</h2>
<table>
{{range .Slices}}<tr><td><span class="key" style="background: {{.Color}}"></span> {{.Label}}</td><td class="n">{{.Value}} us</td><td class="n">{{.Share}}</td></tr>
{{end}}</table>
</body>
</html>
`, "\n")))
