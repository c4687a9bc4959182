// Package moe holds the token-routing workloads of seed 000 (a Python simulator of MoE dispatch
// by DeepEP and FAST) and the estimates that price those dispatch plans on them.
//
// A workload is a Config (cluster shape, tokens per layer, top-k, Zipf exponent, layers,
// iterations, token size, bandwidths, seed; DefaultConfig is the seed's) and, for each
// iteration, the requests of every MoE layer: for each token, the GPU that holds it and the
// top-k experts it is routed to, with the GPU of each (expert e lives on GPU e / ExpertsPerGPU).
//
//   - gen.go: Generate (the seed's generate_workload) draws them deterministically from
//     Config.Seed: tokens spread evenly over the source GPUs, experts drawn from a Zipf law over
//     a fixed seeded ranking of the experts, no expert twice in a token. See Generate for the
//     exact definitions.
//   - files.go: WriteDir and ReadDir store a workload as a folder: config.json (every parameter)
//     and one iter_<i>_requests.csv per iteration (layer,token,src_gpu,experts,gpus, the lists
//     separated by ';'), written atomically and read back with errors that name the file, the
//     line and the field. GenerateDir draws a workload and writes it (simd moe gen).
//   - estimate.go, deepep.go, fast.go, birkhoff.go: price one layer's dispatch under DeepEP (one
//     network copy per destination node to the same-local-rank proxy, then NVLink fan-out) and
//     FAST (intra-server balance, Birkhoff–von Neumann scale-out stages, redistribution), as
//     the seed does. Run prices every layer of a workload into the seed's Metrics.
//   - summary.go: the Metrics as the seed's scripts print them (WriteText) and as metrics.json
//     (WriteJSON); a FAST layer's stages as text (LayerResult.WriteStages).
//
// The package knows tokens, experts and GPUs, never links.
package moe
