package netmodel

import "sort"

// pairTable maps a (source, destination) node pair to its pairState. Each source keeps its
// destinations in a slice sorted by node id: a collective's rank talks to a handful of peers
// (a ring's neighbours, a tree's parent and children), where a short scan beats hashing, and an
// all-to-all's few hundred are found by binary search. It replaced a Go map keyed by the pair,
// whose lookups cost two cache misses per flow at 1,024 GPUs.
type pairTable struct {
	bySrc [][]pairEntry
}

type pairEntry struct {
	dst int32
	st  pairState
}

// scanPairs is the number of destinations searched linearly before binary search.
const scanPairs = 8

// get returns the state of pair (src, dst), adding it (zero) if it is new. The pointer is valid
// until the next get.
func (t *pairTable) get(src, dst int32) *pairState {
	if int(src) >= len(t.bySrc) {
		t.bySrc = append(t.bySrc, make([][]pairEntry, int(src)+1-len(t.bySrc))...)
	}
	list := t.bySrc[src]
	var i int
	if len(list) <= scanPairs {
		for i < len(list) && list[i].dst < dst {
			i++
		}
	} else {
		i = sort.Search(len(list), func(k int) bool { return list[k].dst >= dst })
	}
	if i < len(list) && list[i].dst == dst {
		return &list[i].st
	}
	list = append(list, pairEntry{})
	copy(list[i+1:], list[i:])
	list[i] = pairEntry{dst: dst}
	t.bySrc[src] = list
	return &list[i].st
}
