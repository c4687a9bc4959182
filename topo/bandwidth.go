package topo

import (
	"fmt"
	"slices"
)

// ServerBandwidth is what SimAI's analytical backend needs to know about the network, in the
// units of its command line (SimAI_analytical -g, -g_p_s, -g_type, -nv, -nic, -n_p_s).
type ServerBandwidth struct {
	GPUs          int     // GPU nodes (-g)
	GPUsPerServer int     // -g_p_s
	GPUType       string  // -g_type
	NVLinkGBps    float64 // per GPU, GB/s (-nv): GPU 0's links to NVSwitches, or to the other GPUs of its server when it has none
	NICGBps       float64 // GB/s of one NIC (-nic): the first of GPU 0's links to a network switch
	NICsPerServer int     // links from the GPUs of server 0 to network switches (-n_p_s)
}

// ServerBandwidth derives the analytical backend's bandwidth figures from t, looking at server 0:
// its GPUs are the first GPUsPerServer GPU ids (0..gps-1 in every file SimAI's generator
// writes), and GPU 0 is the lowest GPU id. Rates are converted from bits/s to GB/s (÷ 8e9), so
// 2880Gbps NVLink gives 360. NVLinkGBps is 0 when GPU 0 has no NVLink; NICGBps and
// NICsPerServer are 0 when server 0 has no link to a network switch. If GPU 0 itself has no
// such link, NICGBps is taken from the first NIC link of another GPU of server 0.
func (t *Topology) ServerBandwidth() (ServerBandwidth, error) {
	sb := ServerBandwidth{GPUs: t.NumGPUs(), GPUsPerServer: t.GPUsPerServer, GPUType: t.GPUType}
	if sb.GPUs < 1 {
		return sb, fmt.Errorf("topo: the topology has no GPUs")
	}
	if t.GPUsPerServer < 1 {
		return sb, fmt.Errorf("topo: %d GPUs per server (expected at least 1)", t.GPUsPerServer)
	}
	// Server 0 is the GPUs with ids up to last; gpu0 is the first of them.
	gpu0, last := int32(-1), int32(-1)
	for id, seen := 0, 0; id < len(t.Kinds) && seen < t.GPUsPerServer; id++ {
		if t.Kinds[id] == GPU {
			if gpu0 < 0 {
				gpu0 = int32(id)
			}
			last = int32(id)
			seen++
		}
	}
	n := int32(len(t.Kinds))
	inServer0 := func(id int32) bool { return id >= 0 && id <= last && t.Kinds[id] == GPU }
	isKind := func(id int32, k NodeKind) bool { return id >= 0 && id < n && t.Kinds[id] == k }

	var toNVSwitch, toGPU, nic0, nicAny float64
	for i := range t.Links {
		l := &t.Links[i]
		for _, e := range [2][2]int32{{l.Src, l.Dst}, {l.Dst, l.Src}} {
			x, y := e[0], e[1]
			if !inServer0(x) {
				continue
			}
			if isKind(y, Switch) {
				sb.NICsPerServer++
				if x == gpu0 && nic0 == 0 {
					nic0 = l.Rate
				}
				if nicAny == 0 {
					nicAny = l.Rate
				}
			}
			if x == gpu0 {
				switch {
				case isKind(y, NVSwitch):
					toNVSwitch += l.Rate
				case inServer0(y):
					toGPU += l.Rate
				}
			}
		}
	}
	if toNVSwitch > 0 {
		sb.NVLinkGBps = toNVSwitch / 8e9
	} else {
		sb.NVLinkGBps = toGPU / 8e9
	}
	if nic0 == 0 {
		nic0 = nicAny
	}
	sb.NICGBps = nic0 / 8e9
	return sb, nil
}

// NIC is a GPU's network interface as the topology wires it: its links to network switches.
// A dual-ToR fabric (AlibabaHPN, DCN+ with --dt) gives each NIC two ports, each to a different
// ToR; a single-ToR one gives it one.
type NIC struct {
	Ports    int     // links from the GPU to network switches
	ToRs     int     // distinct switches those links reach
	PortRate float64 // bits/s of the first port; 0 without one
	Rate     float64 // bits/s of all the ports together
}

// NICOf describes the network interface of GPU gpu (see NIC); the zero NIC when gpu has no
// link to a network switch or is not a GPU.
func (t *Topology) NICOf(gpu int32) NIC {
	var nic NIC
	if gpu < 0 || int(gpu) >= len(t.Kinds) || t.Kinds[gpu] != GPU {
		return nic
	}
	var tors []int32
	for i := range t.Links {
		l := &t.Links[i]
		peer := l.Dst
		switch gpu {
		case l.Src:
		case l.Dst:
			peer = l.Src
		default:
			continue
		}
		if peer < 0 || int(peer) >= len(t.Kinds) || t.Kinds[peer] != Switch {
			continue
		}
		if nic.Ports == 0 {
			nic.PortRate = l.Rate
		}
		nic.Ports++
		nic.Rate += l.Rate
		if !slices.Contains(tors, peer) {
			tors = append(tors, peer)
		}
	}
	nic.ToRs = len(tors)
	return nic
}

// FirstGPU is the lowest GPU id, -1 without GPUs.
func (t *Topology) FirstGPU() int32 {
	for id, k := range t.Kinds {
		if k == GPU {
			return int32(id)
		}
	}
	return -1
}
