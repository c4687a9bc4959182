package plots

import (
	"bytes"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figure is a plot ready to draw: the plot (with an empty legend), the legend's entries, drawn
// in a strip below the plot so that they never cover data, and the notes that say what the plot
// leaves out or how to read it, drawn under the legend.
type figure struct {
	p      *plot.Plot
	legend []legendEntry
	notes  []string
	height vg.Length // of the plot, without the legend and the notes
}

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

func (f *figure) add(name string, t plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{name, t})
}

// Sizes of the strip below the plot.
const (
	legendRow   = 16 * vg.Length(1) // points per legend row
	noteRow     = 13 * vg.Length(1) // points per note line
	noteFont    = 10
	noteColumns = 110 // characters per note line
	stripMargin = 6 * vg.Length(1)
)

// legendColumns is the number of columns of the legend: 3, or 2 for long names, at most one
// per entry.
func (f *figure) legendColumns() int {
	cols := 3
	for _, e := range f.legend {
		if len([]rune(e.name)) > 32 {
			cols = 2
		}
	}
	return max(1, min(cols, len(f.legend)))
}

// noteLines are the notes wrapped to noteColumns characters.
func (f *figure) noteLines() []string {
	var out []string
	for _, n := range f.notes {
		out = append(out, wrap(n, noteColumns)...)
	}
	return out
}

// wrap breaks s at spaces into lines of at most n characters (longer words stay whole).
func wrap(s string, n int) []string {
	var lines []string
	var cur []string
	width := 0
	for _, w := range strings.Fields(s) {
		l := len([]rune(w))
		if width > 0 && width+1+l > n {
			lines = append(lines, strings.Join(cur, " "))
			cur, width = nil, 0
		}
		if width > 0 {
			width++
		}
		cur = append(cur, w)
		width += l
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}

// stripHeight is the height of the legend and notes below the plot.
func (f *figure) stripHeight() vg.Length {
	h := vg.Length(0)
	if n := len(f.legend); n > 0 {
		cols := f.legendColumns()
		h += vg.Length(vg.Length((n+cols-1)/cols)*legendRow) + stripMargin
	}
	if n := len(f.noteLines()); n > 0 {
		h += vg.Length(vg.Length(n)*noteRow) + stripMargin
	}
	return h
}

// writerTo draws the figure in format (png or svg), width wide.
func (f *figure) writerTo(format string) (io.WriterTo, error) {
	strip := f.stripHeight()
	c, err := draw.NewFormattedCanvas(width, f.height+strip, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	f.p.Draw(draw.Crop(dc, 0, 0, strip, 0))
	y := dc.Min.Y + strip // top of the strip
	if n := len(f.legend); n > 0 {
		cols := f.legendColumns()
		rows := (n + cols - 1) / cols
		colW := (dc.Max.X - dc.Min.X - 2*stripMargin) / vg.Length(cols)
		for k := 0; k < cols; k++ {
			l := plot.NewLegend()
			l.Left, l.Top = true, true
			for i := k; i < n; i += cols {
				l.Add(f.legend[i].name, f.legend[i].thumb)
			}
			sub := dc
			sub.Min.X = dc.Min.X + stripMargin + vg.Length(vg.Length(k)*colW)
			sub.Max.X = sub.Min.X + colW
			sub.Max.Y = y - stripMargin/2
			sub.Min.Y = sub.Max.Y - vg.Length(vg.Length(rows)*legendRow)
			l.Draw(sub)
		}
		y -= vg.Length(vg.Length(rows)*legendRow) + stripMargin
	}
	sty := text.Style{Font: font.From(plot.DefaultFont, noteFont), Handler: plot.DefaultTextHandler, Color: color.Gray{Y: 0x30}}
	for _, line := range f.noteLines() {
		y -= noteRow
		dc.FillText(sty, vg.Point{X: dc.Min.X + stripMargin, Y: y + 3}, line)
	}
	return c, nil
}

// svg draws the figure as SVG.
func (f *figure) svg() ([]byte, error) {
	wt, err := f.writerTo("svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plotFigure wraps a plot that draws its own legend.
func plotFigure(p *plot.Plot, h vg.Length, err error) (*figure, error) {
	if err != nil || p == nil {
		return nil, err
	}
	return &figure{p: p, height: h}, nil
}

// hbars are horizontal bars, one per y position 0…n−1, from base to their value: unlike
// plotter.BarChart they can start at a base above 0, which a logarithmic axis needs.
type hbars struct {
	vals   []float64
	base   float64
	width  vg.Length
	offset vg.Length
	color  color.Color
}

// Plot implements plot.Plotter.
func (b *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.vals {
		if !(v > b.base) {
			continue
		}
		// The conversions round the transforms' products, so no platform fuses them into the
		// sums below (docs/models.md, Determinism).
		y := vg.Length(trY(float64(i))) + b.offset
		x0, x1 := vg.Length(trX(b.base)), vg.Length(trX(v))
		half := vg.Length(b.width / 2) // the compiler multiplies by 0.5: keep it apart too
		pts := []vg.Point{{X: x0, Y: y - half}, {X: x1, Y: y - half}, {X: x1, Y: y + half}, {X: x0, Y: y + half}}
		c.FillPolygon(b.color, c.ClipPolygonXY(pts))
	}
}

// DataRange implements plot.DataRanger.
func (b *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = b.base, b.base
	for _, v := range b.vals {
		xmax = math.Max(xmax, v)
	}
	return xmin, xmax, 0, float64(len(b.vals) - 1)
}

// Thumbnail implements plot.Thumbnailer.
func (b *hbars) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.color, c.ClipPolygonY([]vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}))
}

// logSpan is how many decades the positive values of v span (0 without two of them).
func logSpan(v []float64) (lo, hi, decades float64) {
	lo, hi = math.Inf(1), 0
	for _, x := range v {
		if x > 0 {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if hi == 0 {
		return 0, 0, 0
	}
	return lo, hi, math.Log10(hi / lo)
}

// LogDecades is the span of values, in decades, above which a time or slowdown axis is
// logarithmic.
const LogDecades = 1.5

// setLogX makes p's x axis logarithmic over [lo, hi], with whole decades at its ends.
func setLogX(p *plot.Plot, lo, hi float64) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
}

// linearTicks marks an axis at 1, 2 or 5 times a power of ten, labelled ticks over
// its range (four to ten), labelled as whole numbers when the step is (gonum's default ticks label a range
// of hundreds of thousands with two ticks and two decimals).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 8
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if float64(m*step) >= raw {
			step = float64(m * step)
			break
		}
	}
	prec := 0
	if step < 1 {
		prec = int(math.Ceil(-math.Log10(step)))
	}
	var ticks []plot.Tick
	for v := float64(math.Ceil(lo/step) * step); v <= hi+float64(step*1e-9); v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return ticks
}
