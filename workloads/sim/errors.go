package sim

import (
	"errors"
	"fmt"

	"simd/configs/lex"
)

// InputError marks an error caused by a run's inputs or options (a workload the topology cannot
// hold, a SimAI.conf key out of range, an unknown algorithm), as opposed to one of the machine
// (a file that cannot be written). simd exits with status 2 for it.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// BadInput marks err as an input error; nil stays nil.
func BadInput(err error) error {
	if err == nil {
		return nil
	}
	return InputError{err}
}

// BadInputf is an input error with a formatted message.
func BadInputf(format string, args ...any) error { return InputError{fmt.Errorf(format, args...)} }

// IsInputError reports whether err, or an error it wraps, is an InputError or a parser's
// file:line error (configs/lex).
func IsInputError(err error) bool {
	var ie InputError
	return errors.As(err, &ie) || lex.IsInputError(err)
}

// EventLimitError is the stop cause of a run that processed Options.MaxEvents events.
type EventLimitError struct{ Events uint64 }

// Error names the limit as the command line's flag does, since it is also the reason written in
// a stopped run's outputs.
func (e EventLimitError) Error() string { return fmt.Sprintf("-max-events %d", e.Events) }
