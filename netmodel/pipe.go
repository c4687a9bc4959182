package netmodel

// pipe moves the encoding of an output off the simulation's goroutine: the simulation fills
// fixed-size records in batches, and a goroutine of the pipe's own formats and writes each
// batch, in the order the batches were filled, so the bytes written are those the same
// records would give written one by one. The batches are allocated up front and recycled:
// nothing allocates per record or per batch, and a goroutine handoff (a channel send and
// receive) costs once per batch of pipeBatch records, not per record. When the writer falls
// behind, the simulation waits for a free batch; there are enough of them (pipeBatches ×
// pipeBatch records, some 30 ms of simulation at 1 µs per flow) that a writer the operating
// system takes off its core for a time slice or two does not hold the simulation up (with 4
// batches of 1,024 records, the 16,384-GPU all-reduce writing its FCT log waited for 4,502
// of its 65,504 batches on a loaded machine; with these, for 16 of 32,752).
type pipe[T any] struct {
	batch []T        // being filled by the simulation
	work  chan []T   // full batches, in order, to the writer
	free  chan []T   // written batches, back to the simulation
	done  chan error // the writer's first error (or nil) once work is closed and drained
}

const (
	pipeBatch   = 2048 // records per batch
	pipeBatches = 16   // batches in circulation
)

// newPipe starts the writer goroutine: write gets every batch, in order, until it returns an
// error; the batches after that are dropped.
func newPipe[T any](write func(batch []T) error) *pipe[T] {
	p := &pipe[T]{
		batch: make([]T, 0, pipeBatch),
		work:  make(chan []T, pipeBatches),
		free:  make(chan []T, pipeBatches),
		done:  make(chan error, 1),
	}
	for range pipeBatches - 1 {
		p.free <- make([]T, 0, pipeBatch)
	}
	go func() {
		var err error
		for b := range p.work {
			if err == nil {
				err = write(b)
			}
			p.free <- b[:0]
		}
		p.done <- err
	}()
	return p
}

// next returns the next record to fill, which the writer gets with the batch it belongs to.
func (p *pipe[T]) next() *T {
	if len(p.batch) == cap(p.batch) {
		p.work <- p.batch
		p.batch = <-p.free
	}
	p.batch = p.batch[:len(p.batch)+1]
	return &p.batch[len(p.batch)-1]
}

// close hands over the last batch, waits until everything is written and stops the writer.
// It returns the writer's first error.
func (p *pipe[T]) close() error {
	if len(p.batch) > 0 {
		p.work <- p.batch
	}
	p.batch = nil
	close(p.work)
	return <-p.done
}
