package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"simd/cmd/simd/report"
)

const reportUsage = `usage: simd report DIR [-o OUT] [-r PREFIX]

Writes the HTML report of an existing output folder (the page -report writes after a run) from
its files: the run (summary.json), exposed communication by group and the per-layer table
(EndToEnd.csv), the plots (as simd plot draws them, inline), the busiest links per class
(links.csv, link_classes.csv) and the collectives of compare.csv, when present. The page is
self-contained: viewing it needs no network. The same folder gives the same bytes.

  -o OUT     the page to write (default: DIR/PREFIXreport.html)
  -r PREFIX  prefix of the run's files (default: none, or the X of the one XEndToEnd.csv in DIR)
`

// runReport is simd report DIR.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simd report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "")
	prefix := fs.String("r", "", "")
	var dirs []string
	err := fs.Parse(args)
	for err == nil && fs.NArg() > 0 {
		dirs = append(dirs, fs.Arg(0))
		err = fs.Parse(fs.Args()[1:])
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, reportUsage)
		return exitOK
	}
	if err == nil && len(dirs) != 1 {
		err = fmt.Errorf("expected one output folder, got %d", len(dirs))
	}
	if err != nil {
		fmt.Fprintf(stderr, "simd report: %v\n%s", err, reportUsage)
		return exitBadInput
	}
	dir := dirs[0]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "simd report: %s: not an output folder\n", dir)
		return exitBadInput
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "r" })
	if !set {
		*prefix = detectPrefix(dir)
	}
	if *out == "" {
		*out = filepath.Join(dir, *prefix+"report.html")
	}
	if err := report.Write(dir, *prefix, *out); err != nil {
		fmt.Fprintf(stderr, "simd report: %v\n", err)
		var ie report.InputError
		if errors.As(err, &ie) {
			return exitBadInput
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "report: %s\n", *out)
	return exitOK
}
