package netmodel

import (
	"fmt"

	"simd/topo"
	"simd/topo/route"
)

// Fabric is a topology ready to carry a collective's flows: the routing graph and router, and
// the map from a DAG's endpoints to nodes. Rank r is the r-th GPU of the topology (node r in
// every file SimAI's generator writes); the NVSwitch endpoint of server s (ccl numbers it
// TotalGPUs + s) is that server's first NVSwitch.
type Fabric struct {
	Topo   *topo.Topology
	Graph  *route.Graph
	Router *route.Router
	gpus   []int32 // rank → node
	nvs    []int32 // server → node of its first NVSwitch, -1 if it has none
}

// NewFabric prepares t.
func NewFabric(t *topo.Topology) (*Fabric, error) {
	r, err := route.New(t)
	if err != nil {
		return nil, err
	}
	f := &Fabric{Topo: t, Graph: r.Graph(), Router: r}
	for id, k := range t.Kinds {
		if k == topo.GPU {
			f.gpus = append(f.gpus, int32(id))
		}
	}
	gps := t.GPUsPerServer
	servers := (len(f.gpus) + gps - 1) / gps
	f.nvs = make([]int32, servers)
	for s := range f.nvs {
		f.nvs[s] = -1
		g := f.gpus[s*gps]
		nbrs, _ := f.Graph.Adjacent(g)
		for _, n := range nbrs {
			if t.Kinds[n] == topo.NVSwitch {
				f.nvs[s] = n
				break
			}
		}
	}
	return f, nil
}

// TotalGPUs is the number of GPUs: ccl's NVSwitch endpoints are numbered from it.
func (f *Fabric) TotalGPUs() int { return len(f.gpus) }

// Node maps a DAG endpoint to its node.
func (f *Fabric) Node(endpoint int32) (int32, error) {
	if endpoint >= 0 && int(endpoint) < len(f.gpus) {
		return f.gpus[endpoint], nil
	}
	s := int(endpoint) - len(f.gpus)
	if s >= 0 && s < len(f.nvs) && f.nvs[s] >= 0 {
		return f.nvs[s], nil
	}
	if s >= 0 && s < len(f.nvs) {
		return 0, fmt.Errorf("server %d has no NVSwitch for NVLS traffic", s)
	}
	return 0, fmt.Errorf("endpoint %d is neither one of the %d GPUs nor a server's NVSwitch", endpoint, len(f.gpus))
}

// NICRate is SimAI's nic_rate: the rate of the first host's first link in the topology file
// (device 1 of node 0), which with generated topologies is its NVLink. SimAI derives each
// switch port's PFC threshold shift from it.
func (f *Fabric) NICRate() float64 {
	if len(f.gpus) == 0 {
		return 0
	}
	_, links := f.Graph.Adjacent(f.gpus[0])
	best := int32(-1)
	for _, l := range links {
		if best < 0 || route.LinkIndex(l) < route.LinkIndex(best) {
			best = l
		}
	}
	if best < 0 {
		return 0
	}
	return f.Graph.Rate(best)
}
