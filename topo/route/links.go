package route

import (
	"strconv"

	"simd/topo"
)

// LinkClass is the kind of a directed link by what it connects, in the vocabulary of SimAI's
// generated fabrics: a GPU's NVLink, its NIC's line to its ToR (ASW) in either direction, and
// the switch tiers above (PSW, core), each direction apart. The network model's link reports
// group links by class, so that a user sees which tier carries the load.
type LinkClass uint8

// The link classes, in the order reports list them (up the fabric, then down).
const (
	ClassNVLink    LinkClass = iota // GPU ↔ NVSwitch, or GPU ↔ GPU inside a server (mesh)
	ClassNICToASW                   // a GPU's NIC to its ToR
	ClassASWToNIC                   // a ToR to a GPU's NIC
	ClassASWToPSW                   // ToR to spine
	ClassPSWToASW                   // spine to ToR
	ClassPSWToCore                  // spine to core
	ClassCoreToPSW                  // core to spine
	ClassOther                      // anything else: lateral switch links, a NIC on a PSW, ...
	NumLinkClasses
)

var classIDs = [NumLinkClasses]string{"nvlink", "nic-asw", "asw-nic", "asw-psw", "psw-asw", "psw-core", "core-psw", "other"}

var classLabels = [NumLinkClasses]string{"NVLink", "NIC→ASW", "ASW→NIC", "ASW→PSW", "PSW→ASW", "PSW→core", "core→PSW", "other"}

// String is the class's id in CSV files: nvlink, nic-asw, asw-nic, asw-psw, psw-asw, psw-core,
// core-psw, other.
func (c LinkClass) String() string {
	if c < NumLinkClasses {
		return classIDs[c]
	}
	return "LinkClass(" + strconv.Itoa(int(c)) + ")"
}

// Label is the class's name in plots and messages: NVLink, NIC→ASW, ASW→PSW, ...
func (c LinkClass) Label() string {
	if c < NumLinkClasses {
		return classLabels[c]
	}
	return c.String()
}

// ParseLinkClass is the class whose String is s.
func ParseLinkClass(s string) (LinkClass, bool) {
	for i, id := range classIDs {
		if id == s {
			return LinkClass(i), true
		}
	}
	return 0, false
}

// tierNodeNames name the switches of each tier (Graph.Tiers) in link names.
var tierNodeNames = map[int32]string{1: "ASW", 2: "PSW", 3: "core"}

// LinkNames classifies and names the directed links of a graph: what each connects, in words a
// user of SimAI's fabrics knows ("server 3 GPU 5 NIC → ASW 2", "PSW 7 → ASW 2").
type LinkNames struct {
	g     *Graph
	tier  []int32
	index []int32 // per node: the GPU's index, the NVSwitch's index in its server, the switch's index in its tier
	srv   []int32 // per GPU or NVSwitch: its server; -1 for switches
}

// Names prepares the classes and names of g's links.
func (g *Graph) Names() *LinkNames {
	n := len(g.kinds)
	ln := &LinkNames{g: g, tier: g.Tiers(), index: make([]int32, n), srv: make([]int32, n)}
	gpus := int32(0)
	perTier := map[int32]int32{}
	gps := int32(max(g.gps, 1))
	for x := range int32(n) {
		ln.srv[x] = -1
		switch g.kinds[x] {
		case topo.GPU:
			ln.index[x], ln.srv[x] = gpus, gpus/gps
			gpus++
		case topo.Switch:
			ln.index[x] = perTier[ln.tier[x]]
			perTier[ln.tier[x]]++
		}
	}
	// An NVSwitch belongs to the server of its first GPU neighbour; its index counts the
	// NVSwitches of that server before it.
	perServer := map[int32]int32{}
	for x := range int32(n) {
		if g.kinds[x] != topo.NVSwitch {
			continue
		}
		for e := g.swEnd[x]; e < g.off[x+1]; e++ {
			if y := g.nbr[e]; g.kinds[y] == topo.GPU {
				ln.srv[x] = ln.srv[y]
				break
			}
		}
		ln.index[x] = perServer[ln.srv[x]]
		perServer[ln.srv[x]]++
	}
	return ln
}

// Class is directed link l's class.
func (ln *LinkNames) Class(l int32) LinkClass {
	g := ln.g
	a, b := g.From(l), g.To(l)
	ka, kb := g.kinds[a], g.kinds[b]
	switch {
	case ka == topo.GPU && kb == topo.GPU,
		ka == topo.GPU && kb == topo.NVSwitch, ka == topo.NVSwitch && kb == topo.GPU:
		return ClassNVLink
	case ka == topo.GPU && kb == topo.Switch && ln.tier[b] == 1:
		return ClassNICToASW
	case ka == topo.Switch && kb == topo.GPU && ln.tier[a] == 1:
		return ClassASWToNIC
	case ka == topo.Switch && kb == topo.Switch:
		switch [2]int32{ln.tier[a], ln.tier[b]} {
		case [2]int32{1, 2}:
			return ClassASWToPSW
		case [2]int32{2, 1}:
			return ClassPSWToASW
		case [2]int32{2, 3}:
			return ClassPSWToCore
		case [2]int32{3, 2}:
			return ClassCoreToPSW
		}
	}
	return ClassOther
}

// Node names node x: "server 3 GPU 5" (GPUs are numbered across the cluster, as ranks are),
// "server 3 NVSwitch 0", "ASW 2", "PSW 7", "core 1" (switches numbered within their tier, in
// node order), or "switch (node 40)" for a switch no GPU reaches.
func (ln *LinkNames) Node(x int32) string {
	i := strconv.Itoa(int(ln.index[x]))
	switch ln.g.kinds[x] {
	case topo.GPU:
		return "server " + strconv.Itoa(int(ln.srv[x])) + " GPU " + i
	case topo.NVSwitch:
		if ln.srv[x] < 0 {
			return "NVSwitch (node " + strconv.Itoa(int(x)) + ")"
		}
		return "server " + strconv.Itoa(int(ln.srv[x])) + " NVSwitch " + i
	}
	if name, ok := tierNodeNames[ln.tier[x]]; ok {
		return name + " " + i
	}
	if ln.tier[x] > 0 {
		return "tier-" + strconv.Itoa(int(ln.tier[x])) + " switch " + i
	}
	return "switch (node " + strconv.Itoa(int(x)) + ")"
}

// Name names directed link l by its ends: "server 3 GPU 5 NIC → ASW 2", "ASW 2 → server 3 GPU 5
// NIC", "server 3 GPU 5 → server 3 NVSwitch 0", "PSW 7 → ASW 2". A GPU's end of a link to a
// network switch is its NIC.
func (ln *LinkNames) Name(l int32) string {
	g := ln.g
	a, b := g.From(l), g.To(l)
	end := func(x, other int32) string {
		s := ln.Node(x)
		if g.kinds[x] == topo.GPU && g.kinds[other] == topo.Switch {
			s += " NIC"
		}
		return s
	}
	return end(a, b) + " → " + end(b, a)
}
