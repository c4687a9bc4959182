package engine

// Benchmarks of the event queue against off-the-shelf heaps, and of the full Scheduler loop.
// They only run with -bench. The figures in doc.go come from
//
//	go test -run '^$' -bench . -benchtime 10000000x -count 6 ./engine
//
// i.e. 10M hold operations (pop the earliest event, push it back a pseudo-random delay later)
// per benchmark, with about n events pending throughout.

import (
	"container/heap"
	"math/rand/v2"
	"strconv"
	"testing"

	godsv1 "github.com/emirpasic/gods/trees/binaryheap"
	godsv2 "github.com/emirpasic/gods/v2/trees/binaryheap"
)

// benchSizes are the numbers of pending events the hold benchmarks keep.
var benchSizes = []int{1 << 10, 1 << 14, 1 << 17, 1 << 20}

const delayMask = 1<<16 - 1

// holdInput is the pseudo-random workload shared by every variant: n initial times and a ring of
// delays, all from a seeded PCG so every variant sees exactly the same sequence.
type holdInput struct {
	start  []Time
	delays []Time
}

func newHoldInput(n int) *holdInput {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	in := &holdInput{start: make([]Time, n), delays: make([]Time, delayMask+1)}
	for i := range in.start {
		in.start[i] = Time(r.Int64N(int64(Microsecond)))
	}
	for i := range in.delays {
		in.delays[i] = Time(r.Int64N(int64(Microsecond)))
	}
	return in
}

// holdVariant is one queue implementation under test. fill loads the initial events; hold does
// ops pop+push pairs, calling trace (if not nil) with every popped event, and returns a checksum
// so the work cannot be optimised away. The loops are written out per variant so that no
// interface call sits inside them.
type holdVariant interface {
	fill(in *holdInput)
	hold(in *holdInput, ops int, trace func(at Time, id int32)) Time
}

var holdVariants = []struct {
	name string
	mk   func() holdVariant
}{
	{"typed-4ary", func() holdVariant { return &typedHold{} }},
	{"typed-binary", func() holdVariant { return &binaryHold{} }},
	{"gods-v1", func() holdVariant { return &godsV1Hold{} }},
	{"gods-v2", func() holdVariant { return &godsV2Hold{} }},
	{"container-heap", func() holdVariant { return &stdHold{} }},
}

// BenchmarkHold compares the queues on the classic hold model. One op is one pop plus one push.
func BenchmarkHold(b *testing.B) {
	for _, n := range benchSizes {
		in := newHoldInput(n)
		for _, v := range holdVariants {
			b.Run("pending="+strconv.Itoa(n)+"/"+v.name, func(b *testing.B) {
				q := v.mk()
				q.fill(in)
				b.ReportAllocs()
				b.ResetTimer()
				benchSink = q.hold(in, b.N, nil)
			})
		}
	}
}

var benchSink Time

// TestHoldVariantsAgree makes sure every benchmarked queue is a correct (time, seq) priority
// queue: they must all pop the same events in the same order, in non-decreasing time.
func TestHoldVariantsAgree(t *testing.T) {
	in := newHoldInput(300)
	var want []Time
	for _, v := range holdVariants {
		var got []Time
		q := v.mk()
		q.fill(in)
		last := Time(-1)
		q.hold(in, 20000, func(at Time, id int32) {
			if at < last {
				t.Fatalf("%s: popped %v after %v", v.name, at, last)
			}
			last = at
			got = append(got, at, Time(id))
		})
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s differs from %s at pop %d", v.name, holdVariants[0].name, i/2)
			}
		}
	}
}

// benchEv is the event the generic heaps store: the same key and payload as the typed queue.
type benchEv struct {
	at     Time
	seq    uint64
	target int32
	arg    int64
}

func (e *benchEv) before(o *benchEv) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

func compareBenchEv(a, b benchEv) int {
	switch {
	case a.before(&b):
		return -1
	case b.before(&a):
		return 1
	}
	return 0
}

// typedHold is the queue the Scheduler uses.
type typedHold struct{ q eventQueue }

func (h *typedHold) fill(in *holdInput) {
	for i, at := range in.start {
		h.q.push(at, 1, int32(i), 0)
	}
}

func (h *typedHold) hold(in *holdInput, ops int, trace func(Time, int32)) Time {
	var sum Time
	for i := range ops {
		ev := h.q.pop()
		if trace != nil {
			trace(ev.At, ev.Target)
		}
		sum += ev.At
		h.q.push(ev.At+in.delays[i&delayMask], ev.Handler, ev.Target, ev.Arg)
	}
	return sum
}

// binaryHold is the same indexed queue with two children per node, kept here to justify the
// arity of the real one.
type binaryHold struct{ q binaryQueue }

func (h *binaryHold) fill(in *holdInput) {
	for i, at := range in.start {
		h.q.push(at, 1, int32(i), 0)
	}
}

func (h *binaryHold) hold(in *holdInput, ops int, trace func(Time, int32)) Time {
	var sum Time
	for i := range ops {
		ev := h.q.pop()
		if trace != nil {
			trace(ev.At, ev.Target)
		}
		sum += ev.At
		h.q.push(ev.At+in.delays[i&delayMask], ev.Handler, ev.Target, ev.Arg)
	}
	return sum
}

// godsV1Hold uses github.com/emirpasic/gods v1.18.1, which stores interface{} values.
type godsV1Hold struct {
	h   *godsv1.Heap
	seq uint64
}

func (h *godsV1Hold) fill(in *holdInput) {
	h.h = godsv1.NewWith(func(a, b interface{}) int { return compareBenchEv(a.(benchEv), b.(benchEv)) })
	for i, at := range in.start {
		h.seq++
		h.h.Push(benchEv{at: at, seq: h.seq, target: int32(i)})
	}
}

func (h *godsV1Hold) hold(in *holdInput, ops int, trace func(Time, int32)) Time {
	var sum Time
	for i := range ops {
		v, _ := h.h.Pop()
		ev := v.(benchEv)
		if trace != nil {
			trace(ev.at, ev.target)
		}
		sum += ev.at
		h.seq++
		ev.at += in.delays[i&delayMask]
		ev.seq = h.seq
		h.h.Push(ev)
	}
	return sum
}

// godsV2Hold uses the generic github.com/emirpasic/gods/v2.
type godsV2Hold struct {
	h   *godsv2.Heap[benchEv]
	seq uint64
}

func (h *godsV2Hold) fill(in *holdInput) {
	h.h = godsv2.NewWith(compareBenchEv)
	for i, at := range in.start {
		h.seq++
		h.h.Push(benchEv{at: at, seq: h.seq, target: int32(i)})
	}
}

func (h *godsV2Hold) hold(in *holdInput, ops int, trace func(Time, int32)) Time {
	var sum Time
	for i := range ops {
		ev, _ := h.h.Pop()
		if trace != nil {
			trace(ev.at, ev.target)
		}
		sum += ev.at
		h.seq++
		ev.at += in.delays[i&delayMask]
		ev.seq = h.seq
		h.h.Push(ev)
	}
	return sum
}

// stdHold uses container/heap over a slice of benchEv.
type stdHold struct {
	h   stdHeap
	seq uint64
}

type stdHeap []benchEv

func (h stdHeap) Len() int           { return len(h) }
func (h stdHeap) Less(i, j int) bool { return h[i].before(&h[j]) }
func (h stdHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stdHeap) Push(x any)        { *h = append(*h, x.(benchEv)) }
func (h *stdHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *stdHold) fill(in *holdInput) {
	for i, at := range in.start {
		h.seq++
		heap.Push(&h.h, benchEv{at: at, seq: h.seq, target: int32(i)})
	}
}

func (h *stdHold) hold(in *holdInput, ops int, trace func(Time, int32)) Time {
	var sum Time
	for i := range ops {
		ev := heap.Pop(&h.h).(benchEv)
		if trace != nil {
			trace(ev.at, ev.target)
		}
		sum += ev.at
		h.seq++
		ev.at += in.delays[i&delayMask]
		ev.seq = h.seq
		heap.Push(&h.h, ev)
	}
	return sum
}

// holdHandler keeps the Scheduler in the hold model: each event schedules its successor a
// pseudo-random delay later, and the run stops after a fixed number of events.
type holdHandler struct {
	id     HandlerID
	delays []Time
	i      int
	left   int
}

func (h *holdHandler) HandleEvent(s *Scheduler, ev Event) {
	h.i++
	s.After(h.delays[h.i&delayMask], h.id, ev.Target, ev.Arg)
	if h.left--; h.left == 0 {
		s.Stop()
	}
}

// fourDelays is the hold model with each successor 250, 500, 750 or 1000 ns later, by turns.
type fourDelays struct {
	id    HandlerID
	fixed bool
	i     int
	left  int
}

func (h *fourDelays) HandleEvent(s *Scheduler, ev Event) {
	h.i++
	d := Time(1+h.i&3) * 250 * Nanosecond
	if h.fixed {
		s.AfterFixed(d, h.id, ev.Target, ev.Arg)
	} else {
		s.After(d, h.id, ev.Target, ev.Arg)
	}
	if h.left--; h.left == 0 {
		s.Stop()
	}
}

// BenchmarkScheduler measures the whole Scheduler: one op is one event scheduled and dispatched
// through a Handler (dispatch, func-dispatch), or one Reschedule of a random pending event
// (reschedule), or one Cancel of a random pending event plus one At to replace it (cancel+at).
func BenchmarkScheduler(b *testing.B) {
	for _, n := range benchSizes {
		in := newHoldInput(n)
		pre := "pending=" + strconv.Itoa(n) + "/"
		b.Run(pre+"dispatch", func(b *testing.B) {
			s := NewScheduler()
			h := &holdHandler{delays: in.delays, left: b.N}
			h.id = s.Register(h)
			for i, at := range in.start {
				s.At(at, h.id, int32(i), 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if got := s.Run(); got != uint64(b.N) {
				b.Fatalf("processed %d events, want %d", got, b.N)
			}
		})
		b.Run(pre+"func-dispatch", func(b *testing.B) {
			s := NewScheduler()
			i, left := 0, b.N
			var f func()
			f = func() {
				i++
				s.AfterFunc(in.delays[i&delayMask], f)
				if left--; left == 0 {
					s.Stop()
				}
			}
			for _, at := range in.start {
				s.AtFunc(at, f)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if got := s.Run(); got != uint64(b.N) {
				b.Fatalf("processed %d events, want %d", got, b.N)
			}
		})
		// The same hold model with four distinct delays, through the heap (After) and through
		// delay lines (AfterFixed).
		for _, fixed := range []bool{false, true} {
			name := map[bool]string{false: "dispatch-4delays", true: "fixed-4delays"}[fixed]
			for _, watched := range []bool{false, true} {
				wname := name
				if watched {
					// A progress watch every 65,536 events, as cmd/simd sets one: the loop's
					// cost must not move.
					wname += "-watched"
				}
				b.Run(pre+wname, func(b *testing.B) {
					s := NewScheduler()
					h := &fourDelays{fixed: fixed, left: b.N}
					h.id = s.Register(h)
					for i, at := range in.start {
						s.At(at, h.id, int32(i), 0)
					}
					calls := 0
					if watched {
						s.Watch(1<<16, func() { calls++ })
					}
					b.ReportAllocs()
					b.ResetTimer()
					if got := s.Run(); got != uint64(b.N) {
						b.Fatalf("processed %d events, want %d", got, b.N)
					}
					if watched && calls != b.N>>16 {
						b.Fatalf("watch called %d times for %d events", calls, b.N)
					}
				})
			}
		}
		b.Run(pre+"reschedule", func(b *testing.B) {
			s, timers, picks := pendingTimers(in)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				s.Reschedule(timers[picks[i&delayMask]], in.delays[i&delayMask])
			}
		})
		b.Run(pre+"cancel+at", func(b *testing.B) {
			s, timers, picks := pendingTimers(in)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				j := picks[i&delayMask]
				s.Cancel(timers[j])
				timers[j] = s.At(in.delays[i&delayMask], 1, int32(j), 0)
			}
		})
	}
}

// pendingTimers loads a Scheduler with the initial events of in and returns their timers and a
// ring of random indices into them.
func pendingTimers(in *holdInput) (*Scheduler, []Timer, []int32) {
	s := NewScheduler()
	h := &holdHandler{}
	h.id = s.Register(h)
	timers := make([]Timer, len(in.start))
	for i, at := range in.start {
		timers[i] = s.At(at, h.id, int32(i), 0)
	}
	r := rand.New(rand.NewPCG(7, uint64(len(timers))))
	picks := make([]int32, delayMask+1)
	for i := range picks {
		picks[i] = int32(r.IntN(len(timers)))
	}
	return s, timers, picks
}
