package ccfluid

import (
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
	"simd/netmodel/packets"
	"simd/topo"
	"simd/topo/route"
)

// nvlinkServer is two GPUs (0, 1) on an NVSwitch (2) at 2,880 Gb/s with 25 ns links, and on a
// switch (3) at 400 Gb/s with 500 ns links. Directed links: 0 GPU 0 → NVSwitch, 1 back, 2 GPU 1
// → NVSwitch, 3 back, 4 GPU 0 → switch, 5 back, 6 GPU 1 → switch, 7 back.
func nvlinkServer(t *testing.T) *route.Graph {
	return graphOf(t, []topo.NodeKind{topo.GPU, topo.GPU, topo.NVSwitch, topo.Switch}, []tlink{
		{0, 2, 2880e9, 25 * engine.Nanosecond},
		{1, 2, 2880e9, 25 * engine.Nanosecond},
		{0, 3, G400, 500 * engine.Nanosecond},
		{1, 3, G400, 500 * engine.Nanosecond},
	})
}

var (
	nvPath, nvAck       = []int32{0, 3}, []int32{2, 1}
	fabricPath, fabrAck = []int32{4, 7}, []int32{6, 5}
)

func nvlinkConfig(rule NVLinkRule) Config {
	cfg := repoConfig()
	tr := fluid.SimAITransport(9000, 0)
	tr.NanosecondClock = true
	cfg.Transport = tr
	cfg.NVLink = rule
	return cfg
}

// With NVLinkPackets a flow from GPU to GPU over the NVLink goes packet by packet: 8 KiB is one
// packet of 22 ns, stored whole at the NVSwitch, and its ACK takes no time on the links: 2·22 +
// 4·25 = 144 ns, as SimAI's ns-3 has it. The slot is freed at its end and taken by the next
// flow (they follow one another: one slot for all); a flow over the fabric stays the fluid's.
func TestNVLinkFlowGoesAsPackets(t *testing.T) {
	s, n, rec, _ := setup(t, nvlinkServer(t), nvlinkConfig(NVLinkPackets))
	n.Start(nvPath, nvAck, 8192, 1)
	s.AtFunc(1000*engine.Nanosecond, func() { n.Start(nvPath, nvAck, 8192, 2) })
	s.AtFunc(2000*engine.Nanosecond, func() { n.Start(fabricPath, fabrAck, 8192, 3) })
	s.Run()
	if got, want := rec.arrived[1], 144*engine.Nanosecond; got != want {
		t.Errorf("NVLink flow done at %v, want %v", got, want)
	}
	if got, want := rec.arrived[2]-1000*engine.Nanosecond, 144*engine.Nanosecond; got != want {
		t.Errorf("second NVLink flow took %v, want %v", got, want)
	}
	if _, ok := rec.arrived[3]; !ok {
		t.Fatal("the fabric flow never arrived")
	}
	if st := n.PacketStats(); st.Flows != 2 || st.Packets != 2 || st.ACKs != 2 {
		t.Errorf("packet model carried %+v, want 2 flows of one packet each", st)
	}
	if len(n.flows) != 1 {
		t.Errorf("%d flow slots for 3 flows one after another: a packet flow's slot was not freed at its end", len(n.flows))
	}
	// The NVLink's links count what they sent: two packets of 8,244 bytes up, two ACKs back.
	if _, sent := n.peekLink(0, s.Now()); sent != 2*8244 {
		t.Errorf("GPU 0's NVLink port sent %v bytes, want %d", sent, 2*8244)
	}
	if _, sent := n.peekLink(2, s.Now()); sent != 2*60 {
		t.Errorf("GPU 1's NVLink port sent %v bytes, want %d", sent, 2*60)
	}
}

// With NVLinkAuto a server's NVLink takes the model of the flow that finds it idle: a long flow
// (1 MiB, 117 packets) keeps a short one that joins it in the fluid; a short flow that finds it
// idle goes packet by packet, and so does a long one that joins it.
func TestNVLinkAutoByBusyPeriod(t *testing.T) {
	s, n, rec, _ := setup(t, nvlinkServer(t), nvlinkConfig(NVLinkAuto))
	n.Start(nvPath, nvAck, 1<<20, 1)
	s.AtFunc(10*engine.Nanosecond, func() { n.Start(nvPath, nvAck, 8192, 2) })
	s.AtFunc(engine.Millisecond, func() {
		if st := n.PacketStats(); st.Flows != 0 {
			t.Errorf("%d flows went as packets while a long flow held the NVLink", st.Flows)
		}
		n.Start(nvPath, nvAck, 8192, 3)
	})
	s.AtFunc(engine.Millisecond+10*engine.Nanosecond, func() { n.Start(nvPath, nvAck, 1<<20, 4) })
	s.Run()
	for tag := int64(1); tag <= 4; tag++ {
		if _, ok := rec.arrived[tag]; !ok {
			t.Errorf("flow %d never arrived", tag)
		}
	}
	if st := n.PacketStats(); st.Flows != 2 {
		t.Errorf("%d flows went as packets, want the two of the second busy period", st.Flows)
	}
	// GPU 0's NVLink port carried the fluid, then packets: it reports what both sent.
	tr := n.cfg.Transport
	want := float64(2 * (tr.Wire(1<<20) + tr.Wire(8192)))
	if _, sent := n.peekLink(0, s.Now()); math.Abs(sent-want) > 1 {
		t.Errorf("GPU 0's NVLink port sent %v bytes, want %v (to the fluid's rounding)", sent, want)
	}
}

// A flow that would cross the packet model's links without running GPU to GPU (an NVLS flow to
// the NVSwitch) conflicts with it; flows it carries and flows off its links do not.
func TestPacketConflict(t *testing.T) {
	_, n, _, _ := setup(t, nvlinkServer(t), nvlinkConfig(NVLinkAuto))
	if !n.PacketConflict([]int32{0}, []int32{1}) {
		t.Error("a flow from GPU 0 to the NVSwitch does not conflict")
	}
	if n.PacketConflict(nvPath, nvAck) || n.PacketConflict(fabricPath, fabrAck) {
		t.Error("a flow the packet model carries, or one off its links, conflicts")
	}
	_, fl, _, _ := setup(t, nvlinkServer(t), nvlinkConfig(NVLinkFluid))
	if fl.PacketConflict([]int32{0}, []int32{1}) {
		t.Error("without packets nothing conflicts")
	}
}

// A payload a packet word cannot hold (PACKET_PAYLOAD_SIZE past packets.MaxPayload) keeps the
// NVLink in the fluid instead of failing the run.
func TestNVLinkHugePayloadKeepsTheFluid(t *testing.T) {
	cfg := nvlinkConfig(NVLinkPackets)
	cfg.Transport.Payload = packets.MaxPayload + 1
	s, n, rec, _ := setup(t, nvlinkServer(t), cfg)
	n.Start(nvPath, nvAck, 8192, 1)
	s.Run()
	if _, ok := rec.arrived[1]; !ok || n.PacketStats().Flows != 0 {
		t.Errorf("arrived %v, %d flows as packets; want the fluid to carry it", ok, n.PacketStats().Flows)
	}
}
