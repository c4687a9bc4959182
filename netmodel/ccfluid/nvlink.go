package ccfluid

import (
	"simd/engine"
	"simd/netmodel/packets"
	"simd/topo"
)

// This file hands the flows of every server's NVLink to the packet model (Config.NVLink,
// package packets): the links from a GPU to an NVSwitch are NIC ports and those from an
// NVSwitch to a GPU its ports. A flow whose path and ACK route are both such links (a GPU to
// its NVSwitch and on to another GPU of the server) may go packet by packet: its slot here then
// keeps its tag, size and path for the observers (statePacket) and nothing of the fluid's
// state. SimAI's NVSwitch marks nothing and pauses nothing, so what the fluid adds to those
// links — reaction points, marks, PFC — has nothing to act on there, and what it cannot have —
// where each flow's packets stand against the others' — the packets have.
//
// The packet model's cost grows with the bytes (two events per packet and link, as many for
// its ACK), the fluid's with the flows, so packets cost less than the fluid for flows of a few
// packets and far more for long ones (a 1 MiB NVLink flow is 117 packets). With NVLinkAuto a
// server's NVLink (the links of one NVSwitch, a domain) takes the model its first flow asks
// for each time it goes busy: packets for a flow of at most AutoPackets packets, the fluid
// otherwise, and keeps it until its last flow is done. A collective's NVLink flows have one size
// and a server's collectives follow one another, so each collective's flows go one way.

// NVLinkRule is how the flows of a server's NVLink go (Config.NVLink).
type NVLinkRule uint8

const (
	// NVLinkFluid: as a fluid, with the rest of the network.
	NVLinkFluid NVLinkRule = iota
	// NVLinkPackets: packet by packet, always.
	NVLinkPackets
	// NVLinkAuto: packet by packet where a server's NVLink goes busy with a flow of at most
	// AutoPackets packets, as a fluid where with a longer one.
	NVLinkAuto
)

// AutoPackets is the longest flow, in packets, for which NVLinkAuto carries a server's NVLink
// packet by packet: 4 packets of 9,000 bytes, 36 KB — the chunks of a ring over 16 GPUs of up
// to 4 MiB, over 64 of up to 16 MiB. Measured on a 128-GPU ring all-reduce under DCQCN
// (bench/nvlink; docs/performance.md, "The NVLink packet by packet"), packets took 0.77 of the
// fluid's time with NVLink flows of one packet, 1.38 times it with 4, 1.88 with 8 and 2.7 with 15.
const AutoPackets = 4

// nvlinkDomains tracks the NVLink of every server for NVLinkAuto.
type nvlinkDomains struct {
	of     []int32 // NVSwitch node → domain, -1 for other nodes
	busy   []int32 // the domain's flows in flight
	packet []bool  // the model the domain's flows in flight take
	flow   []int32 // flow slot → its domain, -1 for a flow of none
}

// newPackets builds the packet model when the configuration asks for it.
func (n *Network) newPackets() error {
	if p := n.cfg.Transport.Payload; n.cfg.NVLink == NVLinkFluid || p <= 0 || p > packets.MaxPayload || n.mode == ModeHPCC {
		return nil // a PACKET_PAYLOAD_SIZE past what a packet word holds keeps the fluid
	}
	g := n.g
	links := make([]packets.Link, g.NumDirLinks())
	n.nv.of = make([]int32, g.NumNodes())
	for x := range n.nv.of {
		n.nv.of[x] = -1
	}
	domains := int32(0)
	for l := range links {
		from, to := g.From(int32(l)), g.To(int32(l))
		var role packets.Role
		switch {
		case g.Kind(from) == topo.GPU && g.Kind(to) == topo.NVSwitch:
			role = packets.NIC
			if n.nv.of[to] < 0 {
				n.nv.of[to] = domains
				domains++
			}
		case g.Kind(from) == topo.NVSwitch && g.Kind(to) == topo.GPU:
			role = packets.Egress
		default:
			continue
		}
		links[l] = packets.Link{Role: role, Rate: g.Rate(int32(l)), Delay: g.Delay(int32(l))}
	}
	if domains == 0 {
		n.nv = nvlinkDomains{}
		return nil
	}
	n.nv.busy = make([]int32, domains)
	n.nv.packet = make([]bool, domains)
	win := int64(0)
	if n.windowed() {
		win = int64(n.cfg.Window)
	}
	pk, err := packets.New(n.s, links, packetOwner{n}, packets.Config{Transport: n.cfg.Transport, Window: win})
	if err != nil {
		return err
	}
	n.pk = pk
	return nil
}

// nvlinkStart decides how flow id, starting now with bytes over path and ack, goes: it returns
// true when it went to the packet model (as statePacket), false when the fluid is to take it.
func (n *Network) nvlinkStart(id int32, path, ack []int32, bytes int64) bool {
	nv := &n.nv
	for int(id) >= len(nv.flow) {
		nv.flow = append(nv.flow, -1)
	}
	if !n.pk.CarriesFlow(path, ack) {
		nv.flow[id] = -1
		return false
	}
	d := nv.of[n.g.To(path[0])]
	if nv.busy[d] == 0 {
		nv.packet[d] = n.cfg.NVLink == NVLinkPackets || n.cfg.Transport.Packets(bytes) <= AutoPackets
	}
	nv.busy[d]++
	nv.flow[id] = d
	if !nv.packet[d] {
		return false
	}
	n.flows[id].state = statePacket
	for int(id) >= len(n.pkPos) {
		n.pkPos = append(n.pkPos, -1)
	}
	n.pkPos[id] = int32(len(n.pkFlows))
	n.pkFlows = append(n.pkFlows, id)
	n.pk.Start(id, path, ack, bytes)
	return true
}

// nvlinkDone counts flow id out of its domain, if it has one.
func (n *Network) nvlinkDone(id int32) {
	if nv := &n.nv; int(id) < len(nv.flow) {
		if d := nv.flow[id]; d >= 0 {
			nv.busy[d]--
			nv.flow[id] = -1
		}
	}
}

// PacketConflict reports whether a flow with this path and ACK route would cross links the
// packet model may carry without being a flow it can carry (an NVLS flow to or from an
// NVSwitch): the two models cannot share a link.
func (n *Network) PacketConflict(path, ack []int32) bool {
	return n.pk != nil && !n.pk.CarriesFlow(path, ack) && (n.pk.Touches(path) || n.pk.Touches(ack))
}

// PacketStats are the packet model's counters (zero without it).
func (n *Network) PacketStats() packets.Stats {
	if n.pk == nil {
		return packets.Stats{}
	}
	return n.pk.Stats()
}

// packetOwner is the packet model's owner: it reports the flows of statePacket slots.
type packetOwner struct{ n *Network }

func (o packetOwner) PacketsSent(slot int32, now engine.Time) {
	n := o.n
	n.stats.Sent++
	n.obs.FlowSent(FlowID(slot), now)
}

func (o packetOwner) PacketsDone(slot int32, now engine.Time) {
	n := o.n
	n.nvlinkDone(slot)
	n.stats.Arrived++
	n.obs.FlowArrived(FlowID(slot), now)
	// Out of the packet flows InFlightProgress asks about: the last takes its place.
	pos, last := n.pkPos[slot], n.pkFlows[len(n.pkFlows)-1]
	n.pkFlows[pos], n.pkPos[last] = last, pos
	n.pkFlows = n.pkFlows[:len(n.pkFlows)-1]
	n.pkPos[slot] = -1
	f := &n.flows[slot]
	f.state = stateFree
	n.free = append(n.free, slot)
}
