package topo

import (
	"fmt"
	"math"

	"simd/configs/units"
	"simd/engine"
)

// A Generator builds a topology the way one of the wirings of SimAI's topology generator
// (gen_Topo_Template.py) does. RailOptimizedSingleToR, RailOptimizedDualToRSinglePlane,
// RailOptimizedDualToRDualPlane, NonRailOptimizedSingleToR and NonRailOptimizedDualToR are the
// five.
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
// names, and simd's extensions.
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
	ext             Extensions
	hint            string // how to get past the pod-capacity check, for its error
}

// fabric is a checked fabricParams laid out by one wiring. Node ids: GPUs 0..G-1, the
// NVSwitches server by server, then pod by pod its ASWs (dual ToR: the A side, then the B side)
// and its PSWs (dual plane: plane A, then plane B), then the core switches group by group. With
// one pod and no core layer this is exactly the generator's numbering.
type fabric struct {
	fabricParams
	w            Wiring
	servers, nvs int // servers; NVSwitches in all (servers × nsps; 0 with a mesh)

	pods, gpusPod, segsPod int // pods; GPUs and segments per pod
	asnPod                 int // ASWs per pod
	pswA, pswB             int // PSWs per pod in plane A and plane B (single plane: all in A)
	coresPer               int // core switches per group (one group per PSW of a pod); 0: no core layer

	nvlink, nic, uplink, core linkSpec
	t                         *Topology
}

// newFabric checks the parameters and lays them out for wiring w.
func newFabric(w Wiring, p fabricParams) (*fabric, error) {
	if p.ext.Mesh {
		p.nsps = 0 // a meshed server has no NVSwitch; -nsps is ignored
	}
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
	case w > WiringNonRailDualToR:
		return nil, fmt.Errorf("topo: unknown wiring %v", w)
	}
	if err := checkToken("-gt", p.gpuType); err != nil {
		return nil, err
	}
	f := &fabric{fabricParams: p, w: w, servers: p.gpus / p.gps}
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
	if err := f.layout(); err != nil {
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

// segments is the number of segments g GPUs (whole servers) take: ⌈g/(npa·gps)⌉ in a
// rail-optimised wiring, ⌈g/npa⌉ otherwise.
func (f *fabric) segments(g int) int {
	if f.w.RailOptimized() {
		return ceilDiv(g/f.gps, f.npa)
	}
	return ceilDiv(g, f.npa)
}

// capacityDivisor is what the generator divides -app by to get the segments one pod holds:
// gps in a rail-optimised wiring, the ASWs of a segment (1 or 2) otherwise.
func (f *fabric) capacityDivisor() (int, string) {
	if f.w.RailOptimized() {
		return f.gps, "-gps"
	}
	return 1 + btoi(f.w.DualToR()), "ASWs per segment"
}

// checkCapacityLimit applies the generator's pod-capacity check, segments ≤ ⌊app/per⌋, to one
// pod, unless it is switched off.
func (f *fabric) checkCapacityLimit(segments, per int, perName string) error {
	if !f.checkCapacity {
		return nil
	}
	if f.app < 1 || segments > f.app/per {
		what := fmt.Sprintf("%d GPUs", f.gpus)
		if f.pods > 1 {
			what = fmt.Sprintf("%d GPUs per pod", f.gpusPod)
		}
		return fmt.Errorf("topo: %s need %d segments, but one pod holds at most -app %d / %s %d = %d (%s)",
			what, segments, f.app, perName, per, max(f.app/per, 0), f.hint)
	}
	return nil
}

// autoPods is the smallest number of pods of equal size (whole servers) that each pass the
// capacity check; 1 when the check is off.
func (f *fabric) autoPods() int {
	per, _ := f.capacityDivisor()
	if !f.checkCapacity || f.app/per < 1 {
		return 1 // with app/per < 1 nothing fits: the capacity check reports it
	}
	maxSegs := f.app / per
	for p := 1; p < f.servers; p++ {
		if f.servers%p == 0 && f.segments(f.gpus/p) <= maxSegs {
			return p
		}
	}
	return f.servers // one server per pod: one segment
}

// layout fixes the pods, the segments, the ASWs, the PSWs of each plane and the core layer.
func (f *fabric) layout() error {
	e := f.ext
	switch {
	case e.Pods == AutoPods:
		f.pods = f.autoPods()
	case e.Pods < 0:
		return fmt.Errorf("topo: -pods %d: expected a number of pods of at least 1, or auto", e.Pods)
	case e.Pods > 1:
		if e.Pods > f.servers || f.servers%e.Pods != 0 {
			return fmt.Errorf("topo: -pods %d: the %d servers of -g %d cannot be split into %d pods of equal size",
				e.Pods, f.servers, f.gpus, e.Pods)
		}
		f.pods = e.Pods
	default:
		f.pods = 1
	}
	f.gpusPod = f.gpus / f.pods
	f.segsPod = f.segments(f.gpusPod)
	per, perName := f.capacityDivisor()
	if err := f.checkCapacityLimit(f.segsPod, per, perName); err != nil {
		return err
	}
	perSeg := 1 // ASWs per segment
	if f.w.RailOptimized() {
		perSeg = f.gps
	}
	if f.w.DualToR() {
		perSeg *= 2
	}
	f.asnPod = f.segsPod * perSeg // at most 2·G

	f.pswA, f.pswB = f.psn, 0
	if f.w.DualPlane() {
		f.pswA, f.pswB = f.psn-f.psn/2, f.psn/2 // an odd PSN gives plane A the larger half
	}
	if r := e.Oversubscription; r != 0 && r != 1 {
		if !(r > 0) || math.IsInf(r, 1) {
			return fmt.Errorf("topo: -os %v: expected an oversubscription ratio above 0", r)
		}
		var err error
		if f.pswA, err = divideByRatio(f.pswA, r, f.w.DualPlane()); err != nil {
			return err
		}
		if f.pswB, err = divideByRatio(f.pswB, r, true); err != nil {
			return err
		}
	}
	return f.layoutCores()
}

// divideByRatio is n/r when that is a whole number of PSWs (at least 1 unless n is 0).
func divideByRatio(n int, r float64, plane bool) (int, error) {
	if n == 0 {
		return 0, nil
	}
	q := float64(n) / r
	m := math.Round(q)
	if m < 1 || math.Abs(q-m) > 1e-9*q {
		what := fmt.Sprintf("the %d PSWs", n)
		if plane {
			what = fmt.Sprintf("the %d PSWs of a plane", n)
		}
		return 0, fmt.Errorf("topo: -os %v: %s divided by %v is not a whole number of PSWs (at least 1)", r, what, r)
	}
	if m > MaxNodes {
		return 0, fmt.Errorf("topo: -os %v: %v PSWs (at most %d nodes are supported)", r, m, MaxNodes)
	}
	return int(m), nil
}

// layoutCores fixes the core layer: none for one pod; otherwise one group of cores per PSW
// index of a pod, by default just enough cores for a PSW's uplinks to carry what its ASWs can
// send it.
func (f *fabric) layoutCores() error {
	e := f.ext
	if f.pods == 1 {
		if e.Cores != 0 {
			return fmt.Errorf("topo: -csn %d: a core layer needs more than one pod (-pods)", e.Cores)
		}
		if e.CoreRate != "" {
			return fmt.Errorf("topo: -pcbw %s: a core layer needs more than one pod (-pods)", e.CoreRate)
		}
		return nil
	}
	psnPod := f.pswA + f.pswB
	if psnPod == 0 {
		return fmt.Errorf("topo: %d pods need PSWs to join them to the core layer (-psn is 0)", f.pods)
	}
	rate := e.CoreRate
	if rate == "" {
		rate = f.apbw
	}
	var err error
	if f.core, err = newLinkSpec("-pcbw", rate, "-l", f.l, f.er); err != nil {
		return err
	}
	switch {
	case e.Cores < 0 || e.Cores > MaxNodes:
		return fmt.Errorf("topo: -csn %d: expected between 0 and %d core switches", e.Cores, MaxNodes)
	case e.Cores == 0:
		down := f.asnPod // the ASWs one PSW serves
		if f.w.DualPlane() {
			down = f.asnPod / 2
		}
		q := float64(down) * f.uplink.rate / f.core.rate
		c := max(math.Ceil(q*(1-1e-12)), 1)
		if c > MaxNodes {
			return fmt.Errorf("topo: a non-blocking core layer needs %v core switches per PSW (at most %d nodes are supported; set -csn)", c, MaxNodes)
		}
		f.coresPer = int(c)
	case e.Cores%psnPod != 0:
		return fmt.Errorf("topo: -csn %d is not a multiple of the %d PSWs of a pod (each PSW index has its own group of core switches)", e.Cores, psnPod)
	default:
		f.coresPer = e.Cores / psnPod
	}
	return nil
}

// psnPod is the number of PSWs of one pod; cores the number of core switches.
func (f *fabric) psnPod() int { return f.pswA + f.pswB }
func (f *fabric) cores() int  { return f.psnPod() * f.coresPer }

// aswID is the id of ASW k of pod p; pswID of its PSW k (plane B follows plane A); coreID of core
// j of group g.
func (f *fabric) aswID(p, k int) int32 { return int32(f.gpus + f.nvs + p*(f.asnPod+f.psnPod()) + k) }
func (f *fabric) pswID(p, k int) int32 { return f.aswID(p, f.asnPod+k) }
func (f *fabric) coreID(g, j int) int32 {
	return int32(f.gpus + f.nvs + f.pods*(f.asnPod+f.psnPod()) + g*f.coresPer + j)
}

// counts is the number of nodes and of links of the laid-out fabric.
func (f *fabric) counts() (nodes, links int64) {
	psnPod := int64(f.psnPod())
	nodes = int64(f.gpus) + int64(f.nvs) + int64(f.pods)*(int64(f.asnPod)+psnPod) + psnPod*int64(f.coresPer)
	intra := int64(f.gpus) * int64(f.nsps)
	if f.ext.Mesh {
		intra = int64(f.servers) * (int64(f.gps) * int64(f.gps-1) / 2)
	}
	nics := int64(f.gpus) * int64(1+btoi(f.w.DualToR()))
	up := int64(f.asnPod) * psnPod
	if f.w.DualPlane() {
		up = int64(f.asnPod/2) * psnPod
	}
	links = nics + intra + int64(f.pods)*up
	if nodes <= MaxNodes { // then pods·cores is below 2^52
		links += int64(f.pods) * psnPod * int64(f.coresPer)
	}
	return nodes, links
}

// build allocates the topology and writes its links in the generator's order: for each GPU its
// NVLink (or mesh) lines and its NIC line(s), then pod by pod the ASW–PSW lines, then pod by pod
// and PSW by PSW the PSW–core lines.
func (f *fabric) build() (*Topology, error) {
	nodes, links := f.counts()
	if nodes > MaxNodes {
		return nil, fmt.Errorf("topo: the topology would have %d nodes (at most %d are supported)", nodes, MaxNodes)
	}
	if links > MaxLinks {
		return nil, fmt.Errorf("topo: the topology would have %d links (at most %d are supported)", links, MaxLinks)
	}
	switches := int(nodes) - f.gpus - f.nvs
	t := &Topology{
		GPUsPerServer: f.gps,
		GPUType:       f.gpuType,
		Kinds:         make([]NodeKind, nodes),
		NVSwitches:    make([]int32, f.nvs),
		Switches:      make([]int32, switches),
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

	perSegment := f.gpusPod // GPUs per segment; with one segment it may be below npa·gps
	if f.segsPod > 1 {
		perSegment = f.npa // < gpusPod here, so no overflow below
		if f.w.RailOptimized() {
			perSegment = f.gps * f.npa
		}
	}
	half := f.asnPod / 2 // the first B-side ASW of a pod (dual ToR)
	for i := 0; i < f.gpus; i++ {
		if f.ext.Mesh {
			end := (i/f.gps + 1) * f.gps
			for j := i + 1; j < end; j++ {
				f.link(int32(i), int32(j), &f.nvlink)
			}
		} else {
			f.nvlinks(i)
		}
		pod, li := i/f.gpusPod, i%f.gpusPod
		a := li / perSegment // the segment
		if f.w.RailOptimized() {
			a = a*f.gps + li%f.gps
		}
		f.link(int32(i), f.aswID(pod, a), &f.nic)
		if f.w.DualToR() {
			f.link(int32(i), f.aswID(pod, half+a), &f.nic)
		}
	}
	for p := 0; p < f.pods; p++ {
		if f.w.DualPlane() {
			f.uplinks(p, 0, half, 0, f.pswA)
			f.uplinks(p, half, f.asnPod, f.pswA, f.pswA+f.pswB)
		} else {
			f.uplinks(p, 0, f.asnPod, 0, f.pswA)
		}
	}
	for p := 0; p < f.pods && f.coresPer > 0; p++ {
		for k := 0; k < f.psnPod(); k++ {
			psw := f.pswID(p, k)
			for j := 0; j < f.coresPer; j++ {
				f.link(psw, f.coreID(k, j), &f.core)
			}
		}
	}
	return t, nil
}

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

// uplinks adds the lines from ASWs [from,to) of pod p to its PSWs [pfrom,pto), ASW by ASW, PSWs
// ascending.
func (f *fabric) uplinks(p, from, to, pfrom, pto int) {
	for a := from; a < to; a++ {
		for k := pfrom; k < pto; k++ {
			f.link(f.aswID(p, a), f.pswID(p, k), &f.uplink)
		}
	}
}

// buildWiring checks p, lays it out for wiring w and builds the topology.
func buildWiring(w Wiring, p fabricParams) (*Topology, *fabric, error) {
	f, err := newFabric(w, p)
	if err != nil {
		return nil, nil, err
	}
	t, err := f.build()
	if err != nil {
		return nil, nil, err
	}
	return t, f, nil
}
