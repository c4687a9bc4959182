package nccl

import (
	"math"
	"math/bits"
	"strings"

	"simd/ccl"
)

// Arch is a GPU generation, the row NCCL's tuning tables use (compCapIndex).
type Arch int8

// GPU generations.
const (
	ArchVolta     Arch = iota // SM70
	ArchAmpere                // SM80 (A100, A800)
	ArchHopper                // SM90 (H100, H800, H20)
	ArchBlackwell             // SM100
)

// ArchOf maps a GPU name (SimAI's -g_type names and a few more; any case) to its generation.
func ArchOf(gpu string) (Arch, bool) {
	switch strings.ToUpper(gpu) {
	case "V100":
		return ArchVolta, true
	case "A100", "A800", "A10", "A30", "A40":
		return ArchAmpere, true
	case "H100", "H800", "H20", "H200":
		return ArchHopper, true
	case "B100", "B200", "GB200", "B300", "GB300":
		return ArchBlackwell, true
	}
	return 0, false
}

// The tables of NCCL's tuning model (src/graph/tuning.cc, NCCL 2.30; ccl-facts.md §2.7), in µs
// and GB/s. Algorithm rows follow the Algorithm enum; protocol columns are LL, LL128, Simple.

// baseLat is the fixed latency of each algorithm (§2.7, "base").
var baseLat = [numAlgorithms][numProtocols]float64{
	AlgoTree:          {6.8, 14.0, 8.4},
	AlgoRing:          {6.6, 14.0, 8.4},
	AlgoCollNetDirect: {0, 0, 0},
	AlgoCollNetChain:  {0, 0, 0},
	AlgoNVLS:          {0, 0, 0},
	AlgoNVLSTree:      {0, 0, 0},
	AlgoPAT:           {8, 8, 8},
}

const (
	hwNVLink = iota
	hwPCI
	hwNet
)

// hwLat is the latency of one hop of each algorithm over NVLink, PCI and the network (§2.7,
// "hw NVLink", "hw PCI", "hw NET").
var hwLat = [3][numAlgorithms][numProtocols]float64{
	hwNVLink: {
		AlgoTree: {.6, 1.25, 4.0}, AlgoRing: {.6, 1.9, 3.4},
		AlgoCollNetDirect: {0, 0, 3.7}, AlgoCollNetChain: {0, 0, 2.8},
		AlgoNVLS: {0, 0, 25}, AlgoNVLSTree: {0, 0, 25}, AlgoPAT: {0, 0, 4.0},
	},
	hwPCI: {
		AlgoTree: {1.0, 1.9, 4.0}, AlgoRing: {1.0, 2.5, 5.7},
		AlgoCollNetDirect: {0, 0, 3.7}, AlgoCollNetChain: {0, 0, 2.8},
		AlgoNVLS: {0, 0, 0}, AlgoNVLSTree: {0, 0, 0}, AlgoPAT: {0, 0, 4.0},
	},
	hwNet: {
		AlgoTree: {5.0, 8.5, 14}, AlgoRing: {2.7, 4.0, 14.0},
		AlgoCollNetDirect: {0, 0, 31}, AlgoCollNetChain: {0, 0, 30},
		AlgoNVLS: {0, 0, 18}, AlgoNVLSTree: {0, 0, 20.9}, AlgoPAT: {0, 0, 14},
	},
}

// llMaxBws caps the LL protocol (§2.7): the row is the GPU generation on one node and the CPU
// vendor (0 Intel, 1 AMD) on several; the column is min(nodes-1, 2).
var llMaxBws = [4][3]float64{
	{39.0, 39.0, 20.4},
	{87.7, 22.5, 19.0},
	{141.0, 45.0, 35.0},
	{282.0, 90.0, 70.0},
}

// Per-channel caps by generation and min(nodes-1, 2) (§2.7 gives the Hopper rows; the others
// are NCCL's).
var (
	perChMaxRingLL128 = [4][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}}
	perChMaxTreeLL128 = [4][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}
	perChMaxTree      = [4][3]float64{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}
	perChMaxNVLSTree  = [4][3]float64{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}}
)

// nvlsEfficiency scales NVLS bandwidth (§2.3: 0.85 on Hopper, 0.74 on Blackwell; no NVLS before).
var nvlsEfficiency = [4]float64{0, 0, 0.85, 0.74}

// treeCorrectionFactor scales the tree's bandwidth by log2(bytes/64) (§2.7: "24 entries").
var treeCorrectionFactor = [numProtocols][24]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}

// Graph is what NCCL's topology search found for one algorithm: the channels and the bandwidth
// of each inside a node and between nodes.
type Graph struct {
	Channels         int
	BwIntra, BwInter float64 // GB/s per channel
	LatencyInter     float64 // µs added to every network hop (graph.latencyInter)
	PCI              bool    // the GPUs of a node talk over PCI, not NVLink
}

// TuneConfig is the communicator NCCL's tuning model prices.
type TuneConfig struct {
	Nodes, GPUsPerNode int
	Arch               Arch
	AMD                bool  // the CPU vendor is AMD (else Intel)
	Ring, Tree         Graph // the ring and tree graphs
	// NVLS is the NVLS graph, also used by NVLS-Tree; fewer than 2 channels disables both.
	NVLS Graph
	// CollNet says SHARP is available, which multi-node NVLS needs. The CollNet algorithms
	// themselves are not priced.
	CollNet bool
}

// DefaultTuneConfig is the communicator of §7.2: on one Hopper node a ring and tree graph of 12
// channels × 30 GB/s (busBw 360); across nodes 8 channels × 48 GB/s (one 400 Gb/s NIC per GPU);
// an NVLS graph of 16 channels × 30 GB/s (busBw 480, the NVLS anchor of §7.1) whose network
// bandwidth across nodes is 24 GB/s per channel (the same 384 GB/s per node as the ring). Other
// generations scale the per-channel bandwidths (Volta and Ampere 20 GB/s NVLink and 24 GB/s
// network channels, Blackwell 60 and 48). channels > 0 replaces the ring and tree channel count.
// Intel CPUs.
func DefaultTuneConfig(nodes, gpusPerNode int, arch Arch, channels int) TuneConfig {
	intra, inter := 30.0, 48.0
	switch arch {
	case ArchVolta, ArchAmpere:
		intra, inter = 20, 24
	case ArchBlackwell:
		intra, inter = 60, 48
	}
	c := TuneConfig{Nodes: nodes, GPUsPerNode: gpusPerNode, Arch: arch}
	if nodes <= 1 {
		c.Ring = Graph{Channels: 12, BwIntra: intra, BwInter: intra}
		c.NVLS = Graph{Channels: 16, BwIntra: intra, BwInter: intra}
	} else {
		c.Ring = Graph{Channels: 8, BwIntra: inter, BwInter: inter}
		c.NVLS = Graph{Channels: 16, BwIntra: intra, BwInter: inter / 2}
	}
	if channels > 0 {
		c.Ring.Channels = channels
	}
	c.Tree = c.Ring
	return c
}

// NCCLTime is NCCL's model time (µs) of op with algorithm a and protocol p on nodes ×
// gpusPerNode GPUs of generation arch, with the default graphs (DefaultTuneConfig, channels > 0
// overriding the ring and tree channel count). ok is false where NCCL would not use the pair.
func NCCLTime(op ccl.Op, a Algorithm, p Protocol, nodes, gpusPerNode int, bytes int64, arch Arch, channels int) (us float64, ok bool) {
	c := DefaultTuneConfig(nodes, gpusPerNode, arch, channels)
	return c.Time(op, a, p, bytes)
}

// NCCLSelect is NCCL's (algorithm, protocol) for op on bytes over nodes × gpusPerNode GPUs of
// generation arch with the default graphs (see NCCLTime), and its model time in µs.
func NCCLSelect(op ccl.Op, nodes, gpusPerNode int, bytes int64, arch Arch, channels int) (Algorithm, Protocol, float64, bool) {
	c := DefaultTuneConfig(nodes, gpusPerNode, arch, channels)
	return c.Select(op, bytes)
}

func (c *TuneConfig) graph(a Algorithm) *Graph {
	switch a {
	case AlgoTree:
		return &c.Tree
	case AlgoNVLS, AlgoNVLSTree:
		return &c.NVLS
	}
	return &c.Ring
}

// enabled applies NCCL's rules on which (op, algorithm, protocol) exist (§2.7, "Enable rules").
func (c *TuneConfig) enabled(op ccl.Op, a Algorithm, p Protocol) bool {
	if p < 0 || p >= numProtocols || a < 0 || a >= numAlgorithms {
		return false
	}
	n := c.Nodes * c.GPUsPerNode
	switch op {
	case ccl.OpAllReduce:
		if a == AlgoPAT {
			return false
		}
	case ccl.OpAllGather, ccl.OpReduceScatter:
		if a != AlgoRing && a != AlgoPAT && a != AlgoNVLS {
			return false
		}
		// NVLS all-gather and reduce-scatter across nodes need SHARP's own collectives.
		if a == AlgoNVLS && c.Nodes > 1 {
			return false
		}
	default:
		return false
	}
	switch a {
	case AlgoCollNetDirect, AlgoCollNetChain:
		return false // SHARP switches are not modelled
	case AlgoNVLS, AlgoNVLSTree:
		if p != ProtoSimple || c.NVLS.Channels < 2 || nvlsEfficiency[c.Arch] == 0 {
			return false
		}
		if a == AlgoNVLSTree && c.Nodes == 1 {
			return false
		}
		if a == AlgoNVLS && c.Nodes > 1 && !c.CollNet {
			return false
		}
	case AlgoPAT:
		if p != ProtoSimple || c.Nodes != n {
			return false
		}
	}
	// LL128 only over NVLink inside the node.
	if p == ProtoLL128 && c.graph(a).PCI {
		return false
	}
	return true
}

func log2Down(x int64) int {
	if x <= 0 {
		return -1
	}
	return bits.Len64(uint64(x)) - 1
}

// Time is NCCL's model time (µs) of op with algorithm a and protocol p on bytes: the latency
// plus bytes over the algorithm bandwidth (ncclTopoTuneModel and ncclTopoGetAlgoTime, §2.7).
// ok is false where NCCL would not use the pair.
func (c *TuneConfig) Time(op ccl.Op, a Algorithm, p Protocol, bytes int64) (us float64, ok bool) {
	nNodes, ppnInt := c.Nodes, c.GPUsPerNode
	nRanks := nNodes * ppnInt
	if nNodes < 1 || ppnInt < 1 || bytes < 0 {
		return 0, false
	}
	if op != ccl.OpAllReduce && op != ccl.OpAllGather && op != ccl.OpReduceScatter {
		return 0, false
	}
	if nRanks == 1 {
		return 0, a == AlgoRing // nothing to move
	}
	if !c.enabled(op, a, p) {
		return 0, false
	}
	g := c.graph(a)
	arch := int(c.Arch)
	idx2 := min(nNodes-1, 2)
	idx1 := arch
	if nNodes > 1 {
		idx1 = 0
		if c.AMD {
			idx1 = 1
		}
	}
	llMaxBw := llMaxBws[idx1][idx2]
	ppn := float64(nRanks) / float64(nNodes)
	nCh := float64(g.Channels)
	nsteps := nRanks
	switch op {
	case ccl.OpAllReduce:
		nsteps = 2 * (nRanks - 1)
	case ccl.OpAllGather, ccl.OpReduceScatter:
		nsteps = nRanks - 1
	}

	// Bandwidth.
	bw := g.BwInter
	if nNodes <= 2 {
		bw = g.BwIntra
	}
	if a == AlgoNVLS || a == AlgoNVLSTree {
		intraBw := g.BwIntra * nvlsEfficiency[arch] * (nCh - 1) / nCh
		if op == ccl.OpAllReduce {
			intraBw *= 2 // all-reduce pipelines its two halves
		} else {
			intraBw *= (ppn - 1) / ppn
		}
		interBw := g.BwInter
		if nNodes <= 2 && a == AlgoNVLSTree {
			interBw *= 2
		}
		bw = min(intraBw, interBw)
		if a == AlgoNVLSTree {
			bw = min(bw, perChMaxNVLSTree[arch][idx2])
		}
	}
	busBw := nCh * bw
	switch {
	case a == AlgoRing && p == ProtoLL:
		busBw = min(llMaxBw, busBw*.5)
	case a == AlgoRing && p == ProtoLL128:
		busBw = min(busBw*.92, nCh*perChMaxRingLL128[arch][idx2])
	}
	if a == AlgoTree && op == ccl.OpAllReduce {
		busBw = min(busBw*.92, nCh*perChMaxTree[arch][idx2])
	}
	if a == AlgoTree && p == ProtoLL {
		busBw = min(busBw/3.8, llMaxBw)
	}
	if a == AlgoTree && p == ProtoLL128 {
		f := 120.0 / 128.0
		if nNodes == 1 {
			f = 7.0 / 9.0
		}
		busBw = min(busBw*f, nCh*perChMaxTreeLL128[arch][idx2])
	}
	if a == AlgoPAT {
		busBw *= .75
	}
	// Bus bandwidth to algorithm bandwidth.
	if !(a != AlgoRing && (op == ccl.OpAllGather || op == ccl.OpReduceScatter)) {
		if a == AlgoRing || a == AlgoNVLS || a == AlgoNVLSTree {
			busBw *= float64(nRanks) / float64(nsteps)
		} else {
			busBw *= .5
		}
	}

	// Latency.
	intraHw := hwNVLink
	if g.PCI {
		intraHw = hwPCI
	}
	lat := baseLat[a][p]
	intraLat := hwLat[intraHw][a][p]
	interLat := hwLat[hwNet][a][p]
	if ppnInt == 1 {
		interLat = hwLat[hwNet][AlgoTree][p]
	}
	interLat += g.LatencyInter
	if p == ProtoSimple {
		interLat += g.LatencyInter
	}
	switch a {
	case AlgoRing:
		netOv := 0.0
		if nNodes > 1 {
			netOv = 1
			if c.AMD {
				netOv = 2
			}
			if p == ProtoSimple {
				netOv *= 3
			}
		}
		intraLat = max(intraLat, netOv)
		nInter := 0
		if nNodes > 1 {
			nInter = nNodes - 1
			if op == ccl.OpAllReduce {
				nInter = 2 * (nNodes - 1)
			}
		}
		lat += float64(float64(nsteps-nInter)*intraLat) + float64(float64(nInter)*interLat)
	case AlgoTree:
		lat += float64(2 * (float64(float64(nRanks/nNodes-1)*intraLat) + float64(float64(log2i(nNodes))*interLat)))
	case AlgoNVLS:
		lat = intraLat
		if nNodes > 1 {
			lat += interLat
		}
	case AlgoNVLSTree:
		lat += intraLat + float64(2*float64(log2i(nNodes))*interLat)
	case AlgoPAT:
		lat += float64(float64(log2i(nNodes))*(interLat/3.5)) + float64(float64(nRanks)*2.8)
	}

	// ncclTopoGetAlgoTime.
	logSize := log2Down(bytes >> 6)
	if a == AlgoTree && op == ccl.OpAllReduce && logSize >= 0 && logSize < 23 {
		busBw *= treeCorrectionFactor[p][logSize]
	}
	if a == AlgoNVLSTree && op == ccl.OpAllReduce && logSize >= 0 && logSize < 24 && c.Arch >= ArchBlackwell {
		busBw *= treeCorrectionFactor[p][logSize]
	}
	if busBw <= 0 {
		return 0, false
	}
	if a == AlgoRing && p == ProtoSimple && nNodes > 1 && op == ccl.OpAllReduce &&
		bytes/int64(g.Channels*nRanks) >= 64 {
		if c.Arch < ArchAmpere {
			lat *= 1.9 // plateau effect of the ring
		} else {
			lat *= 1.4
		}
	}
	return lat + float64(bytes)/(1000*busBw), true
}

// Select is NCCL's choice for op on bytes: the enabled (algorithm, protocol) pair of least model
// time, the first in enum order on a tie (ncclTopoGetAlgoInfo).
func (c *TuneConfig) Select(op ccl.Op, bytes int64) (a Algorithm, p Protocol, us float64, ok bool) {
	best := math.Inf(1)
	for ai := Algorithm(0); ai < numAlgorithms; ai++ {
		for pi := Protocol(0); pi < numProtocols; pi++ {
			if t, en := c.Time(op, ai, pi, bytes); en && t < best {
				best, a, p, ok = t, ai, pi, true
			}
		}
	}
	if !ok {
		return 0, ProtoUndef, 0, false
	}
	return a, p, best, true
}

// SimCCLAlgorithm is SimCCL's algorithm choice (get_algo_proto_info, basic version, §1.5): an
// all-reduce on a TP group of at least 8 ranks of H100 or H800 GPUs with AS_NVLS_ENABLE=1 uses
// NVLS, everything else the ring (the protocol is UNDEF). SimCCL's NVLS builds no flows for a
// group that spans servers; simd chooses NVLS-Tree there instead.
func SimCCLAlgorithm(op ccl.Op, group ccl.GroupKind, gpu string, nRanks, nServers int, nvlsEnable bool) Algorithm {
	g := strings.ToUpper(gpu)
	if op == ccl.OpAllReduce && group == ccl.GroupTP && (g == "H100" || g == "H800") && nRanks >= 8 && nvlsEnable {
		if nServers > 1 {
			return AlgoNVLSTree
		}
		return AlgoNVLS
	}
	return AlgoRing
}
