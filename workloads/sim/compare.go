package sim

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/topo"
	"simd/workloads"
)

// Comparison is the analytical and the event mode run on the same inputs, collective by
// collective.
type Comparison struct {
	Analytical *workloads.AnalyticalReport
	Event      *Result
	// Rows are compare.csv's lines: per collective (layer and phase) and per layer, the
	// analytical time, the event time and the links that carried most of the collective's
	// bytes as their slowest hop. A stopped run compares the layers it finished.
	Rows []CompareRow
}

// CompareRow is one line of compare.csv.
type CompareRow struct {
	Layer                  int
	Name, Phase, Op, Group string // Phase "layer" for a layer's total
	Bytes                  uint64
	AnalyticalUs, EventUs  float64
	Bottlenecks            string
}

// Compare runs the analytical mode, then the event mode charging every collective's bytes to its
// bottleneck links, and lines them up.
func (s *Simulation) Compare(ctx context.Context, opt EventOptions, att Attachments) (*Comparison, error) {
	arep, err := s.Analytical()
	if err != nil {
		return nil, err
	}
	r, err := s.event(ctx, opt, att, true)
	if err != nil {
		return nil, err
	}
	return &Comparison{Analytical: arep, Event: r, Rows: s.compareRows(arep, r)}, nil
}

func (s *Simulation) compareRows(arep *workloads.AnalyticalReport, r *Result) []CompareRow {
	// Event time of each (layer, phase): the mean duration of its collectives (a recomputed
	// forward pass issues one twice), and where its bytes were bottlenecked.
	type acc struct {
		sum   float64
		n     int
		bytes map[int32]float64
	}
	byKey := map[[2]int]*acc{}
	for _, rec := range r.Finished() {
		ph := phaseIndex(rec.Phase)
		a := byKey[[2]int{rec.Layer, ph}]
		if a == nil {
			a = &acc{bytes: map[int32]float64{}}
			byKey[[2]int{rec.Layer, ph}] = a
		}
		a.sum += rec.EndUs - rec.StartUs
		a.n++
		for l, b := range rec.Bottlenecks {
			a.bytes[l] += b
		}
	}
	g := r.Sim.Fabric().Graph
	t := r.Sim.Fabric().Topo
	w := s.in.Workload
	var rows []CompareRow
	for i := range w.Layers {
		if !r.Run.Done(i) {
			continue // a stopped run compares the layers it finished
		}
		l := &w.Layers[i]
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
			row := CompareRow{Layer: i, Name: l.Name, Phase: ph.String(), Op: c.Op.String(), Group: c.Group.String(),
				Bytes: w.IssuedBytes(i, ph), AnalyticalUs: float64(aNs[ph]) / 1000}
			if a := byKey[[2]int{i, int(ph)}]; a != nil && a.n > 0 {
				row.EventUs = a.sum / float64(a.n)
				row.Bottlenecks = topLinks(a.bytes, g, t)
			}
			layerA += row.AnalyticalUs
			layerE += row.EventUs
			rows = append(rows, row)
		}
		if any {
			rows = append(rows, CompareRow{Layer: i, Name: l.Name, Phase: "layer", AnalyticalUs: layerA, EventUs: layerE})
		}
	}
	if r.Run != nil && r.Run.Stages != nil && r.Report != nil {
		rows = append(rows, pipelineRows(w, arep, r)...)
	}
	return rows
}

// pipelineRows are compare.csv's pipeline lines for a run that simulated the pipeline (layer
// -1, name "pipeline"): SimAI's formulas against the measured figures of the reported stage —
// the bubble, the exposed PP communication, and one send (the formula's PP time over its
// 2·vpp·ga sends, against the mean send time, issue to arrival).
func pipelineRows(w *workloads.Workload, arep *workloads.AnalyticalReport, r *Result) []CompareRow {
	h := w.Header
	a, e := arep.Summary, r.Report.Summary
	st := r.Run.Stages[r.Run.Reported]
	rows := []CompareRow{
		{Layer: -1, Name: "pipeline", Phase: "bubble", Group: "PP", AnalyticalUs: a.Bubble, EventUs: e.Bubble},
		{Layer: -1, Name: "pipeline", Phase: "pp_comm", Op: "send", Group: "PP", Bytes: h.PPCommBytes,
			AnalyticalUs: float64(a.PPComm), EventUs: st.PPExposed.Microseconds()},
	}
	var sum float64
	n := 0
	for _, c := range r.Finished() {
		if c.Op == "send" {
			sum += c.EndUs - c.StartUs
			n++
		}
	}
	send := CompareRow{Layer: -1, Name: "pipeline", Phase: "pp_send", Op: "send", Group: "PP", Bytes: h.PPCommBytes,
		AnalyticalUs: float64(a.PPComm) / float64(2*max(h.VPP, 1)*max(h.GA, 1))}
	if n > 0 {
		send.EventUs = sum / float64(n)
	}
	return append(rows, send)
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

// WriteCSV writes compare.csv: a "# incomplete: ..." line first for a stopped run, then a
// header and the rows.
func (c *Comparison) WriteCSV(w io.Writer) {
	if c.Event.Note != "" {
		io.WriteString(w, "# incomplete: "+c.Event.Note+"\n")
	}
	io.WriteString(w, "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links\n")
	for _, r := range c.Rows {
		ratio := ""
		if r.AnalyticalUs > 0 {
			ratio = strconv.FormatFloat(r.EventUs/r.AnalyticalUs, 'f', 3, 64)
		}
		bytesField := ""
		if r.Phase != "layer" {
			bytesField = strconv.FormatUint(r.Bytes, 10)
		}
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.Layer, r.Name, r.Phase, r.Op, r.Group, bytesField,
			strconv.FormatFloat(r.AnalyticalUs, 'f', 3, 64), strconv.FormatFloat(r.EventUs, 'f', 3, 64), ratio, r.Bottlenecks)
	}
}
