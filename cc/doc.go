// Package cc holds the congestion-control state machines of the event mode: DCQCN's reaction and
// notification points, ECN RED marking, PFC pause and resume, DCTCP and HPCC.
//
// Each one is a plain type driven by the caller: methods such as OnCNP(now) or OnTimer(now, id)
// take the current time as an argument and return the rate changes, marks and timers they want.
// None owns a clock, a goroutine, a logger or a random source, so each can be tested alone
// against hand-computed sequences, without a network. The network model (netmodel) arms their
// timers on the engine and applies their decisions; cc knows rates, queues and timers, never
// topologies.
//
// The package is filled by the congestion-control work that follows the event mode; until then
// the event mode's rates are the ideal max-min fair shares (CC_MODE 0).
package cc
