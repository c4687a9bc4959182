package engine

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// script is a Handler that records every event it receives and runs an optional action per
// target, so a test can make specific events schedule, cancel or stop from inside the loop.
type script struct {
	t   *testing.T
	id  HandlerID
	got []Event
	on  map[int32]func(s *Scheduler, ev Event)
}

func (h *script) HandleEvent(s *Scheduler, ev Event) {
	if ev.At != s.Now() {
		h.t.Errorf("event %d: ev.At = %v, Now() = %v", ev.Target, ev.At, s.Now())
	}
	if ev.Handler != h.id {
		h.t.Errorf("event %d: ev.Handler = %d, want %d", ev.Target, ev.Handler, h.id)
	}
	h.got = append(h.got, ev)
	if f := h.on[ev.Target]; f != nil {
		f(s, ev)
	}
}

func newScript(t *testing.T) (*Scheduler, *script) {
	s := NewScheduler()
	h := &script{t: t, on: map[int32]func(*Scheduler, Event){}}
	h.id = s.Register(h)
	return s, h
}

func (h *script) targets() []int32 {
	out := make([]int32, len(h.got))
	for i, ev := range h.got {
		out[i] = ev.Target
	}
	return out
}

func (h *script) times() []Time {
	out := make([]Time, len(h.got))
	for i, ev := range h.got {
		out[i] = ev.At
	}
	return out
}

func TestOrdering(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(s *Scheduler, h *script)
		want      []int32
		wantTimes []Time // optional
	}{
		{
			name: "by time",
			setup: func(s *Scheduler, h *script) {
				s.At(30, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				s.At(20, h.id, 3, 0)
			},
			want:      []int32{2, 3, 1},
			wantTimes: []Time{10, 20, 30},
		},
		{
			name: "equal times in scheduling order",
			setup: func(s *Scheduler, h *script) {
				for i := int32(1); i <= 6; i++ {
					s.At(10, h.id, i, 0)
				}
			},
			want: []int32{1, 2, 3, 4, 5, 6},
		},
		{
			name: "time first then scheduling order",
			setup: func(s *Scheduler, h *script) {
				s.At(20, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				s.At(20, h.id, 3, 0)
				s.At(10, h.id, 4, 0)
				s.After(0, h.id, 5, 0)
				s.At(0, h.id, 6, 0)
			},
			want: []int32{5, 6, 2, 4, 1, 3},
		},
		{
			name: "scheduled at Now from a handler runs after queued same-time events",
			setup: func(s *Scheduler, h *script) {
				s.At(10, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				s.At(20, h.id, 3, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					s.At(s.Now(), h.id, 4, 0)
					s.After(0, h.id, 5, 0)
				}
				h.on[4] = func(s *Scheduler, ev Event) { s.At(s.Now(), h.id, 6, 0) }
			},
			want:      []int32{1, 2, 4, 5, 6, 3},
			wantTimes: []Time{10, 10, 10, 10, 10, 20},
		},
		{
			name: "scheduled from a handler between queued events",
			setup: func(s *Scheduler, h *script) {
				s.At(10, h.id, 1, 0)
				s.At(20, h.id, 2, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					s.After(5, h.id, 3, 0)
					s.After(10, h.id, 4, 0) // same time as 2, scheduled later
				}
			},
			want:      []int32{1, 3, 2, 4},
			wantTimes: []Time{10, 15, 20, 20},
		},
		{
			name: "func events share the same order",
			setup: func(s *Scheduler, h *script) {
				s.At(10, h.id, 1, 0)
				s.AtFunc(10, func() { s.At(s.Now(), h.id, 2, 0) })
				s.At(10, h.id, 3, 0)
				s.AfterFunc(5, func() { s.At(s.Now(), h.id, 4, 0) })
			},
			want:      []int32{4, 1, 3, 2},
			wantTimes: []Time{5, 10, 10, 10},
		},
		{
			name: "target and arg are delivered",
			setup: func(s *Scheduler, h *script) {
				s.At(1, h.id, -7, -1<<40)
				h.on[-7] = func(s *Scheduler, ev Event) {
					if ev.Arg != -1<<40 {
						h.t.Errorf("Arg = %d", ev.Arg)
					}
				}
			},
			want: []int32{-7},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, h := newScript(t)
			tc.setup(s, h)
			n := s.Run()
			if got := h.targets(); !slices.Equal(got, tc.want) {
				t.Fatalf("order = %v, want %v", got, tc.want)
			}
			if tc.wantTimes != nil && !slices.Equal(h.times(), tc.wantTimes) {
				t.Fatalf("times = %v, want %v", h.times(), tc.wantTimes)
			}
			if n != s.Processed() || s.Len() != 0 {
				t.Fatalf("Run() = %d, Processed() = %d, Len() = %d", n, s.Processed(), s.Len())
			}
		})
	}
}

func TestCancel(t *testing.T) {
	cases := []struct {
		name string
		// do returns the timer to cancel; it may run the scheduler first.
		do         func(s *Scheduler, h *script) Timer
		wantCancel bool
		want       []int32 // targets fired after Cancel and a final Run
	}{
		{
			name: "pending",
			do: func(s *Scheduler, h *script) Timer {
				s.At(10, h.id, 1, 0)
				tm := s.At(20, h.id, 2, 0)
				s.At(30, h.id, 3, 0)
				return tm
			},
			wantCancel: true,
			want:       []int32{1, 3},
		},
		{
			name: "root of the heap",
			do: func(s *Scheduler, h *script) Timer {
				tm := s.At(10, h.id, 1, 0)
				s.At(20, h.id, 2, 0)
				s.At(30, h.id, 3, 0)
				return tm
			},
			wantCancel: true,
			want:       []int32{2, 3},
		},
		{
			name: "already fired",
			do: func(s *Scheduler, h *script) Timer {
				tm := s.At(10, h.id, 1, 0)
				s.At(20, h.id, 2, 0)
				s.RunUntil(10)
				return tm
			},
			wantCancel: false,
			want:       []int32{1, 2},
		},
		{
			name: "already cancelled",
			do: func(s *Scheduler, h *script) Timer {
				tm := s.At(10, h.id, 1, 0)
				s.At(20, h.id, 2, 0)
				if !s.Cancel(tm) {
					h.t.Error("first Cancel = false")
				}
				return tm
			},
			wantCancel: false,
			want:       []int32{2},
		},
		{
			name: "zero Timer",
			do: func(s *Scheduler, h *script) Timer {
				s.At(10, h.id, 1, 0)
				return Timer{}
			},
			wantCancel: false,
			want:       []int32{1},
		},
		{
			name: "stale Timer after its slot was reused",
			do: func(s *Scheduler, h *script) Timer {
				old := s.At(10, h.id, 1, 0)
				s.Cancel(old)
				s.At(10, h.id, 2, 0) // reuses the slot of 1
				return old
			},
			wantCancel: false,
			want:       []int32{2},
		},
		{
			name: "stale func Timer",
			do: func(s *Scheduler, h *script) Timer {
				old := s.AtFunc(10, func() { s.At(s.Now(), h.id, 1, 0) })
				s.RunUntil(10)
				s.AtFunc(20, func() { s.At(s.Now(), h.id, 2, 0) })
				return old
			},
			wantCancel: false,
			want:       []int32{1, 2},
		},
		{
			name: "pending func",
			do: func(s *Scheduler, h *script) Timer {
				s.At(10, h.id, 1, 0)
				return s.AfterFunc(5, func() { s.At(s.Now(), h.id, 2, 0) })
			},
			wantCancel: true,
			want:       []int32{1},
		},
		{
			name: "from a handler",
			do: func(s *Scheduler, h *script) Timer {
				s.At(10, h.id, 1, 0)
				victim := s.At(20, h.id, 2, 0)
				s.At(30, h.id, 3, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					if !s.Cancel(victim) {
						h.t.Error("Cancel from handler = false")
					}
				}
				return Timer{}
			},
			wantCancel: false,
			want:       []int32{1, 3},
		},
		{
			name: "own event from its handler",
			do: func(s *Scheduler, h *script) Timer {
				var self Timer
				self = s.At(10, h.id, 1, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					if s.Cancel(self) || s.Pending(self) {
						h.t.Error("the running event is still pending")
					}
				}
				return Timer{}
			},
			wantCancel: false,
			want:       []int32{1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, h := newScript(t)
			tm := tc.do(s, h)
			before := s.Len()
			if got := s.Cancel(tm); got != tc.wantCancel {
				t.Fatalf("Cancel = %v, want %v", got, tc.wantCancel)
			}
			wantLen := before
			if tc.wantCancel {
				wantLen--
			}
			if s.Len() != wantLen {
				t.Fatalf("Len after Cancel = %d, want %d", s.Len(), wantLen)
			}
			if s.Pending(tm) || s.Cancel(tm) || s.Reschedule(tm, s.Now()) {
				t.Fatal("cancelled Timer still usable")
			}
			s.Run()
			if got := h.targets(); !slices.Equal(got, tc.want) {
				t.Fatalf("fired %v, want %v", got, tc.want)
			}
			checkQueue(t, &s.q)
		})
	}
}

func TestCancelRecyclesFuncs(t *testing.T) {
	s := NewScheduler()
	f := func() {}
	for range 100 {
		s.Cancel(s.AfterFunc(1, f))
	}
	for range 100 {
		s.AfterFunc(1, f)
		s.Run()
	}
	if len(s.funcs) != 1 || len(s.q.slots) != 1 {
		t.Fatalf("side tables grew: %d funcs, %d slots", len(s.funcs), len(s.q.slots))
	}
	if s.funcs[0] != nil {
		t.Fatal("fired func still referenced")
	}
}

func TestReschedule(t *testing.T) {
	cases := []struct {
		name      string
		do        func(s *Scheduler, h *script) (Timer, Time) // timer and its new time
		wantOK    bool
		want      []int32
		wantTimes []Time
	}{
		{
			name: "later",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				tm := s.At(10, h.id, 1, 0)
				s.At(20, h.id, 2, 0)
				return tm, 30
			},
			wantOK: true, want: []int32{2, 1}, wantTimes: []Time{20, 30},
		},
		{
			name: "earlier",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				s.At(20, h.id, 1, 0)
				tm := s.At(30, h.id, 2, 0)
				return tm, 10
			},
			wantOK: true, want: []int32{2, 1}, wantTimes: []Time{10, 20},
		},
		{
			name: "same time goes behind its peers",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				tm := s.At(10, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				s.At(10, h.id, 3, 0)
				return tm, 10
			},
			wantOK: true, want: []int32{2, 3, 1},
		},
		{
			name: "earlier onto a busy time goes behind",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				s.At(10, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				tm := s.At(50, h.id, 3, 0)
				return tm, 10
			},
			wantOK: true, want: []int32{1, 2, 3}, wantTimes: []Time{10, 10, 10},
		},
		{
			name: "later onto a busy time goes behind",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				tm := s.At(5, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				return tm, 10
			},
			wantOK: true, want: []int32{2, 1},
		},
		{
			name: "fired",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				tm := s.At(10, h.id, 1, 0)
				s.RunUntil(10)
				return tm, 40
			},
			wantOK: false, want: []int32{1}, wantTimes: []Time{10},
		},
		{
			name: "zero Timer",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				s.At(10, h.id, 1, 0)
				return Timer{}, 40
			},
			wantOK: false, want: []int32{1}, wantTimes: []Time{10},
		},
		{
			name: "func event",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				s.At(20, h.id, 1, 0)
				tm := s.AtFunc(10, func() { s.At(s.Now(), h.id, 2, 0) })
				return tm, 30
			},
			wantOK: true, want: []int32{1, 2}, wantTimes: []Time{20, 30},
		},
		{
			name: "to Now from a handler",
			do: func(s *Scheduler, h *script) (Timer, Time) {
				s.At(10, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				tm := s.At(30, h.id, 3, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					if !s.Reschedule(tm, s.Now()) {
						h.t.Error("Reschedule from handler = false")
					}
				}
				return Timer{}, 0
			},
			wantOK: false, want: []int32{1, 2, 3}, wantTimes: []Time{10, 10, 10},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, h := newScript(t)
			tm, at := tc.do(s, h)
			n := s.Len()
			if got := s.Reschedule(tm, at); got != tc.wantOK {
				t.Fatalf("Reschedule = %v, want %v", got, tc.wantOK)
			}
			if s.Len() != n {
				t.Fatalf("Len changed from %d to %d", n, s.Len())
			}
			if s.Pending(tm) != tc.wantOK {
				t.Fatalf("Pending after Reschedule = %v, want %v", s.Pending(tm), tc.wantOK)
			}
			checkQueue(t, &s.q)
			s.Run()
			if got := h.targets(); !slices.Equal(got, tc.want) {
				t.Fatalf("fired %v, want %v", got, tc.want)
			}
			if tc.wantTimes != nil && !slices.Equal(h.times(), tc.wantTimes) {
				t.Fatalf("times = %v, want %v", h.times(), tc.wantTimes)
			}
			if s.Pending(tm) {
				t.Fatal("Timer pending after it fired")
			}
		})
	}
}

func TestPending(t *testing.T) {
	s, h := newScript(t)
	var seen []bool
	a := s.At(10, h.id, 1, 0)
	b := s.At(20, h.id, 2, 0)
	h.on[1] = func(s *Scheduler, ev Event) { seen = append(seen, s.Pending(a), s.Pending(b)) }
	steps := []struct {
		name       string
		act        func()
		wantA      bool
		wantB      bool
		wantLength int
	}{
		{"scheduled", func() {}, true, true, 2},
		{"rescheduled", func() { s.Reschedule(b, 15) }, true, true, 2},
		{"a fired", func() { s.RunUntil(10) }, false, true, 1},
		{"b cancelled", func() { s.Cancel(b) }, false, false, 0},
		{"slot reused", func() { s.At(40, h.id, 3, 0); s.At(40, h.id, 4, 0) }, false, false, 2},
	}
	for _, st := range steps {
		st.act()
		if s.Pending(a) != st.wantA || s.Pending(b) != st.wantB || s.Len() != st.wantLength {
			t.Fatalf("%s: Pending(a)=%v Pending(b)=%v Len=%d, want %v %v %d", st.name,
				s.Pending(a), s.Pending(b), s.Len(), st.wantA, st.wantB, st.wantLength)
		}
	}
	if !slices.Equal(seen, []bool{false, true}) {
		t.Fatalf("inside handler of a: Pending(a), Pending(b) = %v, want [false true]", seen)
	}
	if s.Pending(Timer{}) {
		t.Fatal("zero Timer pending")
	}
}

func TestRunUntil(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(s *Scheduler, h *script)
		until    Time
		wantN    uint64
		want     []int32
		wantNow  Time
		wantLen  int
		wantPeek Time // Never if empty
	}{
		{
			name: "events exactly at t run, later stay",
			setup: func(s *Scheduler, h *script) {
				s.At(5, h.id, 1, 0)
				s.At(10, h.id, 2, 0)
				s.At(10, h.id, 3, 0)
				s.At(11, h.id, 4, 0)
			},
			until: 10, wantN: 3, want: []int32{1, 2, 3}, wantNow: 10, wantLen: 1, wantPeek: 11,
		},
		{
			name: "clock moves to t past the last event",
			setup: func(s *Scheduler, h *script) {
				s.At(5, h.id, 1, 0)
				s.At(50, h.id, 2, 0)
			},
			until: 20, wantN: 1, want: []int32{1}, wantNow: 20, wantLen: 1, wantPeek: 50,
		},
		{
			name:  "empty queue",
			setup: func(s *Scheduler, h *script) {},
			until: 7, wantN: 0, want: []int32{}, wantNow: 7, wantLen: 0, wantPeek: Never,
		},
		{
			name: "scheduled at t from a handler runs in the same call",
			setup: func(s *Scheduler, h *script) {
				s.At(10, h.id, 1, 0)
				h.on[1] = func(s *Scheduler, ev Event) {
					s.At(10, h.id, 2, 0)
					s.At(11, h.id, 3, 0)
				}
			},
			until: 10, wantN: 2, want: []int32{1, 2}, wantNow: 10, wantLen: 1, wantPeek: 11,
		},
		{
			name: "Stop leaves the clock at the stopping event",
			setup: func(s *Scheduler, h *script) {
				s.At(5, h.id, 1, 0)
				s.At(6, h.id, 2, 0)
				s.At(7, h.id, 3, 0)
				h.on[2] = func(s *Scheduler, ev Event) { s.Stop() }
			},
			until: 20, wantN: 2, want: []int32{1, 2}, wantNow: 6, wantLen: 1, wantPeek: 7,
		},
		{
			name: "Never does not move the clock",
			setup: func(s *Scheduler, h *script) {
				s.At(5, h.id, 1, 0)
			},
			until: Never, wantN: 1, want: []int32{1}, wantNow: 5, wantLen: 0, wantPeek: Never,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, h := newScript(t)
			tc.setup(s, h)
			n := s.RunUntil(tc.until)
			if n != tc.wantN || !slices.Equal(h.targets(), tc.want) {
				t.Fatalf("RunUntil = %d fired %v, want %d %v", n, h.targets(), tc.wantN, tc.want)
			}
			if s.Now() != tc.wantNow || s.Len() != tc.wantLen {
				t.Fatalf("Now = %v Len = %d, want %v %d", s.Now(), s.Len(), tc.wantNow, tc.wantLen)
			}
			peek, ok := s.PeekTime()
			if peek != tc.wantPeek || ok != (tc.wantLen > 0) {
				t.Fatalf("PeekTime = %v %v, want %v", peek, ok, tc.wantPeek)
			}
		})
	}
}

func TestRunUntilPastIsNoop(t *testing.T) {
	s, h := newScript(t)
	s.At(10, h.id, 1, 0)
	s.At(30, h.id, 2, 0)
	s.RunUntil(20)
	if n := s.RunUntil(15); n != 0 || s.Now() != 20 {
		t.Fatalf("RunUntil(15) after 20: n=%d Now=%v", n, s.Now())
	}
	if n := s.RunUntil(20); n != 0 || s.Now() != 20 {
		t.Fatalf("RunUntil(20) again: n=%d Now=%v", n, s.Now())
	}
}

func TestStop(t *testing.T) {
	s, h := newScript(t)
	for i := int32(1); i <= 4; i++ {
		s.At(Time(i), h.id, i, 0)
	}
	h.on[2] = func(s *Scheduler, ev Event) {
		s.Stop()
		s.At(s.Now(), h.id, 5, 0) // scheduling after Stop is fine; it waits for the next run
	}
	s.Stop() // outside a run: no effect
	steps := []struct {
		wantN   uint64
		want    []int32
		wantNow Time
		wantLen int
	}{
		{2, []int32{1, 2}, 2, 3},
		{3, []int32{1, 2, 5, 3, 4}, 4, 0},
		{0, []int32{1, 2, 5, 3, 4}, 4, 0},
	}
	for i, st := range steps {
		n := s.Run()
		if n != st.wantN || !slices.Equal(h.targets(), st.want) || s.Now() != st.wantNow || s.Len() != st.wantLen {
			t.Fatalf("Run #%d = %d fired %v Now %v Len %d; want %d %v %v %d", i, n, h.targets(),
				s.Now(), s.Len(), st.wantN, st.want, st.wantNow, st.wantLen)
		}
	}
	if s.Processed() != 5 {
		t.Fatalf("Processed = %d, want 5", s.Processed())
	}
}

func TestProcessedCountsCurrentEvent(t *testing.T) {
	s, h := newScript(t)
	var inside []uint64
	h.on[1] = func(s *Scheduler, ev Event) { inside = append(inside, s.Processed()) }
	s.At(1, h.id, 1, 0)
	s.At(2, h.id, 1, 0)
	s.Run()
	if !slices.Equal(inside, []uint64{1, 2}) {
		t.Fatalf("Processed inside handlers = %v", inside)
	}
}

func TestZeroSchedulerIsUsable(t *testing.T) {
	var s Scheduler
	ran := false
	s.AfterFunc(3, func() { ran = true })
	h := &script{t: t}
	h.id = s.Register(h)
	if h.id == funcHandler {
		t.Fatal("Register returned the reserved id")
	}
	s.At(1, h.id, 1, 0)
	s.Run()
	if !ran || len(h.got) != 1 || s.Now() != 3 {
		t.Fatalf("ran=%v got=%d Now=%v", ran, len(h.got), s.Now())
	}
}

func TestMisusePanics(t *testing.T) {
	cases := []struct {
		name string
		f    func(s *Scheduler, id HandlerID)
		msg  string
	}{
		{"At in the past", func(s *Scheduler, id HandlerID) { s.RunUntil(10); s.At(9, id, 0, 0) }, "past"},
		{"At Never", func(s *Scheduler, id HandlerID) { s.At(Never, id, 0, 0) }, "Never"},
		{"After negative", func(s *Scheduler, id HandlerID) { s.After(-1, id, 0, 0) }, "negative"},
		{"After overflow", func(s *Scheduler, id HandlerID) { s.RunUntil(5); s.After(Never-5, id, 0, 0) }, "reaches Never"},
		{"AfterFunc negative", func(s *Scheduler, id HandlerID) { s.AfterFunc(-1, func() {}) }, "negative"},
		{"AtFunc in the past", func(s *Scheduler, id HandlerID) { s.RunUntil(10); s.AtFunc(0, func() {}) }, "past"},
		{"AtFunc nil", func(s *Scheduler, id HandlerID) { s.AtFunc(1, nil) }, "nil"},
		{"unregistered handler", func(s *Scheduler, id HandlerID) { s.At(1, id+1, 0, 0) }, "unregistered"},
		{"reserved handler 0", func(s *Scheduler, id HandlerID) { s.At(1, 0, 0, 0) }, "unregistered"},
		{"Reschedule into the past", func(s *Scheduler, id HandlerID) {
			tm := s.At(20, id, 0, 0)
			s.RunUntil(10)
			s.Reschedule(tm, 5)
		}, "past"},
		{"Register nil", func(s *Scheduler, id HandlerID) { s.Register(nil) }, "nil"},
		{"Run from a handler", func(s *Scheduler, id HandlerID) {
			s.AtFunc(1, func() { s.Run() })
			s.Run()
		}, "from a handler"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, h := newScript(t)
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if r == nil || !strings.Contains(msg, tc.msg) {
					t.Fatalf("recovered %v, want a panic mentioning %q", r, tc.msg)
				}
			}()
			tc.f(s, h.id)
		})
	}
}

func TestUsableAfterHandlerPanic(t *testing.T) {
	s, h := newScript(t)
	s.AtFunc(1, func() { panic("boom") })
	s.At(2, h.id, 1, 0)
	func() {
		defer func() { _ = recover() }()
		s.Run()
	}()
	if n := s.Run(); n != 1 || len(h.got) != 1 {
		t.Fatalf("Run after a panicking handler = %d, fired %d", n, len(h.got))
	}
}

// checkQueue verifies the heap order, the position bookkeeping and the uniqueness of sequence
// numbers of q.
func checkQueue(t *testing.T, q *eventQueue) {
	t.Helper()
	seqs := map[uint32]bool{}
	if len(q.heap) != 0 && len(q.heap) < root {
		t.Fatalf("heap slice of length %d", len(q.heap))
	}
	for i := root; i < len(q.heap); i++ {
		e := &q.heap[i]
		if i > root && e.before(&q.heap[parent(i)]) {
			t.Fatalf("heap order broken at %d", i)
		}
		if int(q.pos[e.slot()]) != i {
			t.Fatalf("slot %d records pos %d, entry is at %d", e.slot(), q.pos[e.slot()], i)
		}
		seq := uint32(e.key >> 32)
		if seqs[seq] || seq == 0 || seq > q.seq {
			t.Fatalf("bad or repeated sequence number %d (last issued %d)", seq, q.seq)
		}
		seqs[seq] = true
	}
	lineCount := 0
	var order []int32
	for j := range q.lines {
		l := &q.lines[j]
		if len(l.buf)&(len(l.buf)-1) != 0 || l.n > len(l.buf) {
			t.Fatalf("line %d: %d entries in a ring of %d", j, l.n, len(l.buf))
		}
		mask := uint32(len(l.buf) - 1)
		live := 0
		var prev *lineEntry
		for k := range uint32(l.n) {
			e := &l.buf[(l.head+k)&mask]
			if seqs[e.seq] || e.seq == 0 || e.seq > q.seq {
				t.Fatalf("line %d: bad or repeated sequence number %d (last issued %d)", j, e.seq, q.seq)
			}
			seqs[e.seq] = true
			if prev != nil && !lineBefore(prev, e.at, e.seq) {
				t.Fatalf("line %d (delay %v) out of order at %d", j, l.d, k)
			}
			prev = e
			if e.handler == deadHandler {
				if k == 0 {
					t.Fatalf("line %d: a cancelled event at the head", j)
				}
				continue
			}
			live++
		}
		lineCount += live
		if l.n > 0 {
			order = append(order, int32(j))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if lineBefore(q.lines[a].first(), q.lines[b].first().at, q.lines[b].first().seq) {
			return -1
		}
		return 1
	})
	if lineCount != q.lineCount || !slices.Equal(order, q.order) {
		t.Fatalf("lines hold %d events in the order %v; queue records %d and %v", lineCount, order, q.lineCount, q.order)
	}
	free := 0
	for _, p := range q.pos {
		if p < 0 {
			free++
		}
	}
	if len(q.pos) != len(q.slots) || free != len(q.free) || len(q.slots)-free != q.len() {
		t.Fatalf("%d slots, %d pos, %d free, free list %d, heap %d",
			len(q.slots), len(q.pos), free, len(q.free), q.len())
	}
}

// Delays that drift over a run keep using the delay lines: a line whose events have all run
// takes the next new delay, so with two lines, ten delays used one after another never reach
// the heap.
func TestDelayLinesFollowDriftingDelays(t *testing.T) {
	s, h := newScript(t)
	s.q.maxLines = 2
	for i := range 10 {
		d := Time(100 + i)
		s.AfterFixed(d, h.id, int32(i), 0)
		s.AfterFixed(d, h.id, int32(i), 1)
		if n := s.q.len(); n != 0 {
			t.Fatalf("delay %d: %d events in the heap, want 0 (both on a line)", d, n)
		}
		s.Run()
	}
	if len(h.got) != 20 {
		t.Fatalf("%d events ran, want 20", len(h.got))
	}
}

// Reserve makes room for a burst of events without changing what runs or in what order: the
// tables hold the burst without growing, and the run is the same as without it.
func TestReserveHoldsABurst(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		run := func(reserve bool) ([]int32, *Scheduler) {
			s := NewScheduler()
			var order []int32
			h := s.Register(handlerFunc(func(_ *Scheduler, ev Event) { order = append(order, ev.Target) }))
			if reserve {
				s.Reserve(n)
			}
			slots, heap := cap(s.q.slots), cap(s.q.heap)
			for i := range n {
				s.At(Time((i*7919)%13), h, int32(i), 0)
			}
			if reserve && (cap(s.q.slots) != slots || cap(s.q.heap) != heap) {
				t.Errorf("n=%d: the tables grew after Reserve: slots %d → %d, heap %d → %d", n, slots, cap(s.q.slots), heap, cap(s.q.heap))
			}
			s.Run()
			return order, s
		}
		plain, _ := run(false)
		reserved, _ := run(true)
		if !slices.Equal(plain, reserved) {
			t.Errorf("n=%d: order %v with Reserve, %v without", n, reserved, plain)
		}
	}
}

// A Timer of AfterFixedTimer cancels its event wherever it sits on its line (the head, the
// middle, the tail), Pending follows it, Reschedule leaves it alone, and a Timer stays stale
// once its line has taken another delay or its buffer has grown and wrapped past the event's
// position.
func TestAfterFixedTimer(t *testing.T) {
	s, h := newScript(t)
	var tm []Timer
	for i := range 6 {
		tm = append(tm, s.AfterFixedTimer(10, h.id, int32(i), 0))
	}
	if tm[0].slot&lineTimer == 0 {
		t.Fatal("the event did not go to a delay line")
	}
	if s.Reschedule(tm[2], 3) {
		t.Error("Reschedule moved a line event")
	}
	for _, i := range []int{0, 3, 5} { // the head, the middle, the tail
		if !s.Cancel(tm[i]) {
			t.Errorf("Cancel(%d) = false, want true", i)
		}
		if s.Cancel(tm[i]) || s.Pending(tm[i]) {
			t.Errorf("event %d is still live after Cancel", i)
		}
		checkQueue(t, &s.q)
	}
	if !s.Pending(tm[1]) || s.Len() != 3 {
		t.Fatalf("Pending(1) = %v, Len %d; want true, 3", s.Pending(tm[1]), s.Len())
	}
	s.Run()
	if got := h.targets(); !slices.Equal(got, []int32{1, 2, 4}) {
		t.Fatalf("ran %v, want [1 2 4]", got)
	}
	for i := range tm {
		if s.Pending(tm[i]) || s.Cancel(tm[i]) {
			t.Errorf("event %d is live after the run", i)
		}
	}
	// The line, now empty, takes another delay (it is the only one allowed); positions go on,
	// so the old Timers stay stale.
	s.q.maxLines = 1
	late := s.AfterFixedTimer(20, h.id, 9, 0)
	if late.slot != tm[0].slot || s.Pending(tm[0]) || s.Cancel(tm[0]) {
		t.Fatal("an old Timer names the line's new event")
	}
	// Cancelling everything empties the line and leaves nothing for the loop.
	if !s.Cancel(late) || s.Len() != 0 {
		t.Fatalf("Len %d after cancelling the last event", s.Len())
	}
	checkQueue(t, &s.q)
	if n := s.Run(); n != 0 {
		t.Fatalf("%d events ran after every one was cancelled", n)
	}
	// Positions wrap around 2^32 with the buffer growing across the wrap.
	l := &s.q.lines[0]
	l.head = math.MaxUint32 - 40
	h.got = h.got[:0]
	tm = tm[:0]
	for i := range 200 {
		tm = append(tm, s.AfterFixedTimer(20, h.id, int32(i), 0))
	}
	for i := 0; i < 200; i += 3 {
		if !s.Cancel(tm[i]) {
			t.Fatalf("Cancel(%d) across the wrap = false", i)
		}
	}
	checkQueue(t, &s.q)
	s.Run()
	var want []int32
	for i := range int32(200) {
		if i%3 != 0 {
			want = append(want, i)
		}
	}
	if got := h.targets(); !slices.Equal(got, want) {
		t.Fatalf("across the wrap ran %v, want %v", got, want)
	}
}
