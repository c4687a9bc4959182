package ccl

// Edit is what EditDAG does with one flow: its new parents (ids of the original DAG, earlier or
// later flows alike), whether it is kept, and whether a second copy of it is appended.
type Edit func(id FlowID, f *Flow, parents []FlowID) (newParents []FlowID, keep, dup bool)

// EditDAG copies d into a FlowDAG, letting edit change each flow and its parents, drop it (its
// children lose that parent) or duplicate it (the copy, appended at the end, has the original's
// parents). With a nil edit it just stores d. It is how tests build deliberately broken DAGs and
// how a computed DAG is materialised.
func EditDAG(d DAG, edit Edit) (*FlowDAG, error) {
	n := d.NumFlows()
	b := NewDAGBuilder(*d.Collective())
	remap := make([]FlowID, n)
	var edges [][2]FlowID // (child, parent) in original ids, added once every flow exists
	var dups []FlowID
	for i := range n {
		id := FlowID(i)
		f := d.Flow(id)
		ps := d.Parents(id, nil)
		keep, dup := true, false
		if edit != nil {
			ps, keep, dup = edit(id, &f, ps)
		}
		if !keep {
			remap[i] = -1
			continue
		}
		remap[i] = b.Add(f)
		for _, p := range ps {
			edges = append(edges, [2]FlowID{id, p})
		}
		if dup {
			dups = append(dups, id)
		}
	}
	for _, e := range edges {
		if e[1] < 0 || int(e[1]) >= n {
			b.AddParent(remap[e[0]], e[1]) // an invalid parent stays invalid, for Build to refuse
			continue
		}
		if p := remap[e[1]]; p >= 0 {
			b.AddParent(remap[e[0]], p)
		}
	}
	for _, id := range dups {
		c := b.Add(d.Flow(id))
		for _, p := range d.Parents(id, nil) {
			if q := remap[p]; q >= 0 {
				b.AddParent(c, q)
			}
		}
	}
	return b.Build()
}
