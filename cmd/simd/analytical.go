package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/configs"
	"simd/workloads"
	"simd/workloads/sim"
)

// defaultExample is the shipped workload simd runs when no -w is given.
const defaultExample = "microAllReduce.txt"

// session is what every mode needs: the inputs read and checked, the cluster settled and the
// workload laid out on it (workloads/sim).
type session struct {
	o      *options
	log    *zap.Logger
	stdout io.Writer
	stderr io.Writer // progress reports; nil: none
	conf   configs.SimAIConf
	w      *workloads.Workload
	wname  string
	cl     sim.Cluster
	sim    *sim.Simulation
	layout ccl.Layout
	prefix string // the result prefix (-r or derived)
}

func newSession(o *options, log *zap.Logger, stdout io.Writer) (*session, error) {
	s := &session{o: o, log: log, stdout: stdout}
	ov, err := overlaps(o)
	if err != nil {
		return nil, err
	}
	if o.lang != "en" && o.lang != "ja" {
		return nil, badInputf("-l %q: expected en or ja", o.lang)
	}
	if s.conf, err = sim.ReadConf(o.conf, "-c", log); err != nil {
		return nil, err
	}
	if s.w, s.wname, err = loadWorkload(o, log, stdout); err != nil {
		return nil, err
	}
	if s.cl, err = clusterRequest(o).Resolve(s.w, log); err != nil {
		return nil, err
	}
	var busbw *configs.BusBW // -busbw, nil without
	if o.busbw != "" {
		b, err := sim.ReadBusBW(o.busbw, "-busbw")
		if err != nil {
			return nil, err
		}
		busbw = &b
	}
	s.prefix = o.result // -r
	if !o.set["r"] {
		s.prefix = workloads.ResultPrefix(s.wname, s.cl.GPUsPerServer, s.cl.NICGBps, o.dpo)
	}
	s.sim, err = sim.New(sim.Inputs{Workload: s.w, WorkloadName: s.wname, Cluster: s.cl, Conf: s.conf, ConfPath: o.conf, Log: log},
		sim.Options{Overlap: ov, BusBW: busbw, FileName: s.fileName()})
	if err != nil {
		return nil, err
	}
	s.layout = s.sim.Layout()
	return s, nil
}

// fileName is the report's "File name" field: the prefix after its last '/'.
func (s *session) fileName() string { return s.prefix[strings.LastIndex(s.prefix, "/")+1:] }

func runAnalytical(s *session) error {
	o := s.o
	tl := newTimeline(o.trace, o.traceAllRanks, "mode", "analytical", "workload", s.wname, "topology", s.cl.Fabric)
	var rep *workloads.AnalyticalReport
	var err error
	if tl != nil {
		rep, err = tl.Analytical(s.wname, s.sim)
	} else {
		rep, err = s.sim.Analytical()
	}
	if err != nil {
		return err
	}
	base := filepath.Join(o.outDir, o.resultFolder, s.prefix)
	if strings.HasSuffix(s.prefix, "/") {
		base += string(filepath.Separator)
	}
	chart := ""
	if o.visual != 0 {
		chart = o.lang
	}
	written, err := sim.WriteAnalytical(rep, base, chart)
	if err != nil {
		return err
	}
	if tl != nil {
		if err := tl.Write(o.trace); err != nil {
			return err
		}
		written = append(written, o.trace)
	}
	printSummary(s.stdout, s.wname, s.w, s.layout, s.cl, rep, written)
	return s.afterRun(filepath.Join(o.outDir, o.resultFolder), s.prefix)
}

// overlaps checks the overlap ratios: SimAI documents them as 0 to 1, and outside that range its
// single-precision scaling produces negative exposed times.
func overlaps(o *options) (workloads.Overlap, error) {
	ov := workloads.Overlap{DP: o.dpo, EP: o.epo, TP: o.tpo, PP: o.ppo}
	for _, r := range []struct {
		name string
		v    float32
	}{{"-dp_o", ov.DP}, {"-ep_o", ov.EP}, {"-tp_o", ov.TP}, {"-pp_o", ov.PP}} {
		if !(r.v >= 0 && r.v <= 1) {
			return ov, badInputf("%s %g: an overlap ratio must be between 0 and 1", r.name, r.v)
		}
	}
	return ov, nil
}

// loadWorkload reads -w: a file, "example:NAME", or the default example when -w is absent.
func loadWorkload(o *options, log *zap.Logger, stdout io.Writer) (*workloads.Workload, string, error) {
	name := o.workload
	if name == "" {
		name = configs.ExamplePrefix + defaultExample
		fmt.Fprintf(stdout, "no -w given: running the shipped example %s\n", defaultExample)
	}
	return sim.ReadWorkload(name, "-w", workloads.ParseOptions{AllowShortCount: o.allowShortWorkload}, log)
}

// clusterRequest is what the command line says about the cluster: -n and the flags given.
func clusterRequest(o *options) sim.ClusterRequest {
	r := sim.ClusterRequest{TopologyFile: o.topology, Names: sim.SimAIFlags}
	if o.set["g"] {
		r.GPUs = &o.gpus.v
	}
	if o.set["g_p_s"] {
		r.GPUsPerServer = &o.gpusPerServer
	}
	if o.set["g_type"] {
		r.GPUType = &o.gpuType
	}
	if o.set["nv"] {
		r.NVLinkGBps = &o.nvlink
	}
	if o.set["nic"] {
		r.NICGBps = &o.nic
	}
	if o.set["nic_t"] {
		r.NICType = &o.nicType
	}
	if o.set["n_p_s"] {
		r.NICsPerServer = &o.nicsPerServer
	}
	return r
}

func printSummary(w io.Writer, name string, wl *workloads.Workload, l ccl.Layout, cl sim.Cluster, rep *workloads.AnalyticalReport, files []string) {
	s := rep.Summary
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	fmt.Fprintf(w, "simd analytical: %s, %d layers, %s\n", name, len(wl.Layers), wl.Header.Policy)
	fmt.Fprintf(w, "  cluster: %d GPUs, %d per server, TP %d PP %d EP %d DP %d; NVLink %g GB/s, %d NICs of %g GB/s per server (%s)\n",
		l.GPUs, l.GPUsPerServer, l.TP, l.PP, l.EP, l.DP(), cl.NVLinkGBps, cl.NICsPerServer, cl.NICGBps, cl.Fabric)
	fmt.Fprintf(w, "  iteration: %s us = compute %s + exposed comm %s + bubble %s + PP comm %d\n",
		f(s.Total), f(s.Compute), f(s.Exposed), f(s.Bubble), s.PPComm)
	fmt.Fprintf(w, "  exposed comm by group (us): TP %s, DP %s, DP_EP %s, EP %s\n", f(s.TPComm), f(s.DPComm), f(s.DPEPComm), f(s.EPComm))
	for _, p := range files {
		fmt.Fprintf(w, "results: %s\n", p)
	}
}
