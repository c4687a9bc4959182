// Package nccl turns a collective into the flow DAG NCCL or SimAI's SimCCL would run, prices
// it in closed form, and chooses the algorithm as NCCL's tuning model or SimCCL does. Section
// numbers refer to docs/ccl-facts.md.
//
// # Algorithms
//
// Ring (§1.3–1.4) is SimCCL's ring, flow for flow: the group's members on each server, sorted,
// form a local list; channel c (of C = the members per server) visits the servers in order, each
// server's list rotated left by c, so every channel uses the same NVLink edges and crosses from
// local index c−1 of one server to local index c of the next. An all-reduce is 2(n−1) steps, a
// reduce-scatter or all-gather n−1; at every step each rank sends one flow of S/(n·C) to its
// successor, waiting only for the flow it received from its predecessor at the step before
// (Kind RING, Channel c, Chunk the step). An all-to-all is SimCCL's one shot: every ordered pair
// one flow of Bytes/n on channel 0, none waiting. The DAG is arithmetic (flows and edges computed
// from the flow id, O(n) memory): a 1,024-GPU ring all-reduce has 16.7 million flows.
//
// PXN (Options.PXN, SimAI's AS_PXN_ENABLE=1; §1.4 and §2.5) keeps every ring hop that crosses
// servers on one rail: a server's last GPU of the ring (its exit) sends over NVLink to the
// server's first GPU of the ring (its entry, on the next server's entry's rail), which sends
// over the network. Options.PXNVariant says how:
//
//   - PXNSimCCL (the default) is SimCCL v1.6's PXN, flow for flow: at every step of an
//     all-reduce or reduce-scatter each exit sends its flow to its entry (KindRing, "RING") and
//     the entry sends it on to the next server's entry (KindPXNInit, "PXN_INIT", at every
//     all-reduce step and at step 0 of a reduce-scatter; KindRing after), waiting for it; the
//     next entry's own flow of the next step waits for that network hop. The flows of a step
//     are numbered in SimCCL's order: the members in group order, an exit's network hop right
//     after its NVLink hop. In the gather phase of an all-reduce this relays chunks to entries
//     that already hold them, sends next servers' entries chunks they have, and at the last
//     step sends each exit a chunk it has (check with ccl.CheckOptions.AllowRedundant;
//     Options.RedundantDeliveries says when). All-gather and
//     all-to-all run without PXN, as in SimCCL, whose all-gather compares AS_PXN_ENABLE by
//     pointer (so PXN never turns on) and whose all-to-all has no PXN.
//   - PXNNCCL is an NCCL-like PXN: a rank is never sent what it already holds. The
//     reduce-scatter phase is SimCCL's (the NVLink hop KindPXNInit, the network hop KindPXN);
//     in a gather phase (all-gather, second half of an all-reduce) the first m−1 steps relay as
//     above, then the entry, which has the chunk, sends it over the network itself, and in the
//     last steps, when the next entry has it already, nothing crosses servers (in an all-reduce
//     also one step earlier, and the exits get nothing at the last step: relaying in the
//     reduce-scatter phase completes the chunk of each server's entry at the exit and entry of
//     the server before). For the all-to-all (the MSCCL fork's PXN) a pair on different servers
//     and rails goes through the sender's server-mate on the receiver's rail, on the fork's
//     channel (Δserver−1)·g + Δlocal; only through a group member, other pairs go direct.
//
// Either PXN needs the same member count on every server of a group it relays.
//
// Tree (§2.2) is NCCL's double binary tree all-reduce: NCCL's binary tree over the servers
// (children from the lowest set bit; the second tree the mirror for an even count and the shift
// for an odd one; channel c uses tree c%2), a chain inside each server in the channel's order
// (the members rotated by c/2), a server's first GPU sending to its parent server's second GPU
// if it is that server's child 0 and to its first if it is child 1 (NCCL's BALANCED_TREE). Each
// channel reduces up to the root and broadcasts back down, pipelined in chunks: 2 channels per
// member of a server by default (SimCCL's count), chunks by NCCL's Simple tree rule (512 KiB
// halved for deep trees; §2.6), at most Options.MaxChunks.
//
// NVLS (§1.4, §2.3) is SimCCL's NVLink SHARP all-reduce inside one server: the buffer in 4
// chunks; per chunk every rank sends to the server's NVSwitch (endpoint TotalGPUs+server) and
// the NVSwitch sends the reduced chunk to every rank once all of the chunk has arrived.
//
// NVLS-Tree (§2.3) crosses servers: per channel (2 per member of a server) and chunk (NCCL's
// 128 KiB NVLS chunk), a server's members other than the channel's head (local index c/2) send
// to its NVSwitch, which sends their sum to the head; the heads reduce up and broadcast down
// the channel's tree (c%2); each head sends the result to its NVSwitch, which multicasts it to
// the other members. A server with one member of the group has no NVSwitch hops.
//
// In Tree, NVLS and NVLS-Tree, chunk k of a connection waits for chunk k−1 of the same
// connection: SimAI pipelines chunks by queueing them on the connection (§1.7, step 5), and the
// DAG runner only knows parents.
//
// # Costs and choices
//
// RingTime, PXNTime, TreeTime, NVLSTime and NVLSTreeTime are closed forms in the
// alpha-beta-gamma model (ccl.LinkCosts) for the DAGs above; their α count is the number of
// steps on the DAG's critical path. TuneConfig.Time and Select are NCCL's tuning model (§2.7,
// tables in tuning.go) and its choice of (algorithm, protocol); SimCCLAlgorithm is SimCCL's
// rule (§1.5).
//
// # Where simd differs from SimCCL, on purpose
//
//   - All-gather's Bytes is the gathered output (SimCCL is inconsistent, §1.4); a step moves
//     Bytes/(n·C).
//   - Groups with different member counts per server (SimAI never makes them) get C = the
//     largest count, each server's list rotated modulo its own length; SimCCL's construction
//     (offset Ranks[nlocal]−Ranks[0] between servers) agrees with simd's for every SimAI group.
//   - The NCCL-like PXN (Options.PXNVariant = PXNNCCL; the default is SimCCL's) differs as
//     described above: no chunk sent to a rank that holds it, PXN for all-gather and all-to-all.
//   - Tree is a real double binary tree (SimCCL's tree is dead code and falls back to the
//     ring), with NCCL's trees rather than SimCCL's grouping-by-four and shift.
//   - NVLS refuses a group on several servers (SimCCL silently builds no flows); SimCCLAlgorithm
//     picks NVLS-Tree for such a group instead of NVLS.
//   - NVLS-Tree (unreachable in SimCCL) does not send the head's own data through the NVSwitch
//     and does not send the result back to the head, which has it.
//   - Chunked algorithms carry the connection queue as an edge (see above).
package nccl
