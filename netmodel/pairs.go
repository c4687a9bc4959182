package netmodel

import "sort"

// pairTable maps a (source, destination) node pair to a V: the simulator's pairState, the FCT
// log's pairFigures. Each source keeps its
// destinations in a slice sorted by node id: a collective's rank talks to a handful of peers
// (a ring's neighbours, a tree's parent and children), where a short scan beats hashing, and an
// all-to-all's few hundred are found by binary search. It replaced a Go map keyed by the pair,
// whose lookups cost two cache misses per flow at 1,024 GPUs.
type pairTable[V any] struct {
	bySrc [][]pairEntry[V]
}

type pairEntry[V any] struct {
	dst int32
	st  V
}

// scanPairs is the number of destinations searched linearly before binary search.
const scanPairs = 8

// get returns the state of pair (src, dst), adding it (zero) if it is new. The pointer is valid
// until the next get.
func (t *pairTable[V]) get(src, dst int32) *V {
	if int(src) >= len(t.bySrc) {
		t.bySrc = append(t.bySrc, make([][]pairEntry[V], int(src)+1-len(t.bySrc))...)
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
	list = append(list, pairEntry[V]{})
	copy(list[i+1:], list[i:])
	list[i] = pairEntry[V]{dst: dst}
	t.bySrc[src] = list
	return &list[i].st
}
