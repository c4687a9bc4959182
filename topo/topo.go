package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"simd/engine"
)

// Limits on the size of a topology. Parse checks a file's header against them before it
// allocates anything, so a corrupt header cannot make it reserve absurd amounts of memory.
const (
	MaxNodes = 1 << 26 // node_num
	MaxLinks = 1 << 28 // link_num
)

// NodeKind is what a node is.
type NodeKind uint8

// The node kinds of a SimAI topology.
const (
	GPU      NodeKind = iota // a GPU (SimAI: host, type 0); every id line 2 does not list
	NVSwitch                 // an NVSwitch inside a server (SimAI: type 2)
	Switch                   // a network switch: ToR/ASW, spine/PSW (SimAI: type 1)
)

func (k NodeKind) String() string {
	switch k {
	case GPU:
		return "gpu"
	case NVSwitch:
		return "nvswitch"
	case Switch:
		return "switch"
	}
	return "NodeKind(" + strconv.Itoa(int(k)) + ")"
}

// Link is one full-duplex point-to-point link.
type Link struct {
	Src, Dst  int32       // node ids as in the file (the lower tier first, as the generator writes)
	Rate      float64     // bits per second
	Delay     engine.Time // picoseconds
	ErrorRate float64     // packet loss probability as written

	// The fields exactly as written in the file (or given to a generator), so that a topology
	// writes back byte for byte. Write formats Rate, Delay and ErrorRate itself when they are
	// empty.
	RateText, DelayText, ErrorText string
}

// Topology is a cluster's wiring as a SimAI topology file describes it.
type Topology struct {
	GPUsPerServer int
	GPUType       string     // header field 6, verbatim
	Kinds         []NodeKind // per node id
	NVSwitches    []int32    // ids in the order line 2 lists them (first nvswitch_num ids)
	Switches      []int32    // the next switch_num ids
	Links         []Link     // file order
}

// NumNodes is the number of nodes of every kind (the header's node_num).
func (t *Topology) NumNodes() int { return len(t.Kinds) }

// NumGPUs is the number of GPU nodes.
func (t *Topology) NumGPUs() int { return len(t.Kinds) - len(t.NVSwitches) - len(t.Switches) }

// NumNVSwitches is the number of NVSwitch nodes (the header's nvswitch_num).
func (t *Topology) NumNVSwitches() int { return len(t.NVSwitches) }

// NumSwitches is the number of network switches (the header's switch_num).
func (t *Topology) NumSwitches() int { return len(t.Switches) }

// NumLinks is the number of links (the header's link_num).
func (t *Topology) NumLinks() int { return len(t.Links) }

// NumServers is the number of servers, NumGPUs / GPUsPerServer rounded up.
func (t *Topology) NumServers() int {
	if t.GPUsPerServer < 1 || t.NumGPUs() < 1 {
		return 0
	}
	return ceilDiv(t.NumGPUs(), t.GPUsPerServer)
}

// Kind is the kind of node id.
func (t *Topology) Kind(id int32) NodeKind { return t.Kinds[id] }

// GPUsFirst reports whether the GPUs are exactly the nodes 0..NumGPUs()-1. SimAI assumes so:
// it runs rank i on node i. Every file its generator writes has this property.
func (t *Topology) GPUsFirst() bool {
	n := t.NumGPUs()
	if n < 0 || n > len(t.Kinds) {
		return false
	}
	for id := 0; id < n; id++ {
		if t.Kinds[id] != GPU {
			return false
		}
	}
	return true
}

// Validate checks that t is consistent: the lists agree with Kinds, every id is in range,
// there is at least one GPU, no link joins a node to itself, every rate is positive, every
// delay non-negative, every error rate in [0,1], and every text field is a single token. Parse
// and the generators only return topologies that pass.
func (t *Topology) Validate() error {
	if t.GPUsPerServer < 1 {
		return fmt.Errorf("topo: %d GPUs per server (expected at least 1)", t.GPUsPerServer)
	}
	if err := checkToken("GPU type", t.GPUType); err != nil {
		return err
	}
	n := len(t.Kinds)
	if n > MaxNodes {
		return fmt.Errorf("topo: %d nodes (at most %d are supported)", n, MaxNodes)
	}
	if len(t.Links) > MaxLinks {
		return fmt.Errorf("topo: %d links (at most %d are supported)", len(t.Links), MaxLinks)
	}
	var count [3]int
	for id, k := range t.Kinds {
		if k > Switch {
			return fmt.Errorf("topo: node %d has no valid kind (%v)", id, k)
		}
		count[k]++
	}
	seen := make([]uint64, (n+63)/64)
	for _, l := range []struct {
		ids  []int32
		kind NodeKind
	}{{t.NVSwitches, NVSwitch}, {t.Switches, Switch}} {
		if len(l.ids) != count[l.kind] {
			return fmt.Errorf("topo: %d nodes are of kind %v but %d are listed as such", count[l.kind], l.kind, len(l.ids))
		}
		for _, id := range l.ids {
			if id < 0 || int(id) >= n {
				return fmt.Errorf("topo: %v id %d is out of range [0,%d)", l.kind, id, n)
			}
			if t.Kinds[id] != l.kind {
				return fmt.Errorf("topo: node %d is listed as a %v but is a %v", id, l.kind, t.Kinds[id])
			}
			if seen[id/64]&(1<<(id%64)) != 0 {
				return fmt.Errorf("topo: node %d is listed twice", id)
			}
			seen[id/64] |= 1 << (id % 64)
		}
	}
	if count[GPU] == 0 {
		return fmt.Errorf("topo: no GPUs")
	}
	for i := range t.Links {
		l := &t.Links[i]
		if l.Src < 0 || int(l.Src) >= n || l.Dst < 0 || int(l.Dst) >= n {
			return fmt.Errorf("topo: link %d (%d-%d) has an end out of range [0,%d)", i+1, l.Src, l.Dst, n)
		}
		if l.Src == l.Dst {
			return fmt.Errorf("topo: link %d joins node %d to itself", i+1, l.Src)
		}
		if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
			return fmt.Errorf("topo: link %d has rate %v (expected a positive rate)", i+1, l.Rate)
		}
		if l.Delay < 0 {
			return fmt.Errorf("topo: link %d has a negative delay", i+1)
		}
		if !(l.ErrorRate >= 0 && l.ErrorRate <= 1) {
			return fmt.Errorf("topo: link %d has error rate %v (expected a probability in [0,1])", i+1, l.ErrorRate)
		}
		for _, f := range []struct{ name, text string }{{"rate", l.RateText}, {"delay", l.DelayText}, {"error rate", l.ErrorText}} {
			if f.text != "" && strings.ContainsAny(f.text, " \t\n\r\v\f") { // name the field only on failure
				return checkToken(fmt.Sprintf("link %d %s", i+1, f.name), f.text)
			}
		}
	}
	return nil
}

// checkToken makes sure s is one non-empty token of the file format.
func checkToken(what, s string) error {
	if s == "" {
		return fmt.Errorf("topo: empty %s", what)
	}
	if strings.ContainsAny(s, " \t\n\r\v\f") {
		return fmt.Errorf("topo: %s %q contains white space", what, s)
	}
	return nil
}
