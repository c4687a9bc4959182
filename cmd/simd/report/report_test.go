package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const e2e = "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n" +
	"run-, 10 (10.00%), 0 (0.00%), 20 (20.00%), 0 (0.00%), 0 (0.00%), 0 (0.00%), 70 (70.00%), 30 (30.00%), 100\n" +
	"layer_name,run,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm\n" +
	"l0,run,30,20,20,20,10,0\n"

const summary = `{"mode": "event", "workload": "w.txt", "topology": "t", "gpus": 16,
 "collectives": [{"layer": 0, "phase": "fwd", "group": "TP"}, {"layer": 0, "phase": "wg", "group": "DP"}],
 "run": {"complete": true, "end_us": 100, "events": 9, "flows": 7, "wall_clock_seconds": 0.123}}`

const links = "link,from,to,class,name,capacity_gbps,bytes,busy_us,mean_util_pct,busy_util_pct,peak_util_pct\n" +
	"1,0,16,nvlink,l1,2880,100,5,1,1,2\n" +
	"3,1,16,nvlink,l2,2880,300,9,3,3,4\n" +
	"5,0,20,nic-tor,l3,400,300,9,3,3,4\n" +
	"7,1,20,nic-tor,l0,400,300,9,3,3,4\n" +
	"9,2,20,nic-tor,l4,400,500,1,3,3,4\n"

const classes = "start_us,end_us,class,links,mean_util_pct,p50_util_pct,p90_util_pct,max_util_pct\n" +
	"0,10,nvlink,2,10,10,20,30\n" +
	"10,40,nvlink,2,50,50,60,70\n" +
	"0,40,nic-tor,3,5,5,6,7\n"

func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTables(t *testing.T) {
	dir := writeFolder(t, map[string]string{"links.csv": links, "link_classes.csv": classes})
	p := &page{}
	if err := p.links(filepath.Join(dir, "links.csv"), filepath.Join(dir, "link_classes.csv"), ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, lc := range p.Links {
		for _, r := range lc.Links.Rows {
			got = append(got, lc.Class+":"+r[0])
		}
	}
	// Classes by name; links by busy time, then bytes, then name.
	if want := []string{"nic-tor:l0", "nic-tor:l3", "nic-tor:l4", "nvlink:l2", "nvlink:l1"}; !slices.Equal(got, want) {
		t.Errorf("busiest links %v, want %v", got, want)
	}
	// nvlink: mean weighted by window length (10·10 + 30·50) / 40 = 40.
	want := [][]string{{"nic-tor", "3", "1", "5.0", "6.0", "7.0"}, {"nvlink", "2", "2", "40.0", "60.0", "70.0"}}
	if !slices.EqualFunc(p.Classes.Rows, want, slices.Equal) {
		t.Errorf("classes %v, want %v", p.Classes.Rows, want)
	}
	e, err := readEndToEnd(filepath.Join(writeFolder(t, map[string]string{"e.csv": "# incomplete: stopped\n" + e2e}), "e.csv"))
	if err != nil {
		t.Fatal(err)
	}
	g := groupTable(e)
	if e.incomplete != "incomplete: stopped" || g.Rows[0][0] != "exposed TP comm" || g.Rows[0][1] != "20" || g.Rows[0][2] != "20.00%" || g.Rows[1][1] != "10" {
		t.Errorf("incomplete %q, groups %v", e.incomplete, g.Rows)
	}
}

func TestBuild(t *testing.T) {
	dir := writeFolder(t, map[string]string{"EndToEnd.csv": e2e, "summary.json": summary, "links.csv": links, "link_classes.csv": classes,
		"compare.csv": "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links\n0,l0,fwd,allreduce,TP,1024,10,20,2,\n0,l0,layer,,,,10,20,2,\n"})
	a, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two reports of one folder differ")
	}
	page := string(a)
	for _, want := range []string{"<title>simd: w.txt</title>", "<th>flows</th><td>7</td>", "complete", "Busiest links: nvlink",
		`<svg class="plot" role="img" aria-label="Time per layer"`, "Analytical vs event per collective", "<td>l0</td>",
		"Skipped: fct_slowdown_cdf: no fct.txt"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not hold %q", want)
		}
	}
	// Nothing to fetch: no script, no external style, no image source, no wall-clock time.
	for _, bad := range []string{"<script", "<link", " src=", "url(", "0.123", "<?xml"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"empty folder", map[string]string{}, "not the output folder of a run"},
		{"links column missing", map[string]string{"EndToEnd.csv": e2e, "links.csv": "link,from\nl0,a\n"}, "links.csv:1: no class column in the header"},
		{"links number", map[string]string{"EndToEnd.csv": e2e, "links.csv": strings.Replace(links, ",9,3,3,4\n", ",x,3,3,4\n", 1)}, "links.csv:3: field busy_us: expected a number"},
		{"EndToEnd short", map[string]string{"EndToEnd.csv": "a,b\n"}, "EndToEnd.csv: expected a summary header"},
		{"summary", map[string]string{"summary.json": "{"}, "summary.json: unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFolder(t, tc.files)
			out := filepath.Join(dir, "report.html")
			err := Write(dir, "", out)
			var ie InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want an InputError saying %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != len(tc.files) {
				t.Errorf("the folder holds %d files, want the %d inputs only", len(ents), len(tc.files))
			}
		})
	}
}
