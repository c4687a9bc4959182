package sim

import (
	"fmt"

	"simd/configs/lex"
)

// InputError marks an error caused by a run's inputs or options, as opposed to one of the
// machine; simd exits with status 2 for it. It is lex.InputError, so that the packages below
// this one (topo, ccl/algo, workloads) mark their callers' mistakes the same way.
type InputError = lex.InputError

// BadInput marks err as an input error; nil stays nil.
func BadInput(err error) error { return lex.BadInput(err) }

// BadInputf is an input error with a formatted message.
func BadInputf(format string, args ...any) error { return lex.BadInputf(format, args...) }

// IsInputError reports whether err, or an error it wraps, is an InputError or a parser's
// file:line error (configs/lex).
func IsInputError(err error) bool { return lex.IsInputError(err) }

// EventLimitError is the stop cause of a run that processed Options.MaxEvents events.
type EventLimitError struct{ Events uint64 }

// Error names the limit as the command line's flag does, since it is also the reason written in
// a stopped run's outputs.
func (e EventLimitError) Error() string { return fmt.Sprintf("-max-events %d", e.Events) }
