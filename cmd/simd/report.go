package main

import (
	"errors"
	"fmt"
	"io"
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
	dir, out, prefix, err := folderArgs(reportUsage, args)
	if err == nil {
		if out == "" {
			out = filepath.Join(dir, prefix+"report.html")
		}
		err = report.Write(dir, prefix, out)
	}
	var ie report.InputError
	if errors.As(err, &ie) {
		err = badInput(err) // a file of the folder that could not be read as its format
	}
	if err == nil {
		fmt.Fprintf(stdout, "report: %s\n", out)
	}
	return commandStatus("simd report", err, func(w io.Writer) { fmt.Fprint(w, reportUsage) }, stdout, stderr)
}
