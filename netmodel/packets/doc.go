// Package packets carries flows packet by packet over links that SimAI's ns-3 runs without
// congestion feedback: the NVLink of a server, its GPUs' NVLink ports and its NVSwitch. There
// a fluid model can only guess where each flow's packets stand against the others' (which flow
// of a port ends first, how long an ACK waits behind the data packet in service), and those
// phases, nanoseconds each, are what set the flows' times; a packet model has them exactly, and
// with few packets (an NVLink flow of a collective is a few dozen) it costs little.
//
// # Model
//
// The rules are ns-3-alibabacloud's, the build SimAI runs (rdma-hw.cc, qbb-net-device.cc,
// nvswitch-node.cc, rdma-queue-pair.cc):
//
//   - A flow is a queue pair at its sender's NIC port (Role NIC). A flow of B bytes is
//     ⌈B/Payload⌉ packets of min(Payload, bytes left) payload plus Header bytes
//     (RdmaHw::GetNxtPacket).
//   - A NIC port that is free sends the next ACK waiting at it, if any (its high-priority
//     queue), else a packet of the next queue pair in turn after the last one it served
//     (RdmaEgressQueue::GetNextQindex): one with bytes left, not bound by its window, and not
//     paced past now. The queue pairs are kept in the order they were made; the turn's scan
//     drops those that are done (every byte acknowledged) from the lowest it passed onwards,
//     without moving the position of the last one served, as ns-3 does. A queue pair paces at
//     its rate (the port's line rate: nothing marks on these links, so no rate is cut):
//     after a packet it may send again a packet time later (RdmaHw::UpdateNextAvail).
//   - A queue pair's window (HAS_WIN: SimAI's maxBdp) bounds the bytes it has sent and not yet
//     had acknowledged: at or above it the queue pair waits (RdmaQueuePair::IsWinBound).
//   - A link sends one packet at a time in its packet time (fluid.Transport.PacketSecs: ns-3's
//     whole nanoseconds, rounded down, by default); the packet is received whole a propagation
//     delay after its last bit left. The sender's end of transmission is scheduled before the
//     packet's arrival, as ns-3's QbbNetDevice::TransmitStart does, so that among events of one
//     instant the order is ns-3's.
//   - A switch port (Role Egress) holds one FIFO queue for data and ACKs alike (SimAI's
//     ACK_HIGH_PRIO 0 puts an ACK in its data's priority group) and sends whenever it is free.
//     The NVSwitch neither marks ECN nor pauses (NVSwitchNode has no such code).
//   - The receiver answers every packet with an ACK of the bytes received in order
//     (L2_ACK_INTERVAL 1; RdmaHw::ReceiveUdp), queued at its NIC port ahead of its data, and
//     the ACK follows its own route back. A flow is done when the ACK of its last packet
//     reaches the sender (SimAI's rule; RdmaHw::ReceiveAck, QpComplete), or, with the
//     transport's AtAck off, when its last packet reaches the receiver; its sender's port is
//     asked for its next packet after the owner has been told, as ns-3 triggers its NIC after
//     the completion callback.
//
// The events are the ends of transmissions and the arrivals of packets, both at fixed delays
// from their cause, so they travel on the scheduler's delay lines (engine.Scheduler.AfterFixed)
// in the order they were caused: a flow costs two events per packet and link, its ACKs as many.
//
// The owner (package ccfluid) gives the network its flows (Start, with the owner's slot for the
// flow) and learns when a flow's last byte has left its sender and when it is done (Owner).
package packets
