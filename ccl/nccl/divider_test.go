package nccl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// divider gives what / and % give, for divisors up to 2³¹ and dividends below 2³¹: powers of two
// and their neighbours, small and large divisors, and the dividends next to multiples.
func TestDivider(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	divisors := []int64{1, 2, 3, 5, 7, 255, 256, 257, 2047, 2048, 4094, 1 << 20, 3 << 20, math.MaxInt32 - 1, math.MaxInt32, 1 << 31}
	for range 200 {
		divisors = append(divisors, 1+rng.Int64N(math.MaxInt32))
	}
	for _, d := range divisors {
		v := newDivider(d)
		xs := []int64{0, 1, d - 1, d, d + 1, math.MaxInt32, math.MaxInt32 - 1}
		for k := int64(1); k*d < math.MaxInt32 && k < 1000; k++ {
			xs = append(xs, k*d-1, k*d, k*d+1)
		}
		for range 1000 {
			xs = append(xs, rng.Int64N(math.MaxInt32))
		}
		for _, x := range xs {
			if x < 0 || x > math.MaxInt32 {
				continue
			}
			if q, r := v.divmod(x); q != x/d || r != x%d {
				t.Fatalf("%d / %d: divider %d rem %d, want %d rem %d", x, d, q, r, x/d, x%d)
			}
		}
	}
}
