// Package alltoall builds all-to-all flow DAGs and prices them in the α-β model
// (ccl-facts.md §3.1 "AllToAll.cc" and §3.2 "Pairwise AllToAll(v)", HCCL's pairwise algorithm).
//
// Bytes is what each rank sends in all; it sends Bytes/n to every rank, itself included (that
// block does not move). Piece i·n + j is group index i's block for group index j, as
// ccl.Collective lays all-to-all out.
//
//   - Direct: every ordered pair (i, j), i ≠ j, one flow, all at once and without parents —
//     astra-sim's AllToAll with its window at n−1 and SimCCL's n(n−1) independent flows.
//     DirectTime prices it behind one port per rank, α + (n−1)/n·S·β; DirectMeshTime on a full
//     mesh, α + S/n·β.
//   - Pairwise: n−1 rounds; in round k group index i sends to (i+k) mod n. Round k at a rank
//     waits for round k−1 at that rank — both the rank's send and its receive of round k−1 —
//     so each rank has one message in flight each way, as in HCCL. PairwiseTime is
//     (n−1)·α + β·Σₖ maxᵢ n_{i,i+k} = (n−1)·(α + S/n·β); PairwiseTimeV takes the per-pair sizes of
//     an all-to-all-v. The DAG dependencies are a choice of this package: the seeds define the
//     rounds, not what a round waits for.
//
// Request.Channels and GPUsPerServer do not change either DAG.
package alltoall
