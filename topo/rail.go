package topo

// RailOptimizedSingleToR is SimAI's rail-optimised single-ToR wiring (gen_Topo_Template.py's
// Rail_Opti_SingleToR; the Spectrum-X template, or --ro): each server's GPUs hang off its
// NVSwitches, GPU i's NIC goes to the ASW of its rail (i mod gps) in its segment, and every ASW
// connects to every PSW. Field comments give the generator flag each field stands for. Rates,
// delays and the error rate are copied into the links verbatim.
type RailOptimizedSingleToR struct {
	GPUs, GPUsPerServer, NVSwitchesPerServer   int    // -g, -gps, -nsps
	GPUType                                    string // -gt
	NVLinkRate, NVLinkDelay, NICRate, NICDelay string // -nvbw, -nl, -bw, -l
	NICsPerASW, PSWs                           int    // -npa, -psn
	ASWPSWRate                                 string // -apbw (ASW–PSW links also use -l)
	ASWsPerPSW                                 int    // -app (capacity check)
	ErrorRate                                  string // -er
	CheckCapacity                              bool   // refuse more segments than ⌊app/gps⌋ (per pod), as the generator does
	Extensions                                        // simd's additions; the zero value adds nothing
}

var _ Generator = RailOptimizedSingleToR{}

// SpectrumXDefaults is the generator's Spectrum-X template with -g gpus: 8 H100 GPUs and one
// NVSwitch per server on 2880Gbps NVLink (25 ns), 400Gbps NICs and ASW–PSW links (500 ns), 64
// NICs per ASW, 64 PSWs, -app 64, error rate 0, capacity check on.
func SpectrumXDefaults(gpus int) RailOptimizedSingleToR {
	return RailOptimizedSingleToR{
		GPUs:                gpus,
		GPUsPerServer:       8,
		NVSwitchesPerServer: 1,
		GPUType:             "H100",
		NVLinkRate:          "2880Gbps",
		NVLinkDelay:         "0.000025ms",
		NICRate:             "400Gbps",
		NICDelay:            "0.0005ms",
		NICsPerASW:          64,
		PSWs:                64,
		ASWPSWRate:          "400Gbps",
		ASWsPerPSW:          64,
		ErrorRate:           "0",
		CheckCapacity:       true,
	}
}

// DefaultFabric is the topology simd uses when the user gives none: the Spectrum-X template
// with gpus GPUs, gpusPerServer of them per server, and as many segments as that takes (the
// pod-capacity check is off).
func DefaultFabric(gpus, gpusPerServer int) (*Topology, error) {
	p := SpectrumXDefaults(gpus)
	p.GPUsPerServer = gpusPerServer
	p.CheckCapacity = false
	return p.Build()
}

func (p RailOptimizedSingleToR) params() fabricParams {
	return fabricParams{
		gpus: p.GPUs, gps: p.GPUsPerServer, nsps: p.NVSwitchesPerServer,
		gpuType: p.GPUType,
		nvbw:    p.NVLinkRate, nl: p.NVLinkDelay,
		bw: p.NICRate, l: p.NICDelay,
		npa: p.NICsPerASW, psn: p.PSWs,
		apbw:          p.ASWPSWRate,
		app:           p.ASWsPerPSW,
		er:            p.ErrorRate,
		checkCapacity: p.CheckCapacity,
		ext:           p.Extensions,
		hint:          "switch the capacity check off to build it anyway",
	}
}

// Build wires the topology. Node ids: GPUs 0..G-1, NVSwitches (server by server), gps ASWs
// per segment, then the PSWs. Links: for each GPU its NVLink lines, then its NIC line to
// ASW[seg·gps + i mod gps] with seg = ⌊i/(gps·npa)⌋; then every ASW to every PSW. See Wiring for
// the counts and Extensions for what the extensions change.
func (p RailOptimizedSingleToR) Build() (*Topology, error) {
	t, _, err := buildWiring(WiringRailSingleToR, p.params())
	return t, err
}
