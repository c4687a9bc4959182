package main

import (
	"flag"
	"regexp"
	"strings"
	"testing"
)

// TestHelpShape: every command's -h has the shape they share — exit 0, nothing on stderr, the
// usage line "usage: simd CMD ..." (further forms under it), a blank line, a description, then
// each flag on its own line "  -name ..." with its meaning indented under it; no tab-indented
// flag package layout.
func TestHelpShape(t *testing.T) {
	names := func(fs *flag.FlagSet) []string {
		var n []string
		fs.VisitAll(func(f *flag.Flag) { n = append(n, f.Name) })
		return n
	}
	var topoRaw topoRaw
	topoFS, _ := newTopoFlagSet(&topoRaw)
	mainFS, _ := newFlagSet(new(options))
	var dag dagOptions
	var moeRun moeRunOptions
	cases := []struct {
		args  []string
		usage string   // what the first line starts with
		flags []string // flags the help must list
	}{
		{[]string{"-h"}, "usage: simd [", names(mainFS)},
		{[]string{"--help"}, "usage: simd [", names(mainFS)},
		{[]string{"topo", "-h"}, "usage: simd topo ", names(topoFS)},
		{[]string{"dag", "-h"}, "usage: simd dag ", names(dagFlagSet(&dag))},
		{[]string{"moe", "-h"}, "usage: simd moe ", names(moeGenDefaults())},
		{[]string{"moe", "gen", "-h"}, "usage: simd moe gen ", names(moeGenDefaults())},
		{[]string{"moe", "run", "-h"}, "usage: simd moe run ", names(moeRunFlagSet(&moeRun))},
		{[]string{"sweep", "-h"}, "usage: simd sweep ", names(sweepFlagSet(&sweepCommand{}))},
		{[]string{"sweep", "merge", "-h"}, "usage: simd sweep ", names(sweepMergeFlagSet(new(string)))},
		{[]string{"plot", "-h"}, "usage: simd plot ", []string{"o", "r"}},
	}
	flagLine := regexp.MustCompile(`^  --?[a-zA-Z]`)
	for _, c := range cases {
		code, out, errOut := runCLI(t, t.TempDir(), c.args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
			continue
		}
		lines := strings.Split(out, "\n")
		if !strings.HasPrefix(lines[0], c.usage) {
			t.Errorf("%v: first line %q, want it to start with %q", c.args, lines[0], c.usage)
			continue
		}
		i := 1
		for i < len(lines) && strings.HasPrefix(lines[i], "       simd ") {
			i++
		}
		if i+1 >= len(lines) || lines[i] != "" || lines[i+1] == "" || strings.HasPrefix(lines[i+1], " ") {
			t.Errorf("%v: the usage lines are not followed by a blank line and a description:\n%s", c.args, out)
			continue
		}
		if strings.Contains(out, "\t") {
			t.Errorf("%v: a tab in the help (the flag package's layout):\n%s", c.args, out)
		}
		for _, f := range c.flags {
			if !regexp.MustCompile(`(?m)^  (--?[a-zA-Z_-]+, )*--?` + regexp.QuoteMeta(f) + `( |,|$)`).MatchString(out) {
				t.Errorf("%v: -%s is not listed on a line of its own", c.args, f)
			}
		}
		if c.args[0] == "plot" {
			continue // its flags fit on one line each
		}
		for j := i; j < len(lines); j++ {
			if flagLine.MatchString(lines[j]) && (j+1 == len(lines) || !strings.HasPrefix(lines[j+1], "      ") ||
				strings.HasPrefix(lines[j+1], "       ")) {
				t.Errorf("%v: the meaning of %q is not on the next line, indented by six spaces", c.args, lines[j])
			}
		}
	}
}
