package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refQueue is the deliberately simple reference: a slice kept sorted by (at, seq), searched
// linearly.
type refQueue struct {
	evs []refEv
	seq uint64
}

type refEv struct {
	at  Time
	seq uint64
	id  int32
}

func (r *refQueue) insert(at Time, id int32) {
	r.seq++
	e := refEv{at: at, seq: r.seq, id: id}
	i := 0
	for i < len(r.evs) && (r.evs[i].at < e.at || (r.evs[i].at == e.at && r.evs[i].seq < e.seq)) {
		i++
	}
	r.evs = slices.Insert(r.evs, i, e)
}

func (r *refQueue) index(id int32) int {
	for i, e := range r.evs {
		if e.id == id {
			return i
		}
	}
	return -1
}

func (r *refQueue) remove(id int32) bool {
	i := r.index(id)
	if i < 0 {
		return false
	}
	r.evs = slices.Delete(r.evs, i, i+1)
	return true
}

func (r *refQueue) pop() refEv {
	e := r.evs[0]
	r.evs = r.evs[1:]
	return e
}

// model drives a Scheduler and a refQueue with the same random operations and checks that they
// agree after every step. Events are identified by Target; ids are never reused.
type model struct {
	t       *testing.T
	rng     *rand.Rand
	s       *Scheduler
	hid     HandlerID
	ref     refQueue
	timers  []Timer // indexed by id
	fixed   []bool  // indexed by id: scheduled with AfterFixed, so no Timer
	onLine  []bool  // indexed by id: scheduled with AfterFixedTimer and put on a line, so not movable
	fired   []int32
	stopped bool // a handler called Stop during the current run
}

func (m *model) HandleEvent(s *Scheduler, ev Event) {
	if ev.Handler != m.hid {
		m.t.Fatalf("event %d delivered with handler %d", ev.Target, ev.Handler)
	}
	m.handle(ev.Target, ev.At)
}

// handle checks one dispatched event against the reference and then, like a real handler,
// sometimes schedules, cancels or reschedules, and sometimes stops the run.
func (m *model) handle(id int32, at Time) {
	if len(m.ref.evs) == 0 {
		m.t.Fatalf("event %d fired, reference is empty", id)
	}
	want := m.ref.pop()
	if id != want.id || at != want.at || m.s.Now() != at {
		m.t.Fatalf("fired event %d at %v (Now %v), reference says %d at %v",
			id, at, m.s.Now(), want.id, want.at)
	}
	m.fired = append(m.fired, id)
	for range m.rng.IntN(3) {
		m.mutate()
	}
	if m.rng.IntN(4) == 0 {
		m.s.Stop()
		m.stopped = true
	}
}

// when picks a time at or after Now; a narrow range makes equal times common.
func (m *model) when() Time {
	if m.rng.IntN(8) == 0 {
		return m.s.Now() + Time(m.rng.IntN(1000))
	}
	return m.s.Now() + Time(m.rng.IntN(6))
}

// someID picks any id ever issued, pending or not; -1 if none.
func (m *model) someID() int32 {
	if len(m.timers) == 0 {
		return -1
	}
	return int32(m.rng.IntN(len(m.timers)))
}

// fixedDelays are the delays AfterFixed is used with: more than the two lines some sessions
// allow, so that the fallback to the heap is exercised too.
var fixedDelays = [...]Time{0, 3, 5, 700}

func (m *model) schedule() {
	id := int32(len(m.timers))
	at := m.when()
	var tm Timer
	fixed, onLine := false, false
	switch m.rng.IntN(7) {
	case 0:
		tm = m.s.After(at-m.s.Now(), m.hid, id, int64(id))
	case 1:
		tm = m.s.AtFunc(at, func() { m.handle(id, m.s.Now()) })
	case 2, 3:
		d := fixedDelays[m.rng.IntN(len(fixedDelays))]
		at = m.s.Now() + d
		m.s.AfterFixed(d, m.hid, id, int64(id))
		fixed = true
	case 4:
		d := fixedDelays[m.rng.IntN(len(fixedDelays))]
		at = m.s.Now() + d
		tm = m.s.AfterFixedTimer(d, m.hid, id, int64(id))
		onLine = tm.slot&lineTimer != 0
	default:
		tm = m.s.At(at, m.hid, id, int64(id))
	}
	m.timers = append(m.timers, tm)
	m.fixed = append(m.fixed, fixed)
	m.onLine = append(m.onLine, onLine)
	m.ref.insert(at, id)
}

// mutate applies one schedule, cancel, reschedule or query to both sides.
func (m *model) mutate() {
	switch op := m.rng.IntN(10); {
	case op < 4:
		m.schedule()
	case op < 6:
		if id := m.someID(); id >= 0 && !m.fixed[id] {
			got, want := m.s.Cancel(m.timers[id]), m.ref.remove(id)
			if got != want {
				m.t.Fatalf("Cancel(%d) = %v, reference %v", id, got, want)
			}
		}
	case op < 8:
		if id := m.someID(); id >= 0 && !m.fixed[id] {
			at := m.when()
			got := m.s.Reschedule(m.timers[id], at)
			var want bool
			if m.onLine[id] {
				want = false // a line event is not moved
			} else if want = m.ref.remove(id); want {
				m.ref.insert(at, id)
			}
			if got != want {
				m.t.Fatalf("Reschedule(%d) = %v, reference %v", id, got, want)
			}
		}
	case op < 9:
		if id := m.someID(); id >= 0 && !m.fixed[id] {
			if got, want := m.s.Pending(m.timers[id]), m.ref.index(id) >= 0; got != want {
				m.t.Fatalf("Pending(%d) = %v, reference %v", id, got, want)
			}
		}
	default:
		if m.s.Cancel(Timer{}) || m.s.Pending(Timer{}) {
			m.t.Fatal("zero Timer is live")
		}
	}
}

// run runs the scheduler with Run or RunUntil and checks what the reference predicts about the
// clock and the queue afterwards.
func (m *model) run() {
	m.stopped = false
	before := len(m.fired)
	var n uint64
	if m.rng.IntN(2) == 0 {
		n = m.s.Run()
		if !m.stopped && len(m.ref.evs) != 0 {
			m.t.Fatalf("Run returned without Stop, reference still has %d events", len(m.ref.evs))
		}
	} else {
		start := m.s.Now()
		limit := start + Time(m.rng.IntN(20))
		n = m.s.RunUntil(limit)
		if !m.stopped {
			if len(m.ref.evs) > 0 && m.ref.evs[0].at <= limit {
				m.t.Fatalf("RunUntil(%v) left an event at %v", limit, m.ref.evs[0].at)
			}
			if m.s.Now() != limit {
				m.t.Fatalf("after RunUntil(%v) Now = %v", limit, m.s.Now())
			}
		}
	}
	if int(n) != len(m.fired)-before {
		m.t.Fatalf("run reported %d events, %d fired", n, len(m.fired)-before)
	}
}

func (m *model) check() {
	m.t.Helper()
	if m.s.Len() != len(m.ref.evs) {
		m.t.Fatalf("Len = %d, reference %d", m.s.Len(), len(m.ref.evs))
	}
	at, ok := m.s.PeekTime()
	if ok != (len(m.ref.evs) > 0) || (ok && at != m.ref.evs[0].at) {
		m.t.Fatalf("PeekTime = %v %v, reference %v", at, ok, m.ref.evs)
	}
	checkQueue(m.t, &m.s.q)
}

// runModel plays one seeded random session and returns the firing order.
// A non-zero seqLimit makes the queue renumber its sequence numbers that often. Odd seeds allow
// only two delay lines.
func runModel(t *testing.T, seed uint64, steps int, seqLimit uint32) []int32 {
	m := &model{t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), s: NewScheduler()}
	m.s.q.seqLimit = seqLimit
	if seed%2 == 1 {
		m.s.q.maxLines = 2
	}
	m.hid = m.s.Register(m)
	for range steps {
		if m.rng.IntN(5) == 0 {
			m.run()
		} else {
			m.mutate()
		}
		m.check()
	}
	for m.s.Len() > 0 {
		m.run()
		m.check()
	}
	if len(m.ref.evs) != 0 {
		t.Fatalf("reference still holds %d events", len(m.ref.evs))
	}
	if m.s.Processed() != uint64(len(m.fired)) {
		t.Fatalf("Processed = %d, fired %d", m.s.Processed(), len(m.fired))
	}
	if seqLimit != 0 && m.ref.seq < 3*uint64(seqLimit) {
		t.Fatalf("only %d sequence numbers used; renumbering at %d was hardly exercised", m.ref.seq, seqLimit)
	}
	return m.fired
}

func TestAgainstReference(t *testing.T) {
	seeds, steps := 300, 600
	if testing.Short() {
		seeds = 50
	}
	total := 0
	for seed := range uint64(seeds) {
		total += len(runModel(t, seed, steps, 0))
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
	if total < seeds*steps/4 {
		t.Fatalf("only %d events fired over %d seeds; the model is not exercising the queue", total, seeds)
	}
}

// TestAgainstReferenceRenumbering runs the same comparison with sequence numbers running out
// every few hundred schedulings instead of every ~4 billion.
func TestAgainstReferenceRenumbering(t *testing.T) {
	for seed := range uint64(40) {
		runModel(t, 1000+seed, 3000, 200)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for seed := range uint64(5) {
		a, b := runModel(t, seed, 2000, 0), runModel(t, seed, 2000, 0)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d: two runs fired in different orders", seed)
		}
	}
}
