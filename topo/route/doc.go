// Package route routes flows over a topology the way SimAI's ns-3 network forwards packets,
// and answers the questions about a topology that need paths: SimAI's per-pair RTT and BDP,
// switch tiers, oversubscription, bisection bandwidth and the set of equal-cost paths
// (Summarize and Router.EqualCostPaths gather them, with the text simd topo -info prints; Info
// reads a file and writes both, as simd topo -info does).
//
// A Graph is the compact form of a topo.Topology: CSR adjacency in flat int32 slices, and link
// i of the file numbered as the directed links 2i (Src→Dst) and 2i+1 (Dst→Src), so that the
// network model can keep per-direction state in flat slices. A Router holds the up/down state
// of the links and routes single flows on demand.
//
// # The rule SimAI implements
//
// Read from aliyun/ns-3-alibabacloud, simulation/src/point-to-point/model/ (switch-node.cc at
// 4039bd9, nvswitch-node.cc at bdc0ebb, rdma-hw.cc at b077fa3, rdma-queue-pair.cc at 2c23d0c)
// and simulation/scratch/common.h (02efa73), and from SimAI's own frontend, aliyun/SimAI
// astra-sim-alibabacloud/astra-sim/network_frontend/ns3/common.h (120db6a), whose
// CalculateRoute, SetRoutingEntries, TakeDownLink and SetupNetwork are the same code:
//
//   - Addresses. common.h node_id_to_ip: node id → 0x0b000001 + (id/256)·0x10000 +
//     (id%256)·0x100 (NodeIP). entry.h SendFlow: sport = portNumber[src][dst]++, starting at
//     10000 for every pair (QPSport, DefaultSport), dport = 100 (DefaultDport), pg 3.
//   - Route tables. common.h CalculateRoute runs one BFS per host (node type 0, a GPU) h,
//     queueing only switches (type 1) and NVSwitches (type 2), so hosts are reached but never
//     forward. For every node n found at distance d+1 from a node "now" at distance d, now is
//     appended to nextHop[n][h]: every shortest next hop is kept (ECMP), except that when one of
//     them is an NVSwitch only NVSwitches are kept (an NVSwitch arriving empties the list; a
//     non-NVSwitch is not added after one). SetRoutingEntries turns the lists into interface
//     lists: SwitchNode/NVSwitchNode::AddTableEntry for switches, RdmaHw::AddTableEntry for
//     hosts (NVSwitch next hops into m_rtTable_nxthop_nvswitch, the others into m_rtTable).
//   - Switch ECMP. switch-node.cc SwitchNode::GetOutDev (nvswitch-node.cc NVSwitchNode::GetOutDev
//     is identical): buf.u32[0] = sip, buf.u32[1] = dip, buf.u32[2] = sport | dport<<16 for UDP
//     data (ACKs use the ACK's ports), hashed as the 12 bytes of that uint32 array —
//     little-endian on the x86 hosts SimAI runs on — by EcmpHash(buf, 12, m_ecmpSeed), and the
//     result taken mod the number of next hops. EcmpHash is Murmur3 x86 32-bit written out
//     (blocks ×0xcc9e2d51, rotl 15, ×0x1b873593; h rotl 13, h·5+0xe6546b64; the tail; h ^= len;
//     fmix32); the constructor sets m_ecmpSeed = m_id, the node id, and common.h never calls
//     SetEcmpSeed. Hash(FlowKey(sip, dip, sport, dport), node id) is that value; simd computes
//     it with github.com/twmb/murmur3, checked against an independent implementation and the
//     published test vectors.
//   - NIC choice. rdma-hw.cc RdmaHw::GetNicIdxOfQp (b077fa3): if ⌊src/gps⌋ == ⌊dst/gps⌋ or the
//     host has NVSwitch next hops toward dip, the index is chosen among the NVSwitch-facing
//     interfaces, else among m_rtTable[dip], in both cases as v[qp->GetHash() % v.size()].
//     rdma-queue-pair.cc RdmaQueuePair::GetHash hashes struct {uint32 sip, dip; uint16 sport,
//     dport} — the same 12 bytes — with ns-3's Hash32, which is a fresh Hasher: Murmur3 x86
//     32-bit seeded with Hash::Function::Murmur3's SEED 0x8BADF00D (core/model/hash.h,
//     hash-murmur3.{h,cc}). These were read in a copy of ns-3's core sources, not in
//     ns-3-alibabacloud's own tree (its core module was not available), so the seed is not
//     verified for SimAI's build. So simd picks the first hop by Hash(key, NICSeed) mod the
//     number of equal-cost interfaces. Another revision of rdma-hw.cc (0d8b852) picks network
//     interfaces round robin per host (m_lastRouteIdx) instead; simd follows the hash. An
//     NVSwitch originating NVLS traffic (it has an RdmaHw whose every entry is in its NVSwitch
//     table) chooses the same way.
//   - LINK_DOWN. common.h TakeDownLink marks nbr2if[a][b] and [b][a] down, clears and recomputes
//     every table (the BFS skips down links) and redistributes the QPs (RedistributeQp calls
//     GetNicIdxOfQp again): from then on every packet follows the new tables.
//   - RTT/BDP. CalculateRoute also records, along the BFS tree (the first discovery of each
//     node), delay (ns), txDelay (Σ per hop ⌊payload·8e9/bw⌋, uint64 ns) and bw (the slowest
//     link); SetupNetwork sets rtt = 2·delay + txDelay, bdp = ⌊rtt·bw/1e9/8⌋ and takes maxRtt,
//     maxBdp over all host pairs.
//
// # What simd does
//
// Route follows a flow hop by hop with exactly that rule: at the source the equal-cost
// interfaces, indexed by Hash(key, NICSeed); at every switch and NVSwitch its equal-cost next
// hops, indexed by Hash(key, node id); the candidates are the up links to neighbours one hop
// nearer the destination through switches (GPUs never forward), NVSwitches only when one is
// among them. The equal-cost sets are complete: every shortest path allowed by the NVSwitch
// rule is produced by some source port (tested against gonum's all-shortest-paths).
// Dual-plane fabrics stay in their plane because the wiring does: the planes are separate
// components of the switch graph.
//
// Differences, where SimAI's behaviour cannot be reproduced or is not the intended one:
//
//   - Candidate order. SimAI's lists are in BFS discovery order, each node's neighbours visited
//     in the order of std::map<Ptr<Node>, Interface>, i.e. of the ns-3 Node objects' addresses.
//     GPUs are small objects on the heap, created in id order; SwitchNode and NVSwitchNode
//     objects are ~34 MB each (m_bytes[1025][1025][8] uint32), so each is its own mmap, which
//     Linux places top-down: at descending addresses in id order. On every generated fabric
//     that makes each list the reverse of simd's candidate order (ascending neighbour id,
//     parallel links by link index; TestNextHopsAgainstSimAIReference re-implements SimAI's BFS
//     with that address order), so simd takes candidate n−1−(h mod n) where SimAI takes entry
//     h mod n of its list. Checked against the paths SimAI's ns-3 took, hop by hop, for 7,168
//     flows on the 64-GPU AlibabaHPN fabric (TestRoutesAgainstNS3Paths); in ascending order
//     none of the cross-rail paths matched. The order is the allocator's, not SimAI's intent:
//     another C library or kernel could reverse it again.
//   - Parallel links. SimAI keeps one interface per neighbour (the last line listed). topo.Parse
//     refuses a file that joins two nodes twice; a topology built in memory may have parallel
//     links, and simd keeps each as its own equal-cost next hop. Generated files have none.
//   - Same server without an NVSwitch route (full-mesh servers): SimAI's GetNicIdxOfQp asserts
//     (the NVSwitch table is empty); simd uses the ordinary next hops (the direct GPU–GPU link).
//   - Destinations. SimAI has routes toward GPUs only; a flow to an NVSwitch (NVLS) or any node
//     must be to a neighbour of its source, and takes the direct link.
//   - RTT/BDP. SimAI measures one BFS-tree path per pair, which depends on the same address
//     order; simd takes, per pair, the worst over the pair's routes (largest RTT and BDP,
//     smallest bandwidth, see PairMetrics). When all routes of a pair have equal delays and
//     rates — every generated fabric — the figures are identical (tested against a literal
//     re-implementation of CalculateRoute on topo/testdata).
//
// # Cost
//
// Nothing is materialised per pair of GPUs. A route to GPU d leaves through one of d's
// attachment switches (its neighbours), so the hop count from a switch n is
// 1 + min over d's attachments a of d_sw(n, a), with d_sw the distance in the switch graph.
// The Router computes d_sw by BFS from an attachment switch the first time a route needs it
// and caches it as one byte per switch of that component (ToRs and NVSwitches are the only
// attachments; an NVSwitch's component is itself): 1.2 MB for a 16,384-GPU Spectrum-X fabric,
// 16.8 MB at 131,072 GPUs. SetLinkDown on a switch–switch link drops the tables of its
// component; a GPU's own links are looked up per query. The equal-cost next hops of a switch
// depend only on it and on the destination's attachment switches in its component (a ToR, or
// a ToR pair), so they are remembered, until a link changes state, in a dense table per such
// set indexed by the switch's place in the component, 4 bytes per switch: 4.7 MB for the
// 16,384-GPU fabric once every ToR has been a destination.
//
// Measured on a shared 2-core Intel Xeon (go1.26, linux/amd64; the ranges are over several runs)
// with
//
//	go test -run '^$' -bench . -benchmem ./topo/route
//
// for the 16,384-GPU Spectrum-X fabric (topo.SpectrumXDefaults with Pods = AutoPods: 4 pods of
// 4,096 GPUs under 4,096 core switches; 23,040 nodes, 65,536 links):
//
//	BenchmarkBuild16384       graph + router                 14–21 ms/op     4.9 MB/op
//	BenchmarkBuildWarm16384   + every distance table        107–110 ms/op    6.2 MB/op
//	BenchmarkRoute16384       one random flow, warm         1.0–1.3 µs/op      0 B/op
//	BenchmarkRoute1M16384     build + 1M random flows, cold 1.0–1.35 s/op    6.2 MB/op
//	BenchmarkRouteSameFlow    one cross-pod flow again     0.55–0.85 µs/op     0 B/op
//	BenchmarkMaxRTTBDP16384   SimAI maxRtt/maxBdp          0.25–0.41 s/op     59 MB/op
//	BenchmarkMaxRTTBDP256     the same, 256-GPU AlibabaHPN   1.5 ms/op (0.88 s pair by pair)
//	BenchmarkBisection16384   Dinic max-flow                 10–12 ms/op      14 MB/op
//
// At 131,072 GPUs (32 pods) building takes 0.17 s, all 2,048 distance tables 6.3 s (computed
// lazily, so only when flows need them), a warm route 4.2 µs and MaxRTTBDP 19 s.
//
// A Router is not safe for concurrent use: queries share scratch space and fill caches.
package route
