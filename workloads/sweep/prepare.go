package sweep

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simd/configs/atomicfile"
	"simd/topo"
	"simd/workloads/sim"
)

// Plan is a checked spec with what every run of its shard shares, and Prepare readies each run:
// its topology generated, its SimAI.conf written, its request built. It lives here, beside the
// spec and its expansion, so that simd sweep keeps only its flags, messages and exit statuses;
// a run's request is the one its recorded command line (Manifest.Args) gives simd, and the
// caller runs it (sim.Execute) as simd would.
type Plan struct {
	Spec     *Spec
	Shard    Shard
	Out      string // the sweep's folder
	BaseConf []byte // the SimAI.conf text the overrides apply to (Spec.BaseConf)
	// Request is the request of simd's command line without flags: a run's request is it with
	// the run's workload or jobs file, topology, SimAI.conf, mode and output folder.
	Request sim.Request
	// Generator reads simd topo's flags (a Topology's GeneratorArgs, with -o) into the
	// generator's options; its error's text is the message.
	Generator func(args []string) (topo.GeneratorOptions, error)
}

// Read reads and checks the spec at path, the shard (ParseShard of shard when it is not "", else
// ShardFromEnv with getenv and shards), every input the spec names (CheckInputs, with the
// generated topologies' flags read by Generator) and the SimAI.conf the overrides apply to.
// Every problem is an input error.
func (p *Plan) Read(path, shard string, shards int, getenv func(string) string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return sim.BadInput(err)
	}
	if p.Spec, err = Parse(data, path); err != nil {
		return sim.BadInput(err)
	}
	if shard != "" {
		if p.Shard, err = ParseShard(shard); err != nil {
			return sim.BadInputf("-shard %v", err)
		}
		if shards != 0 && shards != p.Shard.N {
			return sim.BadInputf("-shard %s and -shards %d disagree", shard, shards)
		}
	} else if p.Shard, err = ShardFromEnv(getenv, shards); err != nil {
		return sim.BadInput(err)
	}
	check := func(args []string) error { _, err := p.Generator(args); return err }
	if err := p.Spec.CheckInputs(check); err != nil {
		return sim.BadInput(err)
	}
	if p.BaseConf, err = p.Spec.BaseConf(); err != nil {
		return sim.BadInput(err)
	}
	return nil
}

// GeneratorError is a run's topology that the generator refused: the run fails as simd topo
// would, with the generator's error.
type GeneratorError struct{ Err error }

func (e GeneratorError) Error() string { return e.Err.Error() }
func (e GeneratorError) Unwrap() error { return e.Err }

// Prepare readies run r in its folder dir and returns the request that runs it. A generated
// topology is written into dir/topo (topo.GeneratorOptions.GenerateFile, its console on stdout
// and stderr after the line "simd topo ARGS"), a topology file is used where it is; SimAI.conf
// with the run's override is written into dir, else the spec's is used (or none: the shipped
// one); the outputs go to dir/out. It fills the manifest's inputs (TopoFile, Conf) and Args,
// the simd command line that runs the request alone. A topology the generator refuses is a
// GeneratorError, with Args set to simd topo's command line; other errors are about dir.
func (p *Plan) Prepare(r Run, dir string, m *Manifest, stdout, stderr io.Writer) (sim.Request, error) {
	req := p.Request
	args := []string{"-w", p.Spec.Resolve(r.Workload)}
	if r.Jobs {
		req.Jobs = args[1]
		args[0] = "-jobs"
	} else {
		req.Workload = args[1]
	}
	switch {
	case r.Topology.File != "":
		m.TopoFile = p.Spec.Resolve(r.Topology.File)
		req.Cluster.TopologyFile = m.TopoFile
		args = append(args, "-n", m.TopoFile)
	case r.Topology.Generated():
		topoDir := filepath.Join(dir, "topo")
		targs := append(r.Topology.GeneratorArgs(), "-o", topoDir)
		fmt.Fprintf(stdout, "simd topo %s\n", strings.Join(targs, " "))
		opt, err := p.Generator(targs) // checked by Read
		if err == nil {
			_, err = opt.GenerateFile(topoDir, stdout, stderr)
		}
		if err != nil {
			m.Args = append([]string{"topo"}, targs...)
			return req, GeneratorError{err}
		}
		entries, err := os.ReadDir(topoDir)
		if err != nil || len(entries) != 1 {
			return req, fmt.Errorf("expected one topology file in %s", topoDir)
		}
		m.TopoFile = filepath.ToSlash(filepath.Join("topo", entries[0].Name()))
		req.Cluster.TopologyFile = filepath.Join(topoDir, entries[0].Name())
		args = append(args, "-n", req.Cluster.TopologyFile)
	}
	switch {
	case len(r.Override.Params) > 0:
		conf := filepath.Join(dir, "SimAI.conf")
		text := OverrideConf(p.BaseConf, r.Override)
		if err := atomicfile.Write(conf, func(f *os.File) error { _, err := f.Write(text); return err }); err != nil {
			return req, err
		}
		m.Conf = "SimAI.conf"
		req.Conf = conf
		args = append(args, "-c", conf)
	case p.Spec.Conf != "":
		m.Conf = p.Spec.Resolve(p.Spec.Conf)
		req.Conf = m.Conf
		args = append(args, "-c", m.Conf)
	}
	req.Mode, req.OutDir, req.OutDirGiven = r.Mode, filepath.Join(dir, "out"), true
	m.Args = append(args, "-mode", r.Mode, "-o", req.OutDir, "-quiet")
	return req, nil
}
