package engine

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"
)

// lookLog is a Handler that writes the events it runs into one log shared with the other
// handlers of a test, so the log shows the order of the hints and the events.
type lookLog struct {
	name string
	log  *[]string
	on   map[int32]func(s *Scheduler)
}

func (h *lookLog) HandleEvent(s *Scheduler, ev Event) {
	*h.log = append(*h.log, fmt.Sprintf("%s run %d/%d", h.name, ev.Target, ev.Arg))
	if f := h.on[ev.Target]; f != nil {
		f(s)
	}
}

// prefetching is lookLog with the Prefetcher method, which logs the hints.
type prefetching struct{ *lookLog }

func (h prefetching) Prefetch(target int32, arg int64) {
	*h.log = append(*h.log, fmt.Sprintf("%s pre %d/%d", h.name, target, arg))
}

// TestLookAheadHintsTheNextEvent checks that with LookAhead on, a Prefetcher hears of its event
// just before the event before it runs — whether the event is on the heap or a delay line —
// that a handler that is no Prefetcher hears nothing, and that the events run in the same order
// with and without the hints. An event that schedules one before the hinted one wastes the
// hint: the hinted event is hinted again before the one that then comes before it.
func TestLookAheadHintsTheNextEvent(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("lookahead=", on), func(t *testing.T) {
			var log []string
			s := NewScheduler()
			a := prefetching{&lookLog{name: "a", log: &log}}
			b := &lookLog{name: "b", log: &log}
			ha, hb := s.Register(a), s.Register(b)
			s.LookAhead(on)
			s.At(10, ha, 1, 11)
			s.AfterFixed(20, ha, 2, 22)
			s.At(30, hb, 3, 33)
			s.At(40, ha, 4, 44)
			// Event 3, run with the hint of 4, schedules 5 at 35, ahead of 4.
			b.on = map[int32]func(*Scheduler){3: func(s *Scheduler) { s.At(35, ha, 5, 55) }}
			s.Run()
			want := []string{"a run 1/11", "a run 2/22", "b run 3/33", "a run 5/55", "a run 4/44"}
			if on {
				want = []string{"a pre 2/22", "a run 1/11", "a run 2/22", "a pre 4/44", "b run 3/33", "a pre 4/44", "a run 5/55", "a run 4/44"}
			}
			if !slices.Equal(log, want) {
				t.Errorf("log\n%q\nwant\n%q", log, want)
			}
		})
	}
}

// TestPrefetchAnyAddress checks that Prefetch, PrefetchSpan and PrefetchEach return for any address, a valid
// one, nil and a small one no page maps, and spans of any length: the instruction never faults, and
// the memory is left as it was.
func TestPrefetchAnyAddress(t *testing.T) {
	x := make([]byte, 4096)
	for i := range x {
		x[i] = byte(i)
	}
	p := unsafe.Pointer(&x[100])
	Prefetch(p)
	Prefetch(nil)
	Prefetch(unsafe.Add(unsafe.Pointer(nil), 8))
	for _, n := range []uintptr{0, 1, 63, 64, 65, 200, 3996} {
		PrefetchSpan(p, n)
	}
	PrefetchSpan(unsafe.Add(unsafe.Pointer(nil), 8), 1000)
	PrefetchEach(p, 64, []int32{0, 3, 1, 50, -1})
	PrefetchEach(p, 64, nil)
	PrefetchEach(nil, 1<<20, []int32{7, 1 << 20})
	for i := range x {
		if x[i] != byte(i) {
			t.Fatalf("byte %d changed to %d", i, x[i])
		}
	}
}
