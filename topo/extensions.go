package topo

import (
	"errors"
	"strconv"
	"strings"
)

// AutoPods, as Extensions.Pods, asks for as many pods as the GPUs need (-pods auto).
const AutoPods = -1

// Extensions are what simd's generator adds to SimAI's gen_Topo_Template.py. The zero value adds
// nothing: the topology is exactly the one the generator writes. All of them combine with each
// of the five wirings and with each other.
//
// # Multi-pod (Pods, Cores, CoreRate)
//
// With P ≥ 2 pods the G GPUs are split into P pods of G/P GPUs (whole servers: pod p holds GPUs
// p·G/P … (p+1)·G/P − 1), and each pod is wired like the generator's single pod of G/P GPUs, with
// its own segments, ASWs and PSWs; the capacity check applies to each pod. A core layer joins
// the pods as in a three-tier Clos: the C core switches are split into PSNpod groups of
// c = C/PSNpod (PSNpod is a pod's PSW count, after Oversubscription), and PSW k of every pod has
// one line to each core of group k. With dual plane PSW k belongs to one plane, so a plane's PSWs
// reach only its own groups of cores: the planes stay apart up to the core. Cores = 0 chooses
// c = ⌈d·apbw / pcbw⌉, d being the ASWs one PSW serves (ASNpod, or ASNpod/2 with dual plane), so
// a PSW can send up what its ASWs can send it. AutoPods chooses the smallest P that divides the
// server count and leaves each pod within the capacity check (1 when the check is off).
// CoreRate is the PSW–core rate ("" = -apbw); those lines also use -l and -er. Cores and CoreRate
// must be left zero with a single pod.
//
// Node ids: GPUs 0..G−1; NVSwitches G..G+NVS−1, server by server; then pod by pod its ASNpod
// ASWs and PSNpod PSWs, in the generator's order; then the C cores, group by group. Link order:
// for each GPU its NVLink (or mesh) lines and its NIC line(s); then pod by pod its ASW–PSW lines
// in the generator's order; then pod by pod, PSW by PSW, its lines to the cores of its group,
// PSW first. So the cores and their lines come after everything the generator writes, and the
// header's switch_num counts the cores. In all:
//
//	nodes = G + NVS + P·(ASNpod + PSNpod) + C
//	links = G·n + intra + P·U + P·C
//
// with n = 2 NIC lines per GPU for dual ToR (else 1), intra = G·nsps (S·gps·(gps−1)/2 with
// Mesh), U = ASNpod·PSNpod the ASW–PSW lines of a pod (ASNpod·PSNpod/2 with dual plane), and
// NVS = S·nsps (0 with Mesh), S = G/gps. One pod is P = 1 and C = 0: the generator's counts.
//
// # Oversubscription
//
// R = Oversubscription (0 means 1) divides the uplink capacity of every ASW by R compared with
// the generator's wiring for the same flags: ASW downlink capacity / ASW uplink capacity becomes
// R times the generator's. It is done with fewer PSWs, so that every ASW still connects to every
// PSW of its plane (any two ASWs of a plane share a PSW): each plane's PSW count p (-psn, or its
// ⌈PSN/2⌉ and ⌊PSN/2⌋ halves with dual plane) becomes p/R, which must be a whole number of at
// least 1. An ASW of a full segment has npa NIC lines of -bw in every wiring, so its ratio is
//
//	downlink / uplink = npa·bw / ((p/R)·apbw)
//
// which is exactly R with the Spectrum-X template (64 × 400 Gbps down, 64 × 400 Gbps up).
//
// # Mesh
//
// Mesh builds servers without NVSwitches (AMD MI300X-style Infinity Fabric): every pair of GPUs
// of a server has one line at -nvbw and -nl, the lower id first. -nvbw is the rate of each
// GPU–GPU link, so a GPU has (gps−1)·nvbw of scale-up bandwidth in all, which is what
// ServerBandwidth reports as NVLinkGBps. GPU i's lines go to the higher GPUs of its server, in
// ascending order, before its NIC lines. -nsps is ignored and the header's nvswitch_num is 0.
// SimAI's ns-3 frontend assumes one NVSwitch per server and cannot run such a file; simd reads
// it.
type Extensions struct {
	Pods             int     // -pods: 0 or 1 one pod (SimAI); P ≥ 2 pods under a core layer; AutoPods
	Cores            int     // -csn: core switches, a multiple of PSNpod; 0 = the default above
	CoreRate         string  // -pcbw: PSW–core rate; "" = the ASW–PSW rate
	Oversubscription float64 // -os: R as above; 0 or 1 = as SimAI
	Mesh             bool    // --mesh: GPUs of a server fully meshed, no NVSwitch
}

// ParsePods reads a pod count as -pods gives it: a whole number of at least 1, or auto
// (AutoPods).
func ParsePods(s string) (int, error) {
	if s == "auto" {
		return AutoPods, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, errors.New("expected a number of pods of at least 1, or auto")
	}
	return n, nil
}

// ParseOversubscription reads an oversubscription ratio as -os gives it: a number above 0 (and
// not absurdly large), such as 1, 2 or 1.5.
func ParseOversubscription(s string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(r > 0) || r > 1e9 {
		return 0, errors.New("expected a ratio above 0, such as 1, 2 or 1.5")
	}
	return r, nil
}
