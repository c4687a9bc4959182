package nccl

import (
	"math/bits"
	"testing"

	"simd/ccl"
)

// refRing builds the ring DAG explicitly, step by step, deciding each hop from what the ranks
// hold, in the order Ring numbers its flows: per channel and step, first one flow per sender in
// group order (a PXN exit's slot holding its NVLink hop, or the network hop its entry sends for
// it), then each server's PXN network hop. It is the reference the arithmetic DAG is compared
// with. Groups of at most 64 ranks.
//
// The rules: channel c visits the servers in order, each server's members rotated left by c.
// At reduce-scatter step s position p sends the chunk that ends at p-s-1; at gather step t the
// chunk of p-t. With PXN (several servers, at least 2 members each), a server's last position
// does not cross servers: in the reduce-scatter phase it sends to its server's first position,
// which forwards to the next server's first; in the gather phase nothing is sent to a rank that
// already holds the finished chunk, and a first position that holds it sends it itself.
func refRing(t *testing.T, req ccl.Request, pxn bool) *ccl.FlowDAG {
	t.Helper()
	n := len(req.Ranks)
	if n > 64 {
		t.Fatal("refRing handles at most 64 ranks")
	}
	var srvs [][]int
	last := int32(-1)
	for i, r := range req.Ranks {
		if s := r / int32(req.GPUsPerServer); s != last || len(srvs) == 0 {
			srvs = append(srvs, nil)
			last = s
		}
		srvs[len(srvs)-1] = append(srvs[len(srvs)-1], i)
	}
	N := len(srvs)
	C := 0
	for _, s := range srvs {
		C = max(C, len(s))
	}
	if req.Channels > 0 {
		C = req.Channels
	}
	active := pxn && N >= 2 && C >= 2
	var steps, rs int
	switch req.Op {
	case ccl.OpAllReduce:
		steps, rs = 2*(n-1), n-1
	case ccl.OpReduceScatter:
		steps, rs = n-1, n-1
	case ccl.OpAllGather:
		steps = n - 1
	}
	b := ccl.NewDAGBuilder(ccl.Collective{Op: req.Op, Ranks: req.Ranks, GPUsPerServer: req.GPUsPerServer,
		TotalGPUs: req.TotalGPUs, Bytes: req.Bytes, Pieces: n * C})
	all := uint64(1)<<n - 1
	if n == 64 {
		all = ^uint64(0)
	}
	for c := 0; c < C; c++ {
		var ring []int
		entry, exit := make([]int, N), make([]int, N)
		srvOf := make([]int, n)
		for k, s := range srvs {
			entry[k] = len(ring)
			for i := range s {
				srvOf[len(ring)] = k
				ring = append(ring, s[(c+i)%len(s)])
			}
			exit[k] = len(ring) - 1
		}
		have := make([][]uint64, n) // have[p][o]: contributions position p holds of chunk o
		got := make([][]ccl.FlowID, n)
		for p := range n {
			have[p] = make([]uint64, n)
			got[p] = make([]ccl.FlowID, n)
			for o := range n {
				got[p][o] = -1
				if req.Op != ccl.OpAllGather || o == p {
					have[p][o] = 1 << p
				}
			}
		}
		complete := func(p, o int) bool {
			if req.Op == ccl.OpAllGather {
				return have[p][o] != 0
			}
			return have[p][o] == all
		}
		type hop struct {
			from, to int
			kind     ccl.FlowKind
			parent   ccl.FlowID // -1: none; -2: the slot's NVLink hop
			carry    uint64
		}
		for s := 0; s < steps; s++ {
			slots := make([]*hop, n) // by sender's group index
			extras := make([]*hop, N)
			type delivery struct {
				to    int
				carry uint64
				slot  int // the slot (group index) or n+k for an extra
			}
			var dels []delivery
			for p := range n {
				o := (p - s - 1 + 2*n) % n
				if s >= rs {
					o = (p - (s - rs) + n) % n
				}
				k := srvOf[p]
				gi := ring[p]
				if !active || p != exit[k] {
					q := (p + 1) % n
					if s >= rs && complete(q, o) {
						continue
					}
					slots[gi] = &hop{p, q, ccl.KindRing, got[p][o], have[p][o]}
					dels = append(dels, delivery{q, have[p][o], gi})
					continue
				}
				rel, nq := entry[k], entry[(k+1)%N]
				if s >= rs && complete(nq, o) {
					continue
				}
				if s >= rs && complete(rel, o) {
					slots[gi] = &hop{rel, nq, ccl.KindPXN, got[rel][o], have[rel][o]}
					dels = append(dels, delivery{nq, have[rel][o], gi})
					continue
				}
				slots[gi] = &hop{p, rel, ccl.KindPXNInit, got[p][o], have[p][o]}
				relayed := have[rel][o] | have[p][o]
				extras[k] = &hop{rel, nq, ccl.KindPXN, -2, relayed}
				dels = append(dels, delivery{rel, have[p][o], gi}, delivery{nq, relayed, n + k})
			}
			ids := make([]ccl.FlowID, n+N)
			owner := func(p int) int {
				if s >= rs {
					return (p - (s - rs) + n) % n
				}
				return (p - s - 1 + 2*n) % n
			}
			add := func(h *hop, ownerPos int, parent ccl.FlowID) ccl.FlowID {
				piece := int32(ring[ownerPos]*C + c)
				f := ccl.Flow{Src: req.Ranks[ring[h.from]], Dst: req.Ranks[ring[h.to]], Channel: int32(c), Chunk: int32(s),
					Kind: h.kind, PieceLo: piece, PieceHi: piece + 1}
				f.Bytes = b.Collective().RangeBytes(piece, piece+1)
				if parent >= 0 {
					return b.Add(f, parent)
				}
				return b.Add(f)
			}
			for gi, h := range slots {
				if h == nil {
					continue
				}
				// The chunk is the one the slot's sender (gi) moves.
				p := 0
				for ring[p] != gi {
					p++
				}
				ids[gi] = add(h, owner(p), h.parent)
			}
			for k, h := range extras {
				if h != nil {
					ids[n+k] = add(h, owner(exit[k]), ids[ring[exit[k]]])
				}
			}
			for _, dl := range dels {
				o := -1
				if dl.slot < n {
					p := 0
					for ring[p] != dl.slot {
						p++
					}
					o = owner(p)
				} else {
					o = owner(exit[dl.slot-n])
				}
				if req.Op != ccl.OpAllGather && have[dl.to][o]&dl.carry != 0 && have[dl.to][o]|dl.carry != dl.carry && dl.carry|have[dl.to][o] != have[dl.to][o] {
					t.Fatalf("reference: channel %d step %d: partial overlap at position %d", c, s, dl.to)
				}
				have[dl.to][o] |= dl.carry
				got[dl.to][o] = ids[dl.slot]
			}
		}
		for p := range n {
			for o := range n {
				if req.Op == ccl.OpAllReduce && bits.OnesCount64(have[p][o]) != n {
					t.Fatalf("reference: channel %d: position %d ends with %d contributions of chunk %d", c, p, bits.OnesCount64(have[p][o]), o)
				}
			}
		}
	}
	d, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
