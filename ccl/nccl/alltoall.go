package nccl

import (
	"simd/ccl"
)

// allToAll is SimCCL's all-to-all: every ordered pair one flow of Bytes/n, all on channel 0,
// none waiting for another (ccl-facts.md §1.4). With pxn, a pair on different servers and
// different rails goes through the sender's server-mate on the receiver's rail (the MSCCL fork's
// PXN all-to-all).
func allToAll(req *ccl.Request, pxn bool) (ccl.DAG, error) {
	n := len(req.Ranks)
	if err := checkSize(2*int64(n)*int64(n-1), "the all-to-all"); err != nil {
		return nil, err
	}
	coll := collective(req, n*n)
	if !pxn {
		return &ccl.PairsDAG{Coll: coll}, nil
	}
	g := newGeometry(req)
	member := make(map[int32]int, n)
	for i, r := range req.Ranks {
		member[r] = i
	}
	gps := int32(req.GPUsPerServer)
	b := ccl.NewDAGBuilder(coll)
	for i, ri := range req.Ranks {
		for j, rj := range req.Ranks {
			if i == j {
				continue
			}
			piece := int32(i*n + j)
			f := ccl.Flow{Src: ri, Dst: rj, Kind: ccl.KindDirect, PieceLo: piece, PieceHi: piece + 1}
			si, sj := ri/gps, rj/gps
			if si != sj {
				f.Channel = a2aChannel(&g, i, j, gps)
			}
			relay := si*gps + rj%gps
			if _, ok := member[relay]; si == sj || relay == ri || !ok {
				// Same server, same rail, or no server-mate on the receiver's rail in the
				// group: one direct flow.
				b.Add(f)
				continue
			}
			f.Dst, f.Kind = relay, ccl.KindPXNInit
			first := b.Add(f)
			f.Src, f.Dst, f.Kind = relay, rj, ccl.KindPXN
			b.Add(f, first)
		}
	}
	return b.Build()
}

// a2aChannel is the MSCCL fork's channel of a server-crossing pair: (Δserver mod N − 1)·g +
// (Δlocal mod g), with servers counted inside the group.
func a2aChannel(g *geometry, i, j int, gps int32) int32 {
	N := g.nsrv
	ds := mod(int(g.srv[j])-int(g.srv[i]), N)
	dl := mod(int(g.ranks[j]%gps)-int(g.ranks[i]%gps), int(gps))
	return int32((ds-1)*int(gps) + dl)
}
