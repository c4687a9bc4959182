// Package flagtable is the command-line machinery every simd command shares: grouped flag
// tables whose flags have aliases, the layout of -h, typed flag values that read what their
// type holds and nothing else, and flags that may come after positional arguments.
//
// Every -h of simd has one shape: the usage line ("usage: simd ...", further forms under it
// as "       simd ..."), a blank line, what the command does, then its flags, each as
//
//	-name ARG
//	    what it means (default: X)
//
// Help and WriteFlags write that shape for the commands whose flags live on a flag set; simd
// -h and simd topo -h write the same layout from their grouped flag tables (WriteGroups).
//
// It is its own package so that package main keeps only what is simd's: the flags themselves,
// their help texts, the messages and the exit statuses. This package knows how to define, read
// and print flags, not which flags there are or what they mean.
package flagtable

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Spec documents one flag of a grouped table and its aliases.
type Spec struct {
	Names   []string // with their dashes, as -h shows them; the first is the canonical one
	Arg     string   // placeholder for -h; "" for a switch
	Usage   string
	Default string                   // default as -h shows it
	Define  func(name, usage string) // defines the flag on the flag set under a name without dashes
}

// Group is a heading in -h and its flags.
type Group struct {
	Title string
	Flags []Spec
}

// Define defines the flags of groups on fs: each under its canonical name, its aliases sharing
// its value.
func Define(fs *flag.FlagSet, groups []Group) {
	for _, g := range groups {
		for _, s := range g.Flags {
			name := strings.TrimLeft(s.Names[0], "-")
			s.Define(name, s.Usage)
			for _, alias := range s.Names[1:] {
				fs.Var(fs.Lookup(name).Value, strings.TrimLeft(alias, "-"), s.Usage)
			}
		}
	}
}

// Given are the flags of groups that fs's command line gave, under any of their names, in the
// table's order.
func Given(fs *flag.FlagSet, groups []Group) []Spec {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var given []Spec
	for _, g := range groups {
		for _, s := range g.Flags {
			if slices.ContainsFunc(s.Names, func(n string) bool { return set[strings.TrimLeft(n, "-")] }) {
				given = append(given, s)
			}
		}
	}
	return given
}

// WriteGroups writes the flags of groups under their headings.
func WriteGroups(w io.Writer, groups []Group) {
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.Title)
		for _, s := range g.Flags {
			WriteFlag(w, strings.Join(s.Names, ", "), s.Arg, s.Usage, s.Default)
		}
	}
}

// Help writes a command's -h: its usage forms, the description about, and fs's flags under
// "Flags:".
func Help(w io.Writer, forms []string, about string, fs *flag.FlagSet) {
	WriteUsage(w, forms...)
	fmt.Fprintf(w, "\n%s\n\nFlags:\n", strings.TrimRight(about, "\n"))
	WriteFlags(w, fs)
}

// WriteUsage writes the usage lines: "usage: simd ..." and the further forms aligned under it.
func WriteUsage(w io.Writer, forms ...string) {
	for i, f := range forms {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		fmt.Fprintf(w, "%s%s\n", lead, f)
	}
}

// WriteFlags writes fs's flags sorted by name: the name and its placeholder (the back-quoted
// word of the usage, as flag.UnquoteUsage finds it), then the meaning indented, with the
// default unless it is the zero value.
func WriteFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		WriteFlag(w, "-"+f.Name, arg, usage, defaultShown(f.DefValue))
	})
}

// WriteFlag writes one flag of a -h: "  head ARG", then the meaning and "(default: def)" unless
// def is "".
func WriteFlag(w io.Writer, head, arg, usage, def string) {
	if arg != "" {
		head += " " + arg
	}
	fmt.Fprintf(w, "  %s\n      %s", head, usage)
	if def != "" {
		fmt.Fprintf(w, " (default: %s)", def)
	}
	fmt.Fprintln(w)
}

// defaultShown is the default -h shows for a flag's default value: none for a zero value.
func defaultShown(v string) string {
	switch v {
	case "", "0", "false", "0s":
		return ""
	}
	return v
}

// ParseInterleaved parses flags that may come before or after the positional arguments, and
// returns the positional arguments in their order.
func ParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
