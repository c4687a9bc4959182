package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"simd/workloads"
	"simd/workloads/sim"
)

// runCompare runs the analytical and the event mode on the same inputs (sim.Compare) and writes
// compare.csv: per collective (layer and phase) and per layer, the analytical time, the event
// time, their ratio and, from the event run, the links that carried most of the collective's
// bytes as their slowest hop.
func runCompare(ctx context.Context, s *session) error {
	fs := s.eventFiles()
	if err := fs.Check(); err != nil {
		return err
	}
	r, c, files, err := s.simulate(ctx, fs, true)
	if err != nil {
		return err
	}
	written, err := fs.WriteComparison(c, s.summaryHeader("event"))
	if err != nil {
		return err
	}
	files = append(files, written...)
	printCompare(s.stdout, s, c.Analytical, r.Report, c.Rows)
	for _, p := range files {
		fmt.Fprintf(s.stdout, "results: %s\n", p)
	}
	if r.Stopped != nil {
		fmt.Fprintf(s.stdout, "  incomplete: %s\n", r.Note)
		return stopped(r.Stopped, r.End, "the outputs hold the layers that finished and are marked incomplete")
	}
	return s.afterRun(fs.Dir(), fs.Prefix())
}

func printCompare(w io.Writer, s *session, arep *workloads.AnalyticalReport, erep *workloads.EventReport, rows []sim.CompareRow) {
	f0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	fmt.Fprintf(w, "simd compare: %s on %d GPUs (%s)\n", s.wname, s.layout.GPUs, s.cl.Fabric)
	fmt.Fprintf(w, "  iteration: analytical %s us, event %s us\n", f0(arep.Summary.Total), f0(erep.Summary.Total))
	fmt.Fprintf(w, "  %-5s %-24s %-5s %-13s %-5s %12s %12s %7s  %s\n", "layer", "name", "phase", "op", "group", "analyt. us", "event us", "ratio", "bottleneck links")
	const maxLines = 40
	for i, r := range rows {
		if i == maxLines {
			fmt.Fprintf(w, "  ... %d more rows in compare.csv\n", len(rows)-maxLines)
			break
		}
		ratio := "-"
		if r.AnalyticalUs > 0 {
			ratio = strconv.FormatFloat(r.EventUs/r.AnalyticalUs, 'f', 2, 64)
		}
		fmt.Fprintf(w, "  %-5d %-24.24s %-5s %-13s %-5s %12.1f %12.1f %7s  %s\n", r.Layer, r.Name, r.Phase, r.Op, r.Group, r.AnalyticalUs, r.EventUs, ratio, r.Bottlenecks)
	}
}
