//go:build !invariants

package fluid

// checkInvariants turns on the max-min check (Check) after every recompute; build with
// -tags invariants to set it.
const checkInvariants = false
