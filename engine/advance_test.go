package engine

import (
	"slices"
	"testing"
)

// A sampler asking for every multiple of 10 is called once per clock move that reaches its
// next multiple, with the instant just finished as Now() and the next time as its argument,
// after the instant's end-of-instant requests; it does not change the events or their count.
func TestAtAdvance(t *testing.T) {
	type call struct{ now, next Time }
	tests := []struct {
		name   string
		events []Time
		until  Time // RunUntil bound; Never: Run
		want   []call
	}{
		{"sparse", []Time{3, 5, 27, 40}, Never, []call{{5, 27}, {27, 40}}},
		{"first event on the grid", []Time{10, 11}, Never, []call{{0, 10}}},
		{"none reached", []Time{1, 2, 9}, Never, nil},
		{"until", []Time{4}, 35, []call{{4, 35}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler()
			h := &script{t: t, on: map[int32]func(*Scheduler, Event){}}
			h.id = s.Register(h)
			var deferredAt []Time
			h.on[0] = func(s *Scheduler, ev Event) { s.AtInstantEnd(h.id, 1, 0) }
			h.on[1] = func(s *Scheduler, ev Event) { deferredAt = append(deferredAt, s.Now()) }
			for _, at := range tc.events {
				s.At(at, h.id, 0, 0)
			}
			var got []call
			var ask func(next Time)
			nextAt := Time(10)
			ask = func(next Time) {
				got = append(got, call{s.Now(), next})
				if s.Now() != 0 && (len(deferredAt) == 0 || deferredAt[len(deferredAt)-1] != s.Now()) {
					t.Errorf("called at %v before the instant's end-of-instant requests ran", s.Now())
				}
				for nextAt <= next {
					nextAt += 10
				}
				s.AtAdvance(nextAt, ask)
			}
			s.AtAdvance(nextAt, ask)
			n := s.RunUntil(tc.until)
			if !slices.Equal(got, tc.want) {
				t.Errorf("calls %v, want %v", got, tc.want)
			}
			if want := uint64(2 * len(tc.events)); n != want || s.Processed() != want {
				t.Errorf("processed %d events (%d), want %d", n, s.Processed(), want)
			}
		})
	}
}

// The zero Scheduler never calls a sampler nobody asked for.
func TestAtAdvanceZero(t *testing.T) {
	var s Scheduler
	ran := 0
	s.AtFunc(5, func() { ran++ })
	s.Run()
	s.AtAdvance(7, nil)
	s.AtFunc(9, func() { ran++ })
	s.Run()
	if ran != 2 {
		t.Errorf("ran %d", ran)
	}
}
