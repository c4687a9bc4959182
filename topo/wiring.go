package topo

import "strconv"

// Wiring is one of the five wirings of SimAI's topology generator (gen_Topo_Template.py).
// String gives the name of the generator's function that builds it.
//
// In all of them server s holds GPUs s·gps … s·gps+gps−1, each GPU has one line to every
// NVSwitch of its server, and a segment is the GPUs that share a set of ASWs (leaf switches);
// every ASW connects to every PSW (spine switch) of its plane. With G GPUs, S = G/gps servers,
// nsps NVSwitches per server and PSN PSWs:
//
//	wiring                  ASWs/segment  GPUs/segment  GPU i → ASW (seg = its segment)       links
//	RailSingleToR           gps           npa·gps       seg·gps + i mod gps                   PSN·ASN + S·gps + S·nsps·gps
//	RailDualToRSinglePlane  2·gps         npa·gps       A: seg·gps + i mod gps, B: ASN/2 + A  PSN·ASN + S·2·gps + S·nsps·gps
//	RailDualToRDualPlane    2·gps         npa·gps       as RailDualToRSinglePlane             (PSN/2)·ASN + S·2·gps + S·nsps·gps
//	NonRailSingleToR        1             npa           seg                                   PSN·ASN + S·gps + S·nsps·gps
//	NonRailDualToR          2             npa           A: seg, B: ASN/2 + seg                PSN·ASN + S·2·gps + S·nsps·gps
//
// ASN = segments × ASWs/segment, segments = ⌈G / GPUs-per-segment⌉, and nodes = G + S·nsps +
// ASN + PSN. Dual ToR: the first ASN/2 ASWs are side A, the rest side B; each GPU has an
// A-side line, then a B-side line. Dual plane: the first ⌈PSN/2⌉ PSWs are plane A, the rest
// plane B; A-side ASWs connect to plane A only and B-side ASWs to plane B only, all A lines
// first. The generator's pod-capacity check is segments ≤ ⌊app/gps⌋ for the rail-optimised
// wirings, ⌊app/1⌋ and ⌊app/2⌋ for the non-rail single- and dual-ToR ones.
type Wiring uint8

// The five wirings.
const (
	WiringRailSingleToR          Wiring = iota // Rail_Opti_SingleToR: Spectrum-X, or --ro
	WiringRailDualToRSinglePlane               // Rail_Opti_DualToR_SinglePlane: AlibabaHPN, or --ro --dt
	WiringRailDualToRDualPlane                 // Rail_Opti_DualToR_DualPlane: AlibabaHPN --dp, or --ro --dt --dp
	WiringNonRailSingleToR                     // No_Rail_Opti_SingleToR: DCN+, or no --ro
	WiringNonRailDualToR                       // No_Rail_Opti_DualToR: DCN+ --dt, or --dt without --ro
)

var wiringNames = [...]string{
	"Rail_Opti_SingleToR", "Rail_Opti_DualToR_SinglePlane", "Rail_Opti_DualToR_DualPlane",
	"No_Rail_Opti_SingleToR", "No_Rail_Opti_DualToR",
}

func (w Wiring) String() string {
	if int(w) < len(wiringNames) {
		return wiringNames[w]
	}
	return "Wiring(" + strconv.Itoa(int(w)) + ")"
}

// RailOptimized reports whether GPU i's NIC goes to the ASW of its rail (i mod gps).
func (w Wiring) RailOptimized() bool { return w <= WiringRailDualToRDualPlane }

// DualToR reports whether each GPU has two NIC lines, to an A-side and a B-side ASW.
func (w Wiring) DualToR() bool {
	return w == WiringRailDualToRSinglePlane || w == WiringRailDualToRDualPlane || w == WiringNonRailDualToR
}

// DualPlane reports whether the PSWs form two planes, one per ToR side.
func (w Wiring) DualPlane() bool { return w == WiringRailDualToRDualPlane }

// FileName is the name the generator gives the file (SimAI's §3.4 names): with template true the
// template's name (Spectrum-X_…, AlibabaHPN_…, DCN+…), otherwise the plain one (Rail_Opti_…,
// No_Rail_Opti_…). bw is the -bw string and gpuType the -gt string, both verbatim.
func (w Wiring) FileName(template bool, gpus, gpusPerServer int, bw, gpuType string) string {
	g := strconv.Itoa(gpus) + "g_" + strconv.Itoa(gpusPerServer) + "gps_"
	tail := bw + "_" + gpuType
	switch w {
	case WiringRailSingleToR:
		if template {
			return "Spectrum-X_" + g + tail
		}
		return "Rail_Opti_SingleToR_" + g + tail
	case WiringRailDualToRSinglePlane, WiringRailDualToRDualPlane:
		plane := "DualToR_SinglePlane_"
		if w == WiringRailDualToRDualPlane {
			plane = "DualToR_DualPlane_"
		}
		if template {
			return "AlibabaHPN_" + g + plane + tail
		}
		return "Rail_Opti_" + g + plane + tail
	case WiringNonRailSingleToR:
		if template {
			return "DCN+SingleToR_" + g + tail
		}
		return "No_Rail_Opti_" + g + "SingleToR_" + tail
	case WiringNonRailDualToR:
		if template {
			return "DCN+DualToR_" + g + tail
		}
		return "No_Rail_Opti_" + g + "DualToR_" + tail
	}
	return w.String() + "_" + g + tail
}
