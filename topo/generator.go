package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// GeneratorOptions are the command line of SimAI's gen_Topo_Template.py (at SimAI cef83f9),
// one field per flag, plus simd's Extensions. NewGeneratorOptions fills in the defaults the
// generator uses for a template; Generate then builds what the generator would write, under the
// name it would use, or the error it would raise (before anything is written).
//
// The template match is case-sensitive: Topology "Spectrum-X" forces the rail-optimised
// single-ToR wiring, "AlibabaHPN" the rail-optimised dual-ToR one (dual plane with DualPlane),
// "DCN+" the non-rail one (dual ToR with DualToR); with any other value, "" included, the
// structure flags choose, and without RailOptimized the wiring is non-rail, whatever the
// generator's unused default dictionary says. Rates, delays, the error rate and the GPU type are
// copied into the file verbatim.
type GeneratorOptions struct {
	Topology      string // -topo, --topology
	RailOptimized bool   // --ro
	DualToR       bool   // --dt
	DualPlane     bool   // --dp

	GPUs                int    // -g, --gpu
	ErrorRate           string // -er, --error_rate
	GPUsPerServer       int    // -gps, --gpu_per_server
	GPUType             string // -gt, --gpu_type
	NVSwitchesPerServer int    // -nsps, --nv_switch_per_server
	NVLinkRate          string // -nvbw, --nvlink_bw: GPU–NVSwitch rate (with Mesh: each GPU–GPU link's)
	NVLinkDelay         string // -nl, --nv_latency
	NICDelay            string // -l, --latency: delay of the NIC, ASW–PSW (and PSW–core) lines
	NICRate             string // -bw, --bandwidth: GPU–ASW rate
	ASWs                int    // -asn, --asw_switch_num: only compared with the ASW count the wiring needs; 0: not given
	NICsPerASW          int    // -npa, --nics_per_aswitch
	PSWs                int    // -psn, --psw_switch_num
	ASWPSWRate          string // -apbw, --ap_bandwidth
	ASWsPerPSW          int    // -app, --asw_per_psw: the pod-capacity check

	Extensions // simd's additions; the zero value keeps the generator's output
}

// The generator's templates.
const (
	TemplateSpectrumX  = "Spectrum-X"
	TemplateAlibabaHPN = "AlibabaHPN"
	TemplateDCNPlus    = "DCN+"
)

// NewGeneratorOptions returns the options the generator starts from for a -topo value and the
// three structure flags: its base defaults (-g 32, -er 0, -gps 8, -gt H100, -nsps 1, -nvbw
// 2880Gbps, -nl 0.000025ms, -l 0.0005ms, -bw 400Gbps, -npa 64, -psn 64, -apbw 400Gbps, -app 64)
// with the template's overrides:
//
//	Spectrum-X   -g 4096
//	AlibabaHPN   -g 15360 -bw 200Gbps -npa 128 -psn 120 -app 240 (-app 120 with --dp)
//	DCN+         -g 512 -psn 8 -app 8 (with --dt also -bw 200Gbps -npa 128)
//
// The ASW count is left out (0): it follows from -g, -gps, -npa and the wiring. SimAI's
// generator defaults -asn to 8 (240 for AlibabaHPN) and warns whenever that number differs from
// the count it computes, which it does on its own defaults (32 GPUs need 1 ASW, Spectrum-X's
// 4096 need 64); simd compares only an -asn the user gave.
//
// The caller then sets the fields of the flags given on the command line.
func NewGeneratorOptions(topology string, railOptimized, dualToR, dualPlane bool) GeneratorOptions {
	o := GeneratorOptions{
		Topology: topology, RailOptimized: railOptimized, DualToR: dualToR, DualPlane: dualPlane,
		GPUs: 32, ErrorRate: "0", GPUsPerServer: 8, GPUType: "H100", NVSwitchesPerServer: 1,
		NVLinkRate: "2880Gbps", NVLinkDelay: "0.000025ms", NICDelay: "0.0005ms", NICRate: "400Gbps",
		NICsPerASW: 64, PSWs: 64, ASWPSWRate: "400Gbps", ASWsPerPSW: 64,
	}
	switch topology {
	case TemplateSpectrumX:
		o.GPUs = 4096
	case TemplateAlibabaHPN:
		o.GPUs, o.NICRate, o.NICsPerASW, o.PSWs, o.ASWsPerPSW = 15360, "200Gbps", 128, 120, 240
		if dualPlane {
			o.ASWsPerPSW = 120
		}
	case TemplateDCNPlus:
		o.GPUs, o.ASWsPerPSW, o.PSWs = 512, 8, 8
		if dualToR {
			o.NICRate, o.NICsPerASW = "200Gbps", 128
		}
	}
	return o
}

// Template reports whether Topology names one of the generator's templates (case-sensitive),
// which decides the file name.
func (o GeneratorOptions) Template() bool {
	return o.Topology == TemplateSpectrumX || o.Topology == TemplateAlibabaHPN || o.Topology == TemplateDCNPlus
}

// Wiring resolves the template and the structure flags into the wiring the generator picks,
// with the generator's two refusals of dual plane.
func (o GeneratorOptions) Wiring() (Wiring, error) {
	ro, dt, dp := o.RailOptimized, o.DualToR, o.DualPlane
	switch o.Topology {
	case TemplateSpectrumX:
		ro, dt, dp = true, false, false
	case TemplateAlibabaHPN:
		ro, dt = true, true
	case TemplateDCNPlus:
		ro, dp = false, false
	}
	switch {
	case !ro && dp:
		return 0, fmt.Errorf("topo: --dp: a fabric that is not rail-optimised has no dual plane (dual plane needs --ro --dt, or -topo AlibabaHPN --dp)")
	case !ro && dt:
		return WiringNonRailDualToR, nil
	case !ro:
		return WiringNonRailSingleToR, nil
	case dt && dp:
		return WiringRailDualToRDualPlane, nil
	case dt:
		return WiringRailDualToRSinglePlane, nil
	case dp:
		return 0, fmt.Errorf("topo: --dp: a rail-optimised single-ToR fabric has no dual plane (dual plane needs --dt as well)")
	}
	return WiringRailSingleToR, nil
}

// Generated is what the generator produces for a command line.
type Generated struct {
	Topology *Topology
	Wiring   Wiring
	FileName string // SimAI's name (see FileName); simd's extensions add _<P>pods, _os<R>, _mesh
	Pods     int
	Segments int // in all pods
	ASWs     int // in all pods
	PSWs     int // in all pods
	Cores    int
	Warning  string // why a given -asn was not used (ASWWarning); "" when -asn agreed or was not given
}

// Generate builds the topology the generator would write for o, with the capacity check on.
// Errors come in the generator's order (the two dual-plane refusals, then the pod capacity) and
// include every input it would choke on, such as a GPU count that is not a multiple of -gps.
func (o GeneratorOptions) Generate() (*Generated, error) {
	w, err := o.Wiring()
	if err != nil {
		return nil, err
	}
	p := RailOptimizedSingleToR{
		GPUs: o.GPUs, GPUsPerServer: o.GPUsPerServer, NVSwitchesPerServer: o.NVSwitchesPerServer,
		GPUType: o.GPUType, NVLinkRate: o.NVLinkRate, NVLinkDelay: o.NVLinkDelay,
		NICRate: o.NICRate, NICDelay: o.NICDelay, NICsPerASW: o.NICsPerASW, PSWs: o.PSWs,
		ASWPSWRate: o.ASWPSWRate, ASWsPerPSW: o.ASWsPerPSW, ErrorRate: o.ErrorRate,
		CheckCapacity: true, Extensions: o.Extensions,
	}.params()
	p.hint = "more GPUs need more pods: -pods N or -pods auto"
	t, f, err := buildWiring(w, p)
	if err != nil {
		return nil, err
	}
	g := &Generated{
		Topology: t,
		Wiring:   w,
		FileName: w.FileName(o.Template(), o.GPUs, o.GPUsPerServer, o.NICRate, o.GPUType),
		Pods:     f.pods,
		Segments: f.pods * f.segsPod,
		ASWs:     f.pods * f.asnPod,
		PSWs:     f.pods * f.psnPod(),
		Cores:    f.cores(),
	}
	if f.pods > 1 {
		g.FileName += "_" + strconv.Itoa(f.pods) + "pods"
	}
	if r := o.Oversubscription; r != 0 && r != 1 {
		g.FileName += "_os" + strconv.FormatFloat(r, 'g', -1, 64)
	}
	if o.Mesh {
		g.FileName += "_mesh"
	}
	if o.ASWs != 0 && o.ASWs != g.ASWs {
		g.Warning = f.aswWarning(o.ASWs)
	}
	return g, nil
}

// aswWarning says, on one line, why the ASW count given (-asn asn) is not the one the file
// has: how the GPUs fall into segments and how many ASWs a segment of this wiring has. SimAI's
// generator says "Error relations between total GPU Nums and total aws_switch_num" here.
func (f *fabric) aswWarning(asn int) string {
	seg := fmt.Sprintf("up to -npa %d GPUs (not rail-optimised)", f.npa)
	perSeg := "1 ASW"
	if f.w.RailOptimized() {
		seg = fmt.Sprintf("up to -npa %d × -gps %d = %d GPUs (rail-optimised)", f.npa, f.gps, f.npa*f.gps)
		perSeg = fmt.Sprintf("%d ASW(s), one per rail", f.gps)
	}
	if f.w.DualToR() {
		perSeg = fmt.Sprintf("%d ASWs (dual ToR: %s on each side)", f.asnPod/f.segsPod, strings.TrimSuffix(perSeg, ", one per rail"))
	}
	pods := ""
	if f.pods > 1 {
		pods = fmt.Sprintf(" in each of %d pods", f.pods)
	}
	total := f.pods * f.asnPod
	return fmt.Sprintf("-asn %d does not match the fabric: its %d GPUs fill %d segment(s)%s of %s, each with %s, "+
		"so the file has %d ASW(s); leave -asn out, or give -asn %d", asn, f.gpus, f.segsPod, pods, seg, perSeg, total, total)
}

// Console is what the generator prints on stdout: the ASW and PSW counts, the segments and pods,
// and the file name. A core layer adds "core_switch_num: C" after the PSW count.
func (g *Generated) Console() []string {
	lines := []string{
		"asw_switch_num: " + strconv.Itoa(g.ASWs),
		"psw_switch_num: " + strconv.Itoa(g.PSWs),
	}
	if g.Cores > 0 {
		lines = append(lines, "core_switch_num: "+strconv.Itoa(g.Cores))
	}
	return append(lines,
		fmt.Sprintf("Creating Topology of totally %d segment(s), totally %d pod(s).", g.Segments, g.Pods),
		g.FileName)
}
