package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/configs"
)

// -nvlink-model's values, SimAI's (auto) the default.
func TestParseNVLink(t *testing.T) {
	for _, c := range []struct {
		in   string
		want NVLinkModel
		ok   bool
	}{{"", NVLinkAuto, true}, {"auto", NVLinkAuto, true}, {"packets", NVLinkPackets, true}, {"fluid", NVLinkFluid, true}, {"cells", 0, false}} {
		got, err := ParseNVLink(c.in)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("ParseNVLink(%q) = %v, %v", c.in, got, err)
		}
	}
}

// Under congestion control the shipped SimAI.conf's 1 MiB all-reduce over 16 GPUs sends 8 KiB
// NVLink flows (one packet each), which go packet by packet by default and with packets, and
// as a fluid with -nvlink-model fluid, or where NVLS may run (an NVSwitch endpoint is not the
// packet model's), whether by AS_NVLS_ENABLE or by an algorithm forced, or where LINK_DOWN takes
// down a link of an NVSwitch (node 16, server 0's), which the packet model does not reroute; a
// fabric link down (GPU 0 to its switch, node 18) leaves the packets on.
func TestNVLinkModelChoice(t *testing.T) {
	nvls := algo.Options{NVLS: true}
	forced := algo.Options{Force: map[ccl.GroupKind]algo.Name{ccl.GroupDP: algo.NVLSTree}}
	shipped := string(configs.ShippedSimAIConfText())
	down := func(a, b int) string {
		return strings.Replace(shipped, "LINK_DOWN 0 0 0", fmt.Sprintf("LINK_DOWN 1000000 %d %d", a, b), 1)
	}
	for _, c := range []struct {
		name    string
		opt     EventOptions
		conf    string
		packets bool
	}{
		{"default", EventOptions{SendLatency: -1}, "", true},
		{"an NVLink down", EventOptions{SendLatency: -1}, down(0, 16), false},
		{"a NIC link down", EventOptions{SendLatency: -1}, down(0, 18), true},
		{"packets", EventOptions{SendLatency: -1, NVLink: NVLinkPackets}, "", true},
		{"fluid", EventOptions{SendLatency: -1, NVLink: NVLinkFluid}, "", false},
		{"NVLS enabled", EventOptions{SendLatency: -1, Algorithms: nvls}, "", false},
		{"NVLS-Tree forced", EventOptions{SendLatency: -1, Algorithms: forced}, "", false},
	} {
		s := newTestSimulation(t, "MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1\n", 16, c.conf)
		r, err := s.Event(context.Background(), c.opt, Attachments{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := r.Sim.CCNetwork().PacketStats().Flows > 0; got != c.packets {
			t.Errorf("%s: NVLink flows as packets %v, want %v", c.name, got, c.packets)
		}
	}
}
