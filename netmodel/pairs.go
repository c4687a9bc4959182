package netmodel

import (
	"slices"
	"sort"
	"unsafe"

	"simd/engine"
	"simd/netmodel/fluid"
)

// pairTable maps a (source, destination) node pair to a V: the simulator's pairState, the FCT
// log's pairFigures. One destination of each source sits in a flat slice indexed by the source
// (first), so a rank that sends to one peer at a time — a ring's successor, a pipeline stage's
// next stage, each in its own phase — costs one cache miss per lookup; its others are in a
// slice of their own sorted by node id (more): a collective's rank talks to a handful of peers
// (a ring's neighbours, a tree's parent and children), where a short scan beats hashing, and
// an all-to-all's few hundred are found by binary search. When two lookups in a row find
// their pairs in a short list, the second's trades places with the flat slot's (a phase has
// begun: the pipeline's activations came before the data-parallel all-reduce, whose every
// flow went to the list); a pair asked for in turn with the flat slot's stays where it is (a
// ring's two peers over its channels). A long list's stay in place: moving one would shift
// hundreds. The table
// replaced a Go map keyed by the pair, whose lookups cost two cache misses per flow at 1,024
// GPUs.
type pairTable[V any] struct {
	first []pairFirst[V]
	more  [][]pairEntry[V]
}

type pairEntry[V any] struct {
	dst int32
	st  V
}

// pairFirst is a source's pair in the flat slot: dst < 0 if the source has none yet. streak
// counts the lookups in a row that went on to the list.
type pairFirst[V any] struct {
	dst, streak int32
	st          V
}

// scanPairs is the number of destinations searched linearly before binary search; a source
// with more than this many besides the one in its flat slot keeps them in place.
const scanPairs = 8

// get returns the state of pair (src, dst), adding it (zero) if it is new. The pointer is valid
// until the next get.
func (t *pairTable[V]) get(src, dst int32) *V {
	if int(src) >= len(t.first) {
		t.grow(src)
	}
	e := &t.first[src]
	if e.dst == dst {
		e.streak = 0
		return &e.st
	} else if e.dst < 0 {
		e.dst = dst
		return &e.st
	}
	e.streak++
	list := t.more[src]
	i := find(list, dst)
	if i == len(list) || list[i].dst != dst {
		list = slices.Insert(list, i, pairEntry[V]{dst: dst})
		t.more[src] = list
	}
	if len(list) > scanPairs || e.streak < 2 {
		return &list[i].st
	}
	// The second lookup in a row that went on to a short list: its pair trades places with the
	// flat slot's.
	moved := list[i]
	list = slices.Delete(list, i, i+1)
	old := pairEntry[V]{dst: e.dst, st: e.st}
	*e = pairFirst[V]{dst: moved.dst, st: moved.st}
	t.more[src] = slices.Insert(list, find(list, old.dst), old)
	return &e.st
}

// find is the position of dst in the sorted list, or where it would go.
func find[V any](list []pairEntry[V], dst int32) int {
	if len(list) <= scanPairs {
		i := 0
		for i < len(list) && list[i].dst < dst {
			i++
		}
		return i
	}
	return sort.Search(len(list), func(k int) bool { return list[k].dst >= dst })
}

// reserve makes room in src's list for n more destinations: a DAG that starts many flows from one
// source at once (an all-to-all's 1,023 from every rank over 1,024 GPUs) would grow the list by
// doubling, a fresh allocation and a copy each time (0.3–0.5 s of the all-to-all's run).
func (t *pairTable[V]) reserve(src int32, n int) {
	if int(src) >= len(t.first) {
		t.grow(src)
	}
	t.more[src] = fluid.Grow(t.more[src], n)
}

// prefetch asks for src's flat slot (engine.Prefetch).
func (t *pairTable[V]) prefetch(src int32) {
	if uint(src) < uint(len(t.first)) {
		engine.Prefetch(unsafe.Pointer(&t.first[src]))
	}
}

// peek is the state of the pair (src, dst) when it is in src's flat slot, else nil; it
// changes nothing (get moves pairs between the slot and the lists).
func (t *pairTable[V]) peek(src, dst int32) *V {
	if uint(src) < uint(len(t.first)) && t.first[src].dst == dst {
		return &t.first[src].st
	}
	return nil
}

// grow makes room for sources up to src.
func (t *pairTable[V]) grow(src int32) {
	for int(src) >= len(t.first) {
		t.first = append(t.first, pairFirst[V]{dst: -1})
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
