package flagtable

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

// A table's flags are defined under every name, an alias sets its flag's value, Given names a
// flag however it was given, and WriteGroups lays the table out as every -h does: the heading,
// then each flag with its aliases and placeholder and its meaning indented under it.
func TestTable(t *testing.T) {
	var n int
	var quiet bool
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	groups := []Group{{Title: "Things", Flags: []Spec{
		{Names: []string{"-n", "--count"}, Arg: "N", Usage: "how many", Default: "1",
			Define: func(name, usage string) { fs.Var(Decimal(&n), name, usage) }},
		{Names: []string{"-quiet"}, Usage: "say nothing",
			Define: func(name, usage string) { fs.Var(Switch(&quiet), name, usage) }},
	}}}
	Define(fs, groups)
	if err := fs.Parse([]string{"--count", "7"}); err != nil {
		t.Fatal(err)
	}
	if n != 7 {
		t.Errorf("--count 7 set %d", n)
	}
	if g := Given(fs, groups); len(g) != 1 || g[0].Names[0] != "-n" {
		t.Errorf("given %v, want -n", g)
	}
	var b strings.Builder
	WriteGroups(&b, groups)
	want := "\nThings:\n  -n, --count N\n      how many (default: 1)\n  -quiet\n      say nothing\n"
	if b.String() != want {
		t.Errorf("WriteGroups wrote\n%q, want\n%q", b.String(), want)
	}
}

// Help writes the usage forms, the description and the flag set's flags by name, the default
// left out for a zero value.
func TestHelp(t *testing.T) {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.String("o", "", "write to `FILE`")
	fs.Int("k", 3, "`K` times")
	var b strings.Builder
	Help(&b, []string{"simd x [-o FILE]", "simd x -k K"}, "simd x does a thing.\n", fs)
	want := "usage: simd x [-o FILE]\n       simd x -k K\n\nsimd x does a thing.\n\nFlags:\n" +
		"  -k K\n      K times (default: 3)\n  -o FILE\n      write to FILE\n"
	if b.String() != want {
		t.Errorf("Help wrote\n%q, want\n%q", b.String(), want)
	}
}

// ParseInterleaved takes flags before, between and after the positional arguments.
func TestParseInterleaved(t *testing.T) {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := fs.String("o", "", "")
	pos, err := ParseInterleaved(fs, []string{"a", "-o", "x", "b"})
	if err != nil || *o != "x" || !reflect.DeepEqual(pos, []string{"a", "b"}) {
		t.Errorf("positional %q, -o %q, %v", pos, *o, err)
	}
	if _, err := ParseInterleaved(fs, []string{"a", "-bad"}); err == nil {
		t.Error("an unknown flag after a positional argument is not an error")
	}
}
