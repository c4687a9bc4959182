package plots

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestCDFPoints(t *testing.T) {
	v := make([]float64, 10)
	for i := range v {
		v[i] = float64(i + 1)
	}
	xy := cdfPoints(v)
	if len(xy) != 11 || xy[0].Y != 0 || xy[10].X != 10 || xy[10].Y != 1 || xy[5].X != 5 || xy[5].Y != 0.5 {
		t.Errorf("cdf of 1..10: %v", xy)
	}
	big := make([]float64, 3*MaxCDFPoints+1)
	for i := range big {
		big[i] = float64(i)
	}
	xy = cdfPoints(big)
	if len(xy) != MaxCDFPoints+1 || xy[len(xy)-1].Y != 1 || xy[len(xy)-1].X != big[len(big)-1] {
		t.Errorf("large cdf: %d points, last %v", len(xy), xy[len(xy)-1])
	}
}

func TestBusiestPortsAndLayerCap(t *testing.T) {
	dir := t.TempDir()
	var bw strings.Builder
	bw.WriteString("time, node_id, port_id, bandwidth\n")
	for ts := 1; ts <= 3; ts++ {
		for node := 0; node < 12; node++ {
			bw.WriteString(strings.Join([]string{itoa(ts * 1000), itoa(node), "1", itoa(node + 1)}, ", ") + "\n")
		}
	}
	var e2e strings.Builder
	e2e.WriteString("File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n")
	e2e.WriteString("x-, 0 (0%), 0 (0%), 0 (0%), 0 (0%), 5 (1%), 7 (1%), 0 (0%), 0 (0%), 12\n")
	e2e.WriteString("layer_name,run,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm\n")
	for i := 0; i < 130; i++ {
		e2e.WriteString("l" + itoa(i) + ",run,1,1,1,2,0,0\n")
	}
	for name, text := range map[string]string{"bw.txt": bw.String(), "EndToEnd.csv": e2e.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, _, err := linkUtilisation(filepath.Join(dir, "bw.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "8 busiest") {
		t.Errorf("title %q", p.Title.Text)
	}
	f, err := layerBreakdown(filepath.Join(dir, "EndToEnd.csv"), filepath.Join(dir, "none"), filepath.Join(dir, "none"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.p.Title.Text, "3 layers per bar") {
		t.Errorf("title %q: 130 layers should make bars of 3", f.p.Title.Text)
	}
	res, err := Draw(dir, filepath.Join(dir, "plots"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 4 || len(res.Skipped) != 3 { // link_utilisation from bw.txt; no links.csv, fct.txt, compare.csv
		t.Errorf("written %v, skipped %v", res.Written, res.Skipped)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// The layer bars split each phase's exposed column by the group of its collective in
// summary.json; a column with no collective there is "group unknown".
func TestLayerTotals(t *testing.T) {
	dir := t.TempDir()
	e2e := "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n" +
		"x-, 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0\n" +
		"layer_name,test1,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm\n" +
		"l0,test1,1,2,3,10,20,0.5\n" +
		"l1,test1,1,1,1,0,40,7\n" +
		"SUM,test1,2,3,4,10,60,7.5\n"
	summary := `{"collectives": [
		{"layer": 0, "phase": "fwd", "group": "TP"}, {"layer": 0, "phase": "wg", "group": "DP"},
		{"layer": 0, "phase": "ig", "group": "EP"}, {"layer": 1, "phase": "wg", "group": "DP_EP"}]}`
	for name, text := range map[string]string{"EndToEnd.csv": e2e, "summary.json": summary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LayerTotals(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"compute": 9, "exposed TP comm": 10, "exposed DP comm": 20, "exposed EP comm": 0.5,
		"exposed DP_EP comm": 40, "exposed comm (group unknown)": 7}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}

// writeFiles writes name → text into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fctLine is a line of fct.txt from src to dst (IP 0b000s01) of size bytes.
func fctLine(src, dst, size, fct, standalone int) string {
	return fmt.Sprintf("0b%04x01 0b%04x01 10000 100 %d 0 %d %d\n", src, dst, size, fct, standalone)
}

func TestFCTData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lines  string
		curves []string // name (count)
		logX   bool
		lo, hi float64
		notes  []string // substrings, one per note in order
	}{
		{
			name: "network only, linear, none below 1",
			// 1 MB at 100 Gbit/s standalone: network.
			lines:  fctLine(0, 1, 1_000_000, 100_000, 80_000) + fctLine(0, 1, 1_000_000, 160_000, 80_000),
			curves: []string{"network (2)"},
			lo:     1.25, hi: 2,
			notes: []string{"x axis (linear): the whole range, slowdown 1.25× to 2×"},
		},
		{
			name: "both kinds, log axis, some below 1, a zero standalone",
			// 1 MB in 1 µs standalone is 8 Tbit/s: NVLink.
			lines: fctLine(0, 1, 1_000_000, 900, 1000) + fctLine(0, 1, 1000, 5000, 10) +
				fctLine(0, 9, 1_000_000, 80_000, 80_000) + fctLine(0, 9, 1_000_000, 800_000, 80_000) +
				fctLine(0, 2, 100, 50, 0),
			curves: []string{"all flows (4)", "NVLink (same server) (2)", "network (2)"},
			logX:   true, lo: 0.9, hi: 500,
			notes: []string{"x axis (logarithmic): the whole range, slowdown 0.9× to 500×",
				"1 of 4 flows (25%) have a slowdown below 1", "1 flows with a standalone FCT of 0 are left out"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"fct.txt": tc.lines})
			d, err := fctData(filepath.Join(dir, "fct.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var curves []string
			for _, c := range d.curves {
				curves = append(curves, fmt.Sprintf("%s (%d)", c.name, len(c.v)))
				if !sort.Float64sAreSorted(c.v) {
					t.Errorf("%s: not sorted: %v", c.name, c.v)
				}
			}
			if !slices.Equal(curves, tc.curves) {
				t.Errorf("curves %v, want %v", curves, tc.curves)
			}
			if d.logX != tc.logX || d.lo != tc.lo || d.hi != tc.hi {
				t.Errorf("axis log=%v %v…%v, want log=%v %v…%v", d.logX, d.lo, d.hi, tc.logX, tc.lo, tc.hi)
			}
			checkNotes(t, d.notes, tc.notes)
		})
	}
}

func checkNotes(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("notes %q, want %d", got, len(want))
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("note %d %q does not say %q", i, got[i], want[i])
		}
	}
}

func TestCompareData(t *testing.T) {
	header := "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links\n"
	rows := func(times ...float64) string {
		var b strings.Builder
		b.WriteString(header)
		for i, x := range times {
			fmt.Fprintf(&b, "%d,l%d,fwd,allreduce,TP,1024,%g,%g,1,\n%d,l%d,layer,,,,%g,%g,1,\n", i, i, x, x*1.5, i, i, x, x*1.5)
		}
		return b.String()
	}
	many := make([]float64, 70)
	for i := range many {
		many[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		name   string
		csv    string
		layers []int // layers of the kept rows
		logX   bool
		notes  []string
	}{
		{"linear", rows(10, 20, 30), []int{0, 1, 2}, false, nil},
		{"log", rows(1, 2000, 30), []int{0, 1, 2}, true, []string{"Time axis logarithmic: the times span 1 µs to 3e+03 µs, 3.5 decades"}},
		{"cut", rows(many...), nil, false, []string{"60 of 70 collectives, the largest by time; the 10 others take at most 15 µs each, 82.5 µs in all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"compare.csv": tc.csv})
			d, err := compareData(filepath.Join(dir, "compare.csv"))
			if err != nil {
				t.Fatal(err)
			}
			var layers []int
			for _, r := range d.rows {
				layers = append(layers, r.layer)
			}
			if tc.layers == nil {
				for i := 10; i < 70; i++ {
					tc.layers = append(tc.layers, i)
				}
			}
			if !slices.Equal(layers, tc.layers) {
				t.Errorf("rows of layers %v, want %v", layers, tc.layers)
			}
			if d.logX != tc.logX {
				t.Errorf("log axis %v, want %v", d.logX, tc.logX)
			}
			checkNotes(t, d.notes, tc.notes)
			f, err := comparePlot(filepath.Join(dir, "compare.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.legend) != 2 || !slices.Equal(f.notes, d.notes) {
				t.Errorf("legend %v, notes %q", f.legend, f.notes)
			}
		})
	}
}

func TestLayerData(t *testing.T) {
	e2e := func(n int, bubble string) string {
		var b strings.Builder
		b.WriteString("File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n")
		b.WriteString("x-, 0 (0%), 0 (0%), 0 (0%), 0 (0%), 0 (0%), " + bubble + " (1%), 0 (0%), 0 (0%), 12\n")
		b.WriteString("layer_name,run,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm\n")
		for i := 0; i < n; i++ {
			b.WriteString("l" + itoa(i) + ",run,1,1,1,2,0,0\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		csv   string
		bars  int
		first []float64 // the first bar's segments
		notes []string
	}{
		{"one bar per layer", e2e(3, "0"), 3, []float64{3, 0, 0, 0, 0, 0, 2, 0}, nil},
		{"aggregated with a pipeline bar", e2e(121, "7"), 42, []float64{9, 0, 0, 0, 0, 0, 6, 0},
			[]string{"121 layers aggregated into 41 bars of 3 consecutive layers each (the last of 1)", "The pipeline bar"}},
		{"stopped run", "# incomplete: stopped\n" + e2e(2, "0"), 2, []float64{3, 0, 0, 0, 0, 0, 2, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"EndToEnd.csv": tc.csv})
			d, err := layerData(filepath.Join(dir, "EndToEnd.csv"), "", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.bars) != tc.bars || !slices.Equal(d.bars[0], tc.first) {
				t.Errorf("%d bars, the first %v; want %d, %v", len(d.bars), d.bars[0], tc.bars, tc.first)
			}
			checkNotes(t, d.notes, tc.notes)
		})
	}
}

// The figures draw their legend in the strip below the plot (figure.legend), and the strip
// is tall enough for its rows and notes.
func TestLegendsOutside(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fct.txt":      fctLine(0, 1, 1_000_000, 900, 1000) + fctLine(0, 9, 1_000_000, 800_000, 80_000),
		"compare.csv":  "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links\n0,a,fwd,allreduce,TP,1,1,2,2,\n",
		"EndToEnd.csv": "File name, a, b, c, d, e, f, g, h, i\nx-, 0, 0, 0, 0, 0, 0, 0, 0, 0\nlayer_name,run,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm\nl0,run,1,1,1,2,0,0\n",
	})
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, j := range jobs(in) {
		if j.name == "link_utilisation" || j.name == "busiest_links" {
			continue // links_test.go has their inputs
		}
		f, err := j.make(in(j.input))
		if err != nil {
			t.Fatal(err)
		}
		cols := f.legendColumns()
		rows := (len(f.legend) + cols - 1) / cols
		if len(f.legend) == 0 || f.stripHeight() < vg.Length(rows)*legendRow+vg.Length(len(f.noteLines()))*noteRow {
			t.Errorf("%s: legend %d entries in %d columns, notes %d lines, strip %v", j.name, len(f.legend), cols, len(f.noteLines()), f.stripHeight())
		}
		if _, err := f.svg(); err != nil {
			t.Errorf("%s: %v", j.name, err)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aa bb cc dddddd e", 5)
	if want := []string{"aa bb", "cc", "dddddd", "e"}; !slices.Equal(got, want) {
		t.Errorf("wrap: %q, want %q", got, want)
	}
}
