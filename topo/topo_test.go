package topo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"simd/engine"
)

// simaiTopologyFiles lists testdata: SimAI's shipped topology files, the six its generator writes and a
// hand-made historical one.
func simaiTopologyFiles(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	if len(names) != 7 {
		t.Errorf("expected SimAI's 7 topology files in testdata, found %v", names)
	}
	return names
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, data []byte, name string) *Topology {
	t.Helper()
	topo, err := Parse(bytes.NewReader(data), name)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return topo
}

func writeString(t testing.TB, topo *Topology) string {
	t.Helper()
	var b bytes.Buffer
	if err := topo.Write(&b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String()
}

// firstDiff describes where two texts first differ, for readable failures.
func firstDiff(got, want string) string {
	gl, wl := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g, w)
		}
	}
	return "no difference"
}

// TestRoundTripSimAIFiles: every SimAI topology file survives Parse and Write byte for byte.
func TestRoundTripSimAIFiles(t *testing.T) {
	for _, name := range simaiTopologyFiles(t) {
		data := readFile(t, filepath.Join("testdata", name))
		topo := mustParse(t, data, name)
		if err := topo.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
		}
		if !topo.GPUsFirst() {
			t.Errorf("%s: GPUs are not nodes 0..%d", name, topo.NumGPUs()-1)
		}
		if got := writeString(t, topo); got != string(data) {
			t.Errorf("%s: Write differs from the file: %s", name, firstDiff(got, string(data)))
		}
	}
}

func TestParseSpectrumX8(t *testing.T) {
	topo := mustParse(t, readFile(t, "testdata/Spectrum-X_8g_8gps_400Gbps_H100"), "sx")
	if topo.NumNodes() != 18 || topo.NumGPUs() != 8 || topo.NumNVSwitches() != 1 || topo.NumSwitches() != 9 ||
		topo.NumLinks() != 24 || topo.NumServers() != 1 || topo.GPUsPerServer != 8 || topo.GPUType != "H100" {
		t.Fatalf("counts: nodes %d gpus %d nvs %d sw %d links %d servers %d gps %d type %q",
			topo.NumNodes(), topo.NumGPUs(), topo.NumNVSwitches(), topo.NumSwitches(), topo.NumLinks(),
			topo.NumServers(), topo.GPUsPerServer, topo.GPUType)
	}
	if !reflect.DeepEqual(topo.NVSwitches, []int32{8}) || !reflect.DeepEqual(topo.Switches, []int32{9, 10, 11, 12, 13, 14, 15, 16, 17}) {
		t.Errorf("lists: %v %v", topo.NVSwitches, topo.Switches)
	}
	for id := int32(0); id < 18; id++ {
		want := GPU
		switch {
		case id == 8:
			want = NVSwitch
		case id > 8:
			want = Switch
		}
		if topo.Kind(id) != want {
			t.Errorf("Kind(%d) = %v, want %v", id, topo.Kind(id), want)
		}
	}
	want0 := Link{Src: 0, Dst: 8, Rate: 2880e9, Delay: 25 * engine.Nanosecond, ErrorRate: 0,
		RateText: "2880Gbps", DelayText: "0.000025ms", ErrorText: "0"}
	if topo.Links[0] != want0 {
		t.Errorf("link 1 = %+v, want %+v", topo.Links[0], want0)
	}
	want23 := Link{Src: 16, Dst: 17, Rate: 400e9, Delay: 500 * engine.Nanosecond, ErrorRate: 0,
		RateText: "400Gbps", DelayText: "0.0005ms", ErrorText: "0"}
	if topo.Links[23] != want23 {
		t.Errorf("link 24 = %+v, want %+v", topo.Links[23], want23)
	}
}

// TestParseLayoutFree: line breaks carry no meaning, CRLF reads like LF, integers may carry a
// sign or leading zeros.
func TestParseLayoutFree(t *testing.T) {
	data := string(readFile(t, "testdata/Spectrum-X_8g_8gps_400Gbps_H100"))
	want := mustParse(t, []byte(data), "lf")
	variants := map[string]string{
		"crlf":        strings.ReplaceAll(data, "\n", "\r\n"),
		"one line":    strings.ReplaceAll(data, "\n", " "),
		"token lines": strings.Join(strings.Fields(data), "\n"),
		"tabs":        strings.ReplaceAll(data, " ", "\t\t"),
		"no final LF": strings.TrimSuffix(data, "\n"),
		"blank lines": "\n\n" + strings.ReplaceAll(data, "\n", "\n\n") + "\n\n",
		"signs":       strings.Replace(data, "18 8 1 9 24", "+18 08 1 9 0024", 1),
	}
	for name, v := range variants {
		got, err := Parse(strings.NewReader(v), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: parsed topology differs", name)
		}
		if w := writeString(t, got); w != data {
			t.Errorf("%s: Write: %s", name, firstDiff(w, data))
		}
	}
}

func TestNodeKindString(t *testing.T) {
	for k, want := range map[NodeKind]string{GPU: "gpu", NVSwitch: "nvswitch", Switch: "switch", 7: "NodeKind(7)"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), want)
		}
	}
}

func TestGPUsFirst(t *testing.T) {
	// Node 0 is the switch, nodes 1 and 2 GPUs: legal in the file format, unlike SimAI's layout.
	topo := mustParse(t, []byte("3 2 0 1 2 H100\n0 \n1 0 400Gbps 1us 0\n2 0 400Gbps 1us 0\n"), "x")
	if topo.GPUsFirst() {
		t.Error("GPUsFirst true for a switch at node 0")
	}
	if topo.NumGPUs() != 2 || topo.Kind(0) != Switch {
		t.Errorf("gpus %d kind(0) %v", topo.NumGPUs(), topo.Kind(0))
	}
}

// TestWriteFallbackTexts: links without texts are written from their values and read back.
func TestWriteFallbackTexts(t *testing.T) {
	topo := &Topology{
		GPUsPerServer: 2,
		GPUType:       "A100",
		Kinds:         []NodeKind{GPU, GPU, NVSwitch},
		NVSwitches:    []int32{2},
		Links: []Link{
			{Src: 0, Dst: 2, Rate: 2400e9, Delay: 25 * engine.Nanosecond, ErrorRate: 0.001},
			{Src: 1, Dst: 2, Rate: 1.5, Delay: 0, ErrorRate: 0},
			{Src: 0, Dst: 1, Rate: 3e25, Delay: 1, ErrorRate: 1},
		},
	}
	got := writeString(t, topo)
	want := "3 2 1 0 3 A100\n2 \n0 2 2400000000000bps 25000ps 0.001\n1 2 1.5bps 0ps 0\n0 1 3e+25bps 1ps 1\n"
	if got != want {
		t.Fatalf("Write:\n%s\nwant\n%s", got, want)
	}
	back := mustParse(t, []byte(got), "back")
	for i, l := range back.Links {
		o := topo.Links[i]
		if l.Src != o.Src || l.Dst != o.Dst || l.Rate != o.Rate || l.Delay != o.Delay || l.ErrorRate != o.ErrorRate {
			t.Errorf("link %d read back as %+v, want the values of %+v", i+1, l, o)
		}
	}
}

// TestValidate: Write refuses topologies it could not write readably.
func TestValidate(t *testing.T) {
	good := func() *Topology {
		return &Topology{
			GPUsPerServer: 1, GPUType: "H100",
			Kinds:      []NodeKind{GPU, NVSwitch, Switch},
			NVSwitches: []int32{1}, Switches: []int32{2},
			Links: []Link{{Src: 0, Dst: 1, Rate: 1e9, RateText: "1Gbps", DelayText: "1ns", ErrorText: "0"}},
		}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("good topology: %v", err)
	}
	cases := map[string]func(*Topology){
		"gps 0":            func(t *Topology) { t.GPUsPerServer = 0 },
		"empty gpu type":   func(t *Topology) { t.GPUType = "" },
		"spaced gpu type":  func(t *Topology) { t.GPUType = "H 100" },
		"bad kind":         func(t *Topology) { t.Kinds[0] = 5 },
		"unlisted switch":  func(t *Topology) { t.Switches = nil },
		"wrong kind":       func(t *Topology) { t.NVSwitches[0] = 2; t.Switches[0] = 1 },
		"listed twice":     func(t *Topology) { t.Kinds[0] = NVSwitch; t.NVSwitches = []int32{1, 1} },
		"id out of range":  func(t *Topology) { t.Switches[0] = 3 },
		"no gpus":          func(t *Topology) { t.Kinds[0] = Switch; t.Switches = []int32{2, 0} },
		"link range":       func(t *Topology) { t.Links[0].Dst = 3 },
		"self link":        func(t *Topology) { t.Links[0].Dst = 0 },
		"zero rate":        func(t *Topology) { t.Links[0].Rate = 0 },
		"negative delay":   func(t *Topology) { t.Links[0].Delay = -1 },
		"error rate":       func(t *Topology) { t.Links[0].ErrorRate = 2 },
		"spaced rate text": func(t *Topology) { t.Links[0].RateText = "1 Gbps" },
	}
	for name, spoil := range cases {
		topo := good()
		spoil(topo)
		if err := topo.Validate(); err == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
		if err := topo.Write(&bytes.Buffer{}); err == nil {
			t.Errorf("%s: Write accepted it", name)
		}
	}
}

func TestNumServers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"2 1 0 0 1 X\n\n0 1 1Gbps 0 0\n", 2},
		{"3 2 0 0 2 X\n\n0 1 1Gbps 0 0\n1 2 1Gbps 0 0\n", 2},
		{"2 9223372036854775807 0 0 1 X\n\n0 1 1Gbps 0 0\n", 1}, // no overflow
	} {
		if got := mustParse(t, []byte(c.in), "x").NumServers(); got != c.want {
			t.Errorf("%q: NumServers = %d, want %d", c.in, got, c.want)
		}
	}
	if (&Topology{}).NumServers() != 0 {
		t.Error("empty topology has servers")
	}
}

// TestParseOddTokens: only ASCII white space separates tokens (as C++'s operator>> in the C
// locale); anything else is part of a token and is written back unchanged.
func TestParseOddTokens(t *testing.T) {
	in := "3 1 0 1 2 H\u00a0100\xff\n2 \n0 2 \u00a0400Gbps 1ns 0\n1 2 400Gbps 1ns -0\n"
	topo := mustParse(t, []byte(in), "odd")
	if topo.GPUType != "H\u00a0100\xff" || topo.Links[0].RateText != "\u00a0400Gbps" || topo.Links[0].Rate != 400e9 {
		t.Errorf("tokens: %q %q", topo.GPUType, topo.Links[0].RateText)
	}
	if got := writeString(t, topo); got != in {
		t.Errorf("%s", firstDiff(got, in))
	}
}
