package plots

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// link_classes.csv becomes one step series per class, in class order whatever the file's.
func TestReadClassSeries(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"link_classes.csv": "start_us,end_us,class,links,mean_util_pct,p50_util_pct,p90_util_pct,max_util_pct\n" +
		"0.000,2.000,asw-psw,4,10.000,5.000,20.000,40.000\n" +
		"0.000,2.000,nvlink,8,1.000,0.000,2.000,3.000\n" +
		"2.000,3.500,asw-psw,4,50.000,50.000,90.000,100.000\n" +
		"2.000,3.500,nvlink,8,0.000,0.000,0.000,0.000\n"})
	got, err := ReadClassSeries(filepath.Join(dir, "link_classes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ClassSeries{
		{Class: "nvlink", Label: "NVLink", Links: 8, Start: []float64{0, 2}, End: []float64{2, 3.5},
			P50: []float64{0, 0}, P90: []float64{2, 0}, Max: []float64{3, 0}, Mean: []float64{1, 0}},
		{Class: "asw-psw", Label: "ASW→PSW", Links: 4, Start: []float64{0, 2}, End: []float64{2, 3.5},
			P50: []float64{5, 50}, P90: []float64{20, 90}, Max: []float64{40, 100}, Mean: []float64{10, 50}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series %+v\nwant %+v", got, want)
	}
	if xy := steps(want[1].Start, want[1].End, want[1].Max); len(xy) != 4 || xy[2].X != 2 || xy[2].Y != 100 || xy[3].X != 3.5 {
		t.Errorf("steps %v", xy)
	}
}

// busiest_links keeps the 3 links of each class with the highest peak, ties broken by bytes
// then link id, classes in order.
func TestBusiest(t *testing.T) {
	dir := t.TempDir()
	head := "link,from,to,class,name,capacity_gbps,bytes,busy_us,mean_util_pct,busy_util_pct,peak_util_pct\n"
	rows := []string{
		"10,0,1,asw-psw,ASW 0 → PSW 0,400,100,1,1,50,90",
		"11,0,2,asw-psw,ASW 0 → PSW 1,400,200,1,1,60,90",
		"12,0,3,asw-psw,ASW 0 → PSW 2,400,200,1,1,70,90",
		"13,0,4,asw-psw,ASW 0 → PSW 3,400,900,1,1,80,80",
		"2,5,6,nic-asw,server 0 GPU 0 NIC → ASW 0,400,5,1,1,100,100",
		"0,5,7,nvlink,server 0 GPU 0 → server 0 NVSwitch 0,2880,5,1,1,10,12",
	}
	writeFiles(t, dir, map[string]string{"links.csv": head + strings.Join(rows, "\n") + "\n"})
	got, err := Busiest(filepath.Join(dir, "links.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range got {
		names = append(names, l.Name)
	}
	want := []string{"server 0 GPU 0 → server 0 NVSwitch 0", "server 0 GPU 0 NIC → ASW 0", "ASW 0 → PSW 1", "ASW 0 → PSW 2", "ASW 0 → PSW 0"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("busiest %q\nwant %q", names, want)
	}
	if got[1].PeakPct != 100 || got[1].BusyPct != 100 {
		t.Errorf("NIC link %+v", got[1])
	}
}

// A folder without link_classes.csv falls back to bw.txt, saying so in the title; without
// either the link plots are skipped with a note naming the missing file.
func TestLinkPlotsFallBack(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"bw.txt": "time, node_id, port_id, bandwidth\n1000, 0, 1, 400\n2000, 0, 1, 200\n"})
	f, err := linkUtilisationPlot(filepath.Join(dir, "link_classes.csv"), filepath.Join(dir, "bw.txt"))
	if err != nil || f == nil || !strings.Contains(f.p.Title.Text, "no link_classes.csv") {
		t.Fatalf("fallback: %v, %v", f, err)
	}
	empty := t.TempDir()
	res, err := Draw(empty, empty, "")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Skipped, "\n")
	for _, want := range []string{"link_utilisation: no link_classes.csv", "busiest_links: no links.csv"} {
		if !strings.Contains(notes, want) {
			t.Errorf("skipped %q, want a note %q", notes, want)
		}
	}
	// A malformed file is an error naming it, not a skipped plot.
	writeFiles(t, empty, map[string]string{"links.csv": "link,class\n1,nvlink\n"})
	if _, err := Draw(empty, empty, ""); err == nil || !strings.Contains(err.Error(), "no name column") {
		t.Errorf("links.csv without its columns: %v", err)
	}
}

// The link plots draw their legend in the strip below the plot, with notes saying how to read
// them, never over the data.
func TestLinkPlotsLegendOutside(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"link_classes.csv": "start_us,end_us,class,links,mean_util_pct,p50_util_pct,p90_util_pct,max_util_pct\n" +
			"0.000,2.000,asw-psw,4,10.000,5.000,20.000,40.000\n0.000,2.000,nvlink,8,1.000,0.000,2.000,3.000\n",
		"links.csv": "link,from,to,class,name,capacity_gbps,bytes,busy_us,mean_util_pct,busy_util_pct,peak_util_pct\n" +
			"0,0,16,nvlink,server 0 GPU 0 → server 0 NVSwitch 0,2880,100,1.000,1.000,50.000,60.000\n",
	})
	u, err := linkUtilisationPlot(filepath.Join(dir, "link_classes.csv"), filepath.Join(dir, "bw.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := busiestLinks(filepath.Join(dir, "links.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*figure{"link_utilisation": u, "busiest_links": b} {
		if len(f.legend) == 0 || len(f.notes) == 0 {
			t.Errorf("%s: %d legend entries in the strip, %d notes", name, len(f.legend), len(f.notes))
		}
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 273729, "0 50000 100000 150000 200000 250000"},
		{0, 1695.126, "0 500 1000 1500"},
		{0, 0.9, "0.0 0.2 0.4 0.6 0.8"},
		{0, 10, "0 2 4 6 8 10"},
	} {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ticks over [%v, %v]: %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}
