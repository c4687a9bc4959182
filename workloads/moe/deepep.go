package moe

import "fmt"

// DeepEP's normal-mode dispatch (ccl-facts.md §4.1, seed 000): a token on GPU (a, l) — server
// a, local rank l — that has targets on a server b ≠ a crosses the network once, to its proxy
// (b, l), the GPU of b with the source's local rank; the proxy forwards it over NVLink to each
// of its targets on b other than itself. Targets on the source's own server get it over NVLink
// straight from the source. A token is sent to a GPU once even when that GPU hosts two of its
// experts (DeepEP deduplicates per rank); Transfer.Picks keeps the number of (token, expert)
// selections, which the seed's intra loads count.

// hop is one leg of one token's DeepEP route.
type hop struct {
	phase    Phase
	src, dst int
	picks    int // the token's selections of experts on dst (0 for a copy to a proxy)
}

// deepEPHops appends the route of one token to hops and returns it: for each destination
// server other than the source's, in order of first appearance among r.GPUs, a copy to the
// proxy followed by the forwards; for the source's own server, the direct sends.
func deepEPHops(g int, r *Request, hops []hop) []hop {
	src := r.Src
	a, l := src/g, src%g
	// Destination servers in order of first appearance.
	for k, dst := range r.GPUs {
		b := dst / g
		seen := false
		for _, d := range r.GPUs[:k] {
			if d/g == b {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		from := src
		if b != a {
			from = b*g + l
			hops = append(hops, hop{phase: DeepEPCopy, src: src, dst: from})
		}
		ph := DeepEPLocal
		if b != a {
			ph = DeepEPForward
		}
		// Each distinct target GPU of server b, in order of first appearance.
		for m, t := range r.GPUs[k:] {
			if t/g != b || t == from {
				continue
			}
			dup := false
			for _, u := range r.GPUs[k : k+m] {
				if u == t {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			picks := 0
			for _, u := range r.GPUs {
				if u == t {
					picks++
				}
			}
			hops = append(hops, hop{phase: ph, src: from, dst: t, picks: picks})
		}
	}
	return hops
}

// BuildDeepEP builds the DeepEP dispatch plan of one layer. The transfers come in three groups:
//
//   - DeepEPCopy: one per (source GPU, proxy) pair, in that order, carrying the source's tokens
//     that have a target on the proxy's server; no dependencies.
//   - DeepEPForward: one per (source GPU, target GPU) pair on different servers whose target
//     is not the proxy, in that order, sent by the proxy; it depends on the copy from that
//     source to that proxy (its Deps holds that copy's index alone).
//   - DeepEPLocal: one per (source, target) pair in the same server, in that order; no
//     dependencies.
//
// Tokens counts distinct tokens; Picks counts (token, expert) selections of experts on the
// destination (for a copy, equal to Tokens). Building takes memory in GPUs².
func BuildDeepEP(cfg *Config, l *Layer) (*Plan, error) {
	if err := checkLayer(cfg, l); err != nil {
		return nil, err
	}
	g, n, gpus := cfg.GPUsPerNode, cfg.Nodes, cfg.GPUs()
	copies := make([]int32, gpus*n)    // [src][server]
	tokens := make([]int32, gpus*gpus) // [origin][target], forwards and local sends
	picks := make([]int32, gpus*gpus)  // same index, selections
	var hops []hop
	for i := range l.Requests {
		r := &l.Requests[i]
		hops = deepEPHops(g, r, hops[:0])
		for _, h := range hops {
			if h.phase == DeepEPCopy {
				copies[r.Src*n+h.dst/g]++
				continue
			}
			tokens[r.Src*gpus+h.dst]++
			picks[r.Src*gpus+h.dst] += int32(h.picks)
		}
	}
	p := &Plan{Kind: DeepEP, Nodes: n, GPUsPerNode: g, Layer: l.Index}
	copyID := make([]int32, gpus*n)
	for src := range gpus {
		for b := range n {
			k := copies[src*n+b]
			copyID[src*n+b] = -1
			if k == 0 {
				continue
			}
			copyID[src*n+b] = int32(len(p.Transfers))
			p.Transfers = append(p.Transfers, Transfer{Phase: DeepEPCopy, Stage: -1, Src: src, Dst: b*g + src%g, Tokens: int(k), Picks: int(k)})
		}
	}
	for _, local := range []bool{false, true} {
		for src := range gpus {
			for dst := range gpus {
				k := tokens[src*gpus+dst]
				if k == 0 || (src/g == dst/g) != local {
					continue
				}
				t := Transfer{Phase: DeepEPLocal, Stage: -1, Src: src, Dst: dst, Tokens: int(k), Picks: int(picks[src*gpus+dst])}
				if !local {
					b := dst / g
					t.Phase, t.Src = DeepEPForward, b*g+src%g
					t.Deps = []int{int(copyID[src*n+b])}
				}
				p.Transfers = append(p.Transfers, t)
			}
		}
	}
	return p, nil
}

// checkLayer checks that every request of l names GPUs of the cluster.
func checkLayer(cfg *Config, l *Layer) error {
	if cfg.Nodes < 1 || cfg.GPUsPerNode < 1 {
		return fmt.Errorf("moe: %d nodes of %d GPUs: both must be positive", cfg.Nodes, cfg.GPUsPerNode)
	}
	gpus := cfg.GPUs()
	for i := range l.Requests {
		r := &l.Requests[i]
		if r.Src < 0 || r.Src >= gpus {
			return fmt.Errorf("moe: layer %d token %d: source GPU %d outside 0..%d", l.Index, r.Token, r.Src, gpus-1)
		}
		for _, d := range r.GPUs {
			if d < 0 || d >= gpus {
				return fmt.Errorf("moe: layer %d token %d: target GPU %d outside 0..%d", l.Index, r.Token, d, gpus-1)
			}
		}
	}
	return nil
}
