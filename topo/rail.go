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
	CheckCapacity                              bool   // refuse more segments than ⌊app/gps⌋, as the generator does
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
	}
}

// Build wires the topology. Node ids: GPUs 0..G-1, NVSwitches (server by server), gps ASWs
// per segment, then the PSWs. Links: for each GPU its NVLink lines, then its NIC line to
// ASW[seg·gps + i mod gps] with seg = ⌊i/(gps·npa)⌋; then every ASW to every PSW.
func (p RailOptimizedSingleToR) Build() (*Topology, error) {
	f, err := newFabric(p.params())
	if err != nil {
		return nil, err
	}
	segments := ceilDiv(f.servers, f.npa) // = ⌈G / (npa·gps)⌉
	if err := f.checkCapacityLimit(segments, f.gps, "-gps"); err != nil {
		return nil, err
	}
	asn := segments * f.gps // at most G
	links := int64(f.psn)*int64(asn) + int64(f.gpus)*int64(f.nsps+1)
	if err := f.start(asn, links); err != nil {
		return nil, err
	}
	perSegment := f.gpus // GPUs per segment, gps·npa; with one segment it may exceed G
	if segments > 1 {
		perSegment = f.gps * f.npa // < G here, so no overflow
	}
	for i := 0; i < f.gpus; i++ {
		f.nvlinks(i)
		seg := i / perSegment
		f.link(int32(i), f.asw(seg*f.gps+i%f.gps), &f.nic)
	}
	f.uplinks(0, asn, 0, f.psn)
	return f.t, nil
}
