package main

import (
	"context"
	"os"

	"go.uber.org/zap"

	"simd/topo"
	"simd/workloads/moe"
	"simd/workloads/sim"
)

// The event mode of simd moe run: the layers' plans run on the fabric through sim.RunMoE; this
// file reads the topology and SimAI.conf and attaches fct.txt.

// runEvent simulates every layer of iters; fct.txt goes to -o when it is given.
func (o *moeRunOptions) runEvent(ctx context.Context, cfg *moe.Config, iters []moe.Iteration, kind moe.Kind) (*sim.MoEResult, error) {
	var t *topo.Topology
	if o.topology != "" {
		f, err := os.Open(o.topology)
		if err != nil {
			return nil, badInputf("-n: %v", err)
		}
		t, err = topo.Parse(f, o.topology)
		f.Close()
		if err != nil {
			return nil, badInput(err)
		}
	} else {
		var err error
		if t, err = topo.DefaultFabric(cfg.GPUs(), cfg.GPUsPerNode); err != nil {
			return nil, badInputf("no -n, and no default fabric for %d GPUs of %d per server: %v", cfg.GPUs(), cfg.GPUsPerNode, err)
		}
	}
	if t.NumGPUs() < cfg.GPUs() {
		return nil, badInputf("-n %s: %d GPUs, the workload has %d", o.topology, t.NumGPUs(), cfg.GPUs())
	}
	if t.GPUsPerServer != cfg.GPUsPerNode {
		return nil, badInputf("-n %s: %d GPUs per server, the workload's plans assume %d", o.topology, t.GPUsPerServer, cfg.GPUsPerNode)
	}
	conf, err := loadConf(&options{conf: o.conf}, zap.NewNop())
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
		// fct.txt only, whatever SimAI.conf's output keys say.
		fs = sim.NewFiles(o.out, "", false, &conf, o.conf)
		for _, key := range []string{"PFC_OUTPUT_FILE", "QLEN_MON_FILE", "BW_MON_FILE", "RATE_MON_FILE", "CNP_MON_FILE"} {
			fs.Enable(key, false)
		}
		fs.Enable("FCT_OUTPUT_FILE", true)
		fs.Concurrent = secondCore(o.threads)
		att = fs.Attachments()
		defer fs.Abort()
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
	return res, nil
}
