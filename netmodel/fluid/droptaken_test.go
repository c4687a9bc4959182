package fluid

import (
	"math/rand/v2"
	"testing"
)

// DropTaken keeps a queue's entries in order, holds at most twice what is queued when an entry
// is added, and gives back the room of a backlog once it has drained: random pushes and pops
// against a plain list, in phases that build a backlog of thousands and drain it again.
func TestDropTaken(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var q []int
	var head int32
	var want []int
	next := 0
	peak := 0
	for step := range 200000 {
		push := 52 // percent: a queue that grows slowly
		switch phase := step / 20000 % 4; phase {
		case 1:
			push = 80 // a backlog builds
		case 3:
			push = 15 // it drains
		}
		if rng.IntN(100) < push || len(want) == 0 {
			q, head = DropTaken(q, head)
			q = append(q, next)
			want = append(want, next)
			next++
			live := len(q) - int(head)
			if len(q) > 2*live {
				t.Fatalf("step %d: %d entries kept for %d queued", step, len(q), live)
			}
			// The room is at most eight times the slice's length after a compaction (or
			// twice it after a growth), and the length at most twice what is queued.
			if cap(q) > 16*max(live, keptRoom) {
				t.Fatalf("step %d: room for %d entries kept for %d queued", step, cap(q), live)
			}
			peak = max(peak, live)
		} else {
			if q[head] != want[0] {
				t.Fatalf("step %d: took %d, want %d", step, q[head], want[0])
			}
			head++
			want = want[1:]
		}
		if len(q)-int(head) != len(want) {
			t.Fatalf("step %d: %d queued, want %d", step, len(q)-int(head), len(want))
		}
	}
	if peak < 5000 {
		t.Fatalf("the backlogs peaked at %d entries; the test wants thousands", peak)
	}
}
