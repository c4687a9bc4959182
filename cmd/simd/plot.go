package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simd/cmd/simd/flagtable"
	"simd/cmd/simd/plots"
	"simd/cmd/simd/report"
	"simd/workloads/sim"
)

const plotUsage = `usage: simd plot DIR [-o OUT] [-r PREFIX]

Draws the plots of an existing output folder (the ones -plot draws after a run) from its files:
fct_slowdown_cdf (fct.txt), link_utilisation (link_classes.csv, else bw.txt), busiest_links
(links.csv), layer_breakdown (EndToEnd.csv, with summary.json or compare.csv for the groups) and
compare (compare.csv), each as NAME.png and NAME.svg. A missing input skips its plot with a note
on stderr.

  -o OUT     folder for the plots (default: DIR)
  -r PREFIX  prefix of the run's files (default: none, or the X of the one XEndToEnd.csv in DIR)
`

// runPlot is simd plot DIR.
func runPlot(args []string, stdout, stderr io.Writer) int {
	dir, out, prefix, err := folderArgs(plotUsage, args)
	if err == nil {
		if out == "" {
			out = dir
		}
		err = drawPlots(dir, out, prefix, stdout, stderr)
	}
	var ie plots.InputError
	if errors.As(err, &ie) {
		err = badInput(err) // a file of the folder that could not be read as its format
	}
	return commandStatus("simd plot", err, func(w io.Writer) { fmt.Fprint(w, plotUsage) }, stdout, stderr)
}

// folderArgs reads the command line of a command on an output folder (simd plot, simd report):
// DIR, -o OUT and -r PREFIX (detected from DIR when not given). -h is flag.ErrHelp; bad
// arguments are bad input, and a bad flag or a count of folders other than one has usage after
// its message.
func folderArgs(usage string, args []string) (dir, out, prefix string, err error) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := fs.String("o", "", "")
	r := fs.String("r", "", "")
	dirs, err := flagtable.ParseInterleaved(fs, args)
	if err == nil && len(dirs) != 1 {
		err = fmt.Errorf("expected one output folder, got %d", len(dirs))
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return "", "", "", err
	case err != nil:
		return "", "", "", badInputf("%v\n%s", err, strings.TrimSuffix(usage, "\n"))
	}
	dir = dirs[0]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", "", "", badInputf("%s: not an output folder", dir)
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "r" })
	if !set {
		*r = plots.DetectPrefix(dir)
	}
	return dir, *o, *r, nil
}

// drawPlots draws dir's plots into out and reports what it wrote (stdout) and skipped (stderr).
func drawPlots(dir, out, prefix string, stdout, stderr io.Writer) error {
	res, err := plots.Draw(dir, out, prefix)
	if res != nil {
		for _, s := range res.Skipped {
			fmt.Fprintf(stderr, "simd plot: skipped %s\n", s)
		}
		for _, p := range res.Written {
			fmt.Fprintf(stdout, "plot: %s\n", p)
		}
	}
	return err
}

// afterRun draws the plots (-plot) and writes the report (-report) of a finished run's folder.
func afterRun(o *options, f sim.Folder, stdout, stderr io.Writer) error {
	if !o.plot && !o.report {
		return nil
	}
	d, p := f.Files()
	if o.plot {
		if err := drawPlots(d, d, p, stdout, stderr); err != nil {
			return err
		}
	}
	if o.report {
		out := filepath.Join(d, p+"report.html")
		if err := report.Write(d, p, out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "report: %s\n", out)
	}
	return nil
}
