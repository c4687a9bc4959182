package ccfluid

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortFill gives pdqsort's order, (demand, flow) ascending, whatever its input: nearly sorted
// (a few demands moved since the last sharing, the insertion sort's case), reversed and random
// (past its move bound, where it hands over), with ties on demand broken by flow.
func TestSortFillOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 300 {
		k := 1 + rng.IntN(2000)
		fill := make([]fillItem, k)
		for i := range fill {
			fill[i] = fillItem{demand: float64(rng.IntN(50)) * 1e9, f: int32(i)}
		}
		switch trial % 3 {
		case 0: // sorted, then a few demands changed
			slices.SortFunc(fill, fillCmp)
			for range 1 + rng.IntN(5) {
				fill[rng.IntN(k)].demand = float64(rng.IntN(50)) * 1e9
			}
		case 1:
			slices.SortFunc(fill, fillCmp)
			slices.Reverse(fill)
		default:
			rng.Shuffle(k, func(i, j int) { fill[i], fill[j] = fill[j], fill[i] })
		}
		want := slices.Clone(fill)
		slices.SortFunc(want, fillCmp)
		sortFill(fill)
		if !slices.Equal(fill, want) {
			t.Fatalf("trial %d (%d flows): sortFill's order differs from pdqsort's", trial, k)
		}
	}
}
