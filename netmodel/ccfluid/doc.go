// Package ccfluid is simd's fluid network model with congestion control, used when SimAI.conf's
// CC_MODE asks for one: DCQCN (1), HPCC (3) or DCTCP (8). Where package fluid gives every flow its ideal
// max-min fair rate at once, here senders set their own rates from the feedback of the
// network, switch queues build up and drain, ECN marks follow the queues, and PFC pauses
// upstream ports — the effects SimAI gets from ns-3 packet by packet, as a fluid.
//
// # Model
//
// Senders. Every flow has a reaction point that starts at the line rate of its first link:
// DCQCN (cc.DCQCN), driven by CNPs and its own timers; or DCTCP (cc.DCTCP) and HPCC (cc.HPCC),
// driven once per round trip with what the ACKs of that round carried — the fraction of marked
// packets for DCTCP, the INT of every switch port on the path (backlog, transmit rate over the
// round, link rate) for HPCC. With HAS_WIN every flow also has SimAI's window (window.go): it
// may have ⌈window/payload⌉ packets in flight, so its injection is at most that over its round
// trip, which counts the queues of its path and of its ACKs' route and the ACKs' waits behind
// data packets in service (with Config.AckWait a whole packet at each sending link after the
// first where the packet grids are locked, as ns-3's unjittered packets make them for flows
// that start together); with Config.FirstWindowBurst its first round trip is ns-3's instead
// (opening.go): its first window at its rate, then nothing until its first ACK. The flows that start on one port (a GPU's NIC or NVLink port)
// share it as ns-3's NIC serves its queue pairs, in turn, each paced at its own rate: max-min
// fair with the reaction points' rates (and windows) as caps, after the ACKs the port sends
// first. With Config.Turns the flows the port cannot give all they ask for are served
// in turn, a packet each, as ns-3's NIC does (turns.go): the same rates on average, but each
// flow's last packet leaves on its turn. What the port sends is the flow's injection; its bytes leave the sender at that rate,
// and the flow is "sent" (Observer.FlowSent) when the last one has.
//
// The NVLink (Config.NVLink, nvlink.go). The flows inside a server — a GPU to its NVSwitch and on
// to another GPU — may go packet by packet instead (package packets, SimAI's ns-3's rules): by
// default where a server's NVLink goes busy with a flow of at most AutoPackets packets. Such a
// flow keeps a slot here for its observers and nothing else of the model below; the monitors add
// what the packets sent to what the fluid did on those links.
//
// Packets and ACKs (Config.Transport). A flow's links carry its payload and every packet's
// headers. Every data packet brings back an ACK on the ACK's own route (Start's ack), which the
// receiving NIC sends ahead of its data: a NIC port that has answered a flow keeps room for
// ACKs from then on, Full/(Full+Ack) of its rate for its data (applyFlow). The flow is done
// (Observer.FlowArrived) when its last byte has left the last queue of its path, the switches
// have stored its last packet (fluid.Transport.Tail), and — with Transport.AtAck — the ACK has
// crossed the queues of its route back, behind the data queued there and the packets in service
// where it passes (window.go, lastAckWait; the one at the receiver's port is read when the last
// packet gets there and the ACK is made, an event per flow: lastAckMade). With
// Transport.NanosecondClock (SimAI's ns-3 sends a packet in whole nanoseconds, rounded down) a
// link sends what its full packets' rounded times make of its rate (Transport.PacketRate), a NIC
// paces a flow at what they make of its congestion-control rate, and an ACK takes its own
// rounded time (none on a 2,880 Gb/s NVLink); the link's configurations (ECN, DCQCN) stay keyed by
// its nominal rate.
//
// Queues. Every directed link has a FIFO egress queue. Its arrivals are the sum of the arrival
// rates of the flows crossing it; between events arrivals and capacity are constant, so the
// backlog is linear: it grows at arrivals − capacity and drains at capacity − arrivals down to
// zero, where an "empty" event switches it to passing arrivals through. What a flow brings to
// a link is, with Config.Reshape (reshape.go, SimAI's switches), what the link before it sends
// it: a link that passes its arrivals through passes each flow's on, and one with a backlog
// sends at its rate, shared among its flows in the proportions they arrived in when the bytes
// now leaving did (FIFO), so the links after a queue receive no more than its rate, and a flow
// whose sender is done still reaches them until its last byte has left the queue. Without it
// every link of a path receives the flow's injection at once (the classic fluid network model,
// also Zhu et al.'s DCQCN model: a queue upstream delays bytes but does not reshape the rates
// seen downstream). A flow's last byte is followed through the queues: it enters a queue
// behind the backlog there and leaves once the link has sent that backlog (FIFO), then enters
// the next one; its arrival at the receiver (Observer.FlowArrived, reported as soon as it is
// known) is when it leaves the last queue plus the path's delay (and the tail and the ACK's
// way back, above). Queues are followed in the senders' time frame — the one in which what a
// link sends reaches the next link at once — so the propagation delay is added once, at the
// end, as in the ideal model, and one flow alone on an idle path arrives at exactly the same
// time in both models. Queueing delay, and a pause anywhere on the path, lengthen a flow's
// completion exactly as far as the fluid queues say. The link where the last byte waited
// longest is the flow's bottleneck (reported to a fluid.BottleneckObserver; a flow that never
// waited reports its path's slowest link).
//
// ECN (DCQCN and DCTCP). A switch egress port whose rate has an entry in KMIN_MAP/KMAX_MAP/PMAX_MAP marks what it
// sends with RED's probability of its backlog (cc.ECNMarker). The number of marked packets is
// its expected value, PACKET_PAYLOAD_SIZE bytes per packet: the integral of
// rate·p(q(t))/packet, computed exactly over the linear backlog (quadratic where p is linear),
// so the next mark's time is solved, not polled. Each mark belongs to one of the flows whose
// bytes the port sends, drawn with probability proportional to what it brought in when they
// arrived (with Config.MarkDepartures: with Config.Reshape its departure weight there,
// reshape.go; without, departures.go's estimate from the port's FIFO arrival curve and the
// flows' past injections; without MarkDepartures, its arrival now) from a generator seeded by
// Config.Seed, among those that have put a packet through the port since their last mark (a
// switch marks packets, so a flow carries at most one mark per packet: a slow flow into a busy
// port is not marked, and cut, several times within one of its packet times); the receiver's
// notification point (cc.CNPGate) turns it into a CNP, which reaches the sender one path delay
// after the marked packet reached the receiver. Under DCTCP every mark counts towards its
// flow's round instead.
//
// DCQCN. The reaction point is driven only by its CNPs and by the timers that can change its
// rate (cc.DCQCN.Next); α updates between them are folded in when the next one comes, so a
// flow costs events per rate change, not per ALPHA_RESUME_INTERVAL. With
// Config.PaceAtOldRate a change reaches the NIC when the packet under way at the old rate has
// had its gap, as SimAI's NIC paces (pacing.go).
//
// PFC. Every packet switch has a shared buffer (cc.SwitchBuffer, BUFFER_SIZE with SimAI's
// headroom, reserve and dynamic threshold). The ingress occupancy of a port is the part of the
// switch's egress queues that arrived through it: each egress queue keeps what it holds from
// each ingress port, which grows with the port's arrivals and falls with the port's share of
// what the queue sends — by the departure weights with Config.Reshape, first in first out;
// by the arrivals without (pfc.go, advanceFeeds). When a port's occupancy reaches the
// dynamic threshold the switch sends PAUSE to the port's upstream neighbour, and RESUME once it
// falls the resume offset below; the frame takes the link's delay. Occupancies are linear
// between events, so crossings are solved. A paused link sends nothing: its queue keeps
// receiving, the flows behind it stop there (head-of-line blocking: every flow on the link,
// whichever queue caused the pause), and the flows whose first link it is stop injecting.
// NVSwitches have no buffer model and never pause, as in SimAI. A switch looks at its ports
// whenever one of its queues changes; with Config.BoundedPFCChecks only when a bound on their
// occupancies (what the last look found plus what its fastest ingress link can bring since,
// within its total backlog) comes near a pause (pfcbound.go).
//
// # What the model leaves out
//
// Per-packet effects: drops (PFC makes the fabric lossless), retransmission, jitter, the
// serialisation of individual packets. Without Config.Reshape, a congested or paused queue does
// not slow the arrivals its flows bring to queues further on, and bytes released by a resume
// reach them at the senders' rates, not as a burst; with it, bytes a resume releases leave at
// the link's rate in the proportions they came in. CNPs are not delayed by queues on the way back.
// TIMELY and HPCC-PINT are not modelled.
//
// # Events and determinism
//
// The changes of an instant are collected and acted on once, at the end of the instant
// (engine.AtInstantEnd): ports re-share, then queues re-arm their timers (empty, next marker
// out, next mark), then switches check PFC. Everything runs on the engine's clock; the only
// randomness is the seeded choice of the marked flow, so the same inputs and seed give the
// same events.
//
// Two answers are kept where nothing they read has moved, because a port or a link of an
// all-to-all carries a thousand flows and is asked at every rate cut or mark: a NIC port's
// sharing while every flow whose demand moved asks for more than the level before and after
// (shareStands), and a link's window target while no term of its flows has moved
// (windowTarget, in runs whose links carry many flows). Both give what computing again gives,
// bit for bit (TestShareStandsIsTheFullSharing, TestWindowTargetKeptIsComputed).
package ccfluid
