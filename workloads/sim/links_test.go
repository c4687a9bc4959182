package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dpWorkload is one 1 MiB all-reduce over the data-parallel group of every GPU: its ring
// crosses the NICs, ASWs and PSWs as well as NVLink.
const dpWorkload = "HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1\n"

// linkRun runs workload on 16 GPUs with SimAI.conf conf ("" for the shipped one) writing its
// files into dir, with the link sampler on or off; it returns the run's result and its
// EndToEnd.csv.
func linkRun(t *testing.T, workload, conf, dir string, links bool) (*Result, []byte) {
	t.Helper()
	s := newTestSimulation(t, workload, 16, conf)
	c := s.Inputs().Conf
	fs := NewFiles(dir, "", false, &c, "SimAI.conf")
	fs.Enable("FCT_OUTPUT_FILE", true)
	fs.Links = links
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, fs.Attachments())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Commit(); err != nil {
		t.Fatal(err)
	}
	var e2e bytes.Buffer
	if err := r.Report.WriteCSV(&e2e); err != nil {
		t.Fatal(err)
	}
	return r, e2e.Bytes()
}

// The link sampler only reads the run: with and without it, in both network models, fct.txt,
// EndToEnd.csv, the number of events and the end are the same; with it, links.csv and
// link_classes.csv are written next to fct.txt.
func TestLinksLeaveTheRunAlone(t *testing.T) {
	for _, conf := range []string{"CC_MODE 0\n", ""} {
		name := "ideal"
		if conf == "" {
			name = "shipped SimAI.conf (DCQCN)"
		}
		t.Run(name, func(t *testing.T) {
			off, on := t.TempDir(), t.TempDir()
			r0, e0 := linkRun(t, dpWorkload, conf, off, false)
			r1, e1 := linkRun(t, dpWorkload, conf, on, true)
			if r0.Events != r1.Events || r0.End != r1.End || !bytes.Equal(e0, e1) {
				t.Errorf("the sampler changed the run: %d events to %v without, %d to %v with", r0.Events, r0.End, r1.Events, r1.End)
			}
			f0, err0 := os.ReadFile(filepath.Join(off, "fct.txt"))
			f1, err1 := os.ReadFile(filepath.Join(on, "fct.txt"))
			if err0 != nil || err1 != nil || len(f0) == 0 || !bytes.Equal(f0, f1) {
				t.Errorf("fct.txt differs with the sampler (%v, %v)", err0, err1)
			}
			for _, f := range []string{"links.csv", "link_classes.csv"} {
				if _, err := os.Stat(filepath.Join(off, f)); err == nil {
					t.Errorf("%s written without Links", f)
				}
				if data, err := os.ReadFile(filepath.Join(on, f)); err != nil || strings.Count(string(data), "\n") < 2 {
					t.Errorf("%s: %v, %q", f, err, data)
				}
			}
		})
	}
}

// links.csv and link_classes.csv of the ring all-reduce over 16 GPUs on the ideal model.
func TestLinksGolden(t *testing.T) {
	dir := t.TempDir()
	linkRun(t, dpWorkload, "CC_MODE 0\n", dir, true)
	for _, f := range []string{"links.csv", "link_classes.csv"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("dp-ring-16", f), got)
	}
}
