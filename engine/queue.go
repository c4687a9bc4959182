package engine

import (
	"math"
	"math/bits"
	"slices"
)

// This file holds the event queue behind the Scheduler: an indexed 4-ary min-heap over a flat
// slice of 16-byte, pointer-free entries (time, sequence number, slot). The payload of an event
// stays put in a slot table while the heap moves only the entries, and a separate dense array
// records where each slot's entry currently sits in the heap, which is what makes removing or
// re-keying an arbitrary pending event O(log n).
//
// The arity (4) was chosen by measurement against a binary heap of the same layout; see the
// package documentation and bench_test.go.

// heapArity is the number of children per heap node.
const heapArity = 4

// The heap slice starts with root-1 unused entries and the root at index root, so that the
// children of the node at index i sit at 4i-8 ... 4i-5: four 16-byte entries starting at a
// multiple of 4, i.e. one 64-byte cache line whenever the slice itself is line-aligned (as large
// allocations are). A descent then touches one line per level instead of two.
const root = 3

// parent is the index of the parent of the node at index i > root.
func parent(i int) int { return (i-root-1)/heapArity + root }

// firstChild is the index of the first child of the node at index i.
func firstChild(i int) int { return heapArity*(i-root) + 1 + root }

// qentry is one heap element. key is seq<<32 | slot: the sequence number in the high half, the
// slot holding the payload in the low half. Sequence numbers are unique among queued entries, so
// comparing whole keys orders entries exactly as comparing sequence numbers would.
type qentry struct {
	at  Time
	key uint64
}

func (e *qentry) slot() int32 { return int32(uint32(e.key)) }

// before reports whether e is ordered strictly before o: earlier time, or same time and
// scheduled earlier.
func (e *qentry) before(o *qentry) bool { return lessBit(e, o) != 0 }

// lessBit is before as 0 or 1. It compares (at, key) as one 128-bit unsigned number with a
// subtract-with-borrow, so there is no data-dependent branch: with random times a branchy
// comparison is mispredicted about half the time, and picking the least child is most of the
// work of the heap.
func lessBit(e, o *qentry) uint64 {
	const flip = 1 << 63 // maps int64 order onto uint64 order
	_, borrow := bits.Sub64(e.key, o.key, 0)
	_, borrow = bits.Sub64(uint64(e.at)^flip, uint64(o.at)^flip, borrow)
	return borrow
}

// pick returns b if bit is 1 and a if it is 0, without a branch.
func pick(a, b int, bit uint64) int { return a ^ ((a ^ b) & -int(bit)) }

// qslot is the payload of one queued event. Slots are recycled through a free list; gen is bumped
// every time a slot is released so that a Timer naming an earlier occupant no longer matches.
type qslot struct {
	handler HandlerID
	target  int32
	arg     int64
	gen     uint32
}

// eventQueue is the indexed min-heap. Its zero value is an empty queue.
type eventQueue struct {
	heap  []qentry
	pos   []int32 // pos[slot] is the heap index of slot's entry, -1 while the slot is free
	slots []qslot
	free  []int32 // released slots, reused LIFO
	seq   uint32  // last sequence number handed out

	// seqLimit is the sequence number at which numbering restarts (see renumber); 0 means
	// math.MaxUint32. Tests lower it to exercise renumbering.
	seqLimit uint32

	// The delay lines of AfterFixed (lines.go): order lists the lines that hold events by
	// their heads, the first first; lastLine is the line used last, lineCount the events on
	// all lines.
	lines     []delayLine
	order     []int32
	lastLine  int
	lineCount int
	maxLines  int // 0: defaultMaxLines; tests lower it
}

// len is the number of events in the heap (the delay lines hold lineCount more).
func (q *eventQueue) len() int { return max(len(q.heap)-root, 0) }

// live reports whether t names an event that is still in the queue.
func (q *eventQueue) live(t Timer) bool {
	return int(t.slot) < len(q.slots) && q.slots[t.slot].gen == t.gen
}

// nextSeq returns a fresh sequence number, shifted into key position.
func (q *eventQueue) nextSeq() uint64 {
	limit := q.seqLimit
	if limit == 0 {
		limit = math.MaxUint32
	}
	if q.seq >= limit {
		q.renumber(limit)
	}
	q.seq++
	return uint64(q.seq) << 32
}

// renumber runs once every ~4 billion schedulings, when 32-bit sequence numbers run out. It
// sorts the heap (a sorted slice is a valid heap) and renumbers the entries 1..n in that order,
// which preserves their relative order and frees every number above n. With events on delay
// lines, renumberAll numbers the heap and the lines together.
func (q *eventQueue) renumber(limit uint32) {
	if uint64(q.len()+q.lineCount) >= uint64(limit) {
		panic("engine: too many pending events")
	}
	if q.len()+q.lineCount == 0 {
		q.seq = 0
		return
	}
	if q.lineCount > 0 {
		q.renumberAll()
		return
	}
	slices.SortFunc(q.heap[root:], func(a, b qentry) int {
		if a.before(&b) {
			return -1
		}
		return 1 // keys are unique, so !a.before(b) means b is before a
	})
	for i := root; i < len(q.heap); i++ {
		e := &q.heap[i]
		e.key = uint64(i-root+1)<<32 | uint64(uint32(e.key))
		q.pos[e.slot()] = int32(i)
	}
	q.seq = uint32(q.len())
}

// reserve makes room for n more pending heap events than the free slots hold, so that a
// burst of n schedulings does not grow the tables by doubling (each doubling copies them).
func (q *eventQueue) reserve(n int) {
	more := n - len(q.free)
	if more <= 0 {
		return
	}
	q.slots = slices.Grow(q.slots, more)
	q.pos = slices.Grow(q.pos, more)
	q.heap = slices.Grow(q.heap, max(root-len(q.heap), 0)+n)
}

// alloc takes a free slot, or grows the tables, and fills in its payload.
func (q *eventQueue) alloc(h HandlerID, target int32, arg int64) (int32, uint32) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		if len(q.slots) >= math.MaxInt32 {
			panic("engine: too many pending events")
		}
		slot = int32(len(q.slots))
		q.slots = append(q.slots, qslot{gen: 1})
		q.pos = append(q.pos, -1)
	}
	sl := &q.slots[slot]
	sl.handler, sl.target, sl.arg = h, target, arg
	return slot, sl.gen
}

// push queues an event and returns its handle.
func (q *eventQueue) push(at Time, h HandlerID, target int32, arg int64) Timer {
	key := q.nextSeq()
	slot, gen := q.alloc(h, target, arg)
	if len(q.heap) < root {
		q.heap = append(q.heap, make([]qentry, root)...)
	}
	i := len(q.heap)
	q.heap = append(q.heap, qentry{at: at, key: key | uint64(slot)})
	q.up(i)
	return Timer{slot: uint32(slot), gen: gen}
}

// pop removes the first event and returns it. The queue must not be empty.
func (q *eventQueue) pop() Event {
	top := q.heap[root]
	last := len(q.heap) - 1
	if last > root {
		q.heap[root] = q.heap[last]
		q.heap = q.heap[:last]
		q.down(root)
	} else {
		q.heap = q.heap[:root]
	}
	slot := top.slot()
	sl := &q.slots[slot]
	ev := Event{At: top.at, Handler: sl.handler, Target: sl.target, Arg: sl.arg}
	q.release(slot)
	return ev
}

// remove takes the queued event in slot out of the queue.
func (q *eventQueue) remove(slot int32) {
	i := int(q.pos[slot])
	last := len(q.heap) - 1
	if i != last {
		q.heap[i] = q.heap[last]
		q.heap = q.heap[:last]
		q.fix(i)
	} else {
		q.heap = q.heap[:last]
	}
	q.release(slot)
}

// move gives the queued event in slot a new time and a fresh sequence number.
func (q *eventQueue) move(slot int32, at Time) {
	key := q.nextSeq() // may renumber, which moves entries: read pos after it
	i := int(q.pos[slot])
	q.heap[i] = qentry{at: at, key: key | uint64(slot)}
	q.fix(i)
}

// release returns slot to the free list and invalidates every Timer naming it.
func (q *eventQueue) release(slot int32) {
	sl := &q.slots[slot]
	sl.gen++
	if sl.gen == 0 { // wrapped: 0 is reserved for the zero Timer
		sl.gen = 1
	}
	q.pos[slot] = -1
	q.free = append(q.free, slot)
}

// fix restores the heap order after the entry at i changed or was replaced.
func (q *eventQueue) fix(i int) {
	if i > root && q.heap[i].before(&q.heap[parent(i)]) {
		q.up(i)
	} else {
		q.down(i)
	}
}

// up moves the entry at i toward the root until its parent is not after it. It works with a
// hole instead of swaps and records the final position of every entry it moves.
func (q *eventQueue) up(i int) {
	h := q.heap
	e := h[i]
	for i > root {
		p := parent(i)
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		q.pos[h[i].slot()] = int32(i)
		i = p
	}
	h[i] = e
	q.pos[e.slot()] = int32(i)
}

// down moves the entry at i toward the leaves until no child is before it. For a node with all
// four children the least one is found by a branch-free tournament on values already in
// registers, so each level costs one round of loads.
func (q *eventQueue) down(i int) {
	h := q.heap
	n := len(h)
	e := h[i]
	for {
		c := firstChild(i)
		var m int
		var w qentry
		if c+3 < n {
			g := (*[heapArity]qentry)(h[c : c+heapArity])
			x0, x1, x2, x3 := g[0], g[1], g[2], g[3]
			b01 := lessBit(&x1, &x0)
			b23 := lessBit(&x3, &x2)
			w01, w23 := choose(x0, x1, b01), choose(x2, x3, b23)
			b := lessBit(&w23, &w01)
			m = pick(c+int(b01), c+2+int(b23), b)
			w = choose(w01, w23, b)
		} else if c < n {
			m = c
			for j := c + 1; j < n; j++ {
				m = pick(m, j, lessBit(&h[j], &h[m]))
			}
			w = h[m]
		} else {
			break
		}
		if lessBit(&w, &e) == 0 {
			break
		}
		h[i] = w
		q.pos[w.slot()] = int32(i)
		i = m
	}
	h[i] = e
	q.pos[e.slot()] = int32(i)
}

// choose returns y if bit is 1 and x if it is 0, without a branch.
func choose(x, y qentry, bit uint64) qentry {
	mask := -bit
	return qentry{
		at:  x.at ^ ((x.at ^ y.at) & Time(mask)),
		key: x.key ^ ((x.key ^ y.key) & mask),
	}
}
