package analytical

import (
	"fmt"
	"strings"
)

// GPUType is a GPU model SimAI's busbw code knows (system/calbusbw.cc).
type GPUType uint8

// GPU types. Unknown GPUs have no default NVLink bandwidth.
const (
	GPUUnknown GPUType = iota
	GPUA100
	GPUA800
	GPUH100
	GPUH800
	GPUH20
)

var gpuNames = [...]string{"unknown", "A100", "A800", "H100", "H800", "H20"}

func (g GPUType) String() string {
	if int(g) < len(gpuNames) {
		return gpuNames[g]
	}
	return "unknown"
}

// ParseGPUType reads a GPU type the way SimAI_analytical's -g_type does (A100, A800, H100, H800,
// H20; upper or lower case). ok is false for anything else.
func ParseGPUType(s string) (GPUType, bool) {
	for i, n := range gpuNames[1:] {
		if s == n || s == strings.ToLower(n) {
			return GPUType(i + 1), true
		}
	}
	return GPUUnknown, false
}

// NVLinkGBps is SimAI's NVLink bus bandwidth per GPU for a GPU type (§5.1): 20.6 GB/s × 18 links
// for H100 and H20, × 8 for H800; 20 GB/s × 12 for A100, × 8 for A800. The product is taken in
// double precision and stored in single precision, as calbusbw.cc does.
func NVLinkGBps(g GPUType) (float32, bool) {
	switch g {
	case GPUH100, GPUH20:
		return float32(20.6 * 18), true
	case GPUH800:
		return float32(20.6 * 8), true
	case GPUA100:
		return float32(20.0 * 12), true
	case GPUA800:
		return float32(20.0 * 8), true
	}
	return 0, false
}

// NICGBps is SimAI's per-NIC bandwidth for a NIC type (cx6 23.5, cx7 and bf3 48.5 GB/s; any
// case, as -nic_t).
func NICGBps(nicType string) (float32, bool) {
	switch strings.ToLower(nicType) {
	case "cx6":
		return 23.5, true
	case "cx7", "bf3":
		return 48.5, true
	}
	return 0, false
}

// busBW is the result of SimAI's cal_busbw: the bus bandwidth in GB/s and whether NVLink was the
// bottleneck (which picks the ratio table for TP all-gather and reduce-scatter).
type busBW struct {
	gbps     float32
	isNVLink bool
	// invalid is set where SimAI returns -1 (a negative bandwidth): the message says why.
	invalid string
}

// calBusBW is SimAI's ring bus bandwidth (cal_busbw with algorithm "ring", §5.1), in single
// precision. nics is SimAI's nics_pernode argument (already integer-divided by the caller).
func calBusBW(nvlink, nic, nics float32, nodeCount int, op string, gpusPerNode int) busBW {
	if gpusPerNode*nodeCount == 1 || nodeCount < 1 {
		// SimAI returns 0 here (infinite time); callers never get here for a group of 2 or more.
		return busBW{gbps: 0}
	}
	switch {
	case nvlink <= 0:
		return busBW{invalid: fmt.Sprintf("NVLink bandwidth %g GB/s is not positive", nvlink)}
	case nic <= 0:
		return busBW{invalid: fmt.Sprintf("NIC bandwidth %g GB/s is not positive", nic)}
	case gpusPerNode < 1:
		return busBW{invalid: fmt.Sprintf("%d GPUs per node slot", gpusPerNode)}
	case int(nics) < 1:
		return busBW{invalid: fmt.Sprintf("%g NICs per node slot", nics)}
	}
	nicTotal := float32(nic * nics)
	crossNIC := nicTotal > nvlink
	var ag float32
	var isNV bool
	switch {
	case nodeCount == 1:
		ag = nvlink
	case gpusPerNode == 1:
		ag = nicTotal
	default:
		if nvlink < nicTotal {
			ag, isNV = nvlink, true
		} else {
			ag = nicTotal
		}
		if crossNIC {
			isNV = false
			scaled := float32(float32(nvlink*float32(gpusPerNode)) / float32(gpusPerNode-1))
			if scaled < nicTotal {
				ag, isNV = scaled, true
			} else {
				ag = nicTotal
			}
		}
	}
	if op == "alltoall" {
		if nodeCount == 1 {
			return busBW{gbps: nvlink, isNVLink: true}
		}
		nranks := nodeCount * gpusPerNode
		v := float32(nicTotal / float32(gpusPerNode))
		v = float32(v * float32(nranks-1))
		v = float32(v / float32((nodeCount-1)*gpusPerNode))
		return busBW{gbps: v, isNVLink: isNV}
	}
	return busBW{gbps: ag, isNVLink: isNV}
}
