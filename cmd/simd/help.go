package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Every -h of simd has one shape: the usage line ("usage: simd ...", further forms under it
// as "       simd ..."), a blank line, what the command does, then its flags, each as
//
//	  -name ARG
//	      what it means (default: X)
//
// help and writeFlags write that shape for the commands whose flags live on a flag set; simd
// -h and simd topo -h write the same layout from their grouped flag tables.

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
