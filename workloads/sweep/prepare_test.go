package sweep

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"simd/topo"
	"simd/workloads/sim"
)

// Read checks the spec, the shard and the inputs; Prepare readies each run: the generated
// topology and the overridden SimAI.conf in the run's folder, the request and the command line
// that runs it alone; a topology the generator refuses is a GeneratorError.
func TestPlanPrepare(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	text := "workloads: [example:microAllReduce.txt]\ntopologies: [{topo: Spectrum-X, g: 16}, {topo: Spectrum-X, g: 12}]\noverrides: [{CC_MODE: 1}]\n"
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func(args []string) (topo.GeneratorOptions, error) {
		o := topo.NewGeneratorOptions("Spectrum-X", false, false, false)
		switch {
		case slices.Contains(args, "-g=16"):
			o.GPUs = 16
		case slices.Contains(args, "-g=12"):
			o.GPUs = 12 // not a multiple of -gps: refused when generated
		default:
			return o, sim.BadInputf("unknown flags %v", args)
		}
		return o, nil
	}
	p := &Plan{Out: filepath.Join(dir, "out"), Request: sim.Request{Mode: "event", Lang: "en"}, Generator: gen}
	if err := p.Read(spec, "3/3", 0, nil); !sim.IsInputError(err) || !strings.Contains(err.Error(), "-shard ") {
		t.Errorf("a shard out of range: %v", err)
	}
	if err := p.Read(spec, "0/1", 2, nil); !sim.IsInputError(err) || err.Error() != "-shard 0/1 and -shards 2 disagree" {
		t.Errorf("disagreeing shards: %v", err)
	}
	if err := p.Read(spec, "0/1", 0, nil); err != nil {
		t.Fatal(err)
	}
	runs := p.Spec.Expand()
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	run := filepath.Join(dir, "run-0000")
	var stdout, stderr bytes.Buffer
	var m Manifest
	req, err := p.Prepare(runs[0], run, &m, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(filepath.Join(run, "SimAI.conf"))
	wantArgs := []string{"-w", "example:microAllReduce.txt", "-n", req.Cluster.TopologyFile, "-c", req.Conf, "-mode", "event", "-o", filepath.Join(run, "out"), "-quiet"}
	if req.Workload != "example:microAllReduce.txt" || filepath.Dir(req.Cluster.TopologyFile) != filepath.Join(run, "topo") ||
		req.Conf != filepath.Join(run, "SimAI.conf") || !bytes.Contains(conf, []byte("CC_MODE 1")) || req.Mode != "event" || !req.OutDirGiven ||
		m.TopoFile != "topo/"+filepath.Base(req.Cluster.TopologyFile) || m.Conf != "SimAI.conf" || !slices.Equal(m.Args, wantArgs) {
		t.Errorf("request %+v\nmanifest %+v", req, m)
	}
	if !strings.HasPrefix(stdout.String(), "simd topo -topo=Spectrum-X -g=16 -o "+filepath.Join(run, "topo")+"\nasw_switch_num: ") {
		t.Errorf("stdout %q", stdout.String())
	}
	m = Manifest{}
	_, err = p.Prepare(runs[1], filepath.Join(dir, "run-0001"), &m, &stdout, &stderr)
	var ge GeneratorError
	if !errors.As(err, &ge) || !sim.IsInputError(err) || m.Args[0] != "topo" {
		t.Errorf("a refused topology: %v, args %v", err, m.Args)
	}
}
