package route

import (
	"testing"

	"simd/topo"
)

func generated(t *testing.T, template string, ro, dt, dp bool, gpus, psws, pods int) *topo.Topology {
	t.Helper()
	o := topo.NewGeneratorOptions(template, ro, dt, dp)
	o.GPUs = gpus
	if psws > 0 {
		o.PSWs = psws
	}
	o.Pods = pods
	gen, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return gen.Topology
}

// The classes of every directed link of generated fabrics, counted, and the names of a few: a
// single-ToR rail-optimised fabric, a dual-ToR one (each NIC on two ASWs), a dual-ToR DCN+ one
// and two pods under a core layer.
func TestLinkClasses(t *testing.T) {
	tests := []struct {
		name   string
		topo   *topo.Topology
		counts [NumLinkClasses]int
		names  map[int32]string // directed link → name
	}{
		{"Spectrum-X 16 GPUs", generated(t, topo.TemplateSpectrumX, false, false, false, 16, 0, 0),
			[NumLinkClasses]int{32, 16, 16, 512, 512, 0, 0, 0},
			map[int32]string{1: "server 0 NVSwitch 0 → server 0 GPU 0", 2: "server 0 GPU 0 NIC → ASW 0", 3: "ASW 0 → server 0 GPU 0 NIC",
				1086: "ASW 7 → PSW 63", 1087: "PSW 63 → ASW 7"}},
		{"AlibabaHPN 32 GPUs dual ToR", generated(t, topo.TemplateAlibabaHPN, false, false, false, 32, 8, 0),
			[NumLinkClasses]int{64, 64, 64, 128, 128, 0, 0, 0},
			map[int32]string{2: "server 0 GPU 0 NIC → ASW 0", 4: "server 0 GPU 0 NIC → ASW 8", 7: "server 0 NVSwitch 0 → server 0 GPU 1"}},
		{"DCN+ dual ToR 32 GPUs", generated(t, topo.TemplateDCNPlus, false, true, false, 32, 0, 0),
			[NumLinkClasses]int{64, 64, 64, 16, 16, 0, 0, 0}, nil},
		{"Spectrum-X 2 pods", generated(t, topo.TemplateSpectrumX, false, false, false, 32, 4, 2),
			[NumLinkClasses]int{64, 32, 32, 64, 64, 64, 64, 0},
			map[int32]string{382: "PSW 7 → core 31", 383: "core 31 → PSW 7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGraph(tc.topo)
			if err != nil {
				t.Fatal(err)
			}
			ln := g.Names()
			var counts [NumLinkClasses]int
			for l := range int32(g.NumDirLinks()) {
				counts[ln.Class(l)]++
			}
			if counts != tc.counts {
				t.Errorf("links per class %v, want %v", counts, tc.counts)
			}
			for l, want := range tc.names {
				if got := ln.Name(l); got != want {
					t.Errorf("link %d: %q, want %q", l, got, want)
				}
			}
		})
	}
}

// Class ids read back; unknown ones do not.
func TestParseLinkClass(t *testing.T) {
	for c := range NumLinkClasses {
		if got, ok := ParseLinkClass(c.String()); !ok || got != c {
			t.Errorf("%s read back as %v, %v", c, got, ok)
		}
	}
	if _, ok := ParseLinkClass("spine"); ok {
		t.Error("spine is not a class id")
	}
}
