// Package units parses the rate and time strings of SimAI's files at the edge of the program:
// ns-3 DataRate strings such as "400Gbps" or "50Mb/s" into bits per second, and ns-3 Time strings
// such as "0.0005ms" into engine.Time picoseconds. Times are converted with exact decimal
// arithmetic, so "0.000025ms" is exactly 25 ns and never 24.999999 ns. It also reads the byte
// counts of simd's flags ("64MiB") and checks sums and products of sizes for overflow.
package units

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"simd/engine"
)

// rateUnits are the unit suffixes ns-3's DataRate accepts (data-rate.cc), plus the T prefixes,
// with their value in bits per second.
var rateUnits = map[string]float64{
	"bps": 1, "b/s": 1, "Bps": 8, "B/s": 8,
	"kbps": 1e3, "kb/s": 1e3, "Kbps": 1e3, "Kb/s": 1e3,
	"kBps": 8e3, "kB/s": 8e3, "KBps": 8e3, "KB/s": 8e3,
	"Kibps": 1 << 10, "Kib/s": 1 << 10, "KiBps": 8 << 10, "KiB/s": 8 << 10,
	"Mbps": 1e6, "Mb/s": 1e6, "MBps": 8e6, "MB/s": 8e6,
	"Mibps": 1 << 20, "Mib/s": 1 << 20, "MiBps": 8 << 20, "MiB/s": 8 << 20,
	"Gbps": 1e9, "Gb/s": 1e9, "GBps": 8e9, "GB/s": 8e9,
	"Gibps": 1 << 30, "Gib/s": 1 << 30, "GiBps": 8 << 30, "GiB/s": 8 << 30,
	"Tbps": 1e12, "Tb/s": 1e12, "TBps": 8e12, "TB/s": 8e12,
	"Tibps": 1 << 40, "Tib/s": 1 << 40, "TiBps": 8 << 40, "TiB/s": 8 << 40,
}

// timeUnits are ns-3's Time suffixes in picoseconds; fs is kept for completeness and rounds.
var timeUnits = map[string]*big.Rat{
	"fs":  big.NewRat(1, 1000),
	"ps":  big.NewRat(1, 1),
	"ns":  big.NewRat(1000, 1),
	"us":  big.NewRat(1000000, 1),
	"ms":  big.NewRat(1000000000, 1),
	"s":   big.NewRat(1000000000000, 1),
	"min": big.NewRat(60*1000000000000, 1),
	"h":   big.NewRat(3600*1000000000000, 1),
	"d":   big.NewRat(86400*1000000000000, 1),
}

// splitNumber splits "12.5Gbps" into "12.5" and "Gbps".
func splitNumber(s string) (num, unit string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
			i++
			continue
		}
		// An exponent: e or E followed by a digit or a sign.
		if (c == 'e' || c == 'E') && i > 0 && i+1 < len(s) {
			n := s[i+1]
			if n >= '0' && n <= '9' || n == '+' || n == '-' {
				i += 2
				continue
			}
		}
		break
	}
	return s[:i], s[i:]
}

// ParseRate reads an ns-3 DataRate string ("400Gbps", "50Mb/s", "1.6Tbps", or a bare number of
// bits per second) and returns bits per second. The rate must be positive and finite.
func ParseRate(s string) (float64, error) {
	num, unit := splitNumber(strings.TrimSpace(s))
	if num == "" {
		return 0, fmt.Errorf("%q is not a rate (expected a number and a unit such as 400Gbps)", s)
	}
	mult := 1.0
	if unit != "" {
		m, ok := rateUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%q has an unknown rate unit %q (expected bps, Kbps, Mbps, Gbps, Tbps, b/s, B/s, ...)", s, unit)
		}
		mult = m
	}
	r, ok := parseDecimal(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a rate (expected a number and a unit such as 400Gbps)", s)
	}
	v, _ := r.Float64()
	v *= mult
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a positive rate", s)
	}
	return v, nil
}

// ParseTime reads an ns-3 Time string ("0.0005ms", "25ns", "1s"; a bare number is seconds, as
// in ns-3) and returns it in picoseconds, rounded to the nearest picosecond. Negative times are
// refused.
func ParseTime(s string) (engine.Time, error) {
	num, unit := splitNumber(strings.TrimSpace(s))
	if num == "" {
		return 0, fmt.Errorf("%q is not a time (expected a number and a unit such as 0.0005ms)", s)
	}
	if unit == "" {
		unit = "s"
	}
	mult, ok := timeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown time unit %q (expected s, ms, us, ns or ps)", s, unit)
	}
	r, ok := parseDecimal(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a time (expected a number and a unit such as 0.0005ms)", s)
	}
	if r.Sign() < 0 {
		return 0, fmt.Errorf("%q is a negative time", s)
	}
	return ratToTime(r.Mul(r, mult), s)
}

// FromMicroseconds converts a count of microseconds (as SimAI.conf writes its intervals) to
// picoseconds exactly, rounding to the nearest picosecond.
func FromMicroseconds(us string) (engine.Time, error) {
	r, ok := parseDecimal(strings.TrimSpace(us))
	if !ok {
		return 0, fmt.Errorf("%q is not a number of microseconds", us)
	}
	if r.Sign() < 0 {
		return 0, fmt.Errorf("%q is a negative time", us)
	}
	return ratToTime(r.Mul(r, timeUnits["us"]), us)
}

// parseDecimal reads a decimal number exactly. Exponents are limited so that a hostile
// "1e999999999" cannot make big.Rat build a gigantic number.
func parseDecimal(num string) (*big.Rat, bool) {
	if len(num) > 64 {
		return nil, false
	}
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		exp := strings.TrimLeft(num[i+1:], "+-")
		if len(exp) > 3 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(num)
}

func ratToTime(ps *big.Rat, orig string) (engine.Time, error) {
	// Round half up: floor(ps + 1/2).
	half := new(big.Rat).Add(ps, big.NewRat(1, 2))
	q := new(big.Int).Quo(half.Num(), half.Denom())
	if !q.IsInt64() {
		return 0, fmt.Errorf("%q is too long a time (the limit is about 106 days)", orig)
	}
	return engine.Time(q.Int64()), nil
}
