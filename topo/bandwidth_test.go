package topo

import (
	"path/filepath"
	"testing"
)

func TestServerBandwidthSimAIFiles(t *testing.T) {
	want := map[string]ServerBandwidth{
		"Spectrum-X_8g_8gps_400Gbps_H100":                              {8, 8, "H100", 360, 50, 8},
		"DCN+SingleToR_16g_8gps_400Gbps_H100":                          {16, 8, "H100", 360, 50, 8},
		"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100":         {32, 8, "H100", 360, 25, 16},
		"AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100":           {64, 8, "H100", 360, 25, 16},
		"DCN+DualToR_128g_8gps_200Gbps_H100":                           {128, 8, "H100", 360, 25, 16},
		"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20":                     {16, 8, "H20", 300, 25, 8},
		"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20.historical-632e1469": {16, 8, "H20", 112.5, 25, 8},
	}
	check := func(dir, name string) {
		t.Helper()
		w, ok := want[name]
		if !ok {
			t.Errorf("no expectation for %s", name)
			return
		}
		topo := mustParse(t, readFile(t, filepath.Join(dir, name)), name)
		got, err := topo.ServerBandwidth()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if got != w {
			t.Errorf("%s: ServerBandwidth = %+v, want %+v", name, got, w)
		}
	}
	for _, name := range simaiTopologyFiles(t) {
		check("testdata", name)
	}
}

func TestServerBandwidthSynthetic(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want ServerBandwidth
	}{
		{"NVSwitch-less server: GPU 0's links to its server's GPUs",
			"5 2 0 1 5 A100\n4 \n0 1 600Gbps 1ns 0\n0 2 800Gbps 1ns 0\n2 3 600Gbps 1ns 0\n0 4 100Gbps 1ns 0\n1 4 100Gbps 1ns 0\n",
			ServerBandwidth{4, 2, "A100", 75, 12.5, 2}},
		{"two NVSwitches per server add up",
			"4 2 2 0 4 H800\n2 3 \n0 2 1600Gbps 1ns 0\n0 3 1600Gbps 1ns 0\n1 2 1600Gbps 1ns 0\n1 3 1600Gbps 1ns 0\n",
			ServerBandwidth{2, 2, "H800", 400, 0, 0}},
		{"one GPU per server: no NVLink",
			"3 1 0 1 2 H100\n2 \n0 2 400Gbps 1ns 0\n1 2 400Gbps 1ns 0\n",
			ServerBandwidth{2, 1, "H100", 0, 50, 1}},
		{"links written switch first",
			"3 1 0 1 2 H100\n2 \n2 0 200Gbps 1ns 0\n2 1 400Gbps 1ns 0\n",
			ServerBandwidth{2, 1, "H100", 0, 25, 1}},
		{"GPU 0 without a NIC takes its server's",
			"4 2 1 1 3 H100\n2 3 \n0 2 2880Gbps 1ns 0\n1 2 2880Gbps 1ns 0\n1 3 400Gbps 1ns 0\n",
			ServerBandwidth{2, 2, "H100", 360, 50, 1}},
		{"GPUs not first: server 0 is the lowest GPU ids",
			"5 2 0 1 4 H100\n0 \n1 2 900Gbps 1ns 0\n1 0 200Gbps 1ns 0\n3 0 400Gbps 1ns 0\n4 0 400Gbps 1ns 0\n",
			ServerBandwidth{4, 2, "H100", 112.5, 25, 1}},
		{"gps larger than the GPU count",
			"3 8 0 1 2 H100\n2 \n0 2 400Gbps 1ns 0\n1 2 400Gbps 1ns 0\n",
			ServerBandwidth{2, 8, "H100", 0, 50, 2}},
	}
	for _, c := range cases {
		topo := mustParse(t, []byte(c.in), c.name)
		got, err := topo.ServerBandwidth()
		if err != nil || got != c.want {
			t.Errorf("%s: ServerBandwidth = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	// Parse refuses a file without links (its GPUs reach no other GPU); a topology built in
	// memory may have none.
	bare := &Topology{GPUsPerServer: 1, GPUType: "X", Kinds: []NodeKind{GPU, GPU}}
	if got, err := bare.ServerBandwidth(); err != nil || got != (ServerBandwidth{2, 1, "X", 0, 0, 0}) {
		t.Errorf("no links at all: ServerBandwidth = %+v, %v", got, err)
	}
	for name, topo := range map[string]*Topology{
		"no nodes":    {GPUsPerServer: 1},
		"no GPUs":     {GPUsPerServer: 1, Kinds: []NodeKind{Switch}, Switches: []int32{0}},
		"gps 0":       {Kinds: []NodeKind{GPU}},
		"nil lists":   {GPUsPerServer: 1, Kinds: []NodeKind{GPU, GPU}},
		"stray links": {GPUsPerServer: 1, Kinds: []NodeKind{GPU}, Links: []Link{{Src: 0, Dst: 9, Rate: 1}}},
	} {
		_, err := topo.ServerBandwidth()
		if (err == nil) != (name == "nil lists" || name == "stray links") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// TestNICOf: a single-ToR GPU has one NIC port, a dual-ToR one two, each to a different ASW;
// an NVSwitch has no NIC.
func TestNICOf(t *testing.T) {
	for _, c := range []struct {
		file string
		id   int32
		want NIC
	}{
		{"Spectrum-X_8g_8gps_400Gbps_H100", 0, NIC{Ports: 1, ToRs: 1, PortRate: 400e9, Rate: 400e9}},
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", 0, NIC{Ports: 2, ToRs: 2, PortRate: 200e9, Rate: 400e9}},
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", 31, NIC{Ports: 2, ToRs: 2, PortRate: 200e9, Rate: 400e9}},
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", 32, NIC{}},
	} {
		tp := mustParse(t, readFile(t, "testdata/"+c.file), c.file)
		if got := tp.NICOf(c.id); got != c.want {
			t.Errorf("%s, node %d: %+v, want %+v", c.file, c.id, got, c.want)
		}
	}
}
