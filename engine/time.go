package engine

import (
	"math"
	"strconv"
)

// Time is simulated time in picoseconds. int64 picoseconds cover 106 days; nanoseconds would be
// too coarse for fluid completions (one byte on a 2.88 Tb/s NVLink takes 2.8 ps).
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Never is later than any time an event can be scheduled at.
const Never Time = math.MaxInt64

// Nanoseconds is t in whole nanoseconds, truncated toward zero.
func (t Time) Nanoseconds() int64 { return int64(t / Nanosecond) }

// Microseconds is t in microseconds as a float64.
func (t Time) Microseconds() float64 { return float64(t) / float64(Microsecond) }

// Seconds is t in seconds as a float64.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// String prints t in the largest unit that keeps it readable, e.g. "1.5us".
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	abs := t
	if abs < 0 {
		abs = -abs
	}
	unit, name := Picosecond, "ps"
	switch {
	case abs >= Second:
		unit, name = Second, "s"
	case abs >= Millisecond:
		unit, name = Millisecond, "ms"
	case abs >= Microsecond:
		unit, name = Microsecond, "us"
	case abs >= Nanosecond:
		unit, name = Nanosecond, "ns"
	}
	return strconv.FormatFloat(float64(t)/float64(unit), 'g', -1, 64) + name
}
