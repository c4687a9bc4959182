package engine

// Looking ahead. A network model's event reads a flow's records and its path's links, tables of
// megabytes in a fabric of thousands of GPUs, in the order the events come due: each record's
// first touch in an event is a cache miss, and nothing in the event can go on without it. The
// event after it is already known (the queue's head), so the scheduler can tell that event's
// handler about it one event early (Scheduler.LookAhead): the handler asks the processor for
// the lines it will read (Prefetch), and they load while the current event runs. A prefetch
// never faults, changes nothing the program can observe and may be dropped by the processor, so
// the order of events and every result stay what they are without it.

// Prefetcher is a Handler that can ask for the memory one of its events will read before the
// event runs: with LookAhead on, the scheduler calls Prefetch with the target and arg of the
// next queued event, when that event is the Prefetcher's, just before it runs the event before
// it. Prefetch must not schedule, cancel or change anything; it only reads and calls Prefetch
// (the function). The queue may still change before the event runs (the current event
// schedules an earlier one, or cancels it): the hint is then wasted, nothing more.
type Prefetcher interface {
	Prefetch(target int32, arg int64)
}

// LookAhead turns on or off the Prefetchers' hints (off by default). Each event then pays a
// look at the queue's head and a call, a few nanoseconds: worth it where the handlers' tables
// are larger than the processor's caches, not below.
func (s *Scheduler) LookAhead(on bool) { s.lookAhead = on }

// LookingAhead reports whether LookAhead is on.
func (s *Scheduler) LookingAhead() bool { return s.lookAhead }

// prefetchNext gives the Prefetcher of the next queued event, if it has one, that event.
func (s *Scheduler) prefetchNext() {
	_, line, ok := s.q.peek()
	if !ok {
		return
	}
	h, target, arg := s.q.head(line)
	if int(h) < len(s.pref) {
		if p := s.pref[h]; p != nil {
			p.Prefetch(target, arg)
		}
	}
}
