package engine

import "testing"

// Watch calls its function after every n-th processed event, counting from the call, between
// events; Watch(0, nil) stops it; a zero-value scheduler is not watched.
func TestWatch(t *testing.T) {
	s := NewScheduler()
	var seen []uint64
	var h funcHandlerRec
	id := s.Register(&h)
	for i := range 10 {
		s.At(Time(i), id, int32(i), 0)
	}
	s.Watch(3, func() { seen = append(seen, s.Processed()) })
	s.RunUntil(Time(6)) // events 0..6
	s.Watch(0, nil)
	s.Run()
	if want := []uint64{3, 6}; len(seen) != len(want) || seen[0] != 3 || seen[1] != 6 {
		t.Errorf("watch saw %v, want %v", seen, want)
	}
	if h.n != 10 {
		t.Errorf("%d events ran", h.n)
	}
	var z Scheduler
	zid := z.Register(&h)
	z.At(0, zid, 0, 0)
	z.Run() // must not call a nil watch
}

type funcHandlerRec struct{ n int }

func (h *funcHandlerRec) HandleEvent(*Scheduler, Event) { h.n++ }
