// Package cc holds the congestion-control state machines of the event mode: DCQCN's reaction
// point (DCQCN) and notification point (CNPGate), ECN RED marking (ECNMarker), PFC pause and
// resume, DCTCP and HPCC, each reproducing what SimAI's ns-3 (rdma-hw.cc, switch-mmu.cc) does.
//
// Each one is a plain value driven by the caller: methods such as OnCNP(now) or Advance(now)
// take the current time as an argument and return the rate changes, marks and next deadlines
// the caller has to act on. None owns a clock, a goroutine, a logger or a random source (where
// ns-3 draws a random number, the caller passes it in), so each can be tested alone against
// hand-computed sequences, without a network. The network model (netmodel) arms their timers on
// the engine and applies their decisions; cc knows rates, queues and timers, never topologies.
//
// Timers are lazy. ns-3 runs DCQCN's α update every microsecond and its rate-decrease check
// every four for the whole life of every flow that ever saw a CNP; here those ticks are
// replayed in closed form when the caller next looks, and Next tells the caller the one
// instant at which the rate can change next, so the engine only holds events that matter.
//
// Without these machines (CC_MODE 0) the event mode's rates are the ideal max-min fair shares.
package cc
