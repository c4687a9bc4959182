package ccl

import "errors"

// DAGStats are the size of a DAG as simd dag reports it.
type DAGStats struct {
	Flows int
	Bytes int64 // the sum of the flows' Bytes: what the collective puts on links
	// CriticalPath is the number of flows on the longest chain of flows in which each waits for
	// the one before: the fewest sequential steps any network needs to finish the DAG.
	CriticalPath int
}

// StatsOf sums the bytes of d and finds its critical path, walking the flows in dependency
// order (Kahn's algorithm), so a DAG of millions of flows costs two passes and no recursion. It
// is an error if the dependencies have a cycle.
func StatsOf(d DAG) (DAGStats, error) {
	nf := d.NumFlows()
	s := DAGStats{Flows: nf}
	indeg := make([]int32, nf)
	level := make([]int32, nf) // the longest chain of ancestors, then of the flow itself
	var buf []FlowID
	var ready []FlowID
	for i := range nf {
		s.Bytes += d.Flow(FlowID(i)).Bytes
		buf = d.Parents(FlowID(i), buf[:0])
		indeg[i] = int32(len(buf))
		if len(buf) == 0 {
			ready = append(ready, FlowID(i))
		}
	}
	done := 0
	for len(ready) > 0 {
		f := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		level[f]++
		s.CriticalPath = max(s.CriticalPath, int(level[f]))
		buf = d.Children(f, buf[:0])
		for _, c := range buf {
			level[c] = max(level[c], level[f])
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if done != nf {
		return DAGStats{}, errors.New("the DAG has a cycle")
	}
	return s, nil
}
