package ccfluid

import (
	"math"

	"simd/cc"
	"simd/engine"
)

// This file holds the fluid queue of one directed link: its backlog grows when the flows'
// arrivals exceed what the link may send and drains otherwise, linearly between events, and its
// ECN marks are the expected number of marked packets, integrated exactly over that line.

// queueState is the piecewise-linear state of a link's egress queue. Between events the
// arrival rate and the service capacity are constant, so the backlog is q + slope·(t − at),
// clamped at 0 by an "empty" event.
type queueState struct {
	q      float64     // backlog, bytes, at time at
	served float64     // bytes the link has sent since the start, at time at
	credit float64     // expected marked packets accumulated since the last mark
	at     engine.Time // time of the last advance
}

// secs converts a duration in picoseconds to seconds.
func secs(d engine.Time) float64 { return float64(d) / 1e12 }

// emptyEps is the backlog below which a queue counts as empty: rounding the empty time to a
// picosecond leaves at most slope·1 ps, far below one byte.
const emptyEps = 1e-3

// rates returns the link's output rate (bits/s) and the backlog's slope (bytes/s) for arrivals
// arr and capacity c (0 while paused). A queue with a backlog sends at capacity; an empty one
// sends what arrives, up to capacity, and grows only when arrivals exceed it.
func rates(q, arr, c float64) (out, slope float64) {
	if q > emptyEps || arr > c {
		return c, float64(arr-c) / 8
	}
	return arr, 0
}

// advance moves the queue to now with arrivals arr and capacity c, integrating marks when m
// is not nil (pkt: bytes per marked unit).
func (qs *queueState) advance(now engine.Time, arr, c float64, m *cc.ECNMarker, pkt float64) {
	if now <= qs.at {
		return
	}
	dt := secs(now - qs.at)
	out, slope := rates(qs.q, arr, c)
	if m != nil && out > 0 {
		qs.credit += markIntegral(m, qs.q, slope, dt) * out / 8 / pkt
	}
	q := qs.q + float64(slope*dt)
	if q < emptyEps {
		q = 0
	}
	qs.q = q
	qs.served += float64(float64(out*dt) / 8)
	qs.at = now
}

// emptyIn is the time until the backlog reaches 0, or Never if it is not draining.
func (qs *queueState) emptyIn(arr, c float64) engine.Time {
	_, slope := rates(qs.q, arr, c)
	if qs.q <= emptyEps || slope >= 0 {
		return engine.Never
	}
	return ceilPs(qs.q / -slope)
}

// ceilPs converts seconds to picoseconds, rounded up; Never when out of range.
func ceilPs(s float64) engine.Time {
	d := math.Ceil(s * 1e12)
	if !(d < 1<<62) {
		return engine.Never
	}
	return engine.Time(d)
}

// markPrimitive is P(q) = ∫₀^q p(x) dx for RED's marking probability p: 0 up to KMin, linear
// up to PMax at KMax, 1 beyond (cc.ECNMarker.Probability).
func markPrimitive(m *cc.ECNMarker, q float64) float64 {
	switch {
	case q <= m.KMin:
		return 0
	case q <= m.KMax:
		d := q - m.KMin
		return m.PMax * d * d / (2 * (m.KMax - m.KMin))
	default:
		return float64(m.PMax*(m.KMax-m.KMin)/2) + (q - m.KMax)
	}
}

// markPrimitiveInv is the smallest q > KMin with P(q) = v, for v > 0.
func markPrimitiveInv(m *cc.ECNMarker, v float64) float64 {
	mid := float64(m.PMax * (m.KMax - m.KMin) / 2)
	if v <= mid && m.PMax > 0 {
		return m.KMin + math.Sqrt(2*v*(m.KMax-m.KMin)/m.PMax)
	}
	return m.KMax + (v - mid)
}

// markIntegral is ∫₀^dt p(q + slope·t) dt, in seconds: the marked fraction of what the link
// sent over dt, times dt. With the queue linear, it is (P(q₁) − P(q₀))/slope.
func markIntegral(m *cc.ECNMarker, q, slope, dt float64) float64 {
	if slope == 0 {
		return m.Probability(q) * dt
	}
	q1 := max(q+float64(slope*dt), 0)
	return (markPrimitive(m, q1) - markPrimitive(m, q)) / slope
}

// markIn is the time until the integral of the marking rate (out/8/pkt marked units per second
// at probability 1) reaches need, or Never when the current line never gets there (the queue
// drains below KMin first, or nothing is sent). It is at least 1 ps when need > 0, so marks
// always move the clock.
func markIn(m *cc.ECNMarker, q, slope, out, pkt, need float64) engine.Time {
	if need <= 0 {
		return 0
	}
	if out <= 0 {
		return engine.Never
	}
	// Required ∫p dt over the interval, in seconds.
	want := need * pkt * 8 / out
	p := m.Probability(q)
	var t float64
	switch {
	case slope > 0:
		t = (markPrimitiveInv(m, markPrimitive(m, q)+float64(want*slope)) - q) / slope
	case slope < 0:
		// Draining: ∫p dt = (P(q) − P(q₁))/|slope|, at most P(q)/|slope| before the queue
		// empties.
		target := markPrimitive(m, q) + float64(want*slope)
		if target <= 0 {
			return engine.Never
		}
		t = (markPrimitiveInv(m, target) - q) / slope
	}
	if !(t > 0) {
		// Slope 0, or a slope so small that the primitive's difference is lost in rounding:
		// the probability is constant over the interval.
		if p <= 0 {
			return engine.Never
		}
		t = want / p
	}
	return max(ceilPs(t), 1)
}
