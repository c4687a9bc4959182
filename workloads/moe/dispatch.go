package moe

import (
	"fmt"
	"slices"

	"simd/ccl"
)

// DispatchModel is the token routing with which an expert-parallel all-to-all of a SimAI
// workload is run as a DeepEP or FAST dispatch: the workload gives only the bytes each rank
// sends, so the tokens behind them are drawn as simd moe gen would draw them.
type DispatchModel struct {
	Hidden, DtypeBytes int     // a token is Hidden × DtypeBytes bytes
	TopK               int     // experts per token (capped at the group's experts)
	ExpertsPerGPU      int     // experts hosted by each rank of the group
	Zipf               float64 // popularity skew of the experts (0: uniform)
	Seed               uint64
	Chunks             int // DeepEP: pieces each transfer is streamed in (Plan.ChunkedDAG); 0 or 1: whole
}

// DispatchDAG builds the flow DAG of a DeepEP or FAST dispatch replacing an all-to-all in which
// each of ranks (cluster ranks, gps per server, totalGPUs in all) sends bytesPerRank. Each rank
// holds bytesPerRank / (TopK × token bytes) tokens (at least one), whose experts follow m; the
// group's ranks are the plan's GPUs, server by server, and every server must hold the same
// number of them (the plans' servers are uniform).
func DispatchDAG(kind Kind, m DispatchModel, ranks []int32, gps, totalGPUs int, bytesPerRank int64) (*ccl.FlowDAG, error) {
	if len(ranks) == 0 || gps <= 0 {
		return nil, fmt.Errorf("dispatch: %d ranks, %d GPUs per server", len(ranks), gps)
	}
	order := slices.Clone(ranks)
	slices.Sort(order)
	perServer := 0
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && int(order[j])/gps == int(order[i])/gps {
			j++
		}
		if perServer == 0 {
			perServer = j - i
		} else if j-i != perServer {
			return nil, fmt.Errorf("dispatch: the group has %d ranks on server %d and %d on another; DeepEP and FAST plans need the same number on every server", j-i, int(order[i])/gps, perServer)
		}
		i = j
	}
	cfg := Config{Nodes: len(order) / perServer, GPUsPerNode: perServer, ExpertsPerGPU: m.ExpertsPerGPU,
		Batch: 1, Zipf: m.Zipf, Layers: 1, Iters: 1, Hidden: m.Hidden, DtypeBytes: m.DtypeBytes,
		BWInterGBps: 1, BWIntraGBps: 1, Seed: m.Seed}
	cfg.TopK = min(m.TopK, cfg.Experts())
	if cfg.TopK < 1 || cfg.TokenBytes() < 1 {
		return nil, fmt.Errorf("dispatch: top-k %d, token of %d bytes", m.TopK, cfg.TokenBytes())
	}
	perRank := max(bytesPerRank/(int64(cfg.TopK)*cfg.TokenBytes()), 1)
	cfg.SeqLen = int(perRank) * len(order)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dispatch: %v", err)
	}
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, fmt.Errorf("dispatch: %v", err)
	}
	it := g.Iteration(0)
	p, err := Build(kind, &cfg, &it.Layers[0])
	if err != nil {
		return nil, fmt.Errorf("dispatch: %v", err)
	}
	d, err := p.ChunkedDAG(&cfg, len(order), max(m.Chunks, 1))
	if err != nil {
		return nil, fmt.Errorf("dispatch: %v", err)
	}
	for i := range d.Flows {
		d.Flows[i].Src, d.Flows[i].Dst = order[d.Flows[i].Src], order[d.Flows[i].Dst]
	}
	d.Coll = ccl.Collective{Op: ccl.OpAllToAll, Ranks: order, GPUsPerServer: gps, TotalGPUs: totalGPUs, Bytes: bytesPerRank}
	return d, nil
}
