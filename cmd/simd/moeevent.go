package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/engine"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads/moe"
)

// The event mode of simd moe run: every layer's DeepEP or FAST plan becomes a flow DAG
// (moe.Plan.DAG) that runs on the fabric in the network model SimAI.conf asks for, one layer
// after the other; a layer's time is from its first flow's start to its last flow's arrival.

// runEvent simulates every layer of iters and returns the seed's metrics over the simulated
// layer times; the inter-node traffic is what the plans' flows carried across servers.
func (o *moeRunOptions) runEvent(cfg *moe.Config, iters []moe.Iteration, kind moe.Kind) (moe.Metrics, moeEventStats, error) {
	var st moeEventStats
	m, err := o.simulateLayers(cfg, iters, kind, &st)
	return m, st, err
}

// moeEventStats is what an event run cost: flows, engine events, wall-clock time; and, for a
// run stopped by a guard or a signal, why, where and what it finished.
type moeEventStats struct {
	flows, events uint64
	wall          time.Duration
	stopped       *stopCause
	at            engine.Time
	note          string
}

func (o *moeRunOptions) simulateLayers(cfg *moe.Config, iters []moe.Iteration, kind moe.Kind, st *moeEventStats) (moe.Metrics, error) {
	var t *topo.Topology
	if o.topology != "" {
		f, err := os.Open(o.topology)
		if err != nil {
			return moe.Metrics{}, badInputf("-n: %v", err)
		}
		t, err = topo.Parse(f, o.topology)
		f.Close()
		if err != nil {
			return moe.Metrics{}, badInput(err)
		}
	} else {
		var err error
		if t, err = topo.DefaultFabric(cfg.GPUs(), cfg.GPUsPerNode); err != nil {
			return moe.Metrics{}, badInputf("no -n, and no default fabric for %d GPUs of %d per server: %v", cfg.GPUs(), cfg.GPUsPerNode, err)
		}
	}
	if t.NumGPUs() < cfg.GPUs() {
		return moe.Metrics{}, badInputf("-n %s: %d GPUs, the workload has %d", o.topology, t.NumGPUs(), cfg.GPUs())
	}
	if t.GPUsPerServer != cfg.GPUsPerNode {
		return moe.Metrics{}, badInputf("-n %s: %d GPUs per server, the workload's plans assume %d", o.topology, t.GPUsPerServer, cfg.GPUsPerNode)
	}
	fab, err := netmodel.NewFabric(t)
	if err != nil {
		return moe.Metrics{}, badInputf("-n %s: %v", o.topology, err)
	}
	conf, err := loadConf(&options{conf: o.conf}, zap.NewNop())
	if err != nil {
		return moe.Metrics{}, err
	}
	sched := engine.NewScheduler()
	sim, _, err := newSimulator(&conf, o.conf, sched, fab, false, o.seed, o.completion, nil)
	if err != nil {
		return moe.Metrics{}, err
	}
	var fct *os.File
	var fctLog *netmodel.FCTLog
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return moe.Metrics{}, err
		}
		if fct, err = os.CreateTemp(o.out, ".fct.txt.tmp*"); err != nil {
			return moe.Metrics{}, err
		}
		defer func() {
			if fct != nil {
				fct.Close()
				os.Remove(fct.Name())
			}
		}()
		fctLog = netmodel.NewFCTLog(fct, fab, conf.PacketPayloadSize)
		if secondCore(o.threads) {
			fctLog.Concurrent()
			defer fctLog.Stop()
		}
		sim.Observe(fctLog)
	}
	var layerS []float64
	var interKB float64
	began := time.Now()
	defer func() {
		st.flows, st.events, st.wall = sim.Flows(), sched.Processed(), time.Since(began)
	}()
	guard := guardRun(sched, o.limits, nil)
	defer guard.finish()
	layers := 0
	for _, it := range iters {
		layers += len(it.Layers)
	}
layers:
	for _, it := range iters {
		for li := range it.Layers {
			l := &it.Layers[li]
			p, err := moe.Build(kind, cfg, l)
			if err != nil {
				return moe.Metrics{}, fmt.Errorf("iteration %d: %w", it.Index, err)
			}
			d, err := p.ChunkedDAG(cfg, fab.TotalGPUs(), o.chunks)
			if err != nil {
				return moe.Metrics{}, fmt.Errorf("iteration %d layer %d: %w", it.Index, l.Index, err)
			}
			var layerKB float64 // counted once the layer has finished
			for i := range d.NumFlows() {
				if f := d.Flows[i]; f.Kind == ccl.KindDispatchRDMA {
					layerKB += float64(float64(f.Bytes) / 1024) // rounded: never fused into the sum
				}
			}
			start := sched.Now()
			end := engine.Time(-1)
			sim.Run(d, netmodel.Latency{}, func() { end = sched.Now() })
			sched.Run()
			if err := sim.Err(); err != nil {
				return moe.Metrics{}, err
			}
			if guard.cause != nil {
				// Stopped by a guard or a signal, in this layer or just as it finished.
				if end >= 0 {
					layerS = append(layerS, float64(end-start)/1e12)
					interKB += layerKB
				}
				st.stopped, st.at = guard.cause, sched.Now()
				st.note = fmt.Sprintf("stopped by %s after %d events at %s us simulated, in iteration %d layer %d; %d of %d layers finished",
					st.stopped.reason, sched.Processed(), strconv.FormatFloat(st.at.Microseconds(), 'f', 3, 64), it.Index, l.Index, len(layerS), layers)
				break layers
			}
			if end < 0 {
				return moe.Metrics{}, fmt.Errorf("iteration %d layer %d: the dispatch never finished", it.Index, l.Index)
			}
			layerS = append(layerS, float64(end-start)/1e12)
			interKB += layerKB
		}
	}
	if fct != nil {
		if err := fctLog.Flush(); err != nil {
			return moe.Metrics{}, err
		}
		name := fct.Name()
		if err := fct.Close(); err != nil {
			return moe.Metrics{}, err
		}
		fct = nil
		if err := os.Rename(name, filepath.Join(o.out, "fct.txt")); err != nil {
			os.Remove(name)
			return moe.Metrics{}, err
		}
	}
	return moe.Summarize(cfg, layerS, interKB), nil
}
