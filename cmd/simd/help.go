package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Every -h of simd has one shape: the usage line ("usage: simd ...", further forms under it
// as "       simd ..."), a blank line, what the command does, then its flags, each as
//
//	  -name ARG
//	      what it means (default: X)
//
// help and writeFlags write that shape for the commands whose flags live on a flag set; simd
// -h and simd topo -h write the same layout from their grouped flag tables (writeGroups).

// flagSpec documents one flag of a grouped table and its aliases.
type flagSpec struct {
	names  []string // with their dashes, as -h shows them; the first is the canonical one
	arg    string   // placeholder for -h; "" for a switch
	usage  string
	def    string                   // default as -h shows it
	define func(name, usage string) // defines the flag on the flag set under a name without dashes
}

// group is a heading in -h and its flags.
type group struct {
	title string
	flags []flagSpec
}

// defineGroups defines the flags of groups on fs: each under its canonical name, its aliases
// sharing its value.
func defineGroups(fs *flag.FlagSet, groups []group) {
	for _, g := range groups {
		for _, s := range g.flags {
			name := strings.TrimLeft(s.names[0], "-")
			s.define(name, s.usage)
			for _, alias := range s.names[1:] {
				fs.Var(fs.Lookup(name).Value, strings.TrimLeft(alias, "-"), s.usage)
			}
		}
	}
}

// givenFlags are the flags of groups that fs's command line gave, under any of their names, in
// the table's order.
func givenFlags(fs *flag.FlagSet, groups []group) []flagSpec {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var given []flagSpec
	for _, g := range groups {
		for _, s := range g.flags {
			if slices.ContainsFunc(s.names, func(n string) bool { return set[strings.TrimLeft(n, "-")] }) {
				given = append(given, s)
			}
		}
	}
	return given
}

// writeGroups writes the flags of groups under their headings.
func writeGroups(w io.Writer, groups []group) {
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, s := range g.flags {
			writeFlag(w, strings.Join(s.names, ", "), s.arg, s.usage, s.def)
		}
	}
}

// help writes a command's -h: its usage forms, the description about, and fs's flags under
// "Flags:".
func help(w io.Writer, forms []string, about string, fs *flag.FlagSet) {
	writeUsage(w, forms...)
	fmt.Fprintf(w, "\n%s\n\nFlags:\n", strings.TrimRight(about, "\n"))
	writeFlags(w, fs)
}

// writeUsage writes the usage lines: "usage: simd ..." and the further forms aligned under it.
func writeUsage(w io.Writer, forms ...string) {
	for i, f := range forms {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		fmt.Fprintf(w, "%s%s\n", lead, f)
	}
}

// writeFlags writes fs's flags sorted by name: the name and its placeholder (the back-quoted
// word of the usage, as flag.UnquoteUsage finds it), then the meaning indented, with the
// default unless it is the zero value.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		writeFlag(w, "-"+f.Name, arg, usage, defaultShown(f.DefValue))
	})
}

// writeFlag writes one flag of a -h: "  head ARG", then the meaning and "(default: def)" unless
// def is "".
func writeFlag(w io.Writer, head, arg, usage, def string) {
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
