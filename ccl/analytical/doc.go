// Package analytical is SimAI's closed-form cost model of a collective (SimAI_analytical,
// simai-formats.md §5): bus bandwidth from the NVLink and NIC bandwidths and the NICs per server
// (§5.1), an efficiency ratio interpolated from three measured tables (§5.2), a fixed latency
// below 1 MiB and the ring time formula (§5.3).
//
// The model reproduces SimAI_analytical to the nanosecond, so it repeats SimAI's arithmetic
// exactly (§5.6): bandwidths and ratios in single precision, the time formula in double precision
// in SimAI's order of operations, truncation to whole nanoseconds. Explicit float32()/float64()
// conversions around every product keep the compiler from fusing multiply-adds, which would change
// the last bit on some CPUs.
//
// Where SimAI's model breaks, this package does the intended thing instead (each difference is
// listed in docs/differences-from-simai.md): a one-rank group costs 0 instead of 0·∞; inputs for
// which SimAI computes a negative bandwidth (fewer than one NIC per GPU slot after its integer
// divisions) are refused with an error that says which flag to change; messages above the largest
// size of a ratio table use the last row instead of aborting.
package analytical
