package topo

import (
	"fmt"

	"simd/configs/units"
	"simd/engine"
)

// A Generator builds a topology the way one of the wirings of SimAI's topology generator
// (gen_Topo_Template.py) does. RailOptimizedSingleToR is one.
type Generator interface {
	Build() (*Topology, error)
}

// linkSpec is the rate, delay and error rate shared by one class of generated links, both as
// given and as values.
type linkSpec struct {
	rate                        float64
	delay                       engine.Time
	errRate                     float64
	rateText, delayText, errTxt string
}

// newLinkSpec checks one class of links' parameters; the flag names are for the errors.
func newLinkSpec(rateFlag, rate, delayFlag, delay, errRate string) (linkSpec, error) {
	if err := checkToken(rateFlag, rate); err != nil {
		return linkSpec{}, err
	}
	r, err := units.ParseRate(rate)
	if err != nil {
		return linkSpec{}, fmt.Errorf("topo: %s: %v", rateFlag, err)
	}
	if err := checkToken(delayFlag, delay); err != nil {
		return linkSpec{}, err
	}
	d, err := units.ParseTime(delay)
	if err != nil {
		return linkSpec{}, fmt.Errorf("topo: %s: %v", delayFlag, err)
	}
	if err := checkToken("-er", errRate); err != nil {
		return linkSpec{}, err
	}
	e, err := parseErrorRate(errRate)
	if err != nil {
		return linkSpec{}, fmt.Errorf("topo: -er: %v", err)
	}
	return linkSpec{rate: r, delay: d, errRate: e, rateText: rate, delayText: delay, errTxt: errRate}, nil
}

// fabricParams are the generator parameters every wiring shares, under the generator's flag
// names.
type fabricParams struct {
	gpus, gps, nsps int    // -g, -gps, -nsps
	gpuType         string // -gt
	nvbw, nl        string // -nvbw, -nl
	bw, l           string // -bw, -l
	npa, psn        int    // -npa, -psn
	apbw            string // -apbw
	app             int    // -app
	er              string // -er
	checkCapacity   bool
}

// fabric is a checked fabricParams with the numbering every wiring uses: GPUs 0..G-1, then the
// NVSwitches server by server, then the ASWs, then the PSWs.
type fabric struct {
	fabricParams
	servers, nvs int // servers; NVSwitches in all (servers × nsps)
	asn          int // ASWs, once the wiring has fixed their number
	nvlink       linkSpec
	nic          linkSpec
	uplink       linkSpec
	t            *Topology
}

// newFabric checks the shared parameters.
func newFabric(p fabricParams) (*fabric, error) {
	switch {
	case p.gpus < 1:
		return nil, fmt.Errorf("topo: -g %d: expected at least 1 GPU", p.gpus)
	case p.gpus > MaxNodes:
		return nil, fmt.Errorf("topo: -g %d: more GPUs than simd supports (at most %d nodes)", p.gpus, MaxNodes)
	case p.gps < 1:
		return nil, fmt.Errorf("topo: -gps %d: expected at least 1 GPU per server", p.gps)
	case p.gpus%p.gps != 0:
		return nil, fmt.Errorf("topo: -g %d is not a multiple of -gps %d", p.gpus, p.gps)
	case p.nsps < 0 || p.nsps > MaxNodes:
		return nil, fmt.Errorf("topo: -nsps %d: expected between 0 and %d NVSwitches per server", p.nsps, MaxNodes)
	case p.npa < 1:
		return nil, fmt.Errorf("topo: -npa %d: expected at least 1 NIC per ASW", p.npa)
	case p.psn < 0 || p.psn > MaxNodes:
		return nil, fmt.Errorf("topo: -psn %d: expected between 0 and %d PSWs", p.psn, MaxNodes)
	}
	if err := checkToken("-gt", p.gpuType); err != nil {
		return nil, err
	}
	f := &fabric{fabricParams: p, servers: p.gpus / p.gps}
	f.nvs = f.servers * p.nsps // both at most 2^26: no overflow
	var err error
	if f.nvlink, err = newLinkSpec("-nvbw", p.nvbw, "-nl", p.nl, p.er); err != nil {
		return nil, err
	}
	if f.nic, err = newLinkSpec("-bw", p.bw, "-l", p.l, p.er); err != nil {
		return nil, err
	}
	if f.uplink, err = newLinkSpec("-apbw", p.apbw, "-l", p.l, p.er); err != nil {
		return nil, err
	}
	return f, nil
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b ≥ 1, without overflow.
func ceilDiv(a, b int) int { return a/b + btoi(a%b != 0) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkCapacityLimit applies the generator's pod-capacity check, segments ≤ ⌊app/per⌋, unless it
// is switched off.
func (f *fabric) checkCapacityLimit(segments, per int, perName string) error {
	if !f.checkCapacity {
		return nil
	}
	if f.app < 1 || segments > f.app/per {
		return fmt.Errorf("topo: %d GPUs need %d segments, but one pod holds at most -app %d / %s %d = %d (switch the capacity check off to build it anyway)",
			f.gpus, segments, f.app, perName, per, max(f.app/per, 0))
	}
	return nil
}

// start allocates the topology once the wiring has fixed the ASW count and the link count.
func (f *fabric) start(asn int, links int64) error {
	f.asn = asn
	nodes := int64(f.gpus) + int64(f.nvs) + int64(asn) + int64(f.psn)
	if nodes > MaxNodes {
		return fmt.Errorf("topo: the topology would have %d nodes (at most %d are supported)", nodes, MaxNodes)
	}
	if links > MaxLinks {
		return fmt.Errorf("topo: the topology would have %d links (at most %d are supported)", links, MaxLinks)
	}
	t := &Topology{
		GPUsPerServer: f.gps,
		GPUType:       f.gpuType,
		Kinds:         make([]NodeKind, nodes),
		NVSwitches:    make([]int32, f.nvs),
		Switches:      make([]int32, asn+f.psn),
		Links:         make([]Link, 0, links),
	}
	for k := range t.NVSwitches {
		id := int32(f.gpus + k)
		t.NVSwitches[k] = id
		t.Kinds[id] = NVSwitch
	}
	for k := range t.Switches {
		id := int32(f.gpus + f.nvs + k)
		t.Switches[k] = id
		t.Kinds[id] = Switch
	}
	f.t = t
	return nil
}

// asw is the id of ASW k; psw the id of PSW k.
func (f *fabric) asw(k int) int32 { return int32(f.gpus + f.nvs + k) }
func (f *fabric) psw(k int) int32 { return int32(f.gpus + f.nvs + f.asn + k) }

func (f *fabric) link(src, dst int32, s *linkSpec) {
	f.t.Links = append(f.t.Links, Link{
		Src: src, Dst: dst,
		Rate: s.rate, Delay: s.delay, ErrorRate: s.errRate,
		RateText: s.rateText, DelayText: s.delayText, ErrorText: s.errTxt,
	})
}

// nvlinks adds GPU i's lines to each NVSwitch of its server.
func (f *fabric) nvlinks(i int) {
	base := f.gpus + (i/f.gps)*f.nsps
	for j := 0; j < f.nsps; j++ {
		f.link(int32(i), int32(base+j), &f.nvlink)
	}
}

// uplinks adds the lines from ASWs [from,to) to PSWs [pfrom,pto), ASW by ASW, PSWs ascending.
func (f *fabric) uplinks(from, to, pfrom, pto int) {
	for a := from; a < to; a++ {
		for p := pfrom; p < pto; p++ {
			f.link(f.asw(a), f.psw(p), &f.uplink)
		}
	}
}
