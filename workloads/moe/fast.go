package moe

import (
	"fmt"
	"sort"
)

// FAST (arXiv 2505.09764; ccl-facts.md §5) schedules the dispatch as an all-to-all(v): one
// copy per (token, expert) selection, so a token with two experts on one GPU is sent twice,
// as in the seed. Same-server copies go straight over NVLink (intrinsic traffic). The
// cross-server copies are
//
//  1. balanced: for each source server s and destination server t, the S copies that the GPUs
//     of s hold for t are spread so that each GPU of s holds ⌊S/g⌋ or ⌈S/g⌉ of them (the
//     S mod g GPUs that held the most keep the larger share; ties to the lower local rank).
//     Surplus GPUs give to deficit GPUs, both taken in local-rank order, over NVLink;
//  2. sent in stages: the server matrix M[s][t] = ⌈S/g⌉ (copies per GPU) is padded to equal
//     line sums L with PadSeed and decomposed with Birkhoff; in stage k every server s sends to
//     Perm_k[s], each GPU (s, i) to GPU (Perm_k[s], i) — one-to-one and rail-aligned — at
//     most Weight_k copies. Every GPU fills the earliest stages first;
//  3. redistributed: at the destination server, GPU (t, i) forwards over NVLink each copy it
//     received whose target is another GPU (t, j). The restore of stage k runs during stage k+1.
//
// Which copies move where is this package's choice (the paper and the seed do not say): a
// surplus GPU i giving to GPU k gives first the copies bound for local rank k (they will land
// on their target and need no restore), then those bound for ranks other than i in ascending
// order, and those bound for rank i last; a GPU sends first the copies bound for other ranks,
// in ascending order, and those bound for its own rank last, so that the last stage, whose
// restore cannot hide behind another stage, restores as little as possible.

// Demand is the (token, expert) copies that GPU Src must deliver to GPU Dst.
type Demand struct {
	Src, Dst int
	Copies   int
}

// FASTSchedule is the server-level part of a FAST plan.
type FASTSchedule struct {
	// Demand is the cross-server demand per GPU pair, in (Src, Dst) order: the input of the
	// balance step, and what the seed model prices.
	Demand []Demand
	// Server[s][t] is the copies per GPU from server s to server t after balancing, ⌈S/g⌉;
	// the diagonal is zero.
	Server [][]int64
	// Padded is Server padded to equal line sums (PadSeed); Padding = Padded − Server.
	Padded, Padding [][]int64
	// Stages is the Birkhoff decomposition of Padded, in the order the stages run.
	Stages []Stage
	// LastReal is the index of the last stage in which some GPU sends a real copy; −1 if none.
	LastReal int
}

// BuildFAST builds the FAST dispatch plan of one layer. The transfers come in this order:
//
//   - FASTIntrinsic: one per same-server (source, target) pair, in (source, target) order;
//     no dependencies.
//   - FASTBalance: one per (giver, taker) pair of GPUs of a server, in that order; no
//     dependencies.
//   - for each stage k in order: the FASTInter transfers of the stage in source order, then
//     its FASTRedist transfers in (receiver, target) order. An inter transfer from GPU x to
//     GPU y depends on every balance transfer into x, on x's previous inter transfer and on
//     y's previous inter transfer (so a NIC sends and receives one stage at a time, in order);
//     a redistribution transfer depends on the inter transfer that brought its copies.
//
// Building takes memory in GPUs² and, for the decomposition, time up to servers⁵.
func BuildFAST(cfg *Config, l *Layer) (*Plan, error) {
	if err := checkLayer(cfg, l); err != nil {
		return nil, err
	}
	g, n, gpus := cfg.GPUsPerNode, cfg.Nodes, cfg.GPUs()
	demand := make([]int64, gpus*gpus)
	for i := range l.Requests {
		r := &l.Requests[i]
		for _, d := range r.GPUs {
			if d != r.Src {
				demand[r.Src*gpus+d]++
			}
		}
	}
	p := &Plan{Kind: FAST, Nodes: n, GPUsPerNode: g, Layer: l.Index}
	fs := &FASTSchedule{LastReal: -1}
	p.FAST = fs
	for x := range gpus {
		for y := range gpus {
			if k := demand[x*gpus+y]; k > 0 {
				if x/g == y/g {
					p.Transfers = append(p.Transfers, Transfer{Phase: FASTIntrinsic, Stage: -1, Src: x, Dst: y, Tokens: int(k), Picks: int(k)})
				} else {
					fs.Demand = append(fs.Demand, Demand{Src: x, Dst: y, Copies: int(k)})
				}
			}
		}
	}

	// Balance. hold[x*gpus+y]: copies GPU x holds for GPU y on another server.
	hold := demand
	moved := make([]int64, gpus*gpus)
	fs.Server = make([][]int64, n)
	rowLoad, share, order := make([]int64, g), make([]int64, g), make([]int, g)
	for s := range n {
		fs.Server[s] = make([]int64, n)
		for t := range n {
			if t == s {
				continue
			}
			var total int64
			for i := range g {
				rowLoad[i] = 0
				for j := range g {
					rowLoad[i] += hold[(s*g+i)*gpus+t*g+j]
				}
				total += rowLoad[i]
				order[i] = i
			}
			q, rem := total/int64(g), int(total%int64(g))
			fs.Server[s][t] = q
			if rem > 0 {
				fs.Server[s][t]++
			}
			sort.SliceStable(order, func(a, b int) bool { return rowLoad[order[a]] > rowLoad[order[b]] })
			for m, i := range order {
				share[i] = q
				if m < rem {
					share[i]++
				}
			}
			for i, k := 0, 0; ; {
				for i < g && rowLoad[i] <= share[i] {
					i++
				}
				for k < g && rowLoad[k] >= share[k] {
					k++
				}
				if i == g || k == g {
					break
				}
				m := min(rowLoad[i]-share[i], share[k]-rowLoad[k])
				rowLoad[i] -= m
				rowLoad[k] += m
				moved[(s*g+i)*gpus+s*g+k] += m
				from, to := (s*g+i)*gpus+t*g, (s*g+k)*gpus+t*g
				for _, j := range giveOrder(g, i, k) {
					c := min(m, hold[from+j])
					hold[from+j] -= c
					hold[to+j] += c
					if m -= c; m == 0 {
						break
					}
				}
			}
		}
	}
	balanceIn := make([][]int, gpus)
	for x := range gpus {
		for y := range gpus {
			if k := moved[x*gpus+y]; k > 0 {
				balanceIn[y] = append(balanceIn[y], len(p.Transfers))
				p.Transfers = append(p.Transfers, Transfer{Phase: FASTBalance, Stage: -1, Src: x, Dst: y, Tokens: int(k), Picks: int(k)})
			}
		}
	}

	// Stages.
	var lsum int64
	for s := range n {
		var row, col int64
		for t := range n {
			row += fs.Server[s][t]
			col += fs.Server[t][s]
		}
		lsum = max(lsum, row, col)
	}
	var err error
	if fs.Padded, fs.Padding, err = PadSeed(fs.Server, lsum); err != nil {
		return nil, err
	}
	if fs.Stages, err = Birkhoff(toFloat(fs.Padded)); err != nil {
		return nil, err
	}
	lastSend, lastRecv := make([]int, gpus), make([]int, gpus)
	for x := range gpus {
		lastSend[x], lastRecv[x] = -1, -1
	}
	restore := make([]int64, g)
	for k, st := range fs.Stages {
		w := int64(st.Weight)
		type pending struct{ inter, src, dst, n int }
		var redist []pending
		for s, t := range st.Perm {
			if t == s {
				continue
			}
			for i := range g {
				x, y := s*g+i, t*g+i
				base := x*gpus + t*g
				var sent int64
				for j := range restore {
					restore[j] = 0
				}
				for _, j := range sendOrder(g, i) {
					c := min(w-sent, hold[base+j])
					hold[base+j] -= c
					sent += c
					restore[j] = c
					if sent == w {
						break
					}
				}
				if sent == 0 {
					continue
				}
				id := len(p.Transfers)
				tr := Transfer{Phase: FASTInter, Stage: k, Src: x, Dst: y, Tokens: int(sent), Picks: int(sent)}
				tr.Deps = append(tr.Deps, balanceIn[x]...)
				if lastSend[x] >= 0 {
					tr.Deps = append(tr.Deps, lastSend[x])
				}
				if lastRecv[y] >= 0 && lastRecv[y] != lastSend[x] {
					tr.Deps = append(tr.Deps, lastRecv[y])
				}
				sort.Ints(tr.Deps)
				lastSend[x], lastRecv[y] = id, id
				p.Transfers = append(p.Transfers, tr)
				fs.LastReal = k
				for j, c := range restore {
					if j != i && c > 0 {
						redist = append(redist, pending{id, y, t*g + j, int(c)})
					}
				}
			}
		}
		sort.Slice(redist, func(a, b int) bool {
			if redist[a].src != redist[b].src {
				return redist[a].src < redist[b].src
			}
			return redist[a].dst < redist[b].dst
		})
		for _, r := range redist {
			p.Transfers = append(p.Transfers, Transfer{Phase: FASTRedist, Stage: k, Src: r.src, Dst: r.dst, Tokens: r.n, Picks: r.n, Deps: []int{r.inter}})
		}
	}
	for x := range gpus {
		for y := range gpus {
			if x/g != y/g && hold[x*gpus+y] != 0 {
				return nil, fmt.Errorf("moe: FAST layer %d: %d copies from GPU %d to GPU %d left unscheduled", l.Index, hold[x*gpus+y], x, y)
			}
		}
	}
	return p, nil
}

// giveOrder is the order in which a surplus GPU i gives a deficit GPU k its copies, by target
// local rank: k, then the ranks other than i and k ascending, then i.
func giveOrder(g, i, k int) []int {
	o := make([]int, 0, g)
	o = append(o, k)
	for j := range g {
		if j != i && j != k {
			o = append(o, j)
		}
	}
	return append(o, i)
}

// sendOrder is the order in which GPU i sends its copies across servers, by target local
// rank: the ranks other than i ascending, then i.
func sendOrder(g, i int) []int {
	o := make([]int, 0, g)
	for j := range g {
		if j != i {
			o = append(o, j)
		}
	}
	return append(o, i)
}

func toFloat(m [][]int64) [][]float64 {
	f := make([][]float64, len(m))
	for i, row := range m {
		f[i] = make([]float64, len(row))
		for j, x := range row {
			f[i][j] = float64(x)
		}
	}
	return f
}
