package main

import (
	"flag"
	"testing"
)

// TestValues: the flag values read decimal integers (010 is ten), refuse what their type cannot
// hold with one message each, and show nothing for a zero value, as the flag package expects.
func TestValues(t *testing.T) {
	var i int
	var u uint64
	var f float64
	var b bool
	var s string
	for _, c := range []struct {
		v    flag.Value
		in   string
		show string // String after Set; "" with err
		err  string
	}{
		{decimal(&i), "010", "10", ""},
		{decimal(&i), " 7 ", "7", ""},
		{decimal(&i), "0x10", "", "expected an integer"},
		{unsigned(&u), "18446744073709551615", "18446744073709551615", ""},
		{unsigned(&u), "-1", "", "expected an integer from 0 to 18446744073709551615"},
		{finite(&f), "1.5", "1.5", ""},
		{finite(&f), "NaN", "", "expected a finite number"},
		{finite(&f), "Inf", "", "expected a finite number"},
		{value[bool]{&b, parseSwitch}, "true", "true", ""},
		{value[bool]{&b, parseSwitch}, "yes", "", "expected no value, or true or false"},
		{text(&s), " as given ", " as given ", ""},
	} {
		err := c.v.Set(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%T %q: error %v, want %q", c.v, c.in, err, c.err)
		case c.err == "" && (err != nil || c.v.String() != c.show):
			t.Errorf("%T %q: %q, %v, want %q", c.v, c.in, c.v.String(), err, c.show)
		}
	}
	for _, v := range []flag.Value{value[int]{}, value[uint64]{}, value[float64]{}, value[string]{}, value[bool]{}} {
		if v.String() != "" {
			t.Errorf("%T: zero value shows %q", v, v.String())
		}
	}
	if !(value[bool]{&b, parseSwitch}).IsBoolFlag() || decimal(&i).IsBoolFlag() {
		t.Error("IsBoolFlag: only a bool is a switch")
	}
}
