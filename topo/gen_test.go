package topo

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSpectrumXGolden: gen_Topo_Template.py -topo Spectrum-X -g 8 -psn 1.
func TestSpectrumXGolden(t *testing.T) {
	p := SpectrumXDefaults(8)
	p.PSWs = 1
	topo, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := string(readFile(t, "testdata/Spectrum-X_8g_8gps_400Gbps_H100"))
	if got := writeString(t, topo); got != want {
		t.Fatalf("built file differs: %s", firstDiff(got, want))
	}
	if parsed := mustParse(t, []byte(want), "sx"); !reflect.DeepEqual(parsed, topo) {
		t.Error("the built topology differs from the parsed file")
	}
}

// TestRailOptiH20Golden: gen_Topo_Template.py --ro -g 16 -gt H20 -bw 200Gbps -nvbw 2400Gbps,
// compared with SimAI's file in testdata and with its SHA-256.
func TestRailOptiH20Golden(t *testing.T) {
	const name = "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20"
	const sum = "61f214503327777c69c40a6ae70019eaba8665cab36a162af26ea161a29370a0"
	p := SpectrumXDefaults(16)
	p.GPUType = "H20"
	p.NICRate = "200Gbps"
	p.NVLinkRate = "2400Gbps"
	topo, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := writeString(t, topo)
	h := sha256.Sum256([]byte(got))
	if hex.EncodeToString(h[:]) != sum {
		t.Errorf("SHA-256 of the built file is %x, want %s", h, sum)
	}
	want := readFile(t, filepath.Join("testdata", name))
	if got != string(want) {
		t.Errorf("built file differs: %s", firstDiff(got, string(want)))
	}
}

// TestRailOptiShape checks node and link counts against the generator's formulas and the
// wiring rules for several sizes.
func TestRailOptiShape(t *testing.T) {
	cases := []struct {
		gpus, gps, nsps, npa, psn int
	}{
		{8, 8, 1, 64, 1},
		{16, 8, 1, 64, 64},
		{512, 8, 1, 64, 64},
		{520, 8, 1, 64, 64}, // 2 segments, the second partly used
		{4096, 8, 1, 64, 64},
		{64, 4, 2, 4, 3},
		{48, 2, 0, 5, 7},
		{12, 1, 1, 4, 2},
		{12, 12, 3, 1, 0},
	}
	for _, c := range cases {
		p := SpectrumXDefaults(c.gpus)
		p.GPUsPerServer, p.NVSwitchesPerServer, p.NICsPerASW, p.PSWs = c.gps, c.nsps, c.npa, c.psn
		p.CheckCapacity = false
		topo, err := p.Build()
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if err := topo.Validate(); err != nil {
			t.Errorf("%+v: Validate: %v", c, err)
		}
		servers := c.gpus / c.gps
		segments := (c.gpus + c.npa*c.gps - 1) / (c.npa * c.gps)
		asn := segments * c.gps
		nvs := servers * c.nsps
		wantNodes := c.gpus + asn + c.psn + nvs
		wantLinks := c.psn*asn + servers*c.gps + servers*c.nsps*c.gps
		if topo.NumNodes() != wantNodes || topo.NumLinks() != wantLinks || topo.NumNVSwitches() != nvs ||
			topo.NumSwitches() != asn+c.psn || topo.NumGPUs() != c.gpus || !topo.GPUsFirst() {
			t.Errorf("%+v: nodes %d links %d nvs %d switches %d gpus %d; want %d %d %d %d %d", c,
				topo.NumNodes(), topo.NumLinks(), topo.NumNVSwitches(), topo.NumSwitches(), topo.NumGPUs(),
				wantNodes, wantLinks, nvs, asn+c.psn, c.gpus)
			continue
		}
		// Link order and endpoints.
		k := 0
		for i := 0; i < c.gpus; i++ {
			for j := 0; j < c.nsps; j++ {
				l := topo.Links[k]
				k++
				if int(l.Src) != i || int(l.Dst) != c.gpus+(i/c.gps)*c.nsps+j || l.RateText != "2880Gbps" || l.DelayText != "0.000025ms" {
					t.Fatalf("%+v: link %d = %+v, want GPU %d to NVSwitch %d of its server", c, k, l, i, j)
				}
			}
			seg := i / (c.gps * c.npa)
			l := topo.Links[k]
			k++
			if int(l.Src) != i || int(l.Dst) != c.gpus+nvs+seg*c.gps+i%c.gps || l.RateText != "400Gbps" || l.DelayText != "0.0005ms" {
				t.Fatalf("%+v: link %d = %+v, want GPU %d to its rail's ASW", c, k, l, i)
			}
		}
		for a := 0; a < asn; a++ {
			for q := 0; q < c.psn; q++ {
				l := topo.Links[k]
				k++
				if int(l.Src) != c.gpus+nvs+a || int(l.Dst) != c.gpus+nvs+asn+q || l.ErrorText != "0" {
					t.Fatalf("%+v: link %d = %+v, want ASW %d to PSW %d", c, k, l, a, q)
				}
			}
		}
	}
}

func TestRailOptiVerbatimStrings(t *testing.T) {
	p := RailOptimizedSingleToR{
		GPUs: 4, GPUsPerServer: 2, NVSwitchesPerServer: 1, GPUType: "MyGPU",
		NVLinkRate: "1.6Tbps", NVLinkDelay: "25ns", NICRate: "50GBps", NICDelay: "1us",
		NICsPerASW: 1, PSWs: 1, ASWPSWRate: "800Gb/s", ASWsPerPSW: 4, ErrorRate: "0.0001",
		CheckCapacity: true,
	}
	topo, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := "11 2 2 5 12 MyGPU\n" +
		"4 5 6 7 8 9 10 \n" +
		"0 4 1.6Tbps 25ns 0.0001\n0 6 50GBps 1us 0.0001\n" +
		"1 4 1.6Tbps 25ns 0.0001\n1 7 50GBps 1us 0.0001\n" +
		"2 5 1.6Tbps 25ns 0.0001\n2 8 50GBps 1us 0.0001\n" +
		"3 5 1.6Tbps 25ns 0.0001\n3 9 50GBps 1us 0.0001\n" +
		"6 10 800Gb/s 1us 0.0001\n7 10 800Gb/s 1us 0.0001\n8 10 800Gb/s 1us 0.0001\n9 10 800Gb/s 1us 0.0001\n"
	if got := writeString(t, topo); got != want {
		t.Errorf("%s", firstDiff(got, want))
	}
	l := topo.Links[1]
	if l.Rate != 400e9 || l.Delay.Nanoseconds() != 1000 || l.ErrorRate != 0.0001 {
		t.Errorf("NIC link values %+v", l)
	}
}

func TestRailOptiCapacity(t *testing.T) {
	// Spectrum-X defaults: one pod holds 64/8 = 8 segments of 512 GPUs.
	if _, err := SpectrumXDefaults(4096).Build(); err != nil {
		t.Errorf("4096 GPUs: %v", err)
	}
	if _, err := SpectrumXDefaults(4104).Build(); err == nil || !strings.Contains(err.Error(), "9 segments") {
		t.Errorf("4104 GPUs: error %v, want a capacity error", err)
	}
	p := SpectrumXDefaults(4104)
	p.CheckCapacity = false
	if topo, err := p.Build(); err != nil || topo.NumSwitches() != 9*8+64 {
		t.Errorf("4104 GPUs without the check: %v", err)
	}
	// ⌊app/gps⌋ rounds down: app 15, gps 8 allows one segment.
	p = SpectrumXDefaults(1024)
	p.ASWsPerPSW = 15
	if _, err := p.Build(); err == nil {
		t.Error("2 segments with -app 15 accepted")
	}
	p.GPUs = 512
	if _, err := p.Build(); err != nil {
		t.Errorf("1 segment with -app 15: %v", err)
	}
}

func TestRailOptiErrors(t *testing.T) {
	cases := map[string]func(*RailOptimizedSingleToR){
		"zero gpus":            func(p *RailOptimizedSingleToR) { p.GPUs = 0 },
		"gpus not multiple":    func(p *RailOptimizedSingleToR) { p.GPUs = 12 },
		"gps zero":             func(p *RailOptimizedSingleToR) { p.GPUsPerServer = 0 },
		"negative nsps":        func(p *RailOptimizedSingleToR) { p.NVSwitchesPerServer = -1 },
		"npa zero":             func(p *RailOptimizedSingleToR) { p.NICsPerASW = 0 },
		"negative psn":         func(p *RailOptimizedSingleToR) { p.PSWs = -1 },
		"empty gpu type":       func(p *RailOptimizedSingleToR) { p.GPUType = "" },
		"spaced gpu type":      func(p *RailOptimizedSingleToR) { p.GPUType = "H 100" },
		"bad nvlink rate":      func(p *RailOptimizedSingleToR) { p.NVLinkRate = "fast" },
		"bad nvlink delay":     func(p *RailOptimizedSingleToR) { p.NVLinkDelay = "-1ns" },
		"bad nic rate":         func(p *RailOptimizedSingleToR) { p.NICRate = "400Gbs" },
		"spaced nic rate":      func(p *RailOptimizedSingleToR) { p.NICRate = " 400Gbps" },
		"bad nic delay":        func(p *RailOptimizedSingleToR) { p.NICDelay = "" },
		"bad uplink rate":      func(p *RailOptimizedSingleToR) { p.ASWPSWRate = "0Gbps" },
		"bad error rate":       func(p *RailOptimizedSingleToR) { p.ErrorRate = "2" },
		"empty error rate":     func(p *RailOptimizedSingleToR) { p.ErrorRate = "" },
		"too many gpus":        func(p *RailOptimizedSingleToR) { p.GPUs = 1 << 27; p.CheckCapacity = false },
		"too many nodes":       func(p *RailOptimizedSingleToR) { p.PSWs = MaxNodes },
		"too many links":       func(p *RailOptimizedSingleToR) { p.GPUs = 1 << 20; p.PSWs = 1 << 20; p.CheckCapacity = false },
		"huge nsps":            func(p *RailOptimizedSingleToR) { p.NVSwitchesPerServer = 1 << 40 },
		"app below gps":        func(p *RailOptimizedSingleToR) { p.ASWsPerPSW = 7 },
		"negative app checked": func(p *RailOptimizedSingleToR) { p.ASWsPerPSW = -8 },
	}
	for name, spoil := range cases {
		p := SpectrumXDefaults(16)
		spoil(&p)
		if topo, err := p.Build(); err == nil {
			t.Errorf("%s: built a topology of %d nodes", name, topo.NumNodes())
		}
	}
	// Huge npa is just one segment.
	p := SpectrumXDefaults(16)
	p.NICsPerASW = 1 << 62
	if _, err := p.Build(); err != nil {
		t.Errorf("huge npa: %v", err)
	}
}

func TestDefaultFabric(t *testing.T) {
	topo, err := DefaultFabric(9216, 8)
	if err != nil {
		t.Fatal(err)
	}
	// 18 segments of 512 GPUs: 144 ASWs, 64 PSWs, 1152 NVSwitches.
	if topo.NumNodes() != 9216+1152+144+64 || topo.NumLinks() != 9216+9216+144*64 || topo.GPUType != "H100" {
		t.Errorf("nodes %d links %d type %s", topo.NumNodes(), topo.NumLinks(), topo.GPUType)
	}
	if err := topo.Validate(); err != nil {
		t.Error(err)
	}
	sb, err := topo.ServerBandwidth()
	if err != nil || sb.NVLinkGBps != 360 || sb.NICGBps != 50 || sb.NICsPerServer != 8 || sb.GPUs != 9216 {
		t.Errorf("ServerBandwidth = %+v, %v", sb, err)
	}

	topo, err = DefaultFabric(16, 4)
	if err != nil || topo.GPUsPerServer != 4 || topo.NumNVSwitches() != 4 || topo.NumSwitches() != 4+64 {
		t.Errorf("DefaultFabric(16, 4): %v", err)
	}
	if _, err := DefaultFabric(10, 4); err == nil {
		t.Error("DefaultFabric(10, 4) accepted")
	}
}

func BenchmarkDefaultFabric9216(b *testing.B) {
	for b.Loop() {
		if _, err := DefaultFabric(9216, 8); err != nil {
			b.Fatal(err)
		}
	}
}
