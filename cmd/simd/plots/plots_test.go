package plots

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	p, _, err = layerBreakdown(filepath.Join(dir, "EndToEnd.csv"), filepath.Join(dir, "none"), filepath.Join(dir, "none"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "3 layers per bar") {
		t.Errorf("title %q: 130 layers should make bars of 3", p.Title.Text)
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
