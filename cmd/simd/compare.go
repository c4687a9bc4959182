package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/topo"
	"simd/workloads"
)

// runCompare runs the analytical and the event mode on the same inputs and writes compare.csv:
// per collective (layer and phase) and per layer, the analytical time, the event time, their
// ratio and, from the event run, the links that carried most of the collective's bytes as their
// slowest hop.
func runCompare(s *session) error {
	out := s.eventOutputs()
	if err := out.check(); err != nil {
		return err
	}
	arep, err := s.analyticalReport()
	if err != nil {
		return err
	}
	r, err := s.simulate(out, true)
	if err != nil {
		return err
	}
	erep, err := workloads.EventEndToEnd(s.w, r.res, workloads.AnalyticalOptions{Layout: s.layout, Overlap: s.ov, PipelineGBps: s.ppGBps, FileName: s.fileName()})
	if err != nil {
		return badInput(err)
	}
	erep.Incomplete = r.note
	rows := s.compareRows(arep, r)
	var buf bytes.Buffer
	if r.note != "" {
		buf.WriteString("# incomplete: " + r.note + "\n")
	}
	writeCompareCSV(&buf, rows)
	files := r.outputs
	for _, f := range []struct {
		name string
		data func(io.Writer) error
	}{
		{"compare.csv", func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }},
		{"EndToEnd.csv", erep.WriteCSV},
		{"analytical-EndToEnd.csv", arep.WriteCSV},
	} {
		var b bytes.Buffer
		if err := f.data(&b); err != nil {
			return err
		}
		p, err := out.write(f.name, b.Bytes())
		if err != nil {
			return err
		}
		files = append(files, p)
	}
	p, err := s.writeSummaryJSON(out, r, &erep.Summary)
	if err != nil {
		return err
	}
	files = append(files, p)
	printCompare(s.stdout, s, arep, erep, rows)
	for _, p := range files {
		fmt.Fprintf(s.stdout, "results: %s\n", p)
	}
	if r.stopped != nil {
		fmt.Fprintf(s.stdout, "  incomplete: %s\n", r.note)
		return r.stoppedErr("the outputs hold the layers that finished and are marked incomplete")
	}
	return s.plotRun(out.dir, out.prefix)
}

// compareRow is one line of compare.csv.
type compareRow struct {
	layer                  int
	name, phase, op, group string
	bytes                  uint64
	analyticalUs, eventUs  float64
	bottlenecks            string
}

func (s *session) compareRows(arep *workloads.AnalyticalReport, r *eventRun) []compareRow {
	// Event time of each (layer, phase): the mean duration of its collectives (a recomputed
	// forward pass issues one twice), and where its bytes were bottlenecked.
	type acc struct {
		sum   float64
		n     int
		bytes map[int32]float64
	}
	byKey := map[[2]int]*acc{}
	for _, rec := range r.net.finished() {
		ph := phaseIndex(rec.Phase)
		a := byKey[[2]int{rec.Layer, ph}]
		if a == nil {
			a = &acc{bytes: map[int32]float64{}}
			byKey[[2]int{rec.Layer, ph}] = a
		}
		a.sum += rec.EndUs - rec.StartUs
		a.n++
		for l, b := range rec.bottleneck {
			a.bytes[l] += b
		}
	}
	g := r.sim.Fabric().Graph
	t := r.sim.Fabric().Topo
	var rows []compareRow
	for i := range s.w.Layers {
		if !r.res.Done(i) {
			continue // a stopped run compares the layers it finished
		}
		l := &s.w.Layers[i]
		ar := arep.Rows[i]
		aNs := [3]uint64{ar.FwdComm, ar.IGComm, ar.WGComm}
		var layerA, layerE float64
		any := false
		for ph := workloads.Fwd; ph <= workloads.WG; ph++ {
			c := l.Phases[ph].Comm
			if c.Op == ccl.OpNone {
				continue
			}
			any = true
			row := compareRow{layer: i, name: l.Name, phase: ph.String(), op: c.Op.String(), group: c.Group.String(),
				bytes: s.w.IssuedBytes(i, ph), analyticalUs: float64(aNs[ph]) / 1000}
			if a := byKey[[2]int{i, int(ph)}]; a != nil && a.n > 0 {
				row.eventUs = a.sum / float64(a.n)
				row.bottlenecks = topLinks(a.bytes, g, t)
			}
			layerA += row.analyticalUs
			layerE += row.eventUs
			rows = append(rows, row)
		}
		if any {
			rows = append(rows, compareRow{layer: i, name: l.Name, phase: "layer", analyticalUs: layerA, eventUs: layerE})
		}
	}
	return rows
}

func phaseIndex(name string) int {
	for ph := workloads.Fwd; ph <= workloads.WG; ph++ {
		if ph.String() == name {
			return int(ph)
		}
	}
	return -1
}

// topLinks names the three links that carried most bytes as their flows' slowest hop.
func topLinks(bytes map[int32]float64, g interface {
	From(int32) int32
	To(int32) int32
	Rate(int32) float64
}, t *topo.Topology) string {
	links := make([]int32, 0, len(bytes))
	for l := range bytes {
		links = append(links, l)
	}
	sort.Slice(links, func(i, j int) bool {
		if bytes[links[i]] != bytes[links[j]] {
			return bytes[links[i]] > bytes[links[j]]
		}
		return links[i] < links[j]
	})
	var parts []string
	for _, l := range links[:min(3, len(links))] {
		a, b := g.From(l), g.To(l)
		parts = append(parts, fmt.Sprintf("%s%d->%s%d@%sGbps", kindLetter(t.Kind(a)), a, kindLetter(t.Kind(b)), b, strconv.FormatFloat(g.Rate(l)/1e9, 'f', -1, 64)))
	}
	return strings.Join(parts, " ")
}

func kindLetter(k topo.NodeKind) string {
	switch k {
	case topo.GPU:
		return "gpu"
	case topo.NVSwitch:
		return "nvs"
	}
	return "sw"
}

func writeCompareCSV(w io.Writer, rows []compareRow) {
	io.WriteString(w, "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links\n")
	for _, r := range rows {
		ratio := ""
		if r.analyticalUs > 0 {
			ratio = strconv.FormatFloat(r.eventUs/r.analyticalUs, 'f', 3, 64)
		}
		bytesField := ""
		if r.phase != "layer" {
			bytesField = strconv.FormatUint(r.bytes, 10)
		}
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.layer, r.name, r.phase, r.op, r.group, bytesField,
			strconv.FormatFloat(r.analyticalUs, 'f', 3, 64), strconv.FormatFloat(r.eventUs, 'f', 3, 64), ratio, r.bottlenecks)
	}
}

func printCompare(w io.Writer, s *session, arep *workloads.AnalyticalReport, erep *workloads.EventReport, rows []compareRow) {
	f0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	fmt.Fprintf(w, "simd compare: %s on %d GPUs (%s)\n", s.wname, s.layout.GPUs, s.cl.fabric)
	fmt.Fprintf(w, "  iteration: analytical %s us, event %s us\n", f0(arep.Summary.Total), f0(erep.Summary.Total))
	fmt.Fprintf(w, "  %-5s %-24s %-5s %-13s %-5s %12s %12s %7s  %s\n", "layer", "name", "phase", "op", "group", "analyt. us", "event us", "ratio", "bottleneck links")
	const maxLines = 40
	for i, r := range rows {
		if i == maxLines {
			fmt.Fprintf(w, "  ... %d more rows in compare.csv\n", len(rows)-maxLines)
			break
		}
		ratio := "-"
		if r.analyticalUs > 0 {
			ratio = strconv.FormatFloat(r.eventUs/r.analyticalUs, 'f', 2, 64)
		}
		fmt.Fprintf(w, "  %-5d %-24.24s %-5s %-13s %-5s %12.1f %12.1f %7s  %s\n", r.layer, r.name, r.phase, r.op, r.group, r.analyticalUs, r.eventUs, ratio, r.bottlenecks)
	}
}
