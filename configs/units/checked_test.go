package units

import (
	"math"
	"testing"
)

func TestProductAndSum(t *testing.T) {
	const max = math.MaxInt64
	for _, c := range []struct {
		name string
		f    func() (int64, bool)
		want int64
		ok   bool
	}{
		{"no factors", func() (int64, bool) { return Product() }, 1, true},
		{"a zero", func() (int64, bool) { return Product(max, 0, max) }, 0, true},
		{"tokens × top-k × hidden × dtype", func() (int64, bool) { return Product(1<<16, 8, 7168, 2) }, 7516192768, true},
		{"exactly MaxInt64", func() (int64, bool) { return Product(max, 1) }, max, true},
		{"2^63", func() (int64, bool) { return Product(1<<62, 2) }, 0, false},
		{"wraps to a small number", func() (int64, bool) { return Product(1<<32, 1<<32, 3) }, 0, false},
		{"2^30 × 2^22 × 2^24 × 2^6", func() (int64, bool) { return Product(1<<30, 1<<22, 1<<24, 1<<6) }, 0, false},
		{"negative factor", func() (int64, bool) { return Product(-1, 1) }, 0, false},
		{"sum", func() (int64, bool) { return Sum(1, 2, 3) }, 6, true},
		{"sum to MaxInt64", func() (int64, bool) { return Sum(max-1, 1) }, max, true},
		{"sum past MaxInt64", func() (int64, bool) { return Sum(max, 1) }, 0, false},
		{"sum wrapping uint64", func() (int64, bool) { return Sum(max, max, max) }, 0, false},
		{"negative term", func() (int64, bool) { return Sum(5, -1) }, 0, false},
	} {
		got, ok := c.f()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
