package workloads

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/engine"
)

// CostModel prices one collective for the analytical report: op on a group of the given kind
// with n ranks and the given size, in whole nanoseconds.
type CostModel interface {
	CollectiveNs(op ccl.Op, group ccl.GroupKind, n int, bytes uint64) (uint64, error)
}

// Overlap holds SimAI_analytical's overlap ratios (-dp_o, -ep_o, -tp_o, -pp_o): the share of a
// group's communication hidden behind compute. SimAI keeps them in single precision, and so do
// the sums they scale.
type Overlap struct {
	DP, EP, TP, PP float32
}

// AnalyticalOptions are the report's inputs besides the workload, the run and the cost model.
type AnalyticalOptions struct {
	Layout  ccl.Layout
	Overlap Overlap
	// PipelineGBps is the bandwidth pipeline-parallel activations cross between stages, in
	// SimAI's GB/s (GiB/s in its formulas). SimAI divides by the PP overlap ratio instead, a bug
	// that makes PP communication 0 at the default ratio 1 and infinite at 0.
	PipelineGBps float32
	// FileName fills the report's "File name" column: the result prefix after its last '/'.
	FileName string
}

// RunName is the run name SimAI_analytical writes in its EndToEnd.csv.
const RunName = "Analytical_test"

// EndToEndRow is one layer of the report. Times are whole nanoseconds.
type EndToEndRow struct {
	Layer                                string
	FwdCompute, WGCompute, IGCompute     uint64
	FwdExposed, WGExposed, IGExposed     uint64
	FwdComm, WGComm, IGComm              uint64
	FwdAlgBW, FwdBusBW, WGAlgBW, WGBusBW float32 // GB/s (GiB/s, as SimAI)
	IGAlgBW, IGBusBW                     float32
}

// EndToEndSummary is the report's first two lines; times in µs as SimAI sums them.
type EndToEndSummary struct {
	DPComm, DPEPComm, TPComm, EPComm float64
	PPComm                           uint64 // SimAI keeps the PP time as whole µs
	Bubble, Compute, Exposed, Total  float64
}

// AnalyticalReport is SimAI_analytical's EndToEnd.csv (§6.1).
type AnalyticalReport struct {
	FileName string
	Rows     []EndToEndRow
	Summary  EndToEndSummary
}

// scaleExposed multiplies a nanosecond count by (1 − ratio) the way SimAI does: the count and the
// product in single precision, truncated to whole nanoseconds (§5.6 rule 2).
func scaleExposed(ns uint64, ratio float32) uint64 {
	keep := float32(1) - ratio
	return f32ToU64(float32(float32(ns) * keep))
}

func f32ToU64(f float32) uint64 {
	if !(f >= 0) {
		return 0
	}
	if f >= 1<<63 {
		return math.MaxInt64
	}
	return uint64(f)
}

func us(ns uint64) float64 { return float64(ns) / 1000.0 }

// bandwidths are SimAI's Layer::compute_busbw: algbw = size / time in GB/s (GiB), busbw scaled by
// the collective's bus factor, both stored in single precision (§5.4).
func bandwidths(op ccl.Op, n int, bytes, ns uint64) (alg, bus float32) {
	a := float64(bytes) / (float64(ns) / 1000.0)
	a = a * 1000000
	a = a * (1.0 / (1 << 30))
	alg = float32(a)
	switch op {
	case ccl.OpAllReduce:
		b := float32(alg * 2)
		b = float32(b * float32(n-1))
		bus = float32(float64(b) / float64(n))
	case ccl.OpAllGather, ccl.OpReduceScatter, ccl.OpAllToAll:
		b := float32(alg * float32(n-1))
		bus = float32(float64(b) / float64(n))
	}
	return alg, bus
}

// AnalyticalEndToEnd builds SimAI_analytical's report (Layer::report, §5.4): every layer's three
// collectives priced by the cost model, exposed as a whole and scaled by the overlap ratios, the
// pipeline bubble and PP communication, the totals.
func AnalyticalEndToEnd(w *Workload, run *RunResult, cost CostModel, opt AnalyticalOptions) (*AnalyticalReport, error) {
	if len(run.Layers) != len(w.Layers) {
		return nil, fmt.Errorf("run has %d layers, workload %d", len(run.Layers), len(w.Layers))
	}
	rep := &AnalyticalReport{FileName: opt.FileName, Rows: make([]EndToEndRow, len(w.Layers))}
	s := &rep.Summary
	var bubble float64
	ov := opt.Overlap
	for i := range w.Layers {
		l := &w.Layers[i]
		var comm [3]uint64
		var alg, bus [3]float32
		for ph := Fwd; ph <= WG; ph++ {
			c := l.Phases[ph].Comm
			n := w.ReportGroupSize(opt.Layout, i, ph)
			b := w.IssuedBytes(i, ph)
			ns, err := cost.CollectiveNs(c.Op, c.Group, n, b)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: layer %q %s %s: %w", w.File, l.Line, l.Name, ph, c.Type, err)
			}
			comm[ph] = ns
			alg[ph], bus[ph] = bandwidths(c.Op, n, b, ns)
		}
		comp := [3]uint64{
			uint64(run.Layers[i][Fwd].Compute / engine.Nanosecond),
			uint64(run.Layers[i][IG].Compute / engine.Nanosecond),
			uint64(run.Layers[i][WG].Compute / engine.Nanosecond),
		}
		fwdExp, igExp, wgExp := comm[Fwd], comm[IG], comm[WG]
		if l.Name != "embedding_layer" {
			bubble += us(fwdExp + comp[Fwd] + comp[WG] + comp[IG] + igExp)
		}
		wgExp = scaleExposed(wgExp, ov.DP)
		if l.Phases[WG].Comm.Group == ccl.GroupDPEP {
			s.DPEPComm += us(wgExp)
		} else {
			s.DPComm += us(wgExp)
		}
		if l.Phases[Fwd].Comm.Group == ccl.GroupEP {
			fwdExp, igExp = scaleExposed(fwdExp, ov.EP), scaleExposed(igExp, ov.EP)
			s.EPComm += us(fwdExp + igExp)
		} else {
			fwdExp, igExp = scaleExposed(fwdExp, ov.TP), scaleExposed(igExp, ov.TP)
			s.TPComm += us(fwdExp + igExp)
		}
		s.Compute += us(comp[Fwd])
		s.Compute += us(comp[WG])
		s.Compute += us(comp[IG])
		s.Exposed += us(fwdExp)
		s.Exposed += us(wgExp)
		s.Exposed += us(igExp)
		rep.Rows[i] = EndToEndRow{
			Layer:      l.Name,
			FwdCompute: comp[Fwd], WGCompute: comp[WG], IGCompute: comp[IG],
			FwdExposed: fwdExp, WGExposed: wgExp, IGExposed: igExp,
			FwdComm: comm[Fwd], WGComm: comm[WG], IGComm: comm[IG],
			FwdAlgBW: alg[Fwd], FwdBusBW: bus[Fwd],
			WGAlgBW: alg[WG], WGBusBW: bus[WG],
			IGAlgBW: alg[IG], IGBusBW: bus[IG],
		}
	}
	h := w.Header
	pp, err := pipelineComm(h, opt.PipelineGBps, ov.PP)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.File, err)
	}
	s.PPComm = pp
	s.Bubble = float64(bubble * (float64(h.PP-1) / float64(h.GA*h.VPP)))
	s.Total = s.Compute + s.Exposed + s.Bubble + float64(s.PPComm)
	return rep, nil
}

// pipelineComm is the exposed pipeline-parallel communication in whole µs: 2·vpp·GA transfers of
// pp_comm bytes at the pipeline bandwidth, scaled by (1 − pp_o) in single precision.
func pipelineComm(h Header, gbps, ppo float32) (uint64, error) {
	if h.PP <= 1 || h.PPCommBytes == 0 || ppo >= 1 {
		return 0, nil
	}
	if !(gbps > 0) {
		return 0, fmt.Errorf("pipeline parallelism (pp %d, pp_comm %d bytes) needs a pipeline bandwidth; none is known", h.PP, h.PPCommBytes)
	}
	x := float64(h.PPCommBytes) * (1.0 / (1 << 30))
	x = x / float64(gbps)
	x = x * 1e9
	t := float64(2*h.VPP*h.GA) * x
	t = t / 1000.0
	if !(t < 1<<63) {
		return 0, fmt.Errorf("pipeline communication time overflows")
	}
	return scaleExposed(uint64(t), ppo), nil
}

// fmtTime prints a µs value as SimAI does: fixed, no decimals, C rounding (ties to even).
func fmtTime(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "NaN or Inf"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtBW prints a bandwidth with two decimals the way glibc's printf does, including its spelling
// of infinities and of the negative NaN x86 produces for 0/0 and ∞·0.
func fmtBW(v float32) string {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return "-nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// writeSummary writes the two summary lines both EndToEnd.csv layouts start with: the time
// breakdown in whole µs with each part's share of the total. groups are the µs printed for the
// exposed DP, DP_EP, TP and EP communication (their shares are those of the summary's values).
func writeSummary(bw *bufio.Writer, fileName string, s EndToEndSummary, groups [4]float64) {
	pct := func(v float64) string {
		return strconv.FormatFloat(v/s.Total*100, 'f', 2, 64) + "%"
	}
	col := func(v float64) string { return fmtTime(v) + " (" + pct(v) + ")" }
	group := func(printed, v float64) string { return fmtTime(printed) + " (" + pct(v) + ")" }
	bw.WriteString("File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n")
	bw.WriteString(strings.Join([]string{
		fileName, group(groups[0], s.DPComm), group(groups[1], s.DPEPComm), group(groups[2], s.TPComm), group(groups[3], s.EPComm), col(float64(s.PPComm)),
		col(s.Bubble), col(s.Compute), col(s.Exposed), fmtTime(s.Total),
	}, ", "))
	bw.WriteString("\n")
}

// WriteCSV writes the report in SimAI_analytical's EndToEnd.csv layout (§6.1).
func (r *AnalyticalReport) WriteCSV(out io.Writer) error {
	bw := bufio.NewWriter(out)
	s := r.Summary
	writeSummary(bw, r.FileName, s, [4]float64{s.DPComm, s.DPEPComm, s.TPComm, s.EPComm})
	bw.WriteString("layer_name," + RunName + ",fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw\n")
	for _, row := range r.Rows {
		fields := []string{
			row.Layer, RunName,
			fmtTime(us(row.FwdCompute)), fmtTime(us(row.WGCompute)), fmtTime(us(row.IGCompute)),
			fmtTime(us(row.FwdExposed)), fmtTime(us(row.WGExposed)), fmtTime(us(row.IGExposed)),
			fmtTime(us(row.FwdComm)), fmtBW(row.FwdAlgBW), fmtBW(row.FwdBusBW),
			fmtTime(us(row.WGComm)), fmtBW(row.WGAlgBW), fmtBW(row.WGBusBW),
			fmtTime(us(row.IGComm)), fmtBW(row.IGAlgBW), fmtBW(row.IGBusBW),
		}
		bw.WriteString(strings.Join(fields, ","))
		bw.WriteString("\n")
	}
	return bw.Flush()
}
