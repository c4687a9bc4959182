package fluid

import (
	"math/rand/v2"
	"testing"
)

// DropTaken keeps a queue's entries in order and holds at most twice what is queued when an
// entry is added: random pushes and pops against a plain list.
func TestDropTaken(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var q []int
	var head int32
	var want []int
	next := 0
	for step := range 100000 {
		if rng.IntN(100) < 52 || len(want) == 0 {
			q, head = DropTaken(q, head)
			q = append(q, next)
			want = append(want, next)
			next++
			if live := len(q) - int(head); len(q) > 2*live {
				t.Fatalf("step %d: %d entries kept for %d queued", step, len(q), live)
			}
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
}
