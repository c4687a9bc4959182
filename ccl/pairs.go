package ccl

// PairsDAG is an all-to-all of one flow per ordered pair (i, j), i ≠ j, carrying piece i·n + j,
// no flow waiting for another, as arithmetic on flow ids: a million-flow all-to-all stores no
// flow. Flow i·(n−1) + m goes from group index i to its m-th peer (m from 0): with Rotated the
// peers are counted from i+1 on around the group ((i+m+1) mod n, the direct all-to-all's
// order), otherwise in ascending order, i skipped (SimCCL's).
type PairsDAG struct {
	Coll    Collective
	Rotated bool
}

// Collective implements DAG.
func (d *PairsDAG) Collective() *Collective { return &d.Coll }

// NumFlows implements DAG.
func (d *PairsDAG) NumFlows() int { n := len(d.Coll.Ranks); return n * (n - 1) }

// pair is flow id's sender and receiver as group indices: flow i·(n−1) + m goes from member i
// to its m-th peer.
func (d *PairsDAG) pair(id FlowID) (i, j int) {
	n := len(d.Coll.Ranks)
	i, j = int(id)/(n-1), int(id)%(n-1)
	switch {
	case d.Rotated:
		if j += i + 1; j >= n {
			j -= n
		}
	case j >= i:
		j++
	}
	return i, j
}

// Flow implements DAG.
func (d *PairsDAG) Flow(id FlowID) Flow {
	i, j := d.pair(id)
	piece := int32(i*len(d.Coll.Ranks) + j)
	return Flow{
		Src: d.Coll.Ranks[i], Dst: d.Coll.Ranks[j],
		Bytes: d.Coll.PieceBytes(int(piece)),
		Kind:  KindDirect, PieceLo: piece, PieceHi: piece + 1,
	}
}

// Members implements MembersDAG.
func (d *PairsDAG) Members(id FlowID) (src, dst int32, ok bool) {
	i, j := d.pair(id)
	return int32(i), int32(j), true
}

// RankFlows implements RankFlowsDAG: every member sends to and receives from each of the others.
func (d *PairsDAG) RankFlows(counts []int32) {
	for i := range counts {
		counts[i] = int32(2 * (len(counts) - 1))
	}
}

// Parents implements DAG: no flow waits.
func (d *PairsDAG) Parents(_ FlowID, buf []FlowID) []FlowID { return buf }

// Children implements DAG.
func (d *PairsDAG) Children(_ FlowID, buf []FlowID) []FlowID { return buf }

// SingleParent implements SingleParentDAG.
func (d *PairsDAG) SingleParent() bool { return true }

// Roots implements RootsDAG: every flow, in id order.
func (d *PairsDAG) Roots(buf []FlowID) []FlowID {
	for id := range FlowID(d.NumFlows()) {
		buf = append(buf, id)
	}
	return buf
}
