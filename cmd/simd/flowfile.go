package main

import (
	"context"
	"fmt"
	"io"

	"go.uber.org/zap"

	"simd/workloads/sim"
)

// runFlowFile is simd -flows FILE -n TOPO [-c SimAI.conf]: the flows of an ns-3/HPCC flow file
// over the fabric, without a workload, for network studies (sim.RunFlows); it writes fct.txt
// (and pfc.txt, summary.json) as the event mode does.
func runFlowFile(ctx context.Context, o *options, log *zap.Logger, stdout, stderr io.Writer) error {
	if o.workload != "" {
		return badInputf("-flows and -w are alternatives: give one")
	}
	if o.topology == "" {
		return badInputf("-flows needs a topology (-n TOPO): the flow file names its nodes")
	}
	conf, err := sim.ReadConf(o.conf, "-c", log)
	if err != nil {
		return err
	}
	t, err := sim.ReadTopology(o.topology, "-n")
	if err != nil {
		return err
	}
	flows, err := sim.ReadFlowFile(o.flows, "-flows")
	if err != nil {
		return err
	}
	opt, err := eventOptions(o)
	if err != nil {
		return err
	}
	s := &session{o: o, log: log, stdout: stdout, conf: conf, wname: o.flows}
	s.cl.Fabric = o.topology
	s.layout.GPUs = t.NumGPUs()
	fs := s.eventFiles()
	if err := fs.Check(); err != nil {
		return err
	}
	att := fs.Attachments()
	defer fs.Abort()
	prog := newProgress(stderr, o.quiet, o.progressEvery, "flows")
	att.Watch = prog.watch()
	ctx, cancel := o.limits.runContext(ctx)
	defer cancel()
	r, err := sim.RunFlows(ctx, sim.FlowInputs{Flows: flows, FlowsName: o.flows, Topology: t, TopologyName: o.topology, Conf: conf, ConfPath: o.conf, Log: log}, opt, att)
	prog.finish()
	if err != nil {
		return err
	}
	files, err := fs.Commit()
	if err != nil {
		return err
	}
	p, err := fs.WriteFlows(r, s.summaryHeader("flows"))
	if err != nil {
		return err
	}
	files = append(files, p)
	fmt.Fprintf(stdout, "simd flows: %s on %s: %d flows, the last arriving at %.3f us; %d events in %.2f s\n",
		o.flows, o.topology, len(flows), r.End.Microseconds(), r.Events, r.Wall.Seconds())
	for _, p := range files {
		fmt.Fprintf(stdout, "results: %s\n", p)
	}
	if r.Stopped != nil {
		fmt.Fprintf(stdout, "  incomplete: %s\n", r.Note)
	}
	return stopped(r.Stopped, r.End, "fct.txt holds the flows that arrived; summary.json is marked incomplete")
}
