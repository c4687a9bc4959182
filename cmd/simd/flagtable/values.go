package flagtable

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Value is the flag.Value of a typed flag: Set stores what its parser reads from the string,
// String shows the value it points to ("" for none, which the flag package asks of a zero
// value).
type Value[T any] struct {
	p     *T
	parse func(string) (T, error)
}

// NewValue is a flag of type T stored in p and read from its string by parse, whose error
// the flag package reports after the flag's name.
func NewValue[T any](p *T, parse func(string) (T, error)) Value[T] { return Value[T]{p, parse} }

func (v Value[T]) String() string {
	if v.p == nil {
		return ""
	}
	return fmt.Sprint(*v.p)
}

func (v Value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err == nil {
		*v.p = x
	}
	return err
}

// IsBoolFlag lets a switch such as --ro go without a value, as flag.Bool's do.
func (v Value[T]) IsBoolFlag() bool { _, ok := any(v.p).(*bool); return ok }

// Parsers of flag values. Integers are decimal, as Python's int() reads them (flag.Int would
// take 010 as octal and 0x10 as hex).

// Decimal is an int flag read in decimal only.
func Decimal(p *int) Value[int] { return Value[int]{p, parseInt} }

// Finite is a float64 flag that refuses NaN and infinities.
func Finite(p *float64) Value[float64] { return Value[float64]{p, parseFinite} }

// Single is a float32 flag parsed straight to single precision, as SimAI's stof does (parsing to
// double first and rounding again can differ in the last bit); it refuses NaN and infinities.
func Single(p *float32) Value[float32] { return Value[float32]{p, parseFloat32} }

// Unsigned is a uint64 flag read in decimal only.
func Unsigned(p *uint64) Value[uint64] { return Value[uint64]{p, parseUint64} }

// Text is a string flag taken as given.
func Text(p *string) Value[string] {
	return Value[string]{p, func(s string) (string, error) { return s, nil }}
}

// Switch is a bool flag that may go without a value (then true) or take true or false.
func Switch(p *bool) Value[bool] { return Value[bool]{p, parseSwitch} }

// First is an int flag that may be repeated; the first value wins, as in SimAI_analytical's -g.
// A later value must still be an integer.
func First(p *int) flag.Value { return &first{p: p} }

type first struct {
	p   *int
	set bool
}

func (f *first) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.Itoa(*f.p)
}

func (f *first) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("expected an integer")
	}
	if !f.set {
		*f.p, f.set = v, true
	}
	return nil
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, errors.New("expected an integer")
	}
	return n, nil
}

func parseUint64(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("expected an integer from 0 to 18446744073709551615")
	}
	return n, nil
}

func parseFinite(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("expected a finite number")
	}
	return f, nil
}

func parseFloat32(s string) (float32, error) {
	v, err := strconv.ParseFloat(s, 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("expected a finite number")
	}
	return float32(v), nil
}

func parseSwitch(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("expected no value, or true or false")
	}
	return b, nil
}
