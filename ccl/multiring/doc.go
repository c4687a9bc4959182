// Package multiring is TASP's Multi-Ring collective (ccl-facts.md §6, seed 004: "TASP:
// Topology-aware Sequence Parallelism", infinigence/HamiltonAttention): the GPUs' all-to-all
// wiring is split into arc-disjoint directed Hamiltonian cycles, and a ring all-gather is split
// into one all-gather per cycle, all running at once.
//
// # Hamiltonian decompositions
//
// Cycles(n) gives n−1 arc-disjoint directed Hamiltonian cycles of K_n*, which exist for every n
// except 4 and 6 (Tillson 1980). Every n is covered by a closed-form construction — no search —
// in O(n²) time (under 0.1 ms for any n ≤ 64, BenchmarkCycles; the tests check every n up to
// 400):
//
//   - n odd, m = n−1: with b = 0, 1, −1, 2, −2, …, m/2 the zig-zag path of Z_m (its steps +1,
//     −2, +3, … are the m−1 non-zero residues, once each), the rows C_r = (∞, b+r), r ∈ Z_m,
//     ∞ = m. This is Walecki's decomposition of K_n with every cycle taken both ways.
//   - n = 8: TASP's fixed table (§6.3), so that the 8-GPU rings are exactly TASP's.
//   - n even ≥ 10, m = n−2: the extension of §6.3. Take the rows C_r of K_{m+1}* (∞₁ = m) and a
//     transversal: a Hamiltonian path P of the m+1 vertices using exactly one arc of every row.
//     Insert ∞₂ = m+1 into each row at its arc of P (t → h becomes t → ∞₂ → h) and add the
//     cycle ∞₂ + P. Every arc of K_{m+2}* is then used once: arcs off P stay in their rows, arcs
//     of P are in the last cycle, ∞₂ → x for x the head of an arc of P (its row) or the start of
//     P (the last cycle), and x → ∞₂ likewise with tails and the end.
//   - n ≡ 0 (mod 4), n ≥ 12: the transversal is TASP's, given by its rotations s_r
//     (gen_hamilton_circle, §6.3 step 3).
//   - n ≡ 2 (mod 4), n ≥ 10 (TASP has none): this package's transversal. With m = 4k, the arc
//     x → x+d of Z_m lies in row x − b_{j−1} where d = b_j − b_{j−1}: x → x+1 in row x, x → x+2
//     in row x−2k+1, x → x+4 in row x−2k+2, and ∞₁ → y in row y. The path is ∞₁ → 0 followed by
//     the steps +2 (k−1 times), +1, +1, +2 (k−1 times), +1, +2 (k−1 times), +4, +2 (k−2 times):
//     it visits the evens 0..2k−2, then 2k−1, the evens 2k..4k−2, then 4k−1, the odds 1..2k−3,
//     then the odds 2k+1..4k−3 — every vertex once — and its arcs lie in rows 0; the odds
//     2k+1..4k−3; 2k−2 and 2k−1; the odds 1..2k−3; 4k−2; the evens 2k..4k−4; 4k−1; the evens
//     2..2k−4 — every row once. (Found by a search for walks with few irregular steps, then
//     proved as above; it is not Tillson's own construction.)
//
// # Multi-server rings
//
// ServerCycles(m, u) is §6.5's topology-aware (m−K_m−m)^u: u servers of m GPUs, m rings, each
// walking a Hamiltonian path of K_m* (Paths) inside every server and hopping to the next server.
// TASP hard-codes u = 2 and 4 with m = 8 and hops from local i+4 to local i; here any u ≥ 2 and
// any m ∉ {3, 5} work, and the paths are relabelled so that each hop stays on its rail (same
// local index) — for every u when m ≡ 0 (mod 4) or m = 1, for even u otherwise; in the remaining
// cases only the hop that closes each ring crosses rails (ServerCycles explains why). Every GPU
// has exactly one inter-server out-arc per step, so it sends one chunk over its NIC and m−1 over
// NVLink.
//
// # Collectives
//
// Build turns any set of Hamiltonian rings into all-gather, reduce-scatter or all-reduce DAGs;
// New uses Rings(req): Cycles(n) for a group inside one server, ServerCycles(m, u) for a group
// spread evenly over u servers (TASP's naive alternative for several servers, one K_n* over all
// their GPUs, is Build(req, Cycles(n))). All-gather is §6.4's Multi-Ring AllGather: n·R chunks, chunk
// (g, r) starts on GPU g, every step every GPU forwards on every ring the chunk it received last
// step, n−1 steps, and step s+1 of ring r at a GPU waits for step s of ring r arriving there.
// Reduce-scatter runs the same rings with partial sums; all-reduce is reduce-scatter followed by
// all-gather, as the TASP paper suggests for the backward pass.
//
// # Costs (α-β-γ)
//
// With S the buffer and R = n−1 rings of chunks S/(n(n−1)), one server:
//
//	                full mesh (a link per GPU pair)        switch (one port per GPU)
//	AllGather       (n−1)·α + S/n·β                        (n−1)·α + (n−1)/n·S·β
//	ReduceScatter   (n−1)·α + S/n·β + (n−1)/n·S·γ          (n−1)·α + (n−1)/n·S·(β+γ)
//	AllReduce       2(n−1)·α + 2·S/n·β + (n−1)/n·S·γ       2(n−1)·α + 2(n−1)/n·S·β + (n−1)/n·S·γ
//
// A single ring takes (n−1)·(α + S/n·β) per pass on either fabric (RingTime). So on a full mesh
// (MI300X) the ring's all-gather takes (n−1)·(S/n)/B while Multi-Ring takes
// (n−1)·(S/(n(n−1)))/B plus the same latencies; on an NVSwitch (per-GPU port B) they are equal —
// TASP gains there only from a per-stream cap or across servers (§6.6). Across u servers of m,
// each of the n−1 steps takes max(α_intra, α_inter) + max(c·β_inter, L·c·β_intra) with c =
// S/(n·m) and L = 1 (full mesh) or m−1 (switch), against S/n·max(β_intra, β_inter) for one ring
// (ServerTime, ServerRingTime). The tests price the generated DAGs step by step and get these
// formulas back.
package multiring
