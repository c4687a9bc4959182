package sim

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"simd/ccl"
	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads/moe"
)

// MoEInputs are what an MoE dispatch run reads: the workload simd moe gen wrote (its config and
// iterations of token routings), the plan kind, the topology and SimAI.conf.
type MoEInputs struct {
	Config     *moe.Config
	Iterations []moe.Iteration
	Kind       moe.Kind // DeepEP or FAST
	Topology   *topo.Topology
	// TopologyName names the topology in messages.
	TopologyName string
	Conf         configs.SimAIConf
	ConfPath     string
	// Chunks is the pieces each transfer of a plan is streamed in (moe.Plan.ChunkedDAG).
	Chunks int
	// Log receives the fabric's warnings (a BUFFER_SIZE no switch can pause at) and, after the
	// run, the network model's counters (LogCounters); nil logs nothing.
	Log *zap.Logger
}

// MoEResult is what an MoE dispatch run produced.
type MoEResult struct {
	// Metrics are the seed's metrics over the simulated layer times; the inter-node traffic
	// is what the plans' flows carried across servers.
	Metrics moe.Metrics
	Flows   uint64
	Events  uint64
	Wall    time.Duration
	// Stopped is why the run stopped before its end, nil if it did not; At is where, and Note
	// what it finished.
	Stopped error
	At      engine.Time
	Note    string
}

// WriteText writes the run's summary: the metrics as seed 000 prints them, titled as an event
// mode run of kind (moe.Metrics.WriteText), then a stopped run's note and the flows and events
// simulated in the wall-clock time taken.
func (r *MoEResult) WriteText(w io.Writer, kind moe.Kind) error {
	if err := r.Metrics.WriteText(w, kind, 0); err != nil {
		return err
	}
	if r.Stopped != nil {
		fmt.Fprintf(w, "  incomplete: %s\n", r.Note)
	}
	_, err := fmt.Fprintf(w, "  simulated %d flows, %d events in %.2f s\n", r.Flows, r.Events, r.Wall.Seconds())
	return err
}

// MoETopology is the fabric of an MoE dispatch run on cfg's workload: the SimAI topology file
// at path (simd moe run -n) or, when path is empty, topo.DefaultFabric of the workload's GPUs,
// GPUsPerNode of them per server. The fabric must hold the workload's GPUs, with as many per
// server as its plans assume. Every error is an input error.
func MoETopology(path string, cfg *moe.Config) (*topo.Topology, error) {
	var t *topo.Topology
	if path != "" {
		var err error
		if t, err = ReadTopology(path, "-n"); err != nil {
			return nil, err
		}
	} else {
		var err error
		if t, err = topo.DefaultFabric(cfg.GPUs(), cfg.GPUsPerNode); err != nil {
			return nil, BadInputf("no -n, and no default fabric for %d GPUs of %d per server: %v", cfg.GPUs(), cfg.GPUsPerNode, err)
		}
	}
	if t.NumGPUs() < cfg.GPUs() {
		return nil, BadInputf("-n %s: %d GPUs, the workload has %d", path, t.NumGPUs(), cfg.GPUs())
	}
	if t.GPUsPerServer != cfg.GPUsPerNode {
		return nil, BadInputf("-n %s: %d GPUs per server, the workload's plans assume %d", path, t.GPUsPerServer, cfg.GPUsPerNode)
	}
	return t, nil
}

// MoEBandwidths are the bandwidths per GPU the MoE estimates price a dispatch with
// (moe.Config's BWIntraGBps and BWInterGBps), and where they came from.
type MoEBandwidths struct {
	NVLinkGBps  float64 // per GPU, GB/s
	NetworkGBps float64 // per GPU: all the ports of its NIC together, GB/s
	Source      string  // where they came from, for the summary: "the topology FILE"
}

// MoEBandwidthsOf is what the topology t, called name, gives a GPU, as the event mode's cluster
// sees it (ClusterOf): its NVLink bandwidth, and its network bandwidth, the NIC bandwidth of a
// server shared by its GPUs (on AlibabaHPN two 200 Gb/s ports per GPU: 50 GB/s).
func MoEBandwidthsOf(t *topo.Topology, name string) (MoEBandwidths, error) {
	cl, err := ClusterOf(t, name)
	if err != nil {
		return MoEBandwidths{}, err
	}
	return MoEBandwidths{NVLinkGBps: float64(cl.NVLinkGBps), NetworkGBps: float64(cl.NICGBps) * float64(cl.NICsPerServer) / float64(cl.GPUsPerServer),
		Source: "the topology " + name}, nil
}

// ConfigBandwidths are the bandwidths cfg recorded (simd moe gen -bw-intra, -bw-inter), from
// the workload folder dir.
func ConfigBandwidths(cfg *moe.Config, dir string) MoEBandwidths {
	return MoEBandwidths{NVLinkGBps: cfg.BWIntraGBps, NetworkGBps: cfg.BWInterGBps, Source: filepath.Join(dir, "config.json")}
}

// Apply sets cfg's bandwidths to b's.
func (b MoEBandwidths) Apply(cfg *moe.Config) {
	cfg.BWIntraGBps, cfg.BWInterGBps = b.NVLinkGBps, b.NetworkGBps
}

// WriteText writes the line that says which bandwidths the estimates used.
func (b MoEBandwidths) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "Bandwidths per GPU: NVLink %g GB/s, network %g GB/s (from %s)\n", b.NVLinkGBps, b.NetworkGBps, b.Source)
	return err
}

// EstimateMoE prices every layer of in's iterations under in.Kind with the closed forms of
// model (moe.Run) and writes the summary to w (simd moe run's estimate mode): with stages each
// layer's Birkhoff stages first (only FAST has them), then the metrics, then the line saying which
// bandwidths per GPU were used: in.Topology's (MoEBandwidthsOf, called in.TopologyName) when it is
// not nil, else those in.Config recorded in the workload folder dir. in.Config's bandwidths are set
// to the ones used; the fabric's other inputs (SimAI.conf, Chunks) are not read.
func EstimateMoE(w io.Writer, in MoEInputs, dir string, model moe.Model, stages bool) (moe.Metrics, error) {
	bw := ConfigBandwidths(in.Config, dir)
	if in.Topology != nil {
		var err error
		if bw, err = MoEBandwidthsOf(in.Topology, in.TopologyName); err != nil {
			return moe.Metrics{}, err
		}
		bw.Apply(in.Config)
	}
	var each func(moe.LayerResult) error
	if stages {
		each = func(r moe.LayerResult) error { return r.WriteStages(w) }
	}
	m, err := moe.Run(in.Config, in.Iterations, in.Kind, model, each)
	if err != nil {
		return m, err
	}
	if err := m.WriteText(w, in.Kind, model); err != nil {
		return m, err
	}
	return m, bw.WriteText(w)
}

// RunMoE simulates every layer's DeepEP or FAST plan as a flow DAG (moe.Plan.DAG) on the fabric
// in the network model SimAI.conf asks for, one layer after the other; a layer's time is from
// its first flow's start to its last flow's arrival. The plans' flows are reported to the
// observers Attach adds (a FCT log); Open, if any, is called but its PFC observer is not used:
// simd moe run writes no pfc.txt.
func RunMoE(ctx context.Context, in MoEInputs, opt EventOptions, att Attachments) (*MoEResult, error) {
	st := &MoEResult{}
	cfg := in.Config
	fab, err := netmodel.NewFabric(in.Topology)
	if err != nil {
		return nil, BadInputf("-n %s: %v", in.TopologyName, err)
	}
	sched, sim, err := att.simulator(&in.Conf, in.ConfPath, fab, false, opt, false, in.Log)
	if err != nil {
		return nil, err
	}
	defer func() { LogCounters(orNop(in.Log), sim, sched.Processed()) }()
	var layerS []float64
	var interKB float64
	began := time.Now()
	defer func() {
		st.Flows, st.Events, st.Wall = sim.Flows(), sched.Processed(), time.Since(began)
	}()
	layers := 0
	for _, it := range in.Iterations {
		layers += len(it.Layers)
	}
	flowsDone := newFlowsDone(sim.Progress, sim.ProgressCounted)
	g := watchRun(ctx, sched, opt.MaxEvents, att.Watch, func() Status {
		return flowsDone.status(Status{Events: sched.Processed(), Now: sched.Now(), Started: sim.Flows() > 0})
	})
	defer g.finish()
layers:
	for _, it := range in.Iterations {
		for li := range it.Layers {
			l := &it.Layers[li]
			p, err := moe.Build(in.Kind, cfg, l)
			if err != nil {
				return nil, fmt.Errorf("iteration %d: %w", it.Index, err)
			}
			d, err := p.ChunkedDAG(cfg, fab.TotalGPUs(), in.Chunks)
			if err != nil {
				return nil, fmt.Errorf("iteration %d layer %d: %w", it.Index, l.Index, err)
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
				return nil, err
			}
			if g.cause != nil {
				// Stopped, in this layer or just as it finished.
				if end >= 0 {
					layerS = append(layerS, float64(end-start)/1e12)
					interKB += layerKB
				}
				st.Stopped, st.At = g.cause, sched.Now()
				st.Note = fmt.Sprintf("stopped by %s after %d events at %s us simulated, in iteration %d layer %d; %d of %d layers finished",
					st.Stopped, sched.Processed(), strconv.FormatFloat(st.At.Microseconds(), 'f', 3, 64), it.Index, l.Index, len(layerS), layers)
				break layers
			}
			if end < 0 {
				return nil, fmt.Errorf("iteration %d layer %d: the dispatch never finished", it.Index, l.Index)
			}
			layerS = append(layerS, float64(end-start)/1e12)
			interKB += layerKB
			if att.Dispatched != nil {
				att.Dispatched(it.Index, l.Index, start, end)
			}
		}
	}
	st.Metrics = moe.Summarize(cfg, layerS, interKB)
	return st, nil
}
