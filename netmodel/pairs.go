package netmodel

import "sort"

// pairTable maps a (source, destination) node pair to a V: the simulator's pairState, the FCT
// log's pairFigures. A source's first destination sits in a flat slice indexed by the source
// (first), so a rank with one peer — a ring's successor — costs one cache miss per lookup;
// its others are in a slice of their own sorted by node id (more): a collective's rank talks
// to a handful of peers (a ring's neighbours, a tree's parent and children), where a short
// scan beats hashing, and an all-to-all's few hundred are found by binary search. It replaced
// a Go map keyed by the pair, whose lookups cost two cache misses per flow at 1,024 GPUs.
type pairTable[V any] struct {
	first []pairEntry[V] // dst < 0: the source has no pair yet
	more  [][]pairEntry[V]
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
	if int(src) >= len(t.first) {
		t.grow(src)
	}
	if e := &t.first[src]; e.dst == dst {
		return &e.st
	} else if e.dst < 0 {
		e.dst = dst
		return &e.st
	}
	list := t.more[src]
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
	t.more[src] = list
	return &list[i].st
}

// grow makes room for sources up to src.
func (t *pairTable[V]) grow(src int32) {
	for int(src) >= len(t.first) {
		t.first = append(t.first, pairEntry[V]{dst: -1})
	}
	t.more = append(t.more, make([][]pairEntry[V], len(t.first)-len(t.more))...)
}

// each calls fn with the state of every pair.
func (t *pairTable[V]) each(fn func(st *V)) {
	for i := range t.first {
		if t.first[i].dst >= 0 {
			fn(&t.first[i].st)
		}
	}
	for _, list := range t.more {
		for i := range list {
			fn(&list[i].st)
		}
	}
}
