package engine

import "slices"

// This file holds the delay lines behind Scheduler.AfterFixed. An event scheduled a fixed delay
// d after Now() comes due no earlier than every event scheduled with the same d before it, since
// the clock never goes back: the events of one delay form a FIFO queue, already in (time, seq)
// order. Keeping each such queue in a ring buffer makes scheduling and taking one event O(1)
// and keeps them out of the heap, which then holds only the events that need it (those with
// arbitrary times, or that may be cancelled or moved) and is smaller and faster for it. The
// dispatch loop takes whichever comes first, the heap's root or the earliest line head, with
// the same (time, seq) order as if every event were in the heap.

// defaultMaxLines bounds the number of delay lines a queue keeps: their heads are kept in order
// by insertion, so a component that uses many distinct delays at once falls back to the heap.
const defaultMaxLines = 16

// lineEntry is one event on a delay line.
type lineEntry struct {
	at      Time
	seq     uint32
	handler HandlerID
	target  int32
	arg     int64
}

// delayLine is the FIFO queue of the pending events of one delay, in a ring buffer whose
// length is a power of two. Positions count the events pushed since the line was made (they
// go on across a change of its delay): the event at position p sits at buf[p&(len(buf)-1)],
// which is what lets a Timer of AfterFixedTimer name it. Cancelled events stay in the buffer,
// marked dead, until they reach the head; the head is always a live event (purge).
type delayLine struct {
	d    Time
	buf  []lineEntry
	head uint32 // position of the first entry
	n    int    // entries queued, dead ones included
}

// deadHandler marks a cancelled line entry. Register never hands it out.
const deadHandler = ^HandlerID(0)

func (l *delayLine) first() *lineEntry { return &l.buf[l.head&uint32(len(l.buf)-1)] }

// push queues e and returns its position.
func (l *delayLine) push(e lineEntry) uint32 {
	if l.n == len(l.buf) {
		grown := make([]lineEntry, max(2*len(l.buf), 64))
		for i := range uint32(l.n) {
			p := l.head + i
			grown[p&uint32(len(grown)-1)] = l.buf[p&uint32(len(l.buf)-1)]
		}
		l.buf = grown
	}
	p := l.head + uint32(l.n)
	l.buf[p&uint32(len(l.buf)-1)] = e
	l.n++
	return p
}

func (l *delayLine) pop() lineEntry {
	e := *l.first()
	l.head++
	l.n--
	return e
}

// purge drops the cancelled entries at the head, so that the head is a live event again.
func (l *delayLine) purge() {
	for l.n > 0 && l.first().handler == deadHandler {
		l.head++
		l.n--
	}
}

// entry returns the live entry of the line at position p, nil if there is none (it ran, was
// cancelled, or was never queued).
func (l *delayLine) entry(p uint32) *lineEntry {
	if p-l.head >= uint32(l.n) {
		return nil
	}
	e := &l.buf[p&uint32(len(l.buf)-1)]
	if e.handler == deadHandler {
		return nil
	}
	return e
}

// lineTimer marks the Timers of events on delay lines (AfterFixedTimer): slot is lineTimer | the
// line's index and gen the event's position on the line. Heap slots stay below it.
const lineTimer = 1 << 31

// lineBefore reports whether line entry e comes before the event (at, seq).
func lineBefore(e *lineEntry, at Time, seq uint32) bool {
	return e.at < at || (e.at == at && e.seq < seq)
}

// pushLine queues an event at Now()+d on the line for d, creating the line if there is room,
// and reports whether it did, with the Timer naming it; if not, the caller uses the heap.
func (q *eventQueue) pushLine(d, at Time, h HandlerID, target int32, arg int64) (Timer, bool) {
	i := q.lastLine
	if i >= len(q.lines) || q.lines[i].d != d {
		i = -1
		for j := range q.lines {
			if q.lines[j].d == d {
				i = j
				break
			}
		}
		if i < 0 {
			limit := q.maxLines
			if limit == 0 {
				limit = defaultMaxLines
			}
			if len(q.lines) < limit {
				q.lines = append(q.lines, delayLine{d: d})
				i = len(q.lines) - 1
			} else {
				// An empty line takes the new delay: the delays a component uses drift over
				// a run (a network's paths and tails as its load changes), and lines kept for
				// delays no longer used would send every later one to the heap.
				for j := range q.lines {
					if q.lines[j].n == 0 {
						i = j
						q.lines[j].d = d
						break
					}
				}
				if i < 0 {
					return Timer{}, false
				}
			}
		}
		q.lastLine = i
	}
	seq := uint32(q.nextSeq() >> 32) // may renumber every line: take it before queueing
	l := &q.lines[i]
	p := l.push(lineEntry{at: at, seq: seq, handler: h, target: target, arg: arg})
	q.lineCount++
	if l.n == 1 {
		// The line was empty: it joins the order by its head, from the back (a new event
		// comes after most others).
		q.order = append(q.order, int32(i))
		k := len(q.order) - 1
		for k > 0 && q.headBefore(int32(i), q.order[k-1]) {
			q.order[k] = q.order[k-1]
			k--
		}
		q.order[k] = int32(i)
	}
	return Timer{slot: lineTimer | uint32(i), gen: p}, true
}

// lineEntryOf returns the live line entry Timer t names and its line, or nil.
func (q *eventQueue) lineEntryOf(t Timer) (*lineEntry, *delayLine) {
	i := int(t.slot &^ lineTimer)
	if i >= len(q.lines) {
		return nil, nil
	}
	l := &q.lines[i]
	return l.entry(t.gen), l
}

// cancelLine cancels the line event Timer t names and reports whether it was pending. The
// entry is marked dead and dropped when it reaches the head of its line; if it is the head, it
// is dropped now, so that the line's head stays a live event.
func (q *eventQueue) cancelLine(t Timer) bool {
	e, l := q.lineEntryOf(t)
	if e == nil {
		return false
	}
	e.handler = deadHandler
	q.lineCount--
	if t.gen == l.head {
		l.purge()
		i := int32(t.slot &^ lineTimer)
		k := 0
		for q.order[k] != i {
			k++
		}
		q.reorder(k)
	}
	return true
}

// popLine removes and returns the first event of line i, which must be the first in order.
func (q *eventQueue) popLine(i int) Event {
	l := &q.lines[i]
	e := l.pop()
	l.purge()
	q.lineCount--
	q.reorder(0)
	return Event{At: e.at, Handler: e.handler, Target: e.target, Arg: e.arg}
}

// headBefore reports whether line i's head comes before line j's; both must hold events.
func (q *eventQueue) headBefore(i, j int32) bool {
	b := q.lines[j].first()
	return lineBefore(q.lines[i].first(), b.at, b.seq)
}

// reorder puts back in place the line at order[k], whose head has just moved later (or which
// has just been emptied, and leaves the order). The lines' heads only move later when one is
// taken or cancelled, and mostly stay ahead of the next line's, so this costs a comparison or
// two where a scan of every line's head would cost one per line.
func (q *eventQueue) reorder(k int) {
	i := q.order[k]
	if q.lines[i].n == 0 {
		q.order = append(q.order[:k], q.order[k+1:]...)
		return
	}
	for k+1 < len(q.order) && q.headBefore(q.order[k+1], i) {
		q.order[k] = q.order[k+1]
		k++
	}
	q.order[k] = i
}

// peek returns the time of the next event and where it is: line ≥ 0 is a delay line, -1 the
// heap. ok is false when nothing is pending.
func (q *eventQueue) peek() (at Time, line int, ok bool) {
	heapOK := len(q.heap) > root
	if len(q.order) == 0 {
		if !heapOK {
			return 0, -1, false
		}
		return q.heap[root].at, -1, true
	}
	best := int(q.order[0])
	e := q.lines[best].first()
	if heapOK {
		if h := &q.heap[root]; !lineBefore(e, h.at, uint32(h.key>>32)) {
			return h.at, -1, true
		}
	}
	return e.at, best, true
}

// head returns the handler, target and arg of the next event, from where peek found it.
func (q *eventQueue) head(line int) (HandlerID, int32, int64) {
	if line < 0 {
		sl := &q.slots[q.heap[root].slot()]
		return sl.handler, sl.target, sl.arg
	}
	e := q.lines[line].first()
	return e.handler, e.target, e.arg
}

// take removes and returns the next event, from where peek found it.
func (q *eventQueue) take(line int) Event {
	if line < 0 {
		return q.pop()
	}
	return q.popLine(line)
}

// renumberAll renumbers the heap's entries and the lines' together (see renumber): it sorts
// references to all of them by (time, seq) and hands out 1..n in that order. The heap's entries
// keep their relative order, so the heap stays valid without moving anything.
func (q *eventQueue) renumberAll() {
	type ref struct {
		at   Time
		seq  uint32
		line int32 // -1: the heap
		idx  int32 // heap index, or position in the line
	}
	refs := make([]ref, 0, q.len()+q.lineCount)
	for i := root; i < len(q.heap); i++ {
		e := &q.heap[i]
		refs = append(refs, ref{e.at, uint32(e.key >> 32), -1, int32(i)})
	}
	for j := range q.lines {
		l := &q.lines[j]
		for k := range l.n {
			e := &l.buf[(l.head+uint32(k))&uint32(len(l.buf)-1)]
			refs = append(refs, ref{e.at, e.seq, int32(j), int32(k)})
		}
	}
	slices.SortFunc(refs, func(a, b ref) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		if a.seq < b.seq {
			return -1
		}
		return 1 // sequence numbers are unique
	})
	for rank, r := range refs {
		seq := uint32(rank + 1)
		if r.line < 0 {
			e := &q.heap[r.idx]
			e.key = uint64(seq)<<32 | uint64(uint32(e.key))
			continue
		}
		l := &q.lines[r.line]
		l.buf[(l.head+uint32(r.idx))&uint32(len(l.buf)-1)].seq = seq
	}
	q.seq = uint32(len(refs))
}
