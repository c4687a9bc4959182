// Package engine is the one clock of the simulator: a queue of timestamped events and the loop
// that dispatches them. It knows nothing about networks; everything else schedules through it.
//
// # Mental model
//
//   - One clock. Scheduler.Now is simulated time in integer picoseconds (Time). Only the
//     Scheduler moves it, and only forward: to an event's time just before that event's handler
//     runs, and to t at the end of RunUntil(t).
//   - One total order. Events run in order of (time, seq), where seq is a per-scheduler counter
//     taken by every At, After, AtFunc, AfterFunc and Reschedule. Nothing else (wall time, map
//     order, goroutines, random sources) enters the order, so a run is a pure function of its
//     inputs.
//   - Equal-time events run in FIFO order, i.e. in the order they were scheduled. An event
//     scheduled for Now() from inside a handler runs after every event already queued for
//     Now(); a rescheduled event counts as scheduled at the moment of the Reschedule.
//   - Handlers never block. They run one at a time on the goroutine that called Run; a handler
//     that has to wait schedules an event for later and returns.
//   - A Timer names one scheduled event. Once the event fires or is cancelled the Timer is
//     stale, never dangling: Cancel, Reschedule and Pending report false for it.
//   - Watch(n, f) calls f every n events between two events, on the loop's goroutine, for
//     progress reports and guards; it is not an event and does not enter the order.
//
// Scheduling in the past or at Never, or for an unregistered handler, is a programming error and
// panics; so does calling Run or RunUntil from a handler.
//
// # Hot path
//
// Events are pointer-free (Event: time, handler id, int32 target, int64 arg) and go to Handlers
// registered once and named by dense integer ids. The queue is an indexed 4-ary min-heap of
// 16-byte entries (time, seq<<32|slot) in one flat slice, laid out so that the four children of
// a node share one cache line, with branch-free selection of the least child. The payload of an
// event sits in a slot table recycled through a free list, and a dense position array lets
// Cancel and Reschedule remove or re-key any event in O(log n) without leaving tombstones.
// After warm-up nothing allocates per event. AtFunc and AfterFunc keep their funcs in a side
// table with a free list; they are meant for code off the hot path.
//
// Events scheduled with AfterFixed skip the heap: every event of one delay comes due after those
// of the same delay scheduled before it (the clock never goes back), so a FIFO ring buffer per
// delay, a delay line, is already sorted. The dispatch loop takes the earlier of the heap's root
// and the earliest line head (the lines that hold events are kept in the order of their heads,
// at most 16; taking a head moves its line down that order, mostly by a comparison or two),
// comparing (time, seq) exactly as the heap does, so the order of events does not change. The
// network model's flow starts (a parent's path delay plus the send latency after the parent is
// sent: a handful of distinct delays) are most of its events; on lines they cost O(1) and leave
// a heap half the size for the timers that move. AfterFixedTimer puts an event on a line too
// and returns a Timer for it, which Cancel and Pending accept (the Timer names the line and
// the event's position on it; a cancelled event is marked dead and dropped when it reaches
// the head of its line, so the loop never sees it); Reschedule cannot move it. The network
// model's "sent" timers, which a flow's later rate changes may cancel, go there.
//
// # Looking ahead
//
// With LookAhead on, just before an event runs the loop tells the handler of the event after
// it, if that handler is a Prefetcher, which event that is (prefetch.go): the handler asks the
// processor for the records that event will read (Prefetch, PrefetchSpan, PrefetchEach: the
// prefetch instructions, in assembly for amd64 and arm64, as Go has no intrinsic for them; a
// no-op elsewhere), and they load while the current event runs. Nothing the program can observe
// changes. In a fabric of thousands of GPUs the network model's events wait mostly for their
// flows' and links' records (tables of megabytes, read in the order events come due); on small
// fabrics the records stay in the caches and the look at the queue's head costs more than it
// saves, so the caller turns it on by the size of its tables.
//
// # Measurements
//
// Reproduce with
//
//	go test -run '^$' -bench . -benchtime 10000000x -count 6 ./engine
//
// on a 2-core x86_64 VM ("Intel(R) Xeon(R) Processor", 2.0 GHz), linux/amd64, Go 1.26. Every
// figure is the median ns/op of 6 runs of 10M operations; individual runs on this shared VM
// varied by up to about 15%. Columns are the number of events kept pending.
//
// BenchmarkHold, the classic hold model: one op pops the earliest event and pushes it back a
// pseudo-random 0..1us later (times from a seeded PCG, the same sequence for every variant).
//
//	ns/op                             1Ki    16Ki   128Ki     1Mi   B/op  allocs/op
//	typed 4-ary (the Scheduler's)      93     130     285     663      0     0
//	typed binary, same entries         83     143     278     970      0     0
//	gods v1.18.1 trees/binaryheap     306     519    1142    2074     32     1
//	gods/v2 trees/binaryheap          278     372     593     965      0     0
//	container/heap                    288     361     583     976     64     2
//
// BenchmarkScheduler, the whole Scheduler. dispatch: one event scheduled with After from a
// Handler and dispatched; func-dispatch: the same with AfterFunc; reschedule: one Reschedule of
// a random pending event; cancel+at: one Cancel of a random pending event plus one At.
//
//	ns/op                             1Ki    16Ki   128Ki     1Mi   B/op  allocs/op
//	dispatch                          111     135     353     769      0     0
//	func-dispatch                     115     150     494    1056      0     0
//	reschedule                         33      40     146     269      0     0
//	cancel+at                          55      64     317     475      0     0
//
// dispatch-4delays is dispatch with four delays (250, 500, 750, 1000 ns) by turns; fixed-4delays
// schedules the same events with AfterFixed (medians of 3 runs of 10M):
//
//	ns/op                             1Ki    16Ki   128Ki     1Mi   B/op  allocs/op
//	dispatch-4delays                   93     124     267     575      0     0
//	fixed-4delays                      42      32      43      94      0     0
//
// The 4-ary heap is kept: the binary one is about 10% faster while the whole queue sits in L1
// (1Ki) and level with it at 128Ki, but the 4-ary one is 9% faster at 16Ki and 32% faster at
// 1Mi, where every level of the heap costs a cache miss and 4-ary has half as many levels, one
// cache line each. The gods v1 heap boxes every event into an interface (one allocation per
// push), and container/heap boxes on both Push and Pop.
package engine
