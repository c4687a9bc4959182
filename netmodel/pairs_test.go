package netmodel

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestPairTableAgainstMap drives the pair table and a map with the same random pairs: a rank
// with a few peers (the linear scan) and one with hundreds (the binary search), every state
// found again with what was stored in it.
func TestPairTableAgainstMap(t *testing.T) {
	for _, peers := range []int32{1, 3, scanPairs, scanPairs + 1, 300} {
		rng := rand.New(rand.NewPCG(uint64(peers), 1))
		var tab pairTable[pairState]
		ref := map[[2]int32]uint32{}
		for range 20000 {
			src, dst := rng.Int32N(40), rng.Int32N(peers)*7
			st := tab.get(src, dst)
			if st.qps != ref[[2]int32{src, dst}] {
				t.Fatalf("peers %d: pair (%d,%d) has qps %d, want %d", peers, src, dst, st.qps, ref[[2]int32{src, dst}])
			}
			st.qps++
			ref[[2]int32{src, dst}]++
		}
		n := 0
		for src, list := range tab.more {
			for i, e := range list {
				if i > 0 && list[i-1].dst >= e.dst {
					t.Fatalf("peers %d: source %d's destinations out of order at %d", peers, src, i)
				}
				if e.dst == tab.first[src].dst {
					t.Fatalf("peers %d: pair (%d,%d) held twice", peers, src, e.dst)
				}
			}
		}
		tab.each(func(*pairState) { n++ })
		if n != len(ref) {
			t.Fatalf("peers %d: table holds %d pairs, want %d", peers, n, len(ref))
		}
	}
}

// TestPairFirstIsOneLine keeps a source's flat slot, which every flow of a collective reads,
// within one 64-byte cache line (pairState.short).
func TestPairFirstIsOneLine(t *testing.T) {
	if got := unsafe.Sizeof(pairFirst[pairState]{}); got > 64 {
		t.Errorf("pairFirst[pairState] is %d bytes, more than 64", got)
	}
}

// A source's list reserved for its destinations (pairTable.reserve, as a DAG's start does for
// its roots) takes them all without growing again, in any order, and finds each as before.
func TestPairTableReserve(t *testing.T) {
	const src, peers = 5, 500
	var tab pairTable[pairState]
	tab.reserve(src, peers)
	if got := cap(tab.more[src]); got < peers {
		t.Fatalf("reserved %d, want room for %d", got, peers)
	}
	base := unsafe.SliceData(tab.more[src])
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dst := range rng.Perm(peers + 1) { // the first goes to the flat slot
		tab.get(src, int32(dst)).qps = uint32(dst) + 1
	}
	if unsafe.SliceData(tab.more[src]) != base {
		t.Error("the reserved list grew again")
	}
	for dst := range int32(peers + 1) {
		if got := tab.get(src, dst).qps; got != uint32(dst)+1 {
			t.Fatalf("pair (%d,%d) holds %d, want %d", src, dst, got, dst+1)
		}
	}
}
