// Package detmath computes e^x, ln x and x^y with the same bits on every platform.
//
// The standard library's math.Exp runs assembly on amd64 (one path with FMA instructions, one
// without, chosen by the CPU at run time), arm64, loong64 and s390x, math.Log on amd64 and
// s390x, and its Go code elsewhere may be compiled with fused multiply-adds: the last bits of
// the results, and of math.Pow with a fractional exponent, differ between machines. The
// functions here use only +, −, ×, ÷, math.Frexp, math.Ldexp, math.Modf and math.Round, each
// correctly rounded or exact in IEEE 754, with every product converted explicitly so that the
// compiler cannot fuse it into an addition. They are within a few units in the last place of
// the exact values, close to math's but not always equal to them.
package detmath

import "math"

const (
	ln2Hi      = 0x1.62e42fee00000p-1    // ln 2 to 32 bits: k·ln2Hi is exact for |k| < 2²¹
	ln2Lo      = 0x1.a39ef35793c76p-33   // ln 2 − ln2Hi
	log2E      = 0x1.71547652b82fep+0    // 1/ln 2
	sqrtHalf   = 0x1.6a09e667f3bcdp-1    // √½
	expOver    = 709.782712893383973096  // above it e^x overflows
	expUnder   = -745.133219101941108420 // below it e^x rounds to 0
	powIntBits = 62                      // |y| beyond 2^62 is treated as infinite in Pow
)

// expTaylor are 1/n! for n = 14 down to 2: on |r| ≤ ln2/2 the next term is below 2⁻⁶⁰.
var expTaylor = [...]float64{
	1.0 / 87178291200, 1.0 / 6227020800, 1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800,
	1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2,
}

// Exp is e^x.
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > expOver:
		return math.Inf(1)
	case x < expUnder:
		return 0
	case x == 0:
		return 1
	}
	// x = k·ln 2 + r with |r| ≤ ln2/2 (a little more after rounding), e^x = 2^k·e^r.
	// hi is exact, and r = hi − lo carries the rounding of k·ln 2.
	kf := math.Round(float64(x * log2E))
	hi := x - float64(kf*ln2Hi)
	lo := float64(kf * ln2Lo)
	r := hi - lo
	// e^r − 1 − r = r²·(1/2 + r/6 + …) = t, by Horner.
	p := expTaylor[0]
	for _, c := range expTaylor[1:] {
		p = float64(p*r) + c
	}
	t := float64(float64(r*r) * p)
	// e^r = 1 + hi + (t − lo), summed as s + err + (t − lo) where s + err = 1 + hi exactly
	// (|hi| < 1), so that only the last addition rounds at the result's scale.
	s := 1 + hi
	err := hi - (s - 1)
	return math.Ldexp(s+(err+(t-lo)), int(kf))
}

// logSeries are 2/(2n+1) for n = 1..11: ln((1+s)/(1−s)) = 2s + s·Σ 2/(2n+1)·s²ⁿ, and with
// s² ≤ 0.0295 the next term is below 2⁻⁶⁰ of the sum.
var logSeries = [...]float64{
	2.0 / 23, 2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3,
}

// Log is ln x.
func Log(x float64) float64 {
	switch {
	case x != x || x == math.Inf(1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// x = m·2^e with √½ ≤ m < √2; ln m = ln((1+s)/(1−s)) with s = (m−1)/(m+1).
	m, e := math.Frexp(x)
	if m < sqrtHalf {
		m, e = m*2, e-1
	}
	f := m - 1 // exact
	s := f / (2 + f)
	z := float64(s * s)
	q := logSeries[0]
	for _, c := range logSeries[1:] {
		q = float64(q*z) + c
	}
	// ln m = f − s·(f − ln-series tail): the big term f is exact, s·(...) small.
	lnm := f - float64(s*(f-float64(z*q)))
	ef := float64(e)
	return float64(ef*ln2Hi) + (float64(ef*ln2Lo) + lnm)
}

// Pow is x^y for x > 0 (x ≤ 0 gives NaN, but x^0 = 1): e^(f·ln x) for the fractional part f of
// y, |f| ≤ ½, times x^n for the integer part n by repeated squaring, as math.Pow does.
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case x != x || y != y || x <= 0:
		return math.NaN()
	case math.IsInf(x, 1):
		if y > 0 {
			return x
		}
		return 0
	}
	neg := y < 0
	if neg {
		y = -y
	}
	if y >= 1<<powIntBits {
		// x^y over- or underflows for every finite x ≠ 1.
		if (x > 1) != neg {
			return math.Inf(1)
		}
		return 0
	}
	yi, yf := math.Modf(y)
	if yf > 0.5 {
		yi, yf = yi+1, yf-1
	}
	a, ae := 1.0, 0
	if yf != 0 {
		a = Exp(float64(yf * Log(x)))
	}
	// a·2^ae *= x^yi, the running square kept as a mantissa in [½, 1) and an exponent.
	x1, xe := math.Frexp(x)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			// The square's exponent alone passes the range of float64.
			ae += xe
			break
		}
		if i&1 == 1 {
			a = float64(a * x1)
			ae += xe
		}
		x1 = float64(x1 * x1)
		xe <<= 1
		if x1 < 0.5 {
			x1 = float64(x1 + x1)
			xe--
		}
	}
	if neg {
		a, ae = 1/a, -ae
	}
	return math.Ldexp(a, ae)
}
