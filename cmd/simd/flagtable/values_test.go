package flagtable

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
		{Decimal(&i), "010", "10", ""},
		{Decimal(&i), " 7 ", "7", ""},
		{Decimal(&i), "0x10", "", "expected an integer"},
		{Unsigned(&u), "18446744073709551615", "18446744073709551615", ""},
		{Unsigned(&u), "-1", "", "expected an integer from 0 to 18446744073709551615"},
		{Finite(&f), "1.5", "1.5", ""},
		{Finite(&f), "NaN", "", "expected a finite number"},
		{Finite(&f), "Inf", "", "expected a finite number"},
		{Switch(&b), "true", "true", ""},
		{Switch(&b), "yes", "", "expected no value, or true or false"},
		{Text(&s), " as given ", " as given ", ""},
	} {
		err := c.v.Set(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%T %q: error %v, want %q", c.v, c.in, err, c.err)
		case c.err == "" && (err != nil || c.v.String() != c.show):
			t.Errorf("%T %q: %q, %v, want %q", c.v, c.in, c.v.String(), err, c.show)
		}
	}
	for _, v := range []flag.Value{Value[int]{}, Value[uint64]{}, Value[float64]{}, Value[string]{}, Value[bool]{}} {
		if v.String() != "" {
			t.Errorf("%T: zero value shows %q", v, v.String())
		}
	}
	if !Switch(&b).IsBoolFlag() || Decimal(&i).IsBoolFlag() {
		t.Error("IsBoolFlag: only a bool is a switch")
	}
}

// A First flag keeps its first value, yet refuses a later one that is not an integer.
func TestFirst(t *testing.T) {
	var n int
	v := First(&n)
	for _, s := range []string{"8", "16"} {
		if err := v.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if n != 8 || v.String() != "8" {
		t.Errorf("-g 8 -g 16: %d (%q), want 8", n, v.String())
	}
	if err := v.Set("x"); err == nil || err.Error() != "expected an integer" {
		t.Errorf("a later bad value: %v", err)
	}
}
