package ccfluid

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// turnsRun starts flows of the given payload sizes from host 0 of a 400 Gb/s star to hosts
// 1.., flow i at starts[i], with packets of 9,000 bytes and 52 of headers sent in whole
// nanoseconds (SimAI's clock: 181 ns a full packet), and returns when each was sent (its last
// byte left host 0's port).
func turnsRun(t *testing.T, turns bool, sizes []int64, starts []engine.Time) []engine.Time {
	t.Helper()
	cfg := repoConfig()
	cfg.Transport = fluid.Transport{Payload: 9000, Header: 52, Ack: 60, NanosecondClock: true}
	cfg.Turns = turns
	g := star(t, len(sizes)+1, G400, engine.Microsecond)
	s, n, rec, _ := setup(t, g, cfg)
	for i, b := range sizes {
		s.AtFunc(starts[i], func() {
			dst := int32(i + 1)
			n.Start([]int32{0, 2*dst + 1}, []int32{2 * dst, 1}, b, int64(i))
		})
	}
	s.Run()
	out := make([]engine.Time, len(sizes))
	for i := range sizes {
		out[i] = rec.sentAt[int64(i)]
	}
	return out
}

// TestTurnsEqualFlows: k flows of n full packets that start together leave in turn: flow i's
// last packet is the ((n−1)·k + i + 1)-th the port sends.
func TestTurnsEqualFlows(t *testing.T) {
	const k, np = 4, 5
	const slot = 181e3 // ps: a full packet in whole nanoseconds
	sizes := make([]int64, k)
	starts := make([]engine.Time, k)
	for i := range sizes {
		sizes[i] = np * 9000
	}
	got := turnsRun(t, true, sizes, starts)
	for i := range k {
		want := float64((np-1)*k+i+1) * slot
		if math.Abs(float64(got[i])-want) > 2 {
			t.Errorf("flow %d sent at %d ps, want %.0f", i, got[i], want)
		}
	}
}

// roundRobin is a packet-level reference: a port of rate bits/s serves the flows (payload
// sizes, start times) in turn, a packet each, in the order they started, a full packet in whole
// nanoseconds rounded down (ns-3's clock), and returns when each flow's last packet has left.
func roundRobin(sizes []int64, starts []engine.Time, rate float64) []float64 {
	const payload, header = 9000, 52
	left := make([]int64, len(sizes))
	for i, b := range sizes {
		left[i] = b
	}
	done := make([]float64, len(sizes))
	now, last, finished := 0.0, -1, 0
	for finished < len(sizes) {
		pick := -1
		for s := 1; s <= len(sizes); s++ {
			j := (last + s) % len(sizes)
			if last < 0 {
				j = s - 1
			}
			if left[j] > 0 && float64(starts[j]) <= now {
				pick = j
				break
			}
		}
		if pick < 0 {
			next := math.Inf(1)
			for j := range sizes {
				if left[j] > 0 {
					next = min(next, float64(starts[j]))
				}
			}
			now = next
			continue
		}
		p := min(left[pick], payload)
		left[pick] -= p
		// A full packet in whole nanoseconds (⌊9,052·8/rate⌋), any other at the rate that makes
		// (Transport.PacketRate): the fluid's clock for a port of rate.
		full := math.Floor(float64((payload+header)*8)/rate*1e9) * 1e3
		now += float64(p+header) / (payload + header) * full
		last = pick
		if left[pick] == 0 {
			done[pick] = now
			finished++
		}
	}
	return done
}

// TestTurnsMatchRoundRobin: flows of random sizes that start at random times on one port
// leave when the packet-level round robin sends their last packets.
func TestTurnsMatchRoundRobin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 300 {
		k := 2 + rng.IntN(6)
		sizes := make([]int64, k)
		starts := make([]engine.Time, k)
		for i := range k {
			sizes[i] = 1 + rng.Int64N(60000)
			starts[i] = engine.Time(rng.Int64N(2000)) * engine.Nanosecond // ns-3 starts flows at whole ns
		}
		slices.Sort(starts)
		got := turnsRun(t, true, sizes, starts)
		want := roundRobin(sizes, starts, G400)
		tol := 10.0 // ps: each end is rounded up to the picosecond
		for i := range k {
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Fatalf("trial %d: sizes %v starts %v: flow %d sent at %d ps, round robin %.0f (all: %v vs %.0f)", trial, sizes, starts, i, got[i], want[i], got, want)
			}
		}
	}
}
