package units

import (
	"math"
	"math/bits"
)

// Product multiplies non-negative factors, such as a size by counts, and reports whether the
// product fits in an int64. A negative factor is reported as not fitting: sizes and counts are
// never negative, and callers refuse negative input before multiplying. Product(…) of no
// factors is 1.
func Product(factors ...int64) (int64, bool) {
	p := uint64(1)
	for _, f := range factors {
		if f < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// Sum adds non-negative terms and reports whether the sum fits in an int64 (a negative term
// does not fit, as in Product).
func Sum(terms ...int64) (int64, bool) {
	var s uint64
	for _, t := range terms {
		if t < 0 {
			return 0, false
		}
		var carry uint64
		s, carry = bits.Add64(s, uint64(t), 0)
		if carry != 0 || s > math.MaxInt64 {
			return 0, false
		}
	}
	return int64(s), true
}
