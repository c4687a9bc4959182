package netmodel

import (
	"slices"
	"testing"
)

// mailboxOrder is libstdc++'s std::sort of equal keys taken from the back. Up to 16 messages
// the sort is an insertion sort, which moves no equal element, so they come out in reverse.
// Past 16 the introsort's first partition swaps the middle element to the front and the rest
// pairwise from both ends: 64 messages, eight GPUs' eight channels posted GPU by GPU, come out
// as SimAI's ns-3 makes the queue pairs of a ring's first step (every reference run's): each
// GPU's in reverse, but GPUs 0 and 4 with their first first; an all-to-all's 120 as ns-3
// starts an all-to-all.
func TestMailboxOrder(t *testing.T) {
	for n := range 17 {
		got := mailboxOrder(n, nil)
		for i, v := range got {
			if v != n-1-i {
				t.Fatalf("%d messages: %v, want them in reverse", n, got)
			}
		}
	}
	got := mailboxOrder(64, nil)
	perGPU := make([][]int, 8)
	for _, v := range got {
		perGPU[v/8] = append(perGPU[v/8], v%8)
	}
	for g, chans := range perGPU {
		want := []int{7, 6, 5, 4, 3, 2, 1, 0}
		if g == 0 || g == 4 {
			want = []int{0, 7, 6, 5, 4, 3, 2, 1}
		}
		if !slices.Equal(chans, want) {
			t.Errorf("GPU %d's channels come out %v, want %v", g, chans, want)
		}
	}
	// An all-to-all on two servers of eight: 120 messages, eight GPUs' fifteen sends (to the
	// others in order). Each GPU's second to last come out in order and then its first, GPUs
	// 0 and 4 all in order: SimAI's ns-3 ends GPU 1's NVLink flows of the 64 MiB all-to-all on
	// AlibabaHPN 16 to GPUs 2, 3, …, 7 25 ns apart and the one to GPU 0 last, GPU 0's in order.
	got = mailboxOrder(120, nil)
	perGPU = make([][]int, 8)
	for _, v := range got {
		perGPU[v/15] = append(perGPU[v/15], v%15)
	}
	for g, sends := range perGPU {
		want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0}
		if g == 0 || g == 4 {
			want = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
		}
		if !slices.Equal(sends, want) {
			t.Errorf("all-to-all: GPU %d's sends come out %v, want %v", g, sends, want)
		}
	}
	// Every size is a permutation of the messages.
	for n := range 600 {
		got := slices.Clone(mailboxOrder(n, nil))
		slices.Sort(got)
		for i, v := range got {
			if v != i {
				t.Fatalf("%d messages: not a permutation", n)
			}
		}
	}
}
