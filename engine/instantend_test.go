package engine

import (
	"reflect"
	"testing"
)

type logHandler struct{ log *[]string }

func (h logHandler) HandleEvent(s *Scheduler, ev Event) {
	*h.log = append(*h.log, string(rune('A'+ev.Target))+"@"+ev.At.String())
}

// End-of-instant requests run after every event of the instant, including events scheduled for
// the same instant meanwhile, and before the clock moves on.
func TestAtInstantEnd(t *testing.T) {
	s := NewScheduler()
	var log []string
	h := s.Register(logHandler{&log})
	var ctl HandlerID
	ctl = s.Register(handlerFunc(func(s *Scheduler, ev Event) {
		log = append(log, "ctl@"+ev.At.String())
		s.AtInstantEnd(h, 3, 0)      // D, after everything at 10ns
		s.At(s.Now(), h, 2, 0)       // C, same instant, scheduled later
		s.AtInstantEnd(h, 4, 0)      // E, after D
		s.After(Nanosecond, h, 5, 0) // F, the next instant
	}))
	s.At(10*Nanosecond, ctl, 0, 0)
	s.At(10*Nanosecond, h, 1, 0) // B
	s.At(12*Nanosecond, h, 6, 0) // G
	s.Run()
	want := []string{"ctl@10ns", "B@10ns", "C@10ns", "D@10ns", "E@10ns", "F@11ns", "G@12ns"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("order %v, want %v", log, want)
	}

	// A request made before Run runs at the current time, before later events; RunUntil
	// handles the requests of its last instant.
	log = nil
	s2 := NewScheduler()
	h2 := s2.Register(logHandler{&log})
	s2.At(5*Nanosecond, h2, 1, 0)
	s2.AtInstantEnd(h2, 0, 0)
	s2.RunUntil(5 * Nanosecond)
	if want := []string{"A@0ps", "B@5ns"}; !reflect.DeepEqual(log, want) {
		t.Errorf("order %v, want %v", log, want)
	}
}

type handlerFunc func(s *Scheduler, ev Event)

func (f handlerFunc) HandleEvent(s *Scheduler, ev Event) { f(s, ev) }
