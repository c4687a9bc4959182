package sim

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/configs"
	"simd/topo"
	"simd/workloads"
)

// newTestSimulation is workload text on the default fabric of gpus GPUs, 8 per server, with
// SimAI.conf text conf ("" for the shipped one).
func newTestSimulation(t testing.TB, workload string, gpus int, conf string) *Simulation {
	t.Helper()
	w, _, err := workloads.Parse(strings.NewReader(workload), "w.txt")
	if err != nil {
		t.Fatal(err)
	}
	fab, err := topo.DefaultFabric(gpus, min(8, gpus))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ClusterOf(fab, "default fabric")
	if err != nil {
		t.Fatal(err)
	}
	c, err := configs.ShippedSimAIConf()
	if conf != "" {
		c, _, err = configs.ParseSimAIConf(strings.NewReader(conf), "SimAI.conf")
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Inputs{Workload: w, WorkloadName: "w.txt", Cluster: cl, Conf: c}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// update rewrites the golden files of the package's tests (go test -update).
var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or writes it there under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}
