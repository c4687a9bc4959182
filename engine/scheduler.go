package engine

import (
	"math"
	"strconv"
)

// HandlerID names a registered Handler.
type HandlerID uint32

// Event is what a handler receives. Pointer-free on purpose: events live in flat slices that the
// garbage collector never has to scan.
type Event struct {
	At      Time      // the time the event fires; equal to Scheduler.Now() inside the handler
	Handler HandlerID // the handler it was scheduled for
	Target  int32     // handler-defined (e.g. a flow id)
	Arg     int64     // handler-defined
}

// Handler reacts to its events. HandleEvent runs on the scheduler's goroutine with the clock set
// to ev.At; it must not block, and it may schedule, reschedule and cancel events freely.
type Handler interface{ HandleEvent(s *Scheduler, ev Event) }

// Timer is a handle to a scheduled event, for Cancel, Reschedule and Pending. The zero Timer
// refers to nothing. A Timer stays safe to use after its event fired or was cancelled: it is then
// stale, and Cancel, Reschedule and Pending report false for it, even once the queue reuses the
// event's storage for another event: a generation counter per storage slot tells the two apart,
// and it would take 2^32 reuses of one slot for a stale Timer to match again. A Timer is only
// meaningful to the Scheduler that issued it.
type Timer struct {
	slot uint32 // index into the queue's slot table
	gen  uint32 // generation of that slot when the event was scheduled; never 0 for a real event
}

// funcHandler is the HandlerID reserved for AtFunc/AfterFunc events. Register never returns it,
// so the zero HandlerID never names a user handler.
const funcHandler HandlerID = 0

// funcRunner runs AtFunc callbacks; ev.Arg indexes Scheduler.funcs.
type funcRunner struct{}

func (funcRunner) HandleEvent(s *Scheduler, ev Event) {
	f := s.takeFunc(ev.Arg)
	f()
}

// Scheduler is the simulator's clock and event queue. It is not safe for concurrent use: one
// goroutine owns it, and handlers run on that goroutine.
//
// The zero Scheduler is ready to use; NewScheduler is equivalent.
type Scheduler struct {
	q         eventQueue
	now       Time
	handlers  []Handler // handlers[funcHandler] is funcRunner once initialised
	funcs     []func()  // AtFunc callbacks, indexed by Event.Arg
	funcFree  []int32   // free indices into funcs
	processed uint64
	running   bool
	stopped   bool
	// deferred are the AtInstantEnd requests of the current instant, in request order.
	deferred []Event
	// watch is called once watchNext events have been processed, then every watchEvery
	// (Watch); watchNext is the largest count when nobody watches, so the event loop pays one
	// comparison per event.
	watch      func()
	watchEvery uint64
	watchNext  uint64
	// advance is called when the clock is about to reach advanceAt or later (AtAdvance);
	// advanceAt is Never when nobody asked, so the loop pays one comparison per clock move.
	advance   func(next Time)
	advanceAt Time
	// pref[h] is handler h's Prefetcher, nil if it is none; lookAhead says whether the loop
	// calls them (prefetch.go).
	pref      []Prefetcher
	lookAhead bool
}

// NewScheduler returns an empty scheduler with the clock at 0.
func NewScheduler() *Scheduler {
	s := &Scheduler{watchNext: math.MaxUint64, advanceAt: Never}
	s.init()
	return s
}

func (s *Scheduler) init() {
	if s.watch == nil {
		s.watchNext = math.MaxUint64
	}
	if s.advance == nil {
		s.advanceAt = Never
	}
	if len(s.handlers) == 0 {
		s.handlers = append(s.handlers, funcRunner{})
	}
}

// Register adds h and returns the id to schedule its events with. Ids are dense and start at 1.
func (s *Scheduler) Register(h Handler) HandlerID {
	if h == nil {
		panic("engine: Register(nil)")
	}
	s.init()
	s.handlers = append(s.handlers, h)
	s.pref = append(s.pref, make([]Prefetcher, len(s.handlers)-len(s.pref))...)
	s.pref[len(s.handlers)-1], _ = h.(Prefetcher)
	return HandlerID(len(s.handlers) - 1)
}

// Reserve makes room for n more pending events (scheduled with At, After or AtFunc) than
// the queue has free: a caller about to schedule many at once (a timer for each of a
// million flows starting together) saves the tables' growth by doubling. It changes
// nothing else.
func (s *Scheduler) Reserve(n int) {
	s.init()
	s.q.reserve(n)
}

// Now is the current simulated time: the time of the event being handled, or of the last event
// handled, or the bound of the last RunUntil, whichever is latest.
func (s *Scheduler) Now() Time { return s.now }

// At schedules an event for handler h at time at and returns its handle. Scheduling in the past
// (at < Now()), at Never, or for an unregistered handler is a programming error and panics.
// An event scheduled at Now() from a handler runs after the events already queued for Now().
func (s *Scheduler) At(at Time, h HandlerID, target int32, arg int64) Timer {
	s.checkTime(at)
	if h == funcHandler || int(h) >= len(s.handlers) {
		panic("engine: At with unregistered HandlerID " + strconv.FormatUint(uint64(h), 10))
	}
	return s.q.push(at, h, target, arg)
}

// After schedules an event for handler h at Now()+d. d < 0 panics, as does a delay that would
// reach Never.
func (s *Scheduler) After(d Time, h HandlerID, target int32, arg int64) Timer {
	return s.At(s.after(d), h, target, arg)
}

// AfterFixed schedules an event for handler h at Now()+d, like After, for a component that
// schedules many events at a few fixed delays (a flow's start, a send latency after its
// parent's arrival). Events scheduled with the same d come due in the order they were
// scheduled, so the scheduler keeps them in a FIFO queue per delay, a delay line, where
// scheduling and dispatching cost O(1) instead of a heap operation; past a small number of
// distinct delays it uses the heap. The order of events is exactly as with After. The event
// cannot be cancelled or moved, so there is no Timer.
func (s *Scheduler) AfterFixed(d Time, h HandlerID, target int32, arg int64) {
	at := s.after(d)
	if h == funcHandler || int(h) >= len(s.handlers) {
		panic("engine: AfterFixed with unregistered HandlerID " + strconv.FormatUint(uint64(h), 10))
	}
	if _, ok := s.q.pushLine(d, at, h, target, arg); !ok {
		s.q.push(at, h, target, arg)
	}
}

// AfterFixedTimer is AfterFixed for an event that may have to be cancelled: it returns a
// Timer, with which Cancel and Pending work as for any event. An event on a delay line cannot
// be moved: Reschedule reports false for its Timer and leaves it alone, so a caller that has
// to move it cancels it and schedules anew (which orders it exactly as Reschedule would: a
// fresh sequence number, taken now). Where the event goes to the heap (no line for d), the
// Timer is an ordinary one. A cancelled event costs nothing more than its place in its line
// until the events before it have run: the dispatch loop never sees it.
func (s *Scheduler) AfterFixedTimer(d Time, h HandlerID, target int32, arg int64) Timer {
	at := s.after(d)
	if h == funcHandler || int(h) >= len(s.handlers) {
		panic("engine: AfterFixedTimer with unregistered HandlerID " + strconv.FormatUint(uint64(h), 10))
	}
	if t, ok := s.q.pushLine(d, at, h, target, arg); ok {
		return t
	}
	return s.q.push(at, h, target, arg)
}

// AtFunc schedules f to run at time at. It is meant for code off the hot path (setup, periodic
// reports): f is kept in a side table whose entries are recycled, so it costs no allocation
// beyond whatever creating f itself costs. The same time rules as At apply; f must not be nil.
func (s *Scheduler) AtFunc(at Time, f func()) Timer {
	s.checkTime(at)
	if f == nil {
		panic("engine: AtFunc with nil func")
	}
	s.init()
	var idx int32
	if n := len(s.funcFree); n > 0 {
		idx = s.funcFree[n-1]
		s.funcFree = s.funcFree[:n-1]
		s.funcs[idx] = f
	} else {
		idx = int32(len(s.funcs))
		s.funcs = append(s.funcs, f)
	}
	return s.q.push(at, funcHandler, 0, int64(idx))
}

// AfterFunc schedules f to run at Now()+d; see AtFunc and After.
func (s *Scheduler) AfterFunc(d Time, f func()) Timer {
	return s.AtFunc(s.after(d), f)
}

// Cancel removes the event t refers to. It reports whether the event was pending; cancelling a
// fired, already cancelled or zero Timer does nothing and returns false. O(log n).
func (s *Scheduler) Cancel(t Timer) bool {
	if t.slot&lineTimer != 0 {
		return s.q.cancelLine(t)
	}
	if !s.q.live(t) {
		return false
	}
	sl := &s.q.slots[t.slot]
	if sl.handler == funcHandler {
		s.takeFunc(sl.arg)
	}
	s.q.remove(int32(t.slot))
	return true
}

// Reschedule moves the pending event t refers to to time at, keeping its handler, target and
// arg. The moved event is ordered as if it had been scheduled now: after every event already
// queued for the same time. It reports whether the event was pending (a stale or zero Timer is
// left alone and yields false, and so is the Timer of an event on a delay line, see
// AfterFixedTimer). The time rules of At apply and are checked first. t stays valid.
func (s *Scheduler) Reschedule(t Timer, at Time) bool {
	s.checkTime(at)
	if t.slot&lineTimer != 0 || !s.q.live(t) {
		return false
	}
	s.q.move(int32(t.slot), at)
	return true
}

// Pending reports whether the event t refers to is still queued.
func (s *Scheduler) Pending(t Timer) bool {
	if t.slot&lineTimer != 0 {
		e, _ := s.q.lineEntryOf(t)
		return e != nil
	}
	return s.q.live(t)
}

// Len is the number of pending events.
func (s *Scheduler) Len() int { return s.q.len() + s.q.lineCount }

// PeekTime returns the time of the next event, or (Never, false) when nothing is pending.
func (s *Scheduler) PeekTime() (Time, bool) {
	at, _, ok := s.q.peek()
	if !ok {
		return Never, false
	}
	return at, true
}

// Run processes events in (time, scheduling order) until none is left or a handler calls Stop.
// It returns the number of events processed by this call. Run must not be called from a handler.
func (s *Scheduler) Run() uint64 {
	n, _ := s.run(Never)
	return n
}

// RunUntil processes every event with At <= t, in order, and then sets the clock to t if t is
// later than Now(). Events after t stay queued. If a handler calls Stop, RunUntil returns after
// that event without moving the clock to t. RunUntil(Never) is Run: the clock is never set to
// Never. It returns the number of events processed by this call and must not be called from a
// handler.
func (s *Scheduler) RunUntil(t Time) uint64 {
	n, stopped := s.run(t)
	if !stopped && t > s.now && t != Never {
		if t >= s.advanceAt && s.advance != nil {
			s.advanceTo(t)
		}
		s.now = t
	}
	return n
}

// Stop makes the running Run or RunUntil return once the current handler returns. Called outside
// a run it has no effect: every Run and RunUntil starts afresh.
func (s *Scheduler) Stop() { s.stopped = true }

// Processed is the total number of events processed by this scheduler, counting the one being
// handled.
func (s *Scheduler) Processed() uint64 { return s.processed }

// run is the dispatch loop shared by Run and RunUntil.
func (s *Scheduler) run(limit Time) (n uint64, stopped bool) {
	if s.running {
		panic("engine: Run or RunUntil called from a handler")
	}
	s.running = true
	s.stopped = false
	defer s.endRun()
	for !s.stopped {
		var ev Event
		at, line, ok := s.q.peek()
		switch {
		case ok && at == s.now && at <= limit:
			ev = s.q.take(line)
		case len(s.deferred) > 0:
			// Every event of this instant has run: the end-of-instant requests go next, before
			// the clock moves on.
			ev = s.deferred[0]
			copy(s.deferred, s.deferred[1:])
			s.deferred = s.deferred[:len(s.deferred)-1]
		case ok && at <= limit:
			if at >= s.advanceAt && s.advance != nil {
				s.advanceTo(at)
			}
			ev = s.q.take(line)
		default:
			return n, s.stopped
		}
		s.now = ev.At
		s.processed++
		n++
		if s.lookAhead {
			s.prefetchNext()
		}
		s.handlers[ev.Handler].HandleEvent(s, ev)
		if s.processed >= s.watchNext {
			s.watchNext += s.watchEvery
			s.watch()
		}
	}
	return n, s.stopped
}

// Watch calls f every every events the scheduler processes (every > 0), from the run loop on
// the scheduler's goroutine, between two events: progress reports and guards read the clock
// and counters there without locks. f may schedule events or Stop. Watch(0, nil) stops
// watching.
func (s *Scheduler) Watch(every uint64, f func()) {
	if every == 0 || f == nil {
		s.watch, s.watchEvery, s.watchNext = nil, 0, math.MaxUint64
		return
	}
	s.watch, s.watchEvery, s.watchNext = f, every, s.processed+every
}

// AtInstantEnd asks for an event for handler h at the current time that runs after every event
// of this instant — those already queued and those they schedule for now — and before the clock
// moves on. Components that collect the changes of an instant and act on them once (the network
// model's rate recomputation) use it instead of an event at Now(), which could run before other
// changes of the same instant. Requests run in the order they were made; each request is one
// event. It cannot be cancelled.
func (s *Scheduler) AtInstantEnd(h HandlerID, target int32, arg int64) {
	s.init()
	if h == funcHandler || int(h) >= len(s.handlers) {
		panic("engine: AtInstantEnd for an unregistered handler")
	}
	s.deferred = append(s.deferred, Event{At: s.now, Handler: h, Target: target, Arg: arg})
}

// AtAdvance asks for f to be called once, from the run loop, just before the clock moves to a
// time at or after at: every event up to Now() has run, the instant's AtInstantEnd requests
// included, and next (≥ at) is where the clock goes, the next event's time or the bound of
// RunUntil. Now() is still the instant just finished, and nothing happens between it and next,
// so f sees the state that holds over that whole stretch.
//
// It is not an event: it takes no sequence number, Processed does not count it and it cannot
// change the order of events or the time a run ends. It is meant for samplers that read the
// simulation between events; f must not schedule, cancel or stop anything. One request is
// pending at a time: a call replaces the previous one, and f may call AtAdvance for its next
// time. A run that ends because no event is left does not call f.
func (s *Scheduler) AtAdvance(at Time, f func(next Time)) {
	if f == nil {
		s.advance, s.advanceAt = nil, Never
		return
	}
	s.advance, s.advanceAt = f, at
}

// advanceTo calls the pending AtAdvance request before the clock moves to next.
func (s *Scheduler) advanceTo(next Time) {
	f := s.advance
	s.advance, s.advanceAt = nil, Never
	f(next)
}

// endRun resets the run state; deferred so that a panicking handler does not leave the
// scheduler marked as running.
func (s *Scheduler) endRun() {
	s.running = false
	s.stopped = false
}

// takeFunc removes and returns the callback at idx, recycling its entry.
func (s *Scheduler) takeFunc(idx int64) func() {
	f := s.funcs[idx]
	s.funcs[idx] = nil
	s.funcFree = append(s.funcFree, int32(idx))
	return f
}

// checkTime panics if at cannot be scheduled.
func (s *Scheduler) checkTime(at Time) {
	if at < s.now || at == Never {
		badTime(at, s.now)
	}
}

// after converts a delay into an absolute time, panicking on a negative delay or overflow.
func (s *Scheduler) after(d Time) Time {
	if d < 0 || d >= Never-s.now {
		badDelay(d, s.now)
	}
	return s.now + d
}

func badTime(at, now Time) {
	if at == Never {
		panic("engine: cannot schedule an event at Never")
	}
	panic("engine: event scheduled in the past: at " + at.String() + " < now " + now.String())
}

func badDelay(d, now Time) {
	if d < 0 {
		panic("engine: negative delay " + d.String())
	}
	panic("engine: delay " + d.String() + " from " + now.String() + " reaches Never")
}
