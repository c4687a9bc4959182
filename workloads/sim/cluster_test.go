package sim

import (
	"path/filepath"
	"strings"
	"testing"

	"simd/topo"
)

// TestClusterRequestResolve: the figures given come first, then the topology, then SimAI's
// tables; errors name the figures as Names calls them.
func TestClusterRequestResolve(t *testing.T) {
	hpn := topo.NewGeneratorOptions("AlibabaHPN", false, false, false)
	hpn.GPUs, hpn.PSWs = 32, 4
	g, err := hpn.Generate()
	if err != nil {
		t.Fatal(err)
	}
	i := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	f := func(v float32) *float32 { return &v }
	cases := []struct {
		name string
		r    ClusterRequest
		want Cluster // Topology and Fabric not compared
		err  string
	}{
		{"default fabric", ClusterRequest{GPUs: i(16), Names: SimAIFlags},
			Cluster{GPUs: 16, GPUsPerServer: 8, NICsPerServer: 8, NVLinkGBps: 360, NICGBps: 50, GPUType: "H100"}, ""},
		{"topology", ClusterRequest{Topology: g.Topology, TopologyFile: "hpn"},
			Cluster{GPUs: 32, GPUsPerServer: 8, NICsPerServer: 16, NVLinkGBps: 360, NICGBps: 25, GPUType: "H100"}, ""},
		{"flags over the topology", ClusterRequest{Topology: g.Topology, TopologyFile: "hpn", GPUType: s("A100"), NICType: s("cx6"), NICsPerServer: i(8)},
			Cluster{GPUs: 32, GPUsPerServer: 8, NICsPerServer: 8, NVLinkGBps: 240, NICGBps: 23.5, GPUType: "A100"}, ""},
		{"bandwidths of 0 are not given", ClusterRequest{Topology: g.Topology, TopologyFile: "hpn", NVLinkGBps: f(0), NICGBps: f(0)},
			Cluster{GPUs: 32, GPUsPerServer: 8, NICsPerServer: 16, NVLinkGBps: 360, NICGBps: 25, GPUType: "H100"}, ""},
		{"bandwidths given", ClusterRequest{Topology: g.Topology, TopologyFile: "hpn", NVLinkGBps: f(100), NICGBps: f(10), GPUType: s("A100")},
			Cluster{GPUs: 32, GPUsPerServer: 8, NICsPerServer: 16, NVLinkGBps: 100, NICGBps: 10, GPUType: "A100"}, ""},
		{"no GPU count", ClusterRequest{Names: SimAIFlags}, Cluster{}, "the GPU count is unknown (the workload has no all_gpus: key): give -g N or a topology with -n"},
		{"no GPU count, field names", ClusterRequest{}, Cluster{}, "give GPUs N or a topology with TopologyFile"},
		{"too many GPUs", ClusterRequest{GPUs: i(MaxGPUs + 1), Names: SimAIFlags}, Cluster{}, "GPU count 1048577: simd simulates 1 to 1048576 GPUs"},
		{"GPUs per server", ClusterRequest{GPUs: i(8), GPUsPerServer: i(0), Names: SimAIFlags}, Cluster{}, "-g_p_s 0: need at least 1 GPU per server"},
		{"GPU type", ClusterRequest{GPUs: i(8), GPUType: s("B200"), Names: SimAIFlags}, Cluster{}, `-g_type "B200": expected A100, A800, H100, H800 or H20`},
		{"NIC type", ClusterRequest{GPUs: i(8), NICType: s("cx9"), Names: SimAIFlags}, Cluster{}, `-nic_t "cx9": expected cx6, cx7 or bf3`},
		{"NICs per server", ClusterRequest{GPUs: i(8), NICsPerServer: i(0), Names: SimAIFlags}, Cluster{}, "-n_p_s 0: need at least 1 NIC per server"},
		{"topology file", ClusterRequest{TopologyFile: filepath.Join(t.TempDir(), "none"), Names: SimAIFlags}, Cluster{}, "-n: open "},
	}
	for _, c := range cases {
		cl, err := c.r.Resolve(nil, nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !IsInputError(err) {
				t.Errorf("%s: error %v, want an input error with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		cl.Topology, cl.Fabric = nil, ""
		if cl != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, cl, c.want)
		}
	}
}
