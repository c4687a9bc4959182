package cc

import (
	"math"
	"strings"
	"testing"
)

func TestECNMarkerProbability(t *testing.T) {
	// SimAI's repo entry for 400 Gb/s ports: Kmin 800 KB, Kmax 3200 KB (×1000 bytes), Pmax 0.2.
	m := ECNMarker{KMin: 800_000, KMax: 3_200_000, PMax: 0.2}
	cases := []struct {
		name  string
		queue float64
		want  float64
	}{
		{"empty", 0, 0},
		{"just below Kmin", 799_999, 0},
		{"exactly Kmin: q > Kmin is strict", 800_000, 0},
		// 0.2·(800_001 − 800_000)/2_400_000 = 0.2/2.4e6
		{"one byte above Kmin", 800_001, 0.2 / 2_400_000},
		// 0.2·(1_400_000 − 800_000)/2_400_000 = 0.2·0.25 = 0.05
		{"quarter way", 1_400_000, 0.05},
		// 0.2·1_200_000/2_400_000 = 0.1
		{"midpoint", 2_000_000, 0.1},
		// q > Kmax is strict too: at Kmax the linear part gives Pmax, not 1
		{"exactly Kmax", 3_200_000, 0.2},
		{"one byte above Kmax", 3_200_001, 1},
		{"far above Kmax", 1e12, 1},
	}
	for _, tc := range cases {
		if got := m.Probability(tc.queue); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: Probability(%v) = %v, want %v", tc.name, tc.queue, got, tc.want)
		}
	}
	// Linear between the thresholds: equal steps in q give equal steps in p.
	for q := 900_000.0; q < 3_200_000; q += 100_000 {
		slope := (m.Probability(q) - m.Probability(q-100_000)) / 100_000
		if math.Abs(slope-0.2/2_400_000) > 1e-18 {
			t.Fatalf("slope at %v = %v, want %v", q, slope, 0.2/2_400_000)
		}
	}
}

func TestECNMarkerEqualThresholds(t *testing.T) {
	// Kmin == Kmax: a step at K with no division by zero.
	m := ECNMarker{KMin: 100_000, KMax: 100_000, PMax: 0.5}
	for _, tc := range []struct{ queue, want float64 }{{99_999, 0}, {100_000, 0}, {100_001, 1}} {
		if got := m.Probability(tc.queue); got != tc.want {
			t.Errorf("Probability(%v) = %v, want %v", tc.queue, got, tc.want)
		}
	}
}

func TestECNMarkerMark(t *testing.T) {
	m := ECNMarker{KMin: 100, KMax: 300, PMax: 0.5}
	// At q = 200, p = 0.5·100/200 = 0.25: marked iff u < 0.25.
	for _, tc := range []struct {
		queue, u float64
		want     bool
	}{
		{200, 0, true},
		{200, 0.2499, true},
		{200, 0.25, false},
		{200, 0.9, false},
		{100, 0, false},     // at Kmin p = 0, nothing marks
		{301, 0.9999, true}, // above Kmax every draw marks
	} {
		if got := m.Mark(tc.queue, tc.u); got != tc.want {
			t.Errorf("Mark(%v, %v) = %v, want %v", tc.queue, tc.u, got, tc.want)
		}
	}
}

func TestECNMarkerValidate(t *testing.T) {
	if err := (ECNMarker{KMin: 800_000, KMax: 3_200_000, PMax: 0.2}).Validate(); err != nil {
		t.Fatalf("valid marker rejected: %v", err)
	}
	if err := (ECNMarker{KMin: 5, KMax: 5, PMax: 1}).Validate(); err != nil {
		t.Fatalf("Kmin == Kmax, Pmax 1 rejected: %v", err)
	}
	for _, tc := range []struct {
		m    ECNMarker
		want string
	}{
		{ECNMarker{KMin: -1, KMax: 10, PMax: 0.1}, "KMIN_MAP"},
		{ECNMarker{KMin: 0, KMax: math.Inf(1), PMax: 0.1}, "KMAX_MAP"},
		{ECNMarker{KMin: 20, KMax: 10, PMax: 0.1}, "must not exceed"},
		{ECNMarker{KMin: 0, KMax: 10, PMax: 1.5}, "PMAX_MAP"},
		{ECNMarker{KMin: 0, KMax: 10, PMax: math.NaN()}, "PMAX_MAP"},
	} {
		err := tc.m.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want an error containing %q", tc.m, err, tc.want)
		}
	}
}
