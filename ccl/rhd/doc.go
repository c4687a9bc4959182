// Package rhd is recursive halving-doubling (RHD) for all-reduce, reduce-scatter and
// all-gather: seed 002 (HCCL's RHD page, in Chinese: the algorithm for powers of two and other
// sizes, and its cost table), ccl-facts.md §3.1 (astra-sim's HalvingDoubling.cc) and §3.2.
//
// Powers of two, p = 2^k:
//
//   - AllReduce: vector halving + distance doubling reduce-scatter (distances 1, 2, …, p/2,
//     messages S/2, …, S/p; rank i ends with a block in bit-reversed order, which all-reduce
//     does not mind), then the mirror all-gather (distances p/2, …, 1, messages S/p, …, S/2):
//     2k steps, as astra-sim and HCCL.
//   - ReduceScatter: distances p/2, p/4, …, 1 with messages S/2, S/4, …, S/p, each rank keeping
//     the half of its contiguous run that contains its own block, so group index i ends with
//     block i (the order ccl.Collective promises). HCCL calls its order-preserving variant
//     "vector doubling + distance halving"; the distances, the per-step sizes taken together
//     and the cost line are the same.
//   - AllGather: distances 1, 2, …, p/2 with messages S/p, 2S/p, …, S/2 (vector and distance
//     doubling), so what a rank holds is always one contiguous run of blocks. astra-sim goes
//     from distance p/2 down to 1 instead; the steps, sizes and cost are the same, but its runs
//     would be strided and take 2^j flows per step.
//
// Other p, k = ⌊log₂ p⌋, p′ = 2^k, r = p − p′ (seed 002): 2r ranks ("part 1") pair up, and one
// of each pair folds into the other, leaving p′ ranks for the power-of-two algorithm; the result
// is then copied back. Pairs are consecutive group indices (the second folds into the first, as
// the seed's rank 1 into rank 0), and the pairs are spread over the p′ virtual ranks by bit
// reversal (Plan), which makes every step's largest message the seed's ⌈p/2^i⌉·S/p.
//
//   - AllReduce: fold the whole vector (α + Sβ + Sγ), halving-doubling on p′ pieces, copy the
//     whole result back (α + Sβ).
//   - ReduceScatter: fold the whole vector, then the non-uniform reduce-scatter over the p′
//     virtual ranks on p pieces (a pair's representative ends with both blocks), then the
//     scatter step sends each folded rank its block (α + S/p·β).
//   - AllGather: the folded ranks send their block to their partner, the non-uniform
//     all-gather, then each partner sends the folded rank everything but its own block. That
//     last step carries (p−1)/p·S, not the seed's S — the checker refuses to deliver a block
//     its receiver already holds — so the DAG is S/p·β cheaper than the seed's formula.
//
// Dependencies: a rank's flow of step t waits for its own send and its receive of the last step
// it took part in (step t starts when step t−1 is complete at that rank, as astra-sim's
// free-packet gating). Through the chain of its sends, a flow thus waits for everything its
// sender received earlier. Chunk is the step (0-based, the fold counting as step 0), Channel is
// 0; Request.Channels is ignored.
//
// Time gives the seed's cost table exactly; the tests price the DAGs step by step (α plus the
// largest message of the step times β, and γ in reduction steps) and get Time back — minus
// S/p·β for the non-power-of-two all-gather.
package rhd
