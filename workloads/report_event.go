package workloads

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/engine"
)

// EventRunName is the run name SimAI's ns-3 mode writes in its EndToEnd.csv.
const EventRunName = "test1"

// EventRow is one layer of the event-mode report: what the run measured, in µs.
type EventRow struct {
	Layer                            string
	FwdCompute, WGCompute, IGCompute float64
	FwdExposed, WGExposed, IGExposed float64
	FwdComm, WGComm, IGComm          float64
	FwdAlgBW, FwdBusBW               float32
	WGAlgBW, WGBusBW                 float32
	IGAlgBW, IGBusBW                 float32
}

// EventReport is SimAI's ns-3-mode EndToEnd.csv (simai-formats.md §6.2) for a simd event run.
type EventReport struct {
	FileName string
	Rows     []EventRow
	End      float64 // µs: when the pass finished ("workload finished at")
	Summary  EndToEndSummary
	// Incomplete, when not empty, says why the pass stopped before its end: WriteCSV then
	// writes it as a first line "# incomplete: ..." (a SimAI reader sees a malformed file rather
	// than numbers it could take for a whole iteration), Rows holds only the finished layers and
	// the totals are those up to the stop.
	Incomplete string
	// Pipelined says the pipeline was simulated (RunResult.Stages): the rows are the reported
	// stage's, and the bubble and PP communication were measured.
	Pipelined bool
}

// EventEndToEnd builds the event-mode report from a run with a network: per layer the compute,
// the exposed (waited) and total communication of each phase, and SimAI's bandwidth columns;
// totals as SimAI's ns-3 mode (exposed = end − compute); the exposed communication split by
// group (SimAI's ns-3 mode leaves those columns unset), and the bubble and PP communication by
// the analytical formulas with the given PP overlap.
//
// A phase's exposed time is the time the iteration waited for that phase's collectives (see
// PhaseStats), so it goes to the group those collectives run on: the group of each column's own
// comm type, fwd, ig and wg alike. (The analytical report instead puts the ig column in the fwd
// column's group and every wg column in DP or DP_EP, as SimAI_analytical does.) The groups
// then add up to the exposed total, and each to the sum of its columns in the layer rows.
//
// A pipelined run (RunResult.Stages) reports the stage that ended last: its layers, their
// exposed communication (exposed is then the stage's collectives only), the pipeline
// communication it waited for in whole µs (SimAI keeps whole µs there) and as the bubble the
// rest of the iteration — the time it waited for a neighbour that had not sent yet, the time
// after its own end until the last stage's, and the fraction of a µs the PP column drops — so
// that the four still add up to the iteration.
func EventEndToEnd(w *Workload, run *RunResult, opt AnalyticalOptions) (*EventReport, error) {
	rep := &EventReport{FileName: opt.FileName, Rows: make([]EventRow, 0, len(w.Layers)), End: run.End.Microseconds()}
	s := &rep.Summary
	var bubble float64
	var compute engine.Time                    // in exact picoseconds, as is
	var byGroup [ccl.GroupNone + 1]engine.Time // each group's exposed time
	for i := range w.Layers {
		l := &w.Layers[i]
		st := run.Layers[i]
		row := EventRow{Layer: l.Name}
		var comm, exp, comp [3]float64
		var alg, bus [3]float32
		for ph := Fwd; ph <= WG; ph++ {
			comp[ph] = st[ph].Compute.Microseconds()
			comm[ph] = st[ph].Comm.Microseconds()
			exp[ph] = st[ph].Exposed.Microseconds()
			c := l.Phases[ph].Comm
			ns := uint64(st[ph].Comm / engine.Nanosecond)
			alg[ph], bus[ph] = bandwidths(c.Op, w.ReportGroupSize(opt.Layout, i, ph), w.IssuedBytes(i, ph), ns)
		}
		if l.Name != "embedding_layer" {
			bubble += exp[Fwd] + comp[Fwd] + comp[WG] + comp[IG] + exp[IG]
		}
		for ph := Fwd; ph <= WG; ph++ {
			if st[ph].Exposed == 0 {
				continue
			}
			g := l.Phases[ph].Comm.Group
			switch g {
			case ccl.GroupTP, ccl.GroupDP, ccl.GroupDPEP, ccl.GroupEP:
				byGroup[g] += st[ph].Exposed
			default:
				return nil, fmt.Errorf("layer %d (%s) %s: %s of exposed time on a collective of group %s, which the report has no column for",
					i, l.Name, ph, st[ph].Exposed, g)
			}
		}
		compute += st[Fwd].Compute + st[WG].Compute + st[IG].Compute
		row.FwdCompute, row.WGCompute, row.IGCompute = comp[Fwd], comp[WG], comp[IG]
		row.FwdExposed, row.WGExposed, row.IGExposed = exp[Fwd], exp[WG], exp[IG]
		row.FwdComm, row.WGComm, row.IGComm = comm[Fwd], comm[WG], comm[IG]
		row.FwdAlgBW, row.FwdBusBW = alg[Fwd], bus[Fwd]
		row.WGAlgBW, row.WGBusBW = alg[WG], bus[WG]
		row.IGAlgBW, row.IGBusBW = alg[IG], bus[IG]
		if run.Done(i) {
			rep.Rows = append(rep.Rows, row)
		}
	}
	s.TPComm, s.DPComm = byGroup[ccl.GroupTP].Microseconds(), byGroup[ccl.GroupDP].Microseconds()
	s.DPEPComm, s.EPComm = byGroup[ccl.GroupDPEP].Microseconds(), byGroup[ccl.GroupEP].Microseconds()
	s.Compute = compute.Microseconds()
	s.Exposed = (run.End - compute).Microseconds()
	if run.Stages != nil {
		var exposed engine.Time
		for _, e := range byGroup {
			exposed += e
		}
		s.Exposed = exposed.Microseconds()
		s.PPComm = uint64(run.Stages[run.Reported].PPExposed.Microseconds())
		s.Bubble = (run.End - compute - exposed).Microseconds() - float64(s.PPComm)
		s.Total = s.Compute + s.Exposed + s.Bubble + float64(s.PPComm)
		rep.Pipelined = true
		return rep, nil
	}
	h := w.Header
	pp, err := pipelineComm(h, opt.PipelineGBps, opt.Overlap.PP)
	if err != nil {
		return nil, err
	}
	s.PPComm = pp
	s.Bubble = float64(bubble * (float64(h.PP-1) / float64(h.GA*h.VPP)))
	s.Total = s.Compute + s.Exposed + s.Bubble + float64(s.PPComm)
	return rep, nil
}

// WholeGroupsUs is the exposed communication by group as the event reports print it: whole µs,
// in the summary's column order DP, DP_EP, TP, EP. Rounding each group on its own, as the
// analytical report does, can leave the printed groups a µs or two off the total exposed time
// printed beside them; here each group is rounded down and the µs this leaves short of the
// printed total (rounded to nearest, ties to even) go one each to the groups with the largest
// fractions (ties: the first column), so that the printed groups add up to the printed total.
// Each stays within 1 µs of its exact value.
func (s *EndToEndSummary) WholeGroupsUs() [4]float64 {
	parts := [4]float64{s.DPComm, s.DPEPComm, s.TPComm, s.EPComm}
	return apportion(parts, s.Exposed)
}

// apportion rounds parts that add up to total into whole numbers that add up to total rounded
// (largest remainders). Parts that are not finite, or that do not add up to total within the
// rounding, are rounded one by one.
func apportion(parts [4]float64, total float64) [4]float64 {
	var out [4]float64
	sum := 0.0
	finite := !math.IsNaN(total) && !math.IsInf(total, 0)
	for i, v := range parts {
		finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
		out[i] = math.Floor(v)
		sum += out[i]
	}
	short := math.RoundToEven(total) - sum
	if !finite || short < 0 || short > float64(len(parts)) {
		for i, v := range parts {
			out[i] = math.RoundToEven(v)
		}
		return out
	}
	order := []int{0, 1, 2, 3}
	sort.SliceStable(order, func(a, b int) bool {
		return parts[order[a]]-out[order[a]] > parts[order[b]]-out[order[b]]
	})
	for _, i := range order[:int(short)] {
		out[i]++
	}
	return out
}

// fmtMicros prints a µs value as C++'s std::to_string does: six decimals.
func fmtMicros(v float64) string {
	if math.IsNaN(v) {
		return "-nan"
	}
	if math.IsInf(v, 0) {
		if v > 0 {
			return "inf"
		}
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

func fmtBW6(v float32) string { return fmtMicros(float64(v)) }

// WriteCSV writes the report in SimAI's ns-3-mode layout: the summary lines, a header, one
// row per layer ending with the time the pass finished, a SUM row and a totals row.
func (r *EventReport) WriteCSV(out io.Writer) error {
	bw := bufio.NewWriter(out)
	if r.Incomplete != "" {
		bw.WriteString("# incomplete: " + r.Incomplete + "\n")
	}
	writeSummary(bw, r.FileName, r.Summary, r.Summary.WholeGroupsUs())
	bw.WriteString("layer_name," + EventRunName + ",fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw,workload finished at\n")
	var sum EventRow
	end := fmtMicros(r.End)
	for _, row := range r.Rows {
		bw.WriteString(strings.Join([]string{
			row.Layer, EventRunName,
			fmtMicros(row.FwdCompute), fmtMicros(row.WGCompute), fmtMicros(row.IGCompute),
			fmtMicros(row.FwdExposed), fmtMicros(row.WGExposed), fmtMicros(row.IGExposed),
			fmtMicros(row.FwdComm), fmtBW6(row.FwdAlgBW), fmtBW6(row.FwdBusBW),
			fmtMicros(row.WGComm), fmtBW6(row.WGAlgBW), fmtBW6(row.WGBusBW),
			fmtMicros(row.IGComm), fmtBW6(row.IGAlgBW), fmtBW6(row.IGBusBW),
			end,
		}, ","))
		bw.WriteString("\n")
		sum.FwdCompute += row.FwdCompute
		sum.WGCompute += row.WGCompute
		sum.IGCompute += row.IGCompute
		sum.FwdExposed += row.FwdExposed
		sum.WGExposed += row.WGExposed
		sum.IGExposed += row.IGExposed
		sum.FwdComm += row.FwdComm
		sum.WGComm += row.WGComm
		sum.IGComm += row.IGComm
	}
	bw.WriteString(strings.Join([]string{
		"SUM", EventRunName,
		fmtMicros(sum.FwdCompute), fmtMicros(sum.WGCompute), fmtMicros(sum.IGCompute),
		fmtMicros(sum.FwdExposed), fmtMicros(sum.WGExposed), fmtMicros(sum.IGExposed),
		fmtMicros(sum.FwdComm), "NONE", "NONE", fmtMicros(sum.WGComm), "NONE", "NONE", fmtMicros(sum.IGComm), "NONE", "NONE",
	}, ","))
	bw.WriteString("\n")
	s := r.Summary
	if r.Pipelined {
		// SimAI's line: everything that is not compute is exposed, up to the end.
		bw.WriteString("total exposed comm," + fmtMicros(r.End-s.Compute) + ",total comp," + fmtMicros(s.Compute) + ",total time," + fmtMicros(r.End) + "\n")
		return bw.Flush()
	}
	bw.WriteString("total exposed comm," + fmtMicros(s.Exposed) + ",total comp," + fmtMicros(s.Compute) + ",total time," + fmtMicros(s.Exposed+s.Compute) + "\n")
	return bw.Flush()
}
