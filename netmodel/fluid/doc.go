// Package fluid is simd's fluid network model: every transmitting flow has one rate, the rates
// are the max-min fair allocation over the directed links of the flows' routed paths, and the
// engine's clock jumps from one flow event to the next. It is the hot path of the event mode;
// the DAG runner in package netmodel drives it through Start and the Observer callbacks.
//
// # Model
//
// Start(path, bytes, delay, tag) begins a flow at the scheduler's current time over path
// (directed link ids of a route.Graph: link i of the topology is 2i one way and 2i+1 the other,
// each with capacity Graph.Rate bits/s). With congestion control off (the only mode so far) the
// rates are the max-min fair allocation of the transmitting flows: no flow can get faster
// without slowing one that is no faster than it. A flow sends at its current rate until its
// bytes are out; then it is "sent" (Observer.FlowSent) and leaves every link of its path at once
// (the fluid approximation ignores per-hop pipelining), and its last byte "arrives"
// (Observer.FlowArrived) delay later. One flow alone on an idle path takes
// delay + bytes·8/min(rate); N equal flows started together on one link each get rate/N and
// arrive together at N·bytes·8/rate + delay. A size of 0 counts as 1 byte (as in SimAI); a flow
// with an empty path is sent at once. With Options.Transport the links carry every packet's
// headers too (Transport.Wire), and a flow arrives Transport.Tail — its last packet's
// store-and-forward through the switches — later than delay after it is sent; the caller puts
// the rest of its protocol (SimAI's ACK back) in delay. With Transport.NanosecondClock a link's
// capacity is what ns-3's whole-nanosecond packet times make of its rate (Transport.PacketRate).
//
// # Batches
//
// Starts and sends only record what changed (the directed links whose flow set changed, among
// them only those that carry other flows: on a link that was or is left idle no flow can be
// bottlenecked) and, for the first change of an instant, queue one recompute event at the
// current time. The engine runs equal-time events in FIFO order, so that recompute runs after
// every event already queued for the instant: flows that start or are sent at the same time
// are handled by one recompute (Stats.Recomputes). A change made after it, by an event queued
// later for the same instant, queues another. Until its recompute a new flow reports rate 0.
//
// # Incremental max-min
//
// A recompute never solves the whole network. It builds a region of flows, water-fills it
// against the capacity the other flows leave, checks the max-min conditions where the region
// meets the rest, and widens it where they fail:
//
//  1. Seed. On every changed link: the new flows, and the flows whose bottleneck is that link
//     (they are the ones a departure frees or an arrival squeezes). Then, as a guess at the
//     next ring of the ripple, the flows bottlenecked on the other links of the seeded flows.
//     A new flow alone on every link of its path (nothing else transmits there) is fixed as
//     it is seeded, at the smallest capacity of its path, bottlenecked on the link of the
//     lowest id among equals — what step 2 would give it, since no other flow shares a link
//     with it — and its links are left out of the solver's records.
//  2. Solve. Outside flows keep their rates; region flows share the residual capacities
//     (capacity minus the outside flows' rates) by progressive filling: a heap of links keyed
//     on residual/unfixed, ties broken by link id; the link with the smallest fair share fixes
//     its unfixed flows at that share, which is their new rate, and it is their bottleneck.
//     Fixing a flow at level s never lowers another link's share, so keys are refreshed lazily
//     when a link reaches the top, and the filling stops as soon as every flow is fixed. The
//     region's links are kept in a union-find forest of parts (links joined by a region flow);
//     parts are independent problems, and a pass re-solves only the parts that gained flows.
//     A link that carries the same unfixed flows with the same residual as a link of a lower id
//     (a host's uplink and the next host's downlink, crossed by the same flows) would be
//     popped after its twin had fixed them all; large fills leave it out of the heap.
//  3. Widen. On every link of a solved part that carries outside flows: if a region flow fixed
//     there is slower than an outside flow, that faster flow joins; if an outside flow
//     bottlenecked there finds the link no longer saturated, or a region flow faster than
//     itself, it joins (with the flows bottlenecked on its other links, the ripple's next
//     ring). If anything joined, go to 2.
//  4. Apply. Region flows whose rate changed are re-rated (below); every region flow takes the
//     link that fixed it as its bottleneck.
//
// Why the result is exact: the max-min allocation is the unique feasible allocation in which
// every flow has a bottleneck, a saturated link of its path on which no flow is faster. Before
// the batch every flow had one (its recorded bottleneck). After step 3 converges:
//   - every link is feasible: links the region touches carry at most their capacity by
//     construction, a link whose flow set changed lost flows or has a new (region) flow on it,
//     and every other link carries exactly what it did;
//   - every region flow has a bottleneck: the link that fixed it is saturated, no region flow
//     on it is faster (progressive filling fixes flows in non-decreasing order) and no outside
//     flow either (checked in 3);
//   - every outside flow keeps its bottleneck: if that link lost a flow, the outside flow would
//     have been seeded (so seeding the flows bottlenecked at changed links is needed, not an
//     optimisation); if the region touches it, 3 checked it is still saturated with nothing
//     faster; otherwise nothing on it changed.
//
// Each widening adds at least one flow, so the loop ends, at the latest when the region holds
// every flow the change is connected to and there is no boundary left. Links that stay
// unsaturated stop the propagation, which is what keeps regions small in collectives.
//
// # Tolerance
//
// Rates are float64 bits/s. Every comparison of rates and loads uses the relative tolerance Tol
// (1e-9): a link is saturated when its load is at least capacity·(1−Tol), a flow is the fastest
// on a link when no rate there exceeds its own by more than a factor 1/(1−Tol). Rounding errors
// of the sums involved are of order 1e-15. Residuals are clamped at 0, so no rate is negative or
// NaN; Check verifies that no link is over capacity by more than Tol. Products that feed times
// are wrapped in explicit float64 conversions, which forbid fused multiply-adds, so results do
// not depend on the instruction set.
//
// # Completion
//
// A transmitting flow keeps the bits it had left at the time of its last rate change (rem, at).
// When a recompute changes its rate, rem −= rate·(now−at) and its "sent" timer — one engine
// Timer per flow — moves to now + ⌈rem·10¹²/rate⌉ ps: rounded up, so a flow never finishes
// before its bytes are out. Flows whose rate did not change are not touched. A flow's first
// timer goes to the scheduler's delay lines (engine.Scheduler.AfterFixedTimer): flows of one
// size started on idle paths take a few distinct times to send, and a line costs O(1) where
// the heap costs O(log n). A later change cancels it there and moves the flow to the heap.
// The timer's handler sets rem to 0, takes the flow off its links and schedules the arrival
// delay later; after FlowArrived returns the slot goes back to the free list.
//
// # Hot path
//
// Flows live in flat slices indexed by FlowID, split by who reads them: a 32-byte record the
// solver scans (rate, bottleneck, path position, region mark), a 48-byte one that re-rating and
// sending read (remaining bits, timer, size, tag), and a cold rest; slots are recycled through a
// free list. Everything kept per directed link (its flows, capacity, region mark, count of the
// flows it bottlenecks) is one 64-byte record. At 1,024 GPUs the working set outgrows the L2
// cache, so these layouts, measured, matter as much as the instruction count. Paths are in one
// arena of link ids; a slot keeps its chunk (at least 8 links) for the next flow that fits.
// Every directed link keeps its flows in a slice of (flow, arena position) entries, and every
// hop of a path remembers its entry's position, so a flow leaves a link in O(1) by
// swap-removal. Region membership is an epoch stamp per flow and per link, so nothing is
// cleared between recomputes. Events are pointer-free engine events (flow id in Target, kind in
// Arg). There are no maps, no logging and no clock; after warm-up nothing allocates
// (TestSteadyStateAllocs).
//
// Cost of one batch: the engine operations (a send and an arrival event per flow, one timer
// move per re-rated flow, O(log events) each) plus the solver's work, which is linear in what
// the passes solve: over the links of the solved parts, their flow lists and the paths of their
// flows, plus O(links·log links) for the heap. Stats.SolvedLinks and SolvedFlows count that
// work, Stats.RegionFlows and Rerated what it produced, and Stats.RecomputesByLinks and
// RegionFlowsByLinks the same by the size of the solve (`-log-level debug` prints them).
//
// # Rerouting
//
// Reroute(f, path, delay) moves a transmitting flow onto another path at the current time, for
// link failures: its remaining bits are brought up to date at its old rate, it leaves the
// links of its old path (their entries swap-removed as on a send) and joins the new ones, its
// bottleneck and "sent" timer are dropped, and it is queued with the instant's new flows. To
// the recompute it is a departure from the old links and a new flow on the new ones, so the
// argument above holds unchanged and the rates are exact again at the end of the instant. A
// flow already sent is left alone: its last byte is on its way. LinkBytes charges the old links
// with what the flow sent while it crossed them and the new links with the rest. LinkFlowIDs
// lists the flows on a link, which is how the DAG runner finds the flows a failure must move.
// Nothing on the hot path pays for any of it.
//
// # Bundles
//
// With Options.Bundles (the event mode's default, `simd -same-path bundled`) the flows in
// flight on one path are one bundle (bundle.go). Flows of one path cross the same links, so
// the max-min allocation gives them one rate, and the solver need not tell them apart: the
// bundle is one entry on each link, which the solver counts as its w members (solve's counts,
// take: the bundle's share is the link's residual over the count, as for w flows). Its members
// share its rate, so they progress alike, as the jobs of a processor-sharing queue: the bundle
// keeps a clock of the bits each member has sent since it began, and each member the clock's
// value at which it is done (its finish, fixed when it joins: the clock then plus its bits).
// One timer, for the first finish, is the bundle's; a rate change moves it alone. A flow joins
// when it starts on the path of a flow (or a bundle) among the last 4 entries of its first
// link: a GPU's NVLink port carries the flows to one next GPU, a NIC port a few paths, an
// all-to-all's port a thousand, which would cost a longer look at every start. A flow on its
// own that another joins becomes a member of a new bundle, which takes its place on the links;
// when the timer fires, every member whose finish the clock has reached is sent (at the rate it
// had until then, as its own timer would have fired at that picosecond), the bundle's weight
// falls by that many and its rate is solved again with the instant's other changes; a bundle
// whose last member is sent leaves its links. A member moved by Reroute leaves its bundle and
// goes on on its own. Bundles are of at most 255 members (flowHot.w); the 256th starts on its
// own. Not with TrackBottlenecks, whose observer is told each flow's bytes.
//
// The rates are the flows' apart, and so are the times but for rounding: a member's bits left
// are its finish less the clock, not its own count brought down at each change of rate, and a
// link's load sums a bundle's rate times its weight, so a completion can move by a
// picosecond. A ring all-reduce that runs without send latency amplifies such differences
// (docs/performance.md, "Flows of one path": a relative 10⁻¹² on the links' capacities moves
// its iteration by 1% on 512 GPUs), and there bundled and apart runs differ as much; with
// SimAI's send latency the 128-GPU ring gives the same fct.txt. Stats.Bundled counts the flows
// started into a bundle.
//
// # Options
//
// Options.TrackBottlenecks attributes every byte sent to the link that was its flow's bottleneck
// at the time (BottleneckBytes, and Observer calls if it implements BottleneckObserver). It is
// off by default. LinkBytes (bytes carried by a link so far) is always available: it costs one
// addition per link of each sent flow and the rest is computed when asked.
//
// # Measurements
//
// Reproduce with
//
//	go test -run '^$' -bench . -benchmem -count 6 ./netmodel/fluid
//
// on a shared 2-core x86_64 VM ("Intel(R) Xeon(R) Processor", 2.0 GHz), linux/amd64, Go 1.26;
// medians of 6 runs (runs varied by about ±10%, one Ring1024 run by +27%). Every benchmark runs
// on topo.DefaultFabric(1024, 8) (1,024 GPUs, 8 per server on an NVSwitch, 400 Gb/s NICs, two
// segments of 512 GPUs under 64 PSWs) with routes from route.Router: 8,192 streams (GPU g,
// channel c = source port 10000+c), each sending 1 MB flows to GPU g+stride one after another,
// the next started when the previous one arrives. One op is one flow completion; after a
// warm-up of 4 flows per stream, nothing allocates (0 B/op, 0 allocs/op everywhere).
//
//	                         ns/op   flows/s   recomputes/flow  solved links/flow  re-rated/flow
//	Ring1024 (g → g+1)         555   1.80 M         0.016              1.39             1.24
//	RailRing1024 (g → g+8)     291   3.43 M         0.0005             0.28             1.00
//	CrossSegment1024 (g+512) 12 950     77 k         0.75              44               10.2
//	Ring1024Full            10 700     93 k         0.013             30               1.13
//	CrossSegment1024Full  4 200 000    237          1.76            7 200               15
//
// Ring1024 is the ring of a collective: seven of a server's eight hops are NVLink (two links, 8
// flows each, isolated), the eighth crosses the fabric through a PSW, where ECMP collisions
// couple the cross-server flows. RailRing1024 mostly stays under one ASW per rail. CrossSegment1024
// sends everything through the PSW layer, where hash collisions make each rail one coupled
// component of 512 flows and every completion ripples through about 10 rates; it is the stress
// case, not a collective. The Full variants solve every transmitting flow at every recompute
// (same solver, the region is everything; the same runs otherwise, warmed up incrementally):
// the incremental region is 19× faster on the ring and 320× on the stress case. The project's
// target of one million flow completions per second per core on ring collectives is met by the
// network model; a DAG runner on top adds its own cost.
//
// What profiling (go test -run '^$' -bench <name> -cpuprofile cpu.out ./netmodel/fluid, then
// go tool pprof) found, in order:
//
//  1. The first version (eager indexed heap updated for every fixed flow; seed = every flow on
//     a changed link; widening by every flow of a failing link; every pass re-solving the whole
//     region) ran Ring1024 at 1,200 ns and CrossSegment1024 at 49 µs per flow, with 88% of the
//     CPU in the solver and 55% in heap sift-downs.
//  2. Lazy heap keys, stored in the heap entries, removed the heap update per fixed flow:
//     about 10% on both.
//  3. Union-find parts, so that a pass re-solves only the parts that grew: CrossSegment 49 →
//     40 µs (a batch joins many independent parts; few of them need widening).
//  4. Widening only by the flows that break a condition (not all the flows of the link):
//     CrossSegment 40 → 33 µs, regions from 43 to 29 flows per recompute.
//  5. Seeding only the new flows and those bottlenecked at the changed links: Ring 1,100 →
//     750 ns, CrossSegment 33 → 18 µs, regions from 29 to 15 flows per recompute.
//  6. Stopping the filling once every flow is fixed (the rest of the heap holds only links
//     whose flows were all fixed elsewhere): Ring 750 → 650 ns, CrossSegment 18 → 14 µs.
//  7. Adding the flows bottlenecked next to those that must move (seeds and widened flows),
//     one ring of the ripple ahead: CrossSegment from 58 to 44 solved links per flow, 14 →
//     13 µs.
//  8. Filling a solve of at most 32 links from a sorted slice instead of the heap (solve's
//     fillSorted: the same order, so the same result, TestSortedFillIsTheHeap): many of a
//     small heap's entries die before they reach the top, each a sift-down, and cost a step
//     of the head there. The 512-GPU ring all-reduce, whose servers' NVLink parts are about a
//     dozen links: 0.98 (0.89–0.99, 8 pairs side by side). Without send latency most of that
//     run's link work is in solves of 64–255 links (the flows between the ring's rail 7 and
//     rail 0 GPUs of all servers, coupled by ECMP collisions at the spines into one part), so
//     the heap stays; filling each part on its own queue, and pruning dead entries from the
//     heap when they are half of it, gained nothing there and were not kept.
//
// A split of the flow table into a 32-byte hot record and the rest, and plain comparisons in
// place of the float min/max builtins, made no difference beyond the noise; they are kept. Now,
// on Ring1024 about a third of the CPU is the engine's event queue (a send and an arrival event
// and a timer per flow, with 16k events pending) and 60% the recomputes. On CrossSegment1024
// the solver takes 70%, and three quarters of its work is re-solving parts after a widening
// (each pass adds one ring of the ripple and the part is filled again from scratch); a
// re-solve that kept the previous pass's filling below the lowest level the joining flows can
// affect is the next step if that pattern matters.
//
// # Tests
//
// Closed forms (one flow on an idle path, N equal flows on one link, flows of different sizes,
// parking lots, two bottlenecks, a flow joining active ones, batching, bottleneck tracking);
// a property test that runs random scenarios (random multigraphs, and generated Spectrum-X
// fabrics with Router paths; flows starting at random and at shared instants and from arrival
// callbacks) and after every recompute compares every rate with a from-scratch water-filling
// and runs Check, then compares every start, send and arrival time with a simulation driven by
// that reference solver (within 4 ps: the two reach the same rates through different sums,
// which can move a rounded-up completion by a picosecond); the same with random reroutes, whose
// reference moves the flows under the same rules and also checks every link's bytes; both of
// them again with bundles, on scenarios whose flows often share a path, members moving among
// them; closed forms of reroutes and of a bundle; determinism (identical event and rate logs); zero allocations in steady
// state. Build with -tags invariants to run Check after
// every recompute inside the package.
package fluid
