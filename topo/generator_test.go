package topo

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// simaiFiles are the six files of testdata that SimAI's generator (gen_Topo_Template.py) wrote,
// with the flags that produced them, as options set on top of the defaults.
var simaiFiles = []struct {
	name    string
	topo    string
	ro, dt  bool
	dp      bool
	set     func(o *GeneratorOptions)
	warning string
}{
	{"Spectrum-X_8g_8gps_400Gbps_H100", "Spectrum-X", false, false, false,
		func(o *GeneratorOptions) { o.GPUs, o.PSWs = 8, 1 }, ""},
	{"DCN+SingleToR_16g_8gps_400Gbps_H100", "DCN+", false, false, false,
		func(o *GeneratorOptions) { o.GPUs, o.PSWs = 16, 2 }, ""},
	{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", "AlibabaHPN", false, false, false,
		func(o *GeneratorOptions) { o.GPUs, o.PSWs = 32, 4 }, ""},
	{"AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100", "AlibabaHPN", false, false, true,
		func(o *GeneratorOptions) { o.GPUs, o.ASWs, o.PSWs = 64, 16, 16 }, ""},
	{"DCN+DualToR_128g_8gps_200Gbps_H100", "DCN+", false, true, false,
		func(o *GeneratorOptions) { o.GPUs, o.ASWs, o.PSWs = 128, 2, 8 }, ""},
	{"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", "", true, false, false,
		func(o *GeneratorOptions) {
			o.GPUs, o.GPUType, o.NICRate, o.NVLinkRate = 16, "H20", "200Gbps", "2400Gbps"
		}, ""},
}

// TestGeneratorSimAIFiles: the generator's flags give the generator's file name and bytes.
func TestGeneratorSimAIFiles(t *testing.T) {
	for _, c := range simaiFiles {
		o := NewGeneratorOptions(c.topo, c.ro, c.dt, c.dp)
		c.set(&o)
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if g.FileName != c.name {
			t.Errorf("file name %q, want %q", g.FileName, c.name)
		}
		want := string(readFile(t, "testdata/"+c.name))
		if got := writeString(t, g.Topology); got != want {
			t.Errorf("%s: %s", c.name, firstDiff(got, want))
		}
		if parsed := mustParse(t, []byte(want), c.name); !reflect.DeepEqual(parsed, g.Topology) {
			t.Errorf("%s: the parsed file differs from the built topology", c.name)
		}
		if g.Warning != c.warning {
			t.Errorf("%s: warning %q, want %q", c.name, g.Warning, c.warning)
		}
		wantConsole := []string{
			"asw_switch_num: " + strconv.Itoa(g.Topology.NumSwitches()-o.PSWs),
			"psw_switch_num: " + strconv.Itoa(o.PSWs),
			"Creating Topology of totally 1 segment(s), totally 1 pod(s).",
			c.name,
		}
		if got := g.Console(); !reflect.DeepEqual(got, wantConsole) {
			t.Errorf("%s: console %q, want %q", c.name, got, wantConsole)
		}
	}
}

// TestASWWarning: the generator's defaults draw no -asn warning (SimAI's generator compares its
// default -asn 8 with the computed count and warns on its own defaults); an -asn that differs
// from the count the fabric has is named with the numbers behind that count.
func TestASWWarning(t *testing.T) {
	for _, c := range []struct {
		name string
		topo string
		dt   bool
		set  func(o *GeneratorOptions)
		want string
	}{
		{"defaults", "", false, func(*GeneratorOptions) {}, ""},
		{"Spectrum-X defaults", "Spectrum-X", false, func(*GeneratorOptions) {}, ""},
		{"AlibabaHPN defaults", "AlibabaHPN", false, func(*GeneratorOptions) {}, ""},
		{"DCN+ defaults", "DCN+", false, func(*GeneratorOptions) {}, ""},
		{"-asn that agrees", "Spectrum-X", false, func(o *GeneratorOptions) { o.ASWs = 64 }, ""},
		{"not rail", "", false, func(o *GeneratorOptions) { o.ASWs = 8 },
			"-asn 8 does not match the fabric: its 32 GPUs fill 1 segment(s) of up to -npa 64 GPUs (not rail-optimised), " +
				"each with 1 ASW, so the file has 1 ASW(s); leave -asn out, or give -asn 1"},
		{"Spectrum-X", "Spectrum-X", false, func(o *GeneratorOptions) { o.ASWs = 8 },
			"-asn 8 does not match the fabric: its 4096 GPUs fill 8 segment(s) of up to -npa 64 × -gps 8 = 512 GPUs (rail-optimised), " +
				"each with 8 ASW(s), one per rail, so the file has 64 ASW(s); leave -asn out, or give -asn 64"},
		{"AlibabaHPN", "AlibabaHPN", false, func(o *GeneratorOptions) { o.GPUs, o.PSWs, o.ASWs = 32, 4, 240 },
			"-asn 240 does not match the fabric: its 32 GPUs fill 1 segment(s) of up to -npa 128 × -gps 8 = 1024 GPUs (rail-optimised), " +
				"each with 16 ASWs (dual ToR: 8 ASW(s) on each side), so the file has 16 ASW(s); leave -asn out, or give -asn 16"},
		{"DCN+ dual ToR, 2 pods", "DCN+", true, func(o *GeneratorOptions) { o.GPUs, o.ASWs, o.Pods = 512, 2, 2 },
			"-asn 2 does not match the fabric: its 512 GPUs fill 2 segment(s) in each of 2 pods of up to -npa 128 GPUs (not rail-optimised), " +
				"each with 2 ASWs (dual ToR: 1 ASW on each side), so the file has 8 ASW(s); leave -asn out, or give -asn 8"},
	} {
		o := NewGeneratorOptions(c.topo, false, c.dt, false)
		c.set(&o)
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if g.Warning != c.want {
			t.Errorf("%s: warning\n%q, want\n%q", c.name, g.Warning, c.want)
		}
	}
}

// TestWiringTypesSimAIFiles: the per-wiring generator types build the same files.
func TestWiringTypesSimAIFiles(t *testing.T) {
	sx := SpectrumXDefaults(8)
	sx.PSWs = 1
	dcn := DCNPlusDefaults(16, false)
	dcn.PSWs = 2
	hpn := AlibabaHPNDefaults(32, false)
	hpn.PSWs = 4
	hpnDP := AlibabaHPNDefaults(64, true)
	hpnDP.PSWs = 16
	dcnDT := DCNPlusDefaults(128, true)
	h20 := SpectrumXDefaults(16)
	h20.GPUType, h20.NICRate, h20.NVLinkRate = "H20", "200Gbps", "2400Gbps"
	for name, gen := range map[string]Generator{
		"Spectrum-X_8g_8gps_400Gbps_H100":                      sx,
		"DCN+SingleToR_16g_8gps_400Gbps_H100":                  NonRailOptimizedSingleToR(dcn),
		"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100": RailOptimizedDualToRSinglePlane(hpn),
		"AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100":   RailOptimizedDualToRDualPlane(hpnDP),
		"DCN+DualToR_128g_8gps_200Gbps_H100":                   NonRailOptimizedDualToR(dcnDT),
		"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20":             h20,
	} {
		topo, err := gen.Build()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := string(readFile(t, "testdata/"+name))
		if got := writeString(t, topo); got != want {
			t.Errorf("%s: %s", name, firstDiff(got, want))
		}
	}
}

func TestGeneratorDefaults(t *testing.T) {
	base := NewGeneratorOptions("", false, false, false)
	want := GeneratorOptions{
		GPUs: 32, ErrorRate: "0", GPUsPerServer: 8, GPUType: "H100", NVSwitchesPerServer: 1,
		NVLinkRate: "2880Gbps", NVLinkDelay: "0.000025ms", NICDelay: "0.0005ms", NICRate: "400Gbps",
		NICsPerASW: 64, PSWs: 64, ASWPSWRate: "400Gbps", ASWsPerPSW: 64,
	}
	if base != want {
		t.Errorf("base defaults %+v", base)
	}
	check := func(o GeneratorOptions, g int, bw string, asn, npa, psn, app int) {
		t.Helper()
		if o.GPUs != g || o.NICRate != bw || o.ASWs != asn || o.NICsPerASW != npa || o.PSWs != psn || o.ASWsPerPSW != app {
			t.Errorf("%s: %+v", o.Topology, o)
		}
	}
	check(NewGeneratorOptions("Spectrum-X", false, true, true), 4096, "400Gbps", 0, 64, 64, 64)
	check(NewGeneratorOptions("AlibabaHPN", false, false, false), 15360, "200Gbps", 0, 128, 120, 240)
	check(NewGeneratorOptions("AlibabaHPN", false, false, true), 15360, "200Gbps", 0, 128, 120, 120)
	check(NewGeneratorOptions("DCN+", false, false, false), 512, "400Gbps", 0, 64, 8, 8)
	check(NewGeneratorOptions("DCN+", false, true, false), 512, "200Gbps", 0, 128, 8, 8)
	check(NewGeneratorOptions("dcn+", false, true, false), 32, "400Gbps", 0, 64, 64, 64)
	// The template defaults fit the template's pod, and the console shows the recomputed ASN.
	for _, c := range []struct {
		topo         string
		dt, dp       bool
		segs, asn    int
		warn         bool
		capacityGPUs int
	}{
		{"Spectrum-X", false, false, 8, 64, false, 4096},
		{"AlibabaHPN", false, false, 15, 240, false, 30720},
		{"AlibabaHPN", false, true, 15, 240, false, 15360},
		{"DCN+", false, false, 8, 8, false, 512},
		{"DCN+", true, false, 4, 8, false, 512},
	} {
		o := NewGeneratorOptions(c.topo, false, c.dt, c.dp)
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%s dt=%v dp=%v: %v", c.topo, c.dt, c.dp, err)
			continue
		}
		if g.Segments != c.segs || g.ASWs != c.asn || (g.Warning != "") != c.warn || g.Pods != 1 || g.Cores != 0 {
			t.Errorf("%s dt=%v dp=%v: %+v", c.topo, c.dt, c.dp, g)
		}
		o.GPUs = c.capacityGPUs
		if _, err := o.Generate(); err != nil {
			t.Errorf("%s dt=%v dp=%v: a full pod of %d GPUs: %v", c.topo, c.dt, c.dp, c.capacityGPUs, err)
		}
		o.GPUs += o.GPUsPerServer
		if _, err := o.Generate(); err == nil || !strings.Contains(err.Error(), "pods") {
			t.Errorf("%s dt=%v dp=%v: %d GPUs: error %v, want a pod-capacity error", c.topo, c.dt, c.dp, o.GPUs, err)
		}
	}
}

func TestGeneratorWiringResolution(t *testing.T) {
	cases := []struct {
		topo       string
		ro, dt, dp bool
		want       Wiring
		wantErr    string
		template   bool
	}{
		{"Spectrum-X", false, true, true, WiringRailSingleToR, "", true},
		{"AlibabaHPN", false, false, false, WiringRailDualToRSinglePlane, "", true},
		{"AlibabaHPN", false, false, true, WiringRailDualToRDualPlane, "", true},
		{"DCN+", true, false, true, WiringNonRailSingleToR, "", true},
		{"DCN+", false, true, false, WiringNonRailDualToR, "", true},
		{"", false, false, false, WiringNonRailSingleToR, "", false},
		{"", false, true, false, WiringNonRailDualToR, "", false},
		{"", true, false, false, WiringRailSingleToR, "", false},
		{"", true, true, false, WiringRailDualToRSinglePlane, "", false},
		{"", true, true, true, WiringRailDualToRDualPlane, "", false},
		{"spectrum-x", true, false, false, WiringRailSingleToR, "", false},
		{"Foo", false, true, false, WiringNonRailDualToR, "", false},
		{"", false, false, true, 0, "not rail-optimised", false},
		{"", false, true, true, 0, "not rail-optimised", false},
		{"", true, false, true, 0, "single-ToR", false},
		{"alibabahpn", false, false, true, 0, "not rail-optimised", false},
	}
	for _, c := range cases {
		o := NewGeneratorOptions(c.topo, c.ro, c.dt, c.dp)
		w, err := o.Wiring()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "--dp") {
				t.Errorf("%+v: error %v, want one about %q", c, err, c.wantErr)
			}
			o.GPUs = 12 // the --dp errors come first
			if _, err2 := o.Generate(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("%+v: Generate error %v, want %v", c, err2, err)
			}
			continue
		}
		if err != nil || w != c.want || o.Template() != c.template {
			t.Errorf("%+v: wiring %v, %v, template %v", c, w, err, o.Template())
		}
	}
}

func TestGeneratorFileNames(t *testing.T) {
	want := map[Wiring][2]string{
		WiringRailSingleToR:          {"Spectrum-X_16g_8gps_400Gbps_H100", "Rail_Opti_SingleToR_16g_8gps_400Gbps_H100"},
		WiringRailDualToRSinglePlane: {"AlibabaHPN_16g_8gps_DualToR_SinglePlane_400Gbps_H100", "Rail_Opti_16g_8gps_DualToR_SinglePlane_400Gbps_H100"},
		WiringRailDualToRDualPlane:   {"AlibabaHPN_16g_8gps_DualToR_DualPlane_400Gbps_H100", "Rail_Opti_16g_8gps_DualToR_DualPlane_400Gbps_H100"},
		WiringNonRailSingleToR:       {"DCN+SingleToR_16g_8gps_400Gbps_H100", "No_Rail_Opti_16g_8gps_SingleToR_400Gbps_H100"},
		WiringNonRailDualToR:         {"DCN+DualToR_16g_8gps_400Gbps_H100", "No_Rail_Opti_16g_8gps_DualToR_400Gbps_H100"},
	}
	for w, names := range want {
		for i, template := range []bool{true, false} {
			if got := w.FileName(template, 16, 8, "400Gbps", "H100"); got != names[i] {
				t.Errorf("%v template=%v: %q, want %q", w, template, got, names[i])
			}
		}
	}
	// Through the options: a non-template -topo value gives the plain names.
	o := NewGeneratorOptions("spectrum-x", true, false, false)
	o.GPUs, o.NICRate, o.GPUType = 16, "1.6Tbps", "MI300X"
	if g, err := o.Generate(); err != nil || g.FileName != "Rail_Opti_SingleToR_16g_8gps_1.6Tbps_MI300X" {
		t.Errorf("%v %v", g, err)
	}
	if WiringNonRailDualToR.String() != "No_Rail_Opti_DualToR" || Wiring(9).String() != "Wiring(9)" {
		t.Error("Wiring.String")
	}
	// simd's extensions mark the name.
	o = NewGeneratorOptions("Spectrum-X", false, false, false)
	o.GPUs, o.Pods, o.Oversubscription, o.Mesh = 16384, AutoPods, 2, true
	if g, err := o.Generate(); err != nil || g.FileName != "Spectrum-X_16384g_8gps_400Gbps_H100_4pods_os2_mesh" {
		t.Errorf("%v %v", g.FileName, err)
	}
}

func TestGeneratorErrors(t *testing.T) {
	cases := []struct {
		name string
		topo string
		set  func(o *GeneratorOptions)
		want string
	}{
		{"--dp without rail", "", func(o *GeneratorOptions) { o.DualPlane = true }, "--dp"},
		{"rail single ToR + --dp", "", func(o *GeneratorOptions) { o.RailOptimized, o.DualPlane = true, true }, "--dp"},
		{"more GPUs than a pod (Spectrum-X)", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs = 8192 }, "16 segments"},
		{"more GPUs than a pod (DCN+)", "DCN+", func(o *GeneratorOptions) { o.GPUs = 520 }, "9 segments"},
		{"more GPUs than a pod (AlibabaHPN dual plane)", "AlibabaHPN", func(o *GeneratorOptions) { o.DualPlane, o.ASWsPerPSW, o.GPUs = true, 120, 16384 }, "16 segments"},
		{"app rounds down", "", func(o *GeneratorOptions) { o.RailOptimized, o.ASWsPerPSW, o.GPUs = true, 15, 1024 }, "-app 15 / -gps 8 = 1"},
		{"app 0", "DCN+", func(o *GeneratorOptions) { o.ASWsPerPSW = 0 }, "-app 0"},
		{"GPUs not a multiple of gps", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs = 12 }, "not a multiple of -gps"},
		{"zero GPUs", "", func(o *GeneratorOptions) { o.GPUs = 0 }, "-g 0"},
		{"bad rate", "", func(o *GeneratorOptions) { o.NICRate = "400G" }, "-bw"},
		{"bad error rate", "", func(o *GeneratorOptions) { o.ErrorRate = "x" }, "-er"},
		{"pods not dividing the servers", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods = 24, 2 }, "-pods 2"},
		{"more pods than servers", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods = 8, 2 }, "-pods 2"},
		{"negative pods", "Spectrum-X", func(o *GeneratorOptions) { o.Pods = -2 }, "-pods -2"},
		{"cores with one pod", "Spectrum-X", func(o *GeneratorOptions) { o.Cores = 64 }, "-csn 64"},
		{"core rate with one pod", "Spectrum-X", func(o *GeneratorOptions) { o.CoreRate = "800Gbps" }, "-pcbw"},
		{"cores not a multiple of PSWs", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods, o.Cores = 8192, 2, 100 }, "-csn 100"},
		{"negative cores", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods, o.Cores = 8192, 2, -64 }, "-csn -64"},
		{"bad core rate", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods, o.CoreRate = 8192, 2, "fast" }, "-pcbw"},
		{"pods without PSWs", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods, o.PSWs = 8192, 2, 0 }, "-psn is 0"},
		{"os not whole", "Spectrum-X", func(o *GeneratorOptions) { o.Oversubscription = 3 }, "-os 3"},
		{"os leaves no PSW", "Spectrum-X", func(o *GeneratorOptions) { o.Oversubscription = 128 }, "-os 128"},
		{"os negative", "Spectrum-X", func(o *GeneratorOptions) { o.Oversubscription = -2 }, "-os -2"},
		{"os NaN", "Spectrum-X", func(o *GeneratorOptions) { o.Oversubscription = math.NaN() }, "-os NaN"},
		{"os infinite", "Spectrum-X", func(o *GeneratorOptions) { o.Oversubscription = math.Inf(1) }, "-os +Inf"},
		{"os odd plane", "AlibabaHPN", func(o *GeneratorOptions) { o.DualPlane, o.GPUs, o.PSWs, o.Oversubscription = true, 64, 10, 2 }, "of a plane"},
		{"multi-pod capacity", "Spectrum-X", func(o *GeneratorOptions) { o.GPUs, o.Pods = 16384, 2 }, "8192 GPUs per pod need 16 segments"},
	}
	for _, c := range cases {
		o := NewGeneratorOptions(c.topo, false, false, false)
		c.set(&o)
		g, err := o.Generate()
		if err == nil {
			t.Errorf("%s: built %s", c.name, g.FileName)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "topo: ") {
			t.Errorf("%s: error %q, want one line mentioning %q", c.name, msg, c.want)
		}
	}
}

// refGenerate is a deliberately literal restatement of the generator's loops for one pod: the
// same counters (rail index, segment number, GPUs counted in the segment, NVSwitch index) and
// id lists, producing the file as text. The links line count comes from the lines written.
func refGenerate(w Wiring, g, gps, nsps, npa, psn int, rate string) string {
	rail, dual := w.RailOptimized(), w.DualToR()
	perSeg, gpuSeg := 1, npa
	if rail {
		perSeg, gpuSeg = gps, npa*gps
	}
	if dual {
		perSeg *= 2
	}
	segs := g / gpuSeg
	if g%gpuSeg != 0 {
		segs++
	}
	asn := segs * perSeg
	nvs := g / gps * nsps
	nodes := g + asn + psn + nvs
	var nv, asA, asB, psA, psB []int
	var idLine strings.Builder
	for id := g; id < nodes; id++ {
		fmt.Fprintf(&idLine, "%d ", id)
		switch {
		case len(nv) < nvs:
			nv = append(nv, id)
		case !dual && len(asA) < asn:
			asA = append(asA, id)
		case dual && len(asA) < asn/2:
			asA = append(asA, id)
		case dual && len(asB) < asn/2:
			asB = append(asB, id)
		case w.DualPlane() && 2*len(psA) < psn:
			psA = append(psA, id)
		case !w.DualPlane():
			psA = append(psA, id)
		default:
			psB = append(psB, id)
		}
	}
	var lines []string
	line := func(a, b int, r, d string) { lines = append(lines, fmt.Sprintf("%d %d %s %s 0", a, b, r, d)) }
	indASW, group, count, curr, indNV := 0, 0, 0, 0, 0
	half := perSeg
	if dual {
		half = perSeg / 2
	}
	for i := 0; i < g; i++ {
		curr++
		if curr > gps {
			curr = 1
			indNV += nsps
		}
		for j := 0; j < nsps; j++ {
			line(i, nv[indNV+j], "2880Gbps", "0.000025ms")
		}
		if rail {
			line(i, asA[group*half+indASW], rate, "0.0005ms")
			if dual {
				line(i, asB[group*half+indASW], rate, "0.0005ms")
			}
			indASW++
			count++
			if indASW == half {
				indASW = 0
			}
			if count == gps*npa {
				group++
				count = 0
			}
		} else {
			line(i, asA[group], rate, "0.0005ms")
			if dual {
				line(i, asB[group], rate, "0.0005ms")
			}
			count++
			if count == npa {
				group++
				count = 0
			}
		}
	}
	if w.DualPlane() {
		for _, a := range asA {
			for _, p := range psA {
				line(a, p, "400Gbps", "0.0005ms")
			}
		}
		for _, a := range asB {
			for _, p := range psB {
				line(a, p, "400Gbps", "0.0005ms")
			}
		}
	} else {
		for _, a := range append(asA, asB...) {
			for _, p := range psA {
				line(a, p, "400Gbps", "0.0005ms")
			}
		}
	}
	return fmt.Sprintf("%d %d %d %d %d H100\n%s\n", nodes, gps, nvs, asn+psn, len(lines), idLine.String()) +
		strings.Join(lines, "\n") + "\n"
}

// TestGeneratorMatchesReference compares the five wirings with refGenerate over many flag
// combinations, byte for byte.
func TestGeneratorMatchesReference(t *testing.T) {
	n := 0
	for w := WiringRailSingleToR; w <= WiringNonRailDualToR; w++ {
		for _, gps := range []int{1, 2, 8} {
			for _, servers := range []int{1, 3, 17} {
				for _, nsps := range []int{0, 1, 2, 4} {
					for _, npa := range []int{1, 3, 64} {
						for _, psn := range []int{0, 1, 3, 8} {
							o := NewGeneratorOptions("", w.RailOptimized(), w.DualToR(), w.DualPlane())
							o.GPUs, o.GPUsPerServer, o.NVSwitchesPerServer, o.NICsPerASW, o.PSWs = servers*gps, gps, nsps, npa, psn
							o.ASWsPerPSW = 1 << 20
							g, err := o.Generate()
							if err != nil {
								t.Fatalf("%v %+v: %v", w, o, err)
							}
							want := refGenerate(w, o.GPUs, gps, nsps, npa, psn, "400Gbps")
							if got := writeString(t, g.Topology); got != want {
								t.Fatalf("%v g=%d gps=%d nsps=%d npa=%d psn=%d: %s", w, o.GPUs, gps, nsps, npa, psn, firstDiff(got, want))
							}
							n++
						}
					}
				}
			}
		}
	}
	if n != 5*3*3*4*3*4 {
		t.Errorf("%d combinations", n)
	}
}

// shape is a wiring's node and link counts from the §3.3 formulas.
func shape(w Wiring, g, gps, nsps, npa, psn int) (nodes, links, asn int) {
	s := g / gps
	var perSeg, gpuSeg int
	if w.RailOptimized() {
		perSeg, gpuSeg = gps, npa*gps
	} else {
		perSeg, gpuSeg = 1, npa
	}
	if w.DualToR() {
		perSeg *= 2
	}
	asn = (g + gpuSeg - 1) / gpuSeg * perSeg
	nodes = g + asn + psn + s*nsps
	switch w {
	case WiringRailSingleToR:
		links = psn*asn + s*gps + s*nsps*gps
	case WiringRailDualToRSinglePlane:
		links = psn*asn + s*2*gps + s*nsps*gps
	case WiringRailDualToRDualPlane:
		links = psn*asn/2 + s*2*gps + s*nsps*gps
	case WiringNonRailSingleToR:
		links = psn*asn + s*gps + s*nsps*gps
	case WiringNonRailDualToR:
		links = psn*asn + s*gps*2 + s*nsps*gps
	}
	return nodes, links, asn
}

// TestWiringCounts checks node and link counts against the generator's formulas at several
// sizes, up to full template pods, and that every result validates and round-trips.
func TestWiringCounts(t *testing.T) {
	cases := []struct {
		topo        string
		ro, dt, dp  bool
		gpus, psn   int
		gps, nsps   int
		npaOverride int
	}{
		{"Spectrum-X", false, false, false, 8, 64, 8, 1, 0},
		{"Spectrum-X", false, false, false, 4096, 64, 8, 1, 0},
		{"Spectrum-X", false, false, false, 1000, 7, 4, 2, 0},
		{"AlibabaHPN", false, false, false, 32, 4, 8, 1, 0},
		{"AlibabaHPN", false, false, false, 30720, 120, 8, 1, 0},
		{"AlibabaHPN", false, false, true, 15360, 120, 8, 1, 0},
		{"AlibabaHPN", false, false, true, 2048, 7, 8, 1, 0}, // odd PSN: 4 + 3
		{"AlibabaHPN", false, false, true, 1040, 1, 8, 4, 0},
		{"DCN+", false, false, false, 512, 8, 8, 1, 0},
		{"DCN+", false, false, false, 96, 5, 4, 2, 0},
		{"DCN+", false, true, false, 512, 8, 8, 1, 0},
		{"DCN+", false, true, false, 130, 3, 2, 4, 0},
		{"", true, true, false, 96, 6, 2, 1, 5},
		{"", false, true, false, 96, 6, 2, 1, 5},
	}
	for _, c := range cases {
		o := NewGeneratorOptions(c.topo, c.ro, c.dt, c.dp)
		o.GPUs, o.PSWs, o.GPUsPerServer, o.NVSwitchesPerServer = c.gpus, c.psn, c.gps, c.nsps
		if c.npaOverride > 0 {
			o.NICsPerASW = c.npaOverride
		}
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		topo := g.Topology
		nodes, links, asn := shape(g.Wiring, c.gpus, c.gps, c.nsps, o.NICsPerASW, c.psn)
		if topo.NumNodes() != nodes || topo.NumLinks() != links || topo.NumSwitches() != asn+c.psn ||
			topo.NumNVSwitches() != c.gpus/c.gps*c.nsps || g.ASWs != asn || g.PSWs != c.psn {
			t.Errorf("%+v: nodes %d links %d switches %d; want %d %d %d", c, topo.NumNodes(), topo.NumLinks(), topo.NumSwitches(), nodes, links, asn+c.psn)
		}
		checkTopology(t, fmt.Sprintf("%+v", c), topo)
	}
}

// checkTopology: Validate and CheckStructure pass and Write → Parse gives the topology back.
func checkTopology(t *testing.T, name string, topo *Topology) {
	t.Helper()
	if err := topo.Validate(); err != nil {
		t.Errorf("%s: Validate: %v", name, err)
	}
	if err := topo.CheckStructure(); err != nil {
		t.Errorf("%s: CheckStructure: %v", name, err)
	}
	if !topo.GPUsFirst() {
		t.Errorf("%s: GPUs are not the first ids", name)
	}
	text := writeString(t, topo)
	if parsed := mustParse(t, []byte(text), name); !sameTopology(parsed, topo) {
		t.Errorf("%s: Write → Parse differs", name)
	}
}

// sameTopology is reflect.DeepEqual for topologies, without reflection (big ones are slow).
func sameTopology(a, b *Topology) bool {
	return a.GPUsPerServer == b.GPUsPerServer && a.GPUType == b.GPUType &&
		slices.Equal(a.Kinds, b.Kinds) && slices.Equal(a.NVSwitches, b.NVSwitches) &&
		slices.Equal(a.Switches, b.Switches) && slices.Equal(a.Links, b.Links)
}

// TestDualPlaneOddPSN: plane A gets ⌈PSN/2⌉ PSWs and all A lines come first.
func TestDualPlaneOddPSN(t *testing.T) {
	o := NewGeneratorOptions("AlibabaHPN", false, false, true)
	o.GPUs, o.PSWs = 16, 5
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	topo := g.Topology
	// 16 GPUs, 2 NVSwitches, 16 ASWs (ids 18..33: A 18..25, B 26..33), PSWs 34..38 (A 34..36, B 37..38).
	up := topo.Links[16*3:]
	if len(up) != 8*3+8*2 { // = PSN·ASN/2
		t.Fatalf("%d ASW–PSW links", len(up))
	}
	for k, l := range up {
		var a, p int
		if k < 24 {
			a, p = 18+k/3, 34+k%3
		} else {
			a, p = 26+(k-24)/2, 37+(k-24)%2
		}
		if int(l.Src) != a || int(l.Dst) != p {
			t.Fatalf("uplink %d = %d-%d, want %d-%d", k, l.Src, l.Dst, a, p)
		}
	}
	// Dual ToR: each GPU's NVLink line, then A, then B.
	for i := 0; i < 16; i++ {
		ls := topo.Links[3*i : 3*i+3]
		if int(ls[0].Dst) != 16+i/8 || int(ls[1].Dst) != 18+i%8 || int(ls[2].Dst) != 26+i%8 {
			t.Fatalf("GPU %d lines %+v", i, ls)
		}
	}
}
