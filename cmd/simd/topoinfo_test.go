package main

import (
	"strings"
	"testing"
)

// simd topo -info on two of SimAI's generated files: the numbers follow from the files.
func TestTopoInfo(t *testing.T) {
	spx8 := mustAbs(t, "../../topo/testdata/Spectrum-X_8g_8gps_400Gbps_H100")
	dcn16 := mustAbs(t, "../../topo/testdata/DCN+SingleToR_16g_8gps_400Gbps_H100")
	hpn32 := mustAbs(t, "../../topo/testdata/AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-info", spx8}, []string{
			"nodes: 8 GPUs, 1 NVSwitches, 9 switches; servers: 1 of 8 GPUs (H100)",
			"NIC per GPU: 1 port of 400 Gbps (single ToR); 400 Gbps per NIC",
			"links: 24", "400 Gbps     16", "2.88 Tbps    8",
			// 8 ASWs, each one 400G NIC down and one 400G uplink to the single PSW.
			"1 leaf (ASW)                    8 switches, down 3.2 Tbps, up 3.2 Tbps, oversubscription 1.00:1",
			"bisection: route: bisection needs at least 2 servers",
		}},
		{[]string{"-info", dcn16, "-paths", "0,9"}, []string{
			// One ASW with 16 NICs of 400G below and 2 PSWs above: 6.4 Tbps over 800 Gbps.
			"1 leaf (ASW)                    1 switches, down 6.4 Tbps, up 800 Gbps, oversubscription 8.00:1",
			// Both servers hang off the same ASW: the cut is the 8 NICs of one server.
			"bisection: 3.2 Tbps between the first 1 servers and the other 1",
			// Across servers the NVLink cannot help: GPU → ASW → GPU.
			"paths from GPU 0 to GPU 9: 2 hops, 1 equal-cost paths",
			"0 -> 18(switch) -> 9   delay 1us, bottleneck 400 Gbps",
		}},
		{[]string{"-info", hpn32}, []string{
			// Dual ToR: two 200G ports per NIC, to the A-side and B-side ASWs of the rail.
			"NIC per GPU: 2 ports of 200 Gbps, each to a different ToR (dual ToR); 400 Gbps per NIC",
		}},
		{[]string{"-info", spx8, "-paths", "0,5"}, []string{
			"paths from GPU 0 to GPU 5: 2 hops, 1 equal-cost paths",
			"0 -> 8(nvswitch) -> 5   delay 50ns, bottleneck 2.88 Tbps",
		}},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, t.TempDir(), append([]string{"topo"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

func TestTopoInfoErrors(t *testing.T) {
	spx8 := mustAbs(t, "../../topo/testdata/Spectrum-X_8g_8gps_400Gbps_H100")
	for _, args := range [][]string{
		{"-info", "nope"},
		{"-paths", "0,1"},
		{"-info", spx8, "-g", "16"},
		{"-info", spx8, "-paths", "0,9"},
		{"-info", spx8, "-paths", "zero"},
	} {
		code, _, errOut := runCLI(t, t.TempDir(), append([]string{"topo"}, args...)...)
		if code != 2 || !strings.HasPrefix(errOut, "simd topo: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
