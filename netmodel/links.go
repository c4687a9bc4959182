package netmodel

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"

	"simd/engine"
	"simd/topo/route"
)

// This file holds the link sampler: what every directed link carried over the whole run, in
// time bins, read from the network model itself (not from SimAI's BW_MON monitor, which needs
// congestion control and a MON_START..MON_END window), for both models. It reads the links
// between events through engine.Scheduler.AtAdvance, so it adds no event and changes nothing a
// run computes: a run gives the same flows, times and counters with it as without.
//
// Bins. The run's time from 0 is cut into bins of one width, starting at
// LinkSamplerOptions.Width; whenever the run reaches the end of the last of MaxBins bins,
// adjacent pairs are merged and the width doubles, so a run of any length ends with at most
// MaxBins bins over its whole duration, the last one cut at the run's end. The sampler reads
// every link once per bin boundary the network crosses with flows in flight (boundaries crossed
// while it is idle cost nothing), so its cost is about MaxBins·(1 + the number of doublings)
// passes over the links, each O(links + flows on them) with the ideal model and O(links)
// with congestion control, and nothing per event. Busy time counts the bins in which a link
// sent anything, and the peak is the largest utilisation over one bin, both at the width of
// the moment (finer than the final bins), so they are exact to one bin.

// minBytes is the least a link must send in a bin to count as busy in it: far below a byte,
// far above the rounding of the models' byte counts.
const minBytes = 1e-3

// LinkSamplerOptions set the sampler's bins; the zero value is 1 µs and 256 bins.
type LinkSamplerOptions struct {
	Width   engine.Time // the first bins' width (default 1 µs)
	MaxBins int         // bins kept at most, even (default 256)
}

// LinkSampler records the bytes each directed link sends, per time bin; Simulator.SampleLinks
// starts one.
type LinkSampler struct {
	m     *Simulator
	opt   LinkSamplerOptions
	read  func(l int32, t engine.Time) float64
	max   int
	width engine.Time
	cur   int         // the bin the next boundary closes
	at    engine.Time // the time of the last read
	last  []float64   // per link: bytes sent by at
	bins  [][]float32 // per link: bytes per bin; nil until the link sends something
	busy  []engine.Time
	peak  []float64 // per link: the largest utilisation over one read interval
	end   engine.Time
	done  bool
	// quiet says the last read found the network idle, with quietFlows flows started by
	// then: until another starts, nothing moves.
	quiet      bool
	quietFlows uint64
}

// SampleLinks starts a link sampler on the simulator's scheduler (it uses its AtAdvance). It
// must be called before the run. A second call with the same options returns the sampler
// already started, so two observers (links.csv, a timeline) can read one.
func (m *Simulator) SampleLinks(opt LinkSamplerOptions) (*LinkSampler, error) {
	if opt.Width == 0 {
		opt.Width = engine.Microsecond
	}
	if opt.MaxBins == 0 {
		opt.MaxBins = 256
	}
	if opt.Width < 0 || opt.MaxBins < 2 || opt.MaxBins%2 != 0 {
		return nil, errors.New("netmodel: the link sampler needs a positive width and an even number of bins, at least 2")
	}
	if ls := m.sampler; ls != nil {
		if ls.opt != opt {
			return nil, errors.New("netmodel: a link sampler with other bins is already started")
		}
		return ls, nil
	}
	links := m.fab.Graph.NumDirLinks()
	ls := &LinkSampler{m: m, opt: opt, max: opt.MaxBins, width: opt.Width, at: m.s.Now(),
		last: make([]float64, links), bins: make([][]float32, links), busy: make([]engine.Time, links),
		peak: make([]float64, links)}
	if m.ideal != nil {
		ls.read = m.ideal.LinkBytesAt
	} else {
		ls.read = m.ccnet.LinkBytesAt
	}
	for l := range ls.last {
		ls.last[l] = ls.read(int32(l), ls.at)
	}
	for ls.boundary() <= ls.at {
		ls.step()
	}
	m.s.AtAdvance(ls.boundary(), ls.advance)
	m.sampler = ls
	return ls, nil
}

// boundary is the end of the current bin.
func (ls *LinkSampler) boundary() engine.Time { return engine.Time(ls.cur+1) * ls.width }

// idle says no byte moves until the next event.
func (ls *LinkSampler) idle() bool {
	if n := ls.m.ideal; n != nil {
		return n.Active() == 0
	}
	st := ls.m.ccnet.Stats()
	return st.Started == st.Arrived
}

// advance reads the links at every bin boundary up to next (engine's AtAdvance: nothing
// changes between Now and next).
func (ls *LinkSampler) advance(next engine.Time) {
	idle := ls.idle()
	for b := ls.boundary(); b <= next; b = ls.boundary() {
		// Idle, the links hold still: one read at the first boundary takes in what they
		// sent before, and the next ones have nothing to add until a flow starts.
		if !idle || !ls.quiet || ls.m.flows != ls.quietFlows {
			ls.sample(b)
		}
		ls.quiet, ls.quietFlows = idle, ls.m.flows
		ls.at = b
		ls.step()
	}
	ls.m.s.AtAdvance(ls.boundary(), ls.advance)
}

// sample adds what every link sent from the last read to t to the current bin.
func (ls *LinkSampler) sample(t engine.Time) {
	dt := t - ls.at
	for l := range ls.last {
		v := ls.read(int32(l), t)
		d := v - ls.last[l]
		if !(d > minBytes) {
			continue // rounding noise of a link that sent nothing is not busy time
		}
		ls.last[l] = v
		if ls.bins[l] == nil {
			ls.bins[l] = make([]float32, ls.max)
		}
		ls.bins[l][ls.cur] += float32(d)
		ls.busy[l] += dt
		ls.peak[l] = max(ls.peak[l], util(d, ls.m.fab.Graph.Rate(int32(l)), dt))
	}
}

// step moves to the next bin, merging pairs when the last one is full.
func (ls *LinkSampler) step() {
	ls.cur++
	if ls.cur < ls.max {
		return
	}
	half := ls.max / 2
	for _, b := range ls.bins {
		if b == nil {
			continue
		}
		for i := range half {
			b[i] = b[2*i] + b[2*i+1]
		}
		clear(b[half:])
	}
	ls.cur = half
	ls.width *= 2
}

// Finish reads the links at the scheduler's time, the run's end, closing the last bin there,
// and stops sampling. Call it once the run is over; the results below are read after it.
func (ls *LinkSampler) Finish() {
	if ls.done {
		return
	}
	ls.done = true
	ls.m.s.AtAdvance(0, nil)
	end := ls.m.s.Now()
	if end > ls.at {
		ls.sample(end)
		ls.at = end
	}
	ls.end = end
}

// Bins returns the width of the bins and their number: bin i covers [i·width, (i+1)·width),
// the last one cut at End.
func (ls *LinkSampler) Bins() (width engine.Time, n int) {
	n = ls.cur
	if ls.end > engine.Time(ls.cur)*ls.width {
		n++
	}
	return ls.width, n
}

// End is the time sampling stopped at (Finish).
func (ls *LinkSampler) End() engine.Time { return ls.end }

// Bytes is what directed link l sent up to End.
func (ls *LinkSampler) Bytes(l int32) float64 { return ls.last[l] }

// BinBytes is what directed link l sent in each bin (Bins), nil if it sent nothing.
func (ls *LinkSampler) BinBytes(l int32) []float32 {
	if ls.bins[l] == nil {
		return nil
	}
	_, n := ls.Bins()
	return ls.bins[l][:n]
}

// Busy is the time directed link l sent something, counted in whole bins of the width of the
// moment.
func (ls *LinkSampler) Busy(l int32) engine.Time { return ls.busy[l] }

// binSpan is bin i's start and end.
func (ls *LinkSampler) binSpan(i int) (a, b engine.Time) {
	a = engine.Time(i) * ls.width
	return a, min(a+ls.width, ls.end)
}

// LinkStat is what links.csv says of one directed link.
type LinkStat struct {
	Link     int32
	From, To int32 // nodes
	Class    route.LinkClass
	Name     string
	Rate     float64 // bits/s
	Bytes    float64
	Busy     engine.Time
	// MeanUtil is the link's bytes over what it could have sent in the whole run, BusyUtil
	// over its busy time, PeakUtil the largest over one read interval (the bin width of the
	// moment, finer than the final bins): fractions of its rate.
	MeanUtil, BusyUtil, PeakUtil float64
}

// Stats returns the links that sent something, by class, then link.
func (ls *LinkSampler) Stats() []LinkStat {
	g := ls.m.fab.Graph
	names := g.Names()
	var out []LinkStat
	for l := range int32(len(ls.last)) {
		if ls.bins[l] == nil {
			continue
		}
		s := LinkStat{Link: l, From: g.From(l), To: g.To(l), Class: names.Class(l), Name: names.Name(l), Rate: g.Rate(l),
			Bytes: ls.Bytes(l), Busy: ls.busy[l]}
		s.MeanUtil = util(s.Bytes, s.Rate, ls.end)
		s.BusyUtil = util(s.Bytes, s.Rate, s.Busy)
		s.PeakUtil = ls.peak[l]
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b LinkStat) int { return int(a.Class) - int(b.Class) })
	return out
}

// util is bytes over what rate sends in d, 0 for an empty span.
func util(bytes, rate float64, d engine.Time) float64 {
	if d <= 0 || rate <= 0 {
		return 0
	}
	return bytes * 8 / (rate * d.Seconds())
}

// ClassBin is link_classes.csv's row of one class in one bin: over the links of the class that
// sent something in the run, the mean, median, 90th percentile and largest utilisation
// (fractions of each link's rate).
type ClassBin struct {
	Start, End          engine.Time
	Class               route.LinkClass
	Links               int
	Mean, P50, P90, Max float64
}

// ClassBins returns the rows of link_classes.csv: per bin, per class with links that sent
// something, in class order.
func (ls *LinkSampler) ClassBins() []ClassBin {
	g := ls.m.fab.Graph
	names := g.Names()
	var by [route.NumLinkClasses][]int32
	for l := range int32(len(ls.last)) {
		if ls.bins[l] != nil {
			c := names.Class(l)
			by[c] = append(by[c], l)
		}
	}
	_, n := ls.Bins()
	var out []ClassBin
	var u []float64
	for i := range n {
		a, b := ls.binSpan(i)
		for c, links := range by {
			if len(links) == 0 {
				continue
			}
			u = u[:0]
			sum := 0.0
			for _, l := range links {
				x := util(float64(ls.bins[l][i]), g.Rate(l), b-a)
				u = append(u, x)
				sum += x
			}
			slices.Sort(u)
			out = append(out, ClassBin{Start: a, End: b, Class: route.LinkClass(c), Links: len(links),
				Mean: sum / float64(len(u)), P50: rank(u, 0.5), P90: rank(u, 0.9), Max: u[len(u)-1]})
		}
	}
	return out
}

// rank is the nearest-rank percentile p of sorted v: the smallest value with at least p of
// them at or below it.
func rank(v []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(v)))) - 1
	return v[max(k, 0)]
}

// WriteLinksCSV writes links.csv (docs/formats.md): a header, then one row per directed link
// that sent something, by class then link.
func (ls *LinkSampler) WriteLinksCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"link", "from", "to", "class", "name", "capacity_gbps", "bytes", "busy_us", "mean_util_pct", "busy_util_pct", "peak_util_pct"})
	for _, s := range ls.Stats() {
		cw.Write([]string{itoa(int64(s.Link)), itoa(int64(s.From)), itoa(int64(s.To)), s.Class.String(), s.Name,
			strconv.FormatFloat(s.Rate/1e9, 'g', -1, 64), strconv.FormatFloat(math.Round(s.Bytes), 'f', 0, 64),
			us(s.Busy), pct(s.MeanUtil), pct(s.BusyUtil), pct(s.PeakUtil)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteClassesCSV writes link_classes.csv (docs/formats.md): a header, then ClassBins.
func (ls *LinkSampler) WriteClassesCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"start_us", "end_us", "class", "links", "mean_util_pct", "p50_util_pct", "p90_util_pct", "max_util_pct"})
	for _, r := range ls.ClassBins() {
		cw.Write([]string{us(r.Start), us(r.End), r.Class.String(), itoa(int64(r.Links)), pct(r.Mean), pct(r.P50), pct(r.P90), pct(r.Max)})
	}
	cw.Flush()
	return cw.Error()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// us formats a time in µs with 3 decimals (ns).
func us(t engine.Time) string { return strconv.FormatFloat(t.Microseconds(), 'f', 3, 64) }

// pct formats a fraction as a percentage with 3 decimals.
func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 3, 64) }
