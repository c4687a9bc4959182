package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// value is the flag.Value of a typed flag: Set stores what parse reads from the string, String
// shows the value p points to ("" for none, which the flag package asks of a zero value).
type value[T any] struct {
	p     *T
	parse func(string) (T, error)
}

func (v value[T]) String() string {
	if v.p == nil {
		return ""
	}
	return fmt.Sprint(*v.p)
}

func (v value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err == nil {
		*v.p = x
	}
	return err
}

// IsBoolFlag lets a switch such as --ro go without a value, as flag.Bool's do.
func (v value[T]) IsBoolFlag() bool { _, ok := any(v.p).(*bool); return ok }

// Parsers of flag values. Integers are decimal, as Python's int() reads them (flag.Int would
// take 010 as octal and 0x10 as hex).

// decimal is an int flag read in decimal only.
func decimal(p *int) value[int] { return value[int]{p, parseInt} }

// finite is a float64 flag that refuses NaN and infinities.
func finite(p *float64) value[float64] { return value[float64]{p, parseFinite} }

// single is a float32 flag parsed straight to single precision, as SimAI's stof does (parsing to
// double first and rounding again can differ in the last bit); it refuses NaN and infinities.
func single(p *float32) value[float32] { return value[float32]{p, parseFloat32} }

// unsigned is a uint64 flag read in decimal only.
func unsigned(p *uint64) value[uint64] { return value[uint64]{p, parseUint64} }

// text is a string flag taken as given.
func text(p *string) value[string] {
	return value[string]{p, func(s string) (string, error) { return s, nil }}
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
