package topo

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// extCounts is the node and link count of Extensions' formulas, from the per-pod wiring's ASN.
func extCounts(w Wiring, g, gps, nsps, npa, psnPod, pods, cores int, mesh bool) (nodes, links int) {
	gpod := g / pods
	_, _, asnPod := shape(w, gpod, gps, nsps, npa, 0)
	s := g / gps
	nvs, intra := s*nsps, g*nsps
	if mesh {
		nvs, intra = 0, s*gps*(gps-1)/2
	}
	n := 1
	if w.DualToR() {
		n = 2
	}
	u := asnPod * psnPod
	if w.DualPlane() {
		u /= 2
	}
	return g + nvs + pods*(asnPod+psnPod) + cores, g*n + intra + pods*u + pods*cores
}

// linkPairs lists the links' ends.
func linkPairs(ls []Link) [][2]int32 {
	out := make([][2]int32, len(ls))
	for i, l := range ls {
		out[i] = [2]int32{l.Src, l.Dst}
	}
	return out
}

// checkMultiPod checks a multi-pod topology against the single-pod wiring of one pod: the
// GPU lines and the ASW–PSW lines are each pod's, renumbered (pod p's GPU j is p·G/P + j, its
// NVSwitch k is G + p·NVSpod + k, its switch k is G + NVS + p·(ASNpod+PSNpod) + k), and then
// PSW k of each pod has one line to each core of group k.
func checkMultiPod(t *testing.T, name string, o GeneratorOptions, g *Generated) {
	t.Helper()
	one := o
	one.GPUs, one.Pods, one.Cores, one.CoreRate = o.GPUs/g.Pods, 1, 0, ""
	single, err := one.Generate()
	if err != nil {
		t.Fatalf("%s: one pod: %v", name, err)
	}
	st := single.Topology
	gpod, nvsPod := st.NumGPUs(), st.NumNVSwitches()
	swPod := st.NumSwitches()
	G, NVS := g.Topology.NumGPUs(), g.Topology.NumNVSwitches()
	remap := func(p int, id int32) int32 {
		switch k := int(id); {
		case k < gpod:
			return int32(p*gpod + k)
		case k < gpod+nvsPod:
			return int32(G + p*nvsPod + k - gpod)
		default:
			return int32(G + NVS + p*swPod + k - gpod - nvsPod)
		}
	}
	perGPU := 0
	for _, l := range st.Links {
		if int(l.Src) < gpod {
			perGPU++
		}
	}
	var want [][2]int32
	for p := 0; p < g.Pods; p++ {
		for _, l := range st.Links[:perGPU] {
			want = append(want, [2]int32{remap(p, l.Src), remap(p, l.Dst)})
		}
	}
	for p := 0; p < g.Pods; p++ {
		for _, l := range st.Links[perGPU:] {
			want = append(want, [2]int32{remap(p, l.Src), remap(p, l.Dst)})
		}
	}
	psnPod := g.PSWs / g.Pods
	per := g.Cores / psnPod
	coreBase := G + NVS + g.Pods*swPod
	for p := 0; p < g.Pods; p++ {
		for k := 0; k < psnPod; k++ {
			for j := 0; j < per; j++ {
				want = append(want, [2]int32{int32(G + NVS + p*swPod + swPod - psnPod + k), int32(coreBase + k*per + j)})
			}
		}
	}
	got := linkPairs(g.Topology.Links)
	if len(got) != len(want) {
		t.Fatalf("%s: %d links, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: link %d is %v, want %v", name, i+1, got[i], want[i])
		}
	}
	if g.Topology.NumSwitches() != g.Pods*swPod+g.Cores || g.Topology.NumNodes() != coreBase+g.Cores {
		t.Errorf("%s: %d switches, %d nodes", name, g.Topology.NumSwitches(), g.Topology.NumNodes())
	}
	header := strings.Fields(strings.SplitN(writeString(t, g.Topology), "\n", 2)[0])
	if header[3] != fmt.Sprint(g.Pods*swPod+g.Cores) {
		t.Errorf("%s: header %v: switch_num does not count the cores", name, header)
	}
}

func TestMultiPodAllWirings(t *testing.T) {
	cases := []struct {
		topo       string
		ro, dt, dp bool
		gpus, gps  int
		nsps, psn  int
		npa        int
		pods       int
		cores      int
		rate       string
		os         float64
		mesh       bool
	}{
		{"Spectrum-X", false, false, false, 64, 8, 1, 4, 2, 2, 0, "", 0, false},
		{"Spectrum-X", false, false, false, 96, 8, 2, 3, 2, 3, 6, "800Gbps", 0, false},
		{"AlibabaHPN", false, false, false, 64, 8, 1, 4, 2, 4, 0, "", 0, false},
		{"AlibabaHPN", false, false, true, 128, 8, 1, 6, 2, 2, 0, "", 0, false},
		{"AlibabaHPN", false, false, true, 128, 8, 1, 5, 2, 2, 10, "", 0, false},
		{"AlibabaHPN", false, false, true, 64, 4, 4, 8, 3, 4, 0, "1.6Tbps", 2, true},
		{"DCN+", false, false, false, 96, 8, 1, 2, 8, 3, 0, "", 0, false},
		{"DCN+", false, true, false, 96, 4, 1, 4, 16, 2, 8, "", 2, false},
		{"", false, true, false, 48, 2, 0, 3, 5, 6, 0, "", 0, true},
		{"", true, false, false, 48, 2, 2, 4, 5, 2, 0, "", 4, false},
	}
	for _, c := range cases {
		o := NewGeneratorOptions(c.topo, c.ro, c.dt, c.dp)
		o.GPUs, o.GPUsPerServer, o.NVSwitchesPerServer, o.PSWs, o.NICsPerASW = c.gpus, c.gps, c.nsps, c.psn, c.npa
		o.Pods, o.Cores, o.CoreRate, o.Oversubscription, o.Mesh = c.pods, c.cores, c.rate, c.os, c.mesh
		name := fmt.Sprintf("%+v", c)
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r := c.os
		if r == 0 {
			r = 1
		}
		psnPod := int(float64(c.psn) / r)
		nodes, links := extCounts(g.Wiring, c.gpus, c.gps, c.nsps, c.npa, psnPod, c.pods, g.Cores, c.mesh)
		if g.Pods != c.pods || g.PSWs != c.pods*psnPod || g.Topology.NumNodes() != nodes || g.Topology.NumLinks() != links {
			t.Errorf("%s: pods %d PSWs %d nodes %d links %d; want %d %d %d %d", name, g.Pods, g.PSWs,
				g.Topology.NumNodes(), g.Topology.NumLinks(), c.pods, c.pods*psnPod, nodes, links)
		}
		if c.cores != 0 && g.Cores != c.cores {
			t.Errorf("%s: %d cores", name, g.Cores)
		}
		checkMultiPod(t, name, o, g)
		checkTopology(t, name, g.Topology)
		// The PSW–core lines carry -pcbw, or -apbw by default.
		want := c.rate
		if want == "" {
			want = o.ASWPSWRate
		}
		if l := g.Topology.Links[len(g.Topology.Links)-1]; l.RateText != want || l.DelayText != o.NICDelay {
			t.Errorf("%s: last link %+v", name, l)
		}
	}
}

// switchComponent is the set of switches reachable from id through switches only.
func switchComponent(t *Topology, id int32) map[int32]bool {
	adj := map[int32][]int32{}
	for _, l := range t.Links {
		if t.Kinds[l.Src] == Switch && t.Kinds[l.Dst] == Switch {
			adj[l.Src] = append(adj[l.Src], l.Dst)
			adj[l.Dst] = append(adj[l.Dst], l.Src)
		}
	}
	seen := map[int32]bool{id: true}
	for queue := []int32{id}; len(queue) > 0; queue = queue[1:] {
		for _, n := range adj[queue[0]] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return seen
}

// TestMultiPodPlanesApart: with dual plane the two planes share no switch up to the core, and
// each plane is one connected switch fabric across the pods.
func TestMultiPodPlanesApart(t *testing.T) {
	o := NewGeneratorOptions("AlibabaHPN", false, false, true)
	o.GPUs, o.PSWs, o.Pods = 4096, 8, 4
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	topo := g.Topology
	G, NVS := topo.NumGPUs(), topo.NumNVSwitches()
	asnPod := g.ASWs / g.Pods
	a := switchComponent(topo, int32(G+NVS))          // pod 0's first A-side ASW
	b := switchComponent(topo, int32(G+NVS+asnPod/2)) // pod 0's first B-side ASW
	for id := range a {
		if b[id] {
			t.Fatalf("switch %d is in both planes", id)
		}
	}
	if len(a)+len(b) != topo.NumSwitches() || len(a) != len(b) {
		t.Errorf("plane A has %d switches, plane B %d, of %d", len(a), len(b), topo.NumSwitches())
	}
	// Every pod's A-side ASWs are in plane A.
	for p := 0; p < g.Pods; p++ {
		if !a[int32(G+NVS+p*(asnPod+8))] || !b[int32(G+NVS+p*(asnPod+8)+asnPod-1)] {
			t.Errorf("pod %d is not joined to both planes", p)
		}
	}
	// Default cores: a PSW serves asnPod/2 = 8 ASWs, so 8 cores per group, 64 in all.
	if g.Cores != 64 {
		t.Errorf("%d cores", g.Cores)
	}
}

// TestMultiPodDefaultCores: by default a PSW's core uplinks carry what its ASWs can send it.
func TestMultiPodDefaultCores(t *testing.T) {
	cases := []struct {
		rate  string
		cores int
		want  int
	}{
		{"", 0, 4096}, {"800Gbps", 0, 2048}, {"1.6Tbps", 0, 1024}, {"300Gbps", 0, 64 * 86}, {"", 128, 128},
	}
	for _, c := range cases {
		o := NewGeneratorOptions("Spectrum-X", false, false, false)
		o.GPUs, o.Pods, o.CoreRate, o.Cores = 16384, AutoPods, c.rate, c.cores
		g, err := o.Generate()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if g.Pods != 4 || g.Cores != c.want || g.Segments != 32 || g.ASWs != 256 || g.PSWs != 256 {
			t.Errorf("%+v: %+v", c, g)
		}
		// Capacity of each PSW: down to its ASWs, up to the cores.
		down, up := map[int32]float64{}, map[int32]float64{}
		for _, l := range g.Topology.Links {
			if int(l.Dst) >= g.Topology.NumNodes()-g.Cores {
				up[l.Src] += l.Rate
			} else if g.Topology.Kinds[l.Src] == Switch {
				down[l.Dst] += l.Rate
			}
		}
		if len(down) != 256 || len(up) != 256 {
			t.Fatalf("%+v: %d PSWs with downlinks, %d with uplinks", c, len(down), len(up))
		}
		for id, d := range down {
			if c.cores == 0 && (up[id] < d || up[id] >= d+400e9) {
				t.Errorf("%+v: PSW %d has %v down and %v up", c, id, d, up[id])
			}
		}
	}
	console := func() []string {
		o := NewGeneratorOptions("Spectrum-X", false, false, false)
		o.GPUs, o.Pods = 8192, 2
		g, err := o.Generate()
		if err != nil {
			t.Fatal(err)
		}
		return g.Console()
	}()
	want := []string{"asw_switch_num: 128", "psw_switch_num: 128", "core_switch_num: 4096",
		"Creating Topology of totally 16 segment(s), totally 2 pod(s).", "Spectrum-X_8192g_8gps_400Gbps_H100_2pods"}
	if fmt.Sprint(console) != fmt.Sprint(want) {
		t.Errorf("console %q", console)
	}
}

func TestAutoPods(t *testing.T) {
	cases := []struct {
		topo       string
		dt, dp     bool
		gpus, pods int
	}{
		{"Spectrum-X", false, false, 8, 1},
		{"Spectrum-X", false, false, 4096, 1},
		{"Spectrum-X", false, false, 4104, 3}, // 513 servers = 3 × 171: 3 segments per pod
		{"Spectrum-X", false, false, 12288, 3},
		{"Spectrum-X", false, false, 16384, 4},
		{"Spectrum-X", false, false, 131072, 32},
		{"AlibabaHPN", false, false, 131072, 8}, // 16384 servers: 4 pods would need 32 > 30 segments each
		{"AlibabaHPN", false, true, 131072, 16},
		{"DCN+", false, false, 1024, 2},
		{"DCN+", true, false, 2048, 4},
	}
	for _, c := range cases {
		o := NewGeneratorOptions(c.topo, false, c.dt, c.dp)
		o.GPUs, o.Pods = c.gpus, AutoPods
		g, err := o.Generate()
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if g.Pods != c.pods {
			t.Errorf("%+v: %d pods", c, g.Pods)
		}
		if g.Pods > 1 && g.Cores == 0 || g.Pods == 1 && g.Cores != 0 {
			t.Errorf("%+v: %d cores", c, g.Cores)
		}
	}
}

// aswRatios is, for each ASW (a switch with links to GPUs), its downlink capacity (to GPUs) over
// its uplink capacity (to other switches).
func aswRatios(t *Topology) map[int32]float64 {
	down, up := map[int32]float64{}, map[int32]float64{}
	for _, l := range t.Links {
		switch {
		case t.Kinds[l.Src] == GPU && t.Kinds[l.Dst] == Switch:
			down[l.Dst] += l.Rate
		case t.Kinds[l.Src] == Switch && t.Kinds[l.Dst] == Switch:
			up[l.Src] += l.Rate
		}
	}
	r := map[int32]float64{}
	for id, d := range down {
		r[id] = d / up[id]
	}
	return r
}

func TestOversubscription(t *testing.T) {
	// Spectrum-X (a full segment: 64 NICs of 400Gbps, 64 PSWs of 400Gbps): the ratio is R.
	for _, r := range []float64{0, 1, 2, 4, 1.6, 64, 0.5} {
		o := NewGeneratorOptions("Spectrum-X", false, false, false)
		o.GPUs, o.Oversubscription = 4096, r
		g, err := o.Generate()
		if err != nil {
			t.Fatalf("-os %v: %v", r, err)
		}
		want := r
		if r == 0 {
			want = 1
		}
		if g.PSWs != int(64/want) {
			t.Errorf("-os %v: %d PSWs", r, g.PSWs)
		}
		ratios := aswRatios(g.Topology)
		if len(ratios) != 64 {
			t.Errorf("-os %v: %d ASWs", r, len(ratios))
		}
		for id, got := range ratios {
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("-os %v: ASW %d has ratio %v", r, id, got)
			}
		}
		checkTopology(t, fmt.Sprint("-os ", r), g.Topology)
	}
	// Other wirings: each ASW's ratio is R times the generator's.
	for _, c := range []struct {
		topo       string
		ro, dt, dp bool
		gpus, psn  int
		r          float64
		pods       int
	}{
		{"AlibabaHPN", false, false, false, 2048, 120, 3, 1},
		{"AlibabaHPN", false, false, true, 2048, 120, 4, 1},
		{"AlibabaHPN", false, false, true, 2048, 6, 1.5, 1}, // planes of 3 PSWs → 2
		{"DCN+", false, false, false, 512, 8, 8, 1},
		{"DCN+", false, true, false, 512, 8, 2, 1},
		{"", false, false, false, 96, 6, 2, 1},
		{"Spectrum-X", false, false, false, 16384, 64, 2, 4},
	} {
		o := NewGeneratorOptions(c.topo, c.ro, c.dt, c.dp)
		o.GPUs, o.PSWs, o.Pods = c.gpus, c.psn, c.pods
		base, err := o.Generate()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		o.Oversubscription = c.r
		g, err := o.Generate()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		// Without a core layer the ASW ids do not move; with one, ASWs of later pods shift
		// by the PSWs removed: compare in order.
		b, s := aswRatios(base.Topology), aswRatios(g.Topology)
		if len(b) != len(s) || len(b) != g.ASWs {
			t.Fatalf("%+v: %d and %d ASWs", c, len(b), len(s))
		}
		bv, sv := sortedValues(b), sortedValues(s)
		for i := range bv {
			if math.Abs(sv[i]/bv[i]-c.r) > 1e-12 {
				t.Errorf("%+v: ASW ratio %v against %v without -os", c, sv[i], bv[i])
			}
		}
		checkTopology(t, fmt.Sprintf("%+v", c), g.Topology)
	}
}

// sortedValues lists m's values by key.
func sortedValues(m map[int32]float64) []float64 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	out := make([]float64, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// TestAnyLinkRate: 800Gbps and 1.6Tbps links everywhere, texts verbatim, values right.
func TestAnyLinkRate(t *testing.T) {
	for _, c := range []struct {
		nv, nic, up, core string
		v                 float64
	}{
		{"7200Gbps", "800Gbps", "800Gbps", "1.6Tbps", 800e9},
		{"14.4Tbps", "1.6Tbps", "1.6Tbps", "3.2Tbps", 1.6e12},
	} {
		o := NewGeneratorOptions("AlibabaHPN", false, false, true)
		o.GPUs, o.PSWs, o.Pods = 2048, 16, 2
		o.NVLinkRate, o.NICRate, o.ASWPSWRate, o.CoreRate = c.nv, c.nic, c.up, c.core
		g, err := o.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g.FileName, "_"+c.nic+"_") {
			t.Errorf("file name %s", g.FileName)
		}
		texts := map[string]int{}
		for _, l := range g.Topology.Links {
			texts[l.RateText]++
		}
		if len(texts) != 4 && !(c.nic == c.up && len(texts) == 3) {
			t.Errorf("rates %v", texts)
		}
		sb, err := g.Topology.ServerBandwidth()
		if err != nil || sb.NICGBps != c.v/8e9 || sb.NICsPerServer != 16 {
			t.Errorf("%+v: %v", sb, err)
		}
		// Default cores with a core rate twice the ASW–PSW rate: half as many.
		if g.Cores != 16*16/2/2 {
			t.Errorf("%d cores", g.Cores)
		}
		checkTopology(t, c.nic, g.Topology)
	}
}

// TestNVSwitchesPerServer: -nsps 2 and 4 in every wiring.
func TestNVSwitchesPerServer(t *testing.T) {
	for w := WiringRailSingleToR; w <= WiringNonRailDualToR; w++ {
		for _, nsps := range []int{2, 4} {
			o := NewGeneratorOptions("", w.RailOptimized(), w.DualToR(), w.DualPlane())
			o.GPUs, o.NVSwitchesPerServer, o.PSWs = 64, nsps, 4
			g, err := o.Generate()
			if err != nil {
				t.Fatal(err)
			}
			topo := g.Topology
			nodes, links, _ := shape(w, 64, 8, nsps, 64, 4)
			if topo.NumNVSwitches() != 8*nsps || topo.NumNodes() != nodes || topo.NumLinks() != links {
				t.Errorf("%v nsps %d: %d NVSwitches, %d nodes, %d links", w, nsps, topo.NumNVSwitches(), topo.NumNodes(), topo.NumLinks())
			}
			per := 1 + nsps
			if w.DualToR() {
				per++
			}
			for i := 0; i < 64; i++ {
				for j := 0; j < nsps; j++ {
					l := topo.Links[i*per+j]
					if int(l.Src) != i || int(l.Dst) != 64+i/8*nsps+j {
						t.Fatalf("%v nsps %d: GPU %d line %d is %d-%d", w, nsps, i, j, l.Src, l.Dst)
					}
				}
			}
			sb, err := topo.ServerBandwidth()
			if err != nil || sb.NVLinkGBps != float64(nsps)*360 {
				t.Errorf("%v nsps %d: %+v %v", w, nsps, sb, err)
			}
			checkTopology(t, fmt.Sprint(w, nsps), topo)
		}
	}
}

// TestMesh: servers of GPUs joined pairwise, no NVSwitch.
func TestMesh(t *testing.T) {
	for w := WiringRailSingleToR; w <= WiringNonRailDualToR; w++ {
		for _, gps := range []int{1, 2, 8} {
			o := NewGeneratorOptions("", w.RailOptimized(), w.DualToR(), w.DualPlane())
			o.GPUs, o.GPUsPerServer, o.PSWs, o.NVSwitchesPerServer = 16*gps, gps, 4, 3 // -nsps is ignored
			o.NVLinkRate, o.GPUType, o.Mesh = "1024Gbps", "MI300X", true
			g, err := o.Generate()
			if err != nil {
				t.Fatal(err)
			}
			topo := g.Topology
			nodes, _ := extCounts(w, o.GPUs, gps, 3, 64, 4, 1, 0, true)
			_, links := extCounts(w, o.GPUs, gps, 3, 64, 4, 1, 0, true)
			if topo.NumNVSwitches() != 0 || topo.NumNodes() != nodes || topo.NumLinks() != links {
				t.Errorf("%v gps %d: %d NVSwitches, %d nodes, %d links; want 0 %d %d", w, gps, topo.NumNVSwitches(), topo.NumNodes(), topo.NumLinks(), nodes, links)
			}
			header := strings.Fields(strings.SplitN(writeString(t, topo), "\n", 2)[0])
			if header[2] != "0" {
				t.Errorf("header %v", header)
			}
			// Each pair of a server's GPUs once, lower id first, each GPU's before its NIC lines.
			pairs := map[[2]int32]int{}
			last := int32(-1)
			for _, l := range topo.Links {
				if topo.Kinds[l.Dst] != GPU {
					continue
				}
				if l.Src >= l.Dst || l.Src/int32(gps) != l.Dst/int32(gps) || l.RateText != "1024Gbps" || l.Src < last {
					t.Fatalf("%v: mesh link %+v", w, l)
				}
				last = l.Src
				pairs[[2]int32{l.Src, l.Dst}]++
			}
			if len(pairs) != 16*gps*(gps-1)/2 {
				t.Errorf("%v gps %d: %d pairs", w, gps, len(pairs))
			}
			sb, err := topo.ServerBandwidth()
			if err != nil || sb.NVLinkGBps != float64(gps-1)*128 || sb.NICGBps != 50 || sb.GPUType != "MI300X" {
				t.Errorf("%v gps %d: %+v %v", w, gps, sb, err)
			}
			checkTopology(t, fmt.Sprint(w, gps), topo)
		}
	}
	// Exact layout of a small meshed server: 4 GPUs, one rail-optimised segment, 1 PSW.
	o := NewGeneratorOptions("", true, false, false)
	o.GPUs, o.GPUsPerServer, o.PSWs, o.Mesh, o.NVLinkRate, o.NICRate = 4, 4, 1, true, "1024Gbps", "400Gbps"
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	want := "9 4 0 5 14 H100\n4 5 6 7 8 \n" +
		"0 1 1024Gbps 0.000025ms 0\n0 2 1024Gbps 0.000025ms 0\n0 3 1024Gbps 0.000025ms 0\n0 4 400Gbps 0.0005ms 0\n" +
		"1 2 1024Gbps 0.000025ms 0\n1 3 1024Gbps 0.000025ms 0\n1 5 400Gbps 0.0005ms 0\n" +
		"2 3 1024Gbps 0.000025ms 0\n2 6 400Gbps 0.0005ms 0\n" +
		"3 7 400Gbps 0.0005ms 0\n" +
		"4 8 400Gbps 0.0005ms 0\n5 8 400Gbps 0.0005ms 0\n6 8 400Gbps 0.0005ms 0\n7 8 400Gbps 0.0005ms 0\n"
	if got := writeString(t, g.Topology); got != want {
		t.Errorf("%s", firstDiff(got, want))
	}
	if g.FileName != "Rail_Opti_SingleToR_4g_4gps_400Gbps_H100_mesh" {
		t.Errorf("file name %s", g.FileName)
	}
}

// TestExtensionsOnWiringTypes: the per-wiring types take the extensions too, and the zero
// value changes nothing.
func TestExtensionsOnWiringTypes(t *testing.T) {
	p := DCNPlusDefaults(1024, true)
	p.Pods = 2
	topo, err := NonRailOptimizedDualToR(p).Build()
	if err != nil {
		t.Fatal(err)
	}
	o := NewGeneratorOptions("DCN+", false, true, false)
	o.GPUs, o.Pods = 1024, 2
	g, err := o.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if writeString(t, topo) != writeString(t, g.Topology) {
		t.Error("NonRailOptimizedDualToR with 2 pods differs from the generator options")
	}
	p = SpectrumXDefaults(8192)
	p.Pods = 2
	if _, err := p.Build(); err != nil {
		t.Error(err)
	}
	p.Pods = 1
	if _, err := p.Build(); err == nil || !strings.Contains(err.Error(), "switch the capacity check off") {
		t.Errorf("error %v", err)
	}
}

// Building the multi-pod Spectrum-X fabrics:
//
//	go test -run '^$' -bench SpectrumXMultiPod -benchmem ./topo
func BenchmarkSpectrumXMultiPod16384(b *testing.B)  { benchMultiPod(b, 16384) }
func BenchmarkSpectrumXMultiPod131072(b *testing.B) { benchMultiPod(b, 131072) }

func benchMultiPod(b *testing.B, gpus int) {
	o := NewGeneratorOptions("Spectrum-X", false, false, false)
	o.GPUs, o.Pods = gpus, AutoPods
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Generate(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseExtensionValues checks the readers of -pods and -os.
func TestParseExtensionValues(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int
		wantErr bool
	}{{"auto", AutoPods, false}, {"4", 4, false}, {" 2 ", 2, false}, {"0", 0, true}, {"x", 0, true}} {
		got, err := ParsePods(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParsePods(%q) = %d, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in      string
		want    float64
		wantErr bool
	}{{"1", 1, false}, {"1.5", 1.5, false}, {"0", 0, true}, {"-2", 0, true}, {"NaN", 0, true}, {"1e10", 0, true}} {
		got, err := ParseOversubscription(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseOversubscription(%q) = %g, %v", tc.in, got, err)
		}
	}
}
