package topo

// The other four wirings of SimAI's generator. Each is a defined type over
// RailOptimizedSingleToR's fields, which keep their meaning (the generator flag each stands
// for); only the wiring differs, as Wiring describes. RailOptimizedSingleToR(p) converts any of
// them back, and SpectrumXDefaults, AlibabaHPNDefaults and DCNPlusDefaults fill them in.

// RailOptimizedDualToRSinglePlane is gen_Topo_Template.py's Rail_Opti_DualToR_SinglePlane (the
// AlibabaHPN template, or --ro --dt): each GPU has two NICs, to the ASW of its rail on side A and
// on side B (2·gps ASWs per segment of npa·gps GPUs), and every ASW connects to every PSW.
// CheckCapacity refuses more segments than ⌊app/gps⌋.
type RailOptimizedDualToRSinglePlane RailOptimizedSingleToR

// RailOptimizedDualToRDualPlane is gen_Topo_Template.py's Rail_Opti_DualToR_DualPlane
// (AlibabaHPN --dp, or --ro --dt --dp): wired like RailOptimizedDualToRSinglePlane, but the
// PSWs form two planes, A (the first ⌈PSN/2⌉) and B (the rest); side-A ASWs connect to every
// plane-A PSW and side-B ASWs to every plane-B PSW. CheckCapacity refuses more segments than
// ⌊app/gps⌋.
type RailOptimizedDualToRDualPlane RailOptimizedSingleToR

// NonRailOptimizedSingleToR is gen_Topo_Template.py's No_Rail_Opti_SingleToR (the DCN+
// template, or no --ro): the NICs of npa consecutive GPUs share one ASW (a segment), and every
// ASW connects to every PSW. CheckCapacity refuses more segments than app.
type NonRailOptimizedSingleToR RailOptimizedSingleToR

// NonRailOptimizedDualToR is gen_Topo_Template.py's No_Rail_Opti_DualToR (DCN+ --dt, or --dt
// without --ro): each segment of npa consecutive GPUs has an A-side and a B-side ASW, each GPU
// a NIC line to both, and every ASW connects to every PSW. CheckCapacity refuses more segments
// than ⌊app/2⌋.
type NonRailOptimizedDualToR RailOptimizedSingleToR

var (
	_ Generator = RailOptimizedDualToRSinglePlane{}
	_ Generator = RailOptimizedDualToRDualPlane{}
	_ Generator = NonRailOptimizedSingleToR{}
	_ Generator = NonRailOptimizedDualToR{}
)

// Build wires the topology; see Wiring for the numbering, the link order and the counts.
func (p RailOptimizedDualToRSinglePlane) Build() (*Topology, error) {
	t, _, err := buildWiring(WiringRailDualToRSinglePlane, RailOptimizedSingleToR(p).params())
	return t, err
}

// Build wires the topology; see Wiring for the numbering, the link order and the counts.
func (p RailOptimizedDualToRDualPlane) Build() (*Topology, error) {
	t, _, err := buildWiring(WiringRailDualToRDualPlane, RailOptimizedSingleToR(p).params())
	return t, err
}

// Build wires the topology; see Wiring for the numbering, the link order and the counts.
func (p NonRailOptimizedSingleToR) Build() (*Topology, error) {
	t, _, err := buildWiring(WiringNonRailSingleToR, RailOptimizedSingleToR(p).params())
	return t, err
}

// Build wires the topology; see Wiring for the numbering, the link order and the counts.
func (p NonRailOptimizedDualToR) Build() (*Topology, error) {
	t, _, err := buildWiring(WiringNonRailDualToR, RailOptimizedSingleToR(p).params())
	return t, err
}

// AlibabaHPNDefaults is the generator's AlibabaHPN template with -g gpus: SpectrumXDefaults'
// values but 200Gbps NICs, 128 NICs per ASW, 120 PSWs and -app 240 (120 with dual plane).
func AlibabaHPNDefaults(gpus int, dualPlane bool) RailOptimizedSingleToR {
	p := SpectrumXDefaults(gpus)
	p.NICRate, p.NICsPerASW, p.PSWs, p.ASWsPerPSW = "200Gbps", 128, 120, 240
	if dualPlane {
		p.ASWsPerPSW = 120
	}
	return p
}

// DCNPlusDefaults is the generator's DCN+ template with -g gpus: SpectrumXDefaults' values but
// 8 PSWs and -app 8, and with dual ToR 200Gbps NICs and 128 NICs per ASW.
func DCNPlusDefaults(gpus int, dualToR bool) RailOptimizedSingleToR {
	p := SpectrumXDefaults(gpus)
	p.PSWs, p.ASWsPerPSW = 8, 8
	if dualToR {
		p.NICRate, p.NICsPerASW = "200Gbps", 128
	}
	return p
}
