package main

import (
	"context"

	"simd/workloads/moe"
	"simd/workloads/sim"
)

// The event mode of simd moe run: the layers' plans run through sim.RunMoE on the fabric
// sim.MoETopology picks; this file reads SimAI.conf and attaches fct.txt.

// runEvent simulates every layer of iters; fct.txt goes to -o when it is given.
func (o *moeRunOptions) runEvent(ctx context.Context, cfg *moe.Config, iters []moe.Iteration, kind moe.Kind) (*sim.MoEResult, error) {
	t, err := sim.MoETopology(o.topology, cfg)
	if err != nil {
		return nil, err
	}
	conf, err := sim.ReadConf(o.conf, "-c", nil)
	if err != nil {
		return nil, err
	}
	atArrival, err := completionAtArrival(o.completion)
	if err != nil {
		return nil, err
	}
	var att sim.Attachments
	var fs *sim.Files
	if o.out != "" {
		fs = sim.NewFCTFiles(o.out, &conf, o.conf)
		fs.Concurrent = secondCore(o.threads)
		att = fs.Attachments()
		defer fs.Abort()
	}
	tl := newTimeline(o.trace, false, "mode", "moe event", "plan", kind.String(), "workload", o.dir, "topology", o.topology)
	if tl != nil {
		att = tl.Attach(att, nil)
	}
	ctx, cancel := o.limits.runContext(ctx)
	defer cancel()
	res, err := sim.RunMoE(ctx, sim.MoEInputs{Config: cfg, Iterations: iters, Kind: kind, Topology: t, TopologyName: o.topology, Conf: conf, ConfPath: o.conf, Chunks: o.chunks},
		sim.EventOptions{Seed: o.seed, AtArrival: atArrival, MaxEvents: o.limits.maxEvents}, att)
	if err != nil {
		return nil, err
	}
	if fs != nil {
		if _, err := fs.Commit(); err != nil {
			return nil, err
		}
	}
	if tl != nil {
		if err := tl.Finish(o.trace, res.Note); err != nil {
			return nil, err
		}
	}
	return res, nil
}
