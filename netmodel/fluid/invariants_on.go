//go:build invariants

package fluid

// checkInvariants turns on the max-min check (Check) after every recompute: a recompute that
// leaves the rates anything but max-min fair panics with Check's error.
const checkInvariants = true
