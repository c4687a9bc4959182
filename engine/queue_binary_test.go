package engine

// binaryQueue is eventQueue with two children per node instead of four. It exists only so that
// BenchmarkHold can compare the arities on the same indexed layout; the Scheduler uses
// eventQueue. It gets the best layout for two children: root at index 1, so the children of i
// are 2i and 2i+1, a 32-byte pair that never straddles a cache line. Only push and pop are
// needed by the benchmark, which never issues enough events to reach renumbering.
type binaryQueue struct{ eventQueue }

func (q *binaryQueue) push(at Time, h HandlerID, target int32, arg int64) Timer {
	key := q.nextSeq()
	slot, gen := q.alloc(h, target, arg)
	if len(q.heap) == 0 {
		q.heap = append(q.heap, qentry{})
	}
	i := len(q.heap)
	q.heap = append(q.heap, qentry{at: at, key: key | uint64(slot)})
	q.up2(i)
	return Timer{slot: uint32(slot), gen: gen}
}

func (q *binaryQueue) pop() Event {
	top := q.heap[1]
	last := len(q.heap) - 1
	if last > 1 {
		q.heap[1] = q.heap[last]
		q.heap = q.heap[:last]
		q.down2(1)
	} else {
		q.heap = q.heap[:1]
	}
	slot := top.slot()
	sl := &q.slots[slot]
	ev := Event{At: top.at, Handler: sl.handler, Target: sl.target, Arg: sl.arg}
	q.release(slot)
	return ev
}

func (q *binaryQueue) up2(i int) {
	h := q.heap
	e := h[i]
	for i > 1 {
		p := i / 2
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

func (q *binaryQueue) down2(i int) {
	h := q.heap
	n := len(h)
	e := h[i]
	for {
		c := 2 * i
		if c >= n {
			break
		}
		if c+1 < n {
			c += int(lessBit(&h[c+1], &h[c]))
		}
		if !h[c].before(&e) {
			break
		}
		h[i] = h[c]
		q.pos[h[i].slot()] = int32(i)
		i = c
	}
	h[i] = e
	q.pos[e.slot()] = int32(i)
}
