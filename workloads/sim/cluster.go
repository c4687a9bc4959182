package sim

import (
	"fmt"
	"strings"

	"go.uber.org/zap"

	"simd/ccl/algo"
	"simd/ccl/analytical"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads"
)

// MaxGPUs bounds the GPU count, far above any cluster built, so that a typo such as -g 100000000
// is refused instead of building a topology that fills the machine's memory.
const MaxGPUs = 1 << 20

// ClusterRequest is what a run is told about its cluster: a topology (a file, or one already
// built) and the figures given explicitly, each nil when not given. Resolve settles the rest.
type ClusterRequest struct {
	// TopologyFile is read when Topology is nil (simd -n); "" with a nil Topology: the default
	// fabric for the GPU count (topo.DefaultFabric).
	TopologyFile string
	// Topology is an already-built topology, called TopologyFile in messages and reports.
	Topology *topo.Topology

	GPUs          *int     // the GPU count
	GPUsPerServer *int     // the scale-up domain
	GPUType       *string  // A100, A800, H100, H800 or H20
	NVLinkGBps    *float32 // NVLink bus bandwidth per GPU, GB/s; used when above 0
	NICGBps       *float32 // bandwidth of one NIC, GB/s; used when above 0
	NICType       *string  // cx6, cx7 or bf3: gives NICGBps when NICGBps is not given
	NICsPerServer *int

	// Names are how messages call these figures: the command line's flags, such as "-g".
	Names ClusterNames
}

// ClusterNames are the names a ClusterRequest's messages give its fields; SimAIFlags are
// SimAI_analytical's flags (simd's).
type ClusterNames struct {
	Topology, GPUs, GPUsPerServer, GPUType, NVLink, NIC, NICType, NICsPerServer string
}

// SimAIFlags names a ClusterRequest's fields by SimAI_analytical's flags, as simd's command
// line does.
var SimAIFlags = ClusterNames{Topology: "-n", GPUs: "-g", GPUsPerServer: "-g_p_s", GPUType: "-g_type",
	NVLink: "-nv", NIC: "-nic", NICType: "-nic_t", NICsPerServer: "-n_p_s"}

// fieldNames are the names of messages without ClusterNames.
var fieldNames = ClusterNames{Topology: "TopologyFile", GPUs: "GPUs", GPUsPerServer: "GPUsPerServer", GPUType: "GPUType",
	NVLink: "NVLinkGBps", NIC: "NICGBps", NICType: "NICType", NICsPerServer: "NICsPerServer"}

// ClusterOf is the cluster topology t describes (named name in messages): its GPUs and servers,
// and the bandwidths of server 0 (topo.ServerBandwidth), with SimAI's tables where t has none
// (NVLink from the GPU type, a cx7 NIC, one NIC per GPU) — what simd's command line settles on
// when a topology is given and no flag overrides it.
func ClusterOf(t *topo.Topology, name string) (Cluster, error) {
	if t == nil {
		return Cluster{}, BadInputf("%s: no topology", name)
	}
	return ClusterRequest{Topology: t, TopologyFile: name}.Resolve(nil, nil)
}

// Resolve settles the GPU count, GPUs per server, GPU type and bandwidths: the figures given
// first, then the topology (the one given, or the default fabric built for the GPU count), then
// SimAI's tables. w, if not nil, is the workload to run, whose all_gpus gives the GPU count when
// nothing else does. Warnings (a GPU count given that differs from the topology's or the
// workload's) go to log; nil logs nothing. Every error is an input error naming the figure by
// r.Names.
func (r ClusterRequest) Resolve(w *workloads.Workload, log *zap.Logger) (Cluster, error) {
	if log == nil {
		log = zap.NewNop()
	}
	n, gbps := r.Names, " GBPS"
	if n == (ClusterNames{}) {
		n, gbps = fieldNames, ""
	}
	var cl Cluster
	var sb topo.ServerBandwidth
	haveTopo := false
	if r.Topology == nil && r.TopologyFile != "" {
		t, err := ReadTopology(r.TopologyFile, n.Topology)
		if err != nil {
			return cl, err
		}
		r.Topology = t
	}
	if r.Topology != nil {
		var err error
		if sb, err = r.Topology.ServerBandwidth(); err != nil {
			return cl, BadInputf("%s: %v", r.TopologyFile, err)
		}
		haveTopo = true
		cl.Fabric, cl.Topology = r.TopologyFile, r.Topology
	}
	allGPUs := 0
	if w != nil {
		allGPUs = w.Header.AllGPUs
	}
	switch {
	case r.GPUs != nil:
		cl.GPUs = *r.GPUs
		if haveTopo && cl.GPUs != sb.GPUs {
			log.Warn(n.GPUs+" differs from the topology's GPU count; using "+n.GPUs, zap.Int(trimDash(n.GPUs), cl.GPUs), zap.Int("topology", sb.GPUs))
		}
	case haveTopo:
		cl.GPUs = sb.GPUs
	case allGPUs > 0:
		cl.GPUs = allGPUs
	default:
		file := ""
		if w != nil {
			file = w.File + ": "
		}
		return cl, BadInputf("%sthe GPU count is unknown (the workload has no all_gpus: key): give %s N or a topology with %s", file, n.GPUs, n.Topology)
	}
	if cl.GPUs < 1 || cl.GPUs > MaxGPUs {
		return cl, BadInputf("GPU count %d: simd simulates 1 to %d GPUs", cl.GPUs, MaxGPUs)
	}
	if allGPUs > 0 && allGPUs != cl.GPUs {
		log.Warn("the workload was generated for a different GPU count; using the simulated one", zap.Int("all_gpus", allGPUs), zap.Int("simulated", cl.GPUs))
	}
	switch {
	case r.GPUsPerServer != nil:
		cl.GPUsPerServer = *r.GPUsPerServer
	case haveTopo:
		cl.GPUsPerServer = sb.GPUsPerServer
	default:
		cl.GPUsPerServer = min(8, cl.GPUs)
	}
	if cl.GPUsPerServer < 1 {
		return cl, BadInputf("%s %d: need at least 1 GPU per server", n.GPUsPerServer, cl.GPUsPerServer)
	}
	if !haveTopo {
		t, err := topo.DefaultFabric(cl.GPUs, cl.GPUsPerServer)
		cl.Topology = t
		if err != nil {
			return cl, BadInputf("building the default fabric for %d GPUs, %d per server: %v", cl.GPUs, cl.GPUsPerServer, err)
		}
		if sb, err = t.ServerBandwidth(); err != nil {
			return cl, err
		}
		cl.Fabric = fmt.Sprintf("default Spectrum-X fabric, %d switches", t.NumSwitches())
	}

	cl.GPUType = sb.GPUType
	if r.GPUType != nil {
		if _, ok := analytical.ParseGPUType(*r.GPUType); !ok {
			return cl, BadInputf("%s %q: expected A100, A800, H100, H800 or H20", n.GPUType, *r.GPUType)
		}
		cl.GPUType = *r.GPUType
	}
	gpuTable := func() (float32, bool) {
		g, ok := analytical.ParseGPUType(cl.GPUType)
		if !ok {
			return 0, false
		}
		return analytical.NVLinkGBps(g)
	}
	switch {
	case r.NVLinkGBps != nil && *r.NVLinkGBps > 0:
		cl.NVLinkGBps = *r.NVLinkGBps
	case r.GPUType != nil:
		cl.NVLinkGBps, _ = gpuTable()
	case sb.NVLinkGBps > 0:
		cl.NVLinkGBps = float32(sb.NVLinkGBps)
	default:
		v, ok := gpuTable()
		if !ok {
			return cl, BadInputf("the NVLink bandwidth is unknown (%s has no NVLink and GPU type %q is not one SimAI knows): give %s%s", cl.Fabric, cl.GPUType, n.NVLink, gbps)
		}
		cl.NVLinkGBps = v
	}
	if r.NICType != nil {
		if _, ok := analytical.NICGBps(*r.NICType); !ok {
			return cl, BadInputf("%s %q: expected cx6, cx7 or bf3", n.NICType, *r.NICType)
		}
	}
	switch {
	case r.NICGBps != nil && *r.NICGBps > 0:
		cl.NICGBps = *r.NICGBps
	case r.NICType != nil:
		cl.NICGBps, _ = analytical.NICGBps(*r.NICType)
	case sb.NICGBps > 0:
		cl.NICGBps = float32(sb.NICGBps)
	default:
		cl.NICGBps, _ = analytical.NICGBps("cx7")
		log.Debug("no NIC in the topology: using SimAI's cx7 default", zap.Float32("GBps", cl.NICGBps))
	}
	switch {
	case r.NICsPerServer != nil:
		cl.NICsPerServer = *r.NICsPerServer
		if cl.NICsPerServer < 1 {
			return cl, BadInputf("%s %d: need at least 1 NIC per server", n.NICsPerServer, cl.NICsPerServer)
		}
	case sb.NICsPerServer > 0:
		cl.NICsPerServer = sb.NICsPerServer
	default:
		cl.NICsPerServer = cl.GPUsPerServer
	}
	return cl, nil
}

// trimDash is a flag's name without its dashes, as a log field's key.
func trimDash(s string) string { return strings.TrimLeft(s, "-") }

// fabricAndSelector builds the event mode's fabric (the topology's graph and router) and the
// algorithm selector for the cluster's GPU type; errors are bad input.
func (cl *Cluster) fabricAndSelector(opt algo.Options) (*netmodel.Fabric, *algo.Selector, error) {
	fab, err := netmodel.NewFabric(cl.Topology)
	if err != nil {
		return nil, nil, BadInputf("%s: %v", cl.Fabric, err)
	}
	opt.GPUType = cl.GPUType
	sel, err := algo.NewSelector(opt)
	if err != nil {
		return nil, nil, BadInputf("-algo-policy: %v", err)
	}
	return fab, sel, nil
}
