package main

import (
	"errors"

	"simd/cmd/simd/process"
)

// Guards and interruptions of the event mode. -max-events and -max-wall stop a run cleanly, and
// so does SIGINT or SIGTERM: the run's context is cancelled with the cause (the signal's by
// process.SignalContext; workloads/sim stops the run between two events), every output is
// written with what the run computed so far (the FCT lines of the flows that arrived, the
// layers that finished), EndToEnd.csv and summary.json say the run is incomplete and why, and
// simd exits with exitStopped, or 128 + the signal's number as shells expect. A second signal
// ends the process at once; files being written then keep their temporary names, never the
// real ones.

// Exit statuses of stopped runs.
const (
	exitStopped = 3 // a -max-events or -max-wall guard stopped the run; outputs are partial
)

// stopCode is the exit status of a run stopped by cause: 128 + the number of a signal
// (process.Signal), exitStopped for a guard.
func stopCode(cause error) int {
	var sig process.Signal
	if errors.As(cause, &sig) {
		return 128 + int(sig)
	}
	return exitStopped // -max-events and -max-wall (sim.EventLimitError, sim.WallLimitError)
}
