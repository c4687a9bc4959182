package cc

import (
	"testing"

	"simd/engine"
)

func TestCNPGate(t *testing.T) {
	type mark struct {
		at   engine.Time
		want bool
	}
	cases := []struct {
		name     string
		interval engine.Time
		marks    []mark
	}{
		{
			// SimAI's ns-3: every marked packet's ACK carries a CNP, even at the same instant.
			name:     "interval 0: one CNP per marked packet",
			interval: 0,
			marks:    []mark{{0, true}, {0, true}, {1 * nsec, true}, {5 * usec, true}},
		},
		{
			// At most one per 50 µs, measured from the last CNP sent; now − last ≥ 50 µs sends.
			name:     "interval 50us",
			interval: 50 * usec,
			marks: []mark{
				{10 * usec, true},               // first marked packet always sends
				{20 * usec, false},              // 10 µs after
				{60*usec - 1, false},            // 1 ps short of 50 µs
				{60 * usec, true},               // exactly 50 µs after
				{100 * usec, false},             // 40 µs after the last sent, not 90 after the first
				{130 * usec, true},              // 70 µs after
				{130 * usec, false},             // same instant
				{engine.Second, true},           // long quiet period
				{engine.Second + 1*nsec, false}, // and right after it
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g CNPGate
			for i, m := range tc.marks {
				if got := g.OnMarked(m.at, tc.interval); got != m.want {
					t.Fatalf("mark %d at %v: OnMarked = %v, want %v", i, m.at, got, m.want)
				}
			}
		})
	}
}

// Switching the interval on takes effect from the last CNP sent with it off.
func TestCNPGateIntervalChange(t *testing.T) {
	var g CNPGate
	g.OnMarked(0, 0)
	if g.OnMarked(3*usec, 4*usec) {
		t.Fatal("CNP 3 us after the previous one with a 4 us interval")
	}
	if !g.OnMarked(4*usec, 4*usec) {
		t.Fatal("no CNP 4 us after the previous one with a 4 us interval")
	}
}
