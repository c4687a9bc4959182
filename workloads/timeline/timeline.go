// Package timeline writes a simulated run as a Chrome trace: the trace-event JSON (its JSON
// Object Format) that ui.perfetto.dev and chrome://tracing open. It knows nothing of how the
// run was simulated: a recorder declares processes and rank tracks, adds spans and counters
// with simulated times, and WriteJSON lays them out.
//
// # The model
//
// A Trace holds processes (a job, or the network), each holding tracks. A track is a set of
// ranks that run the same spans: its spans are complete events ("ph":"X") with a start and an
// end in picoseconds (engine.Time), written in microseconds with six decimals (exact). Spans of
// one track may overlap (a non-blocking collective runs under the next compute): WriteJSON
// puts them on lanes, one Chrome thread each, so that on every lane spans are either nested or
// disjoint, as the format asks. Main spans (compute, waits) take the track's first lanes,
// communication spans (Comm) lanes of their own after them, where two that overlap never share
// a lane (one inside the other would read as its part).
//
// Ranks whose spans are the same collapse into one track: the recorder may give a track many
// ranks at once (every rank of a pipeline stage runs the stage's spans), or one track per rank,
// and WriteJSON merges the tracks of a process whose spans are identical, naming the result by
// its rank ranges ("ranks 0-7,16-23"). Trace.AllRanks undoes that: every rank gets its own
// threads, each with its track's spans (one per rank of 16,384 GPUs is a large file).
//
// Counters ("ph":"C") are series of values over time on a process: a link tier's maximum and
// 90th-percentile utilisation, a busy link's. Flows between ranks are never events of their
// own; a recorder sums them into a span's args.
//
// # Feeding it
//
// sim.Timeline records a SimAI workload run (both modes), several jobs or MoE dispatch layers.
// A run replayed from another input, such as a Chakra execution trace, feeds it the same way:
// one Process per job, one Track per rank (its ranks a list of one) or per group of ranks
// known to be alike, Span for each compute node as it runs, Comm for each
// communication node with its bytes and peers in args, and the link counters from the same link
// sampler; WriteJSON then collapses the ranks whose nodes ran identically.
//
// Everything is written in a fixed order from the spans' times and the order they were
// added, so the same run gives the same bytes.
package timeline

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"simd/engine"
)

// Arg is one named value of a span's or counter's args: a string, an integer or a float.
type Arg struct {
	Key   string
	Value any
}

// Trace is a timeline being recorded.
type Trace struct {
	// AllRanks keeps one thread per rank instead of collapsing alike ranks into one track.
	AllRanks bool
	// Meta is written as the file's "otherData": what was run (in order).
	Meta  []Arg
	procs []*Process
}

// New starts an empty trace.
func New() *Trace { return &Trace{} }

// Process is one process of the trace: a job, or the network's counters.
type Process struct {
	name     string
	pid      int
	tracks   []*Track
	counters []counter
	last     map[string][]Arg // the last values of each counter
}

// Track is one row of ranks of a process: the ranks that run its spans.
type Track struct {
	label string  // prefix of the thread names ("stage 1"), may be empty
	ranks []int32 // sorted
	spans []span
	order int
}

type span struct {
	name, cat  string
	start, end engine.Time
	comm       bool
	args       []Arg
	seq        int
}

type counter struct {
	name   string
	at     engine.Time
	values []Arg
	seq    int
}

// Process adds a process named name; processes are shown in the order they are added.
func (t *Trace) Process(name string) *Process {
	p := &Process{name: name, pid: len(t.procs) + 1}
	t.procs = append(t.procs, p)
	return p
}

// Track adds a track run by ranks (job-local rank numbers; none for a track of no rank, such as
// a network's), labelled label (may be empty). Tracks are shown in the order they are added.
func (p *Process) Track(label string, ranks []int32) *Track {
	r := slices.Clone(ranks)
	slices.Sort(r)
	tr := &Track{label: label, ranks: slices.Compact(r), order: len(p.tracks)}
	p.tracks = append(p.tracks, tr)
	return tr
}

// SetLabel relabels the track (before WriteJSON).
func (tr *Track) SetLabel(label string) { tr.label = label }

// Span adds a main span (compute, a wait) from start to end. An end before start is taken as
// start.
func (tr *Track) Span(name, cat string, start, end engine.Time, args ...Arg) {
	tr.add(name, cat, start, end, false, args)
}

// Comm adds a communication span from start to end, on the track's communication lanes.
func (tr *Track) Comm(name, cat string, start, end engine.Time, args ...Arg) {
	tr.add(name, cat, start, end, true, args)
}

func (tr *Track) add(name, cat string, start, end engine.Time, comm bool, args []Arg) {
	tr.spans = append(tr.spans, span{name: name, cat: cat, start: start, end: max(end, start), comm: comm, args: args, seq: len(tr.spans)})
}

// Len is the number of spans of the track.
func (tr *Track) Len() int { return len(tr.spans) }

// Counter sets the counter track name of the process to values (one series each) at time at.
// A counter holds its values until the next sample, so a sample equal to the last one of its
// name is left out.
func (p *Process) Counter(name string, at engine.Time, values ...Arg) {
	if p.last == nil {
		p.last = map[string][]Arg{}
	}
	if l, ok := p.last[name]; ok && slices.Equal(l, values) {
		return
	}
	p.last[name] = values
	p.counters = append(p.counters, counter{name: name, at: at, values: values, seq: len(p.counters)})
}

// Ranges names a sorted set of ranks by its ranges: "0-7,16-23".
func Ranges(ranks []int32) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ranks[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ranks[j])))
		}
		i = j + 1
	}
	return b.String()
}

// thread is one Chrome thread of the output: a lane of a track (or of a rank, with AllRanks).
type thread struct {
	tid   int
	name  string
	spans []span
}

// merged returns the process's tracks with the tracks of identical spans merged into the first
// of them (their ranks united), in the order of their first.
func (p *Process) merged() []*Track {
	var out []*Track
	byHash := map[uint64][]int{} // tracks of out by the hash of their spans
	for _, tr := range p.tracks {
		h := tr.hash()
		i := -1
		for _, k := range byHash[h] {
			if o := out[k]; o.label == tr.label && sameSpans(o.spans, tr.spans) {
				i = k
				break
			}
		}
		if i < 0 {
			c := *tr
			c.ranks = slices.Clone(tr.ranks)
			byHash[h] = append(byHash[h], len(out))
			out = append(out, &c)
			continue
		}
		r := append(out[i].ranks, tr.ranks...)
		slices.Sort(r)
		out[i].ranks = slices.Compact(r)
	}
	return out
}

// hash is a hash of the track's label and spans (names and times): tracks with the same
// spans have the same hash, so many per-rank tracks merge without comparing every pair.
func (tr *Track) hash() uint64 {
	h := fnv.New64a()
	var b [8]byte
	h.Write([]byte(tr.label))
	for _, s := range tr.spans {
		h.Write([]byte(s.name))
		binary.LittleEndian.PutUint64(b[:], uint64(s.start))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(s.end))
		h.Write(b[:])
	}
	return h.Sum64()
}

func sameSpans(a, b []span) bool {
	return slices.EqualFunc(a, b, func(x, y span) bool {
		return x.name == y.name && x.cat == y.cat && x.start == y.start && x.end == y.end && x.comm == y.comm &&
			slices.EqualFunc(x.args, y.args, func(u, v Arg) bool { return u.Key == v.Key && u.Value == v.Value })
	})
}

// lanes puts spans on lanes so that the spans of one lane are nested or disjoint (with nest
// false, disjoint: two collectives at once are not parent and child): in order of start (the
// longer first on a tie, so that a parent comes before its children), each on the first lane
// whose open spans it fits under or after.
func lanes(spans []span, nest bool) [][]span {
	s := slices.Clone(spans)
	slices.SortStableFunc(s, func(a, b span) int {
		if a.start != b.start {
			return cmp64(a.start, b.start)
		}
		if a.end != b.end {
			return cmp64(b.end, a.end)
		}
		return a.seq - b.seq
	})
	var out [][]span
	var open [][]engine.Time // per lane: the ends of its open spans, innermost last
	for _, sp := range s {
		placed := false
		for i := range out {
			st := open[i]
			for len(st) > 0 && st[len(st)-1] <= sp.start {
				st = st[:len(st)-1]
			}
			open[i] = st
			if len(st) == 0 || nest && sp.end <= st[len(st)-1] {
				out[i] = append(out[i], sp)
				open[i] = append(st, sp.end)
				placed = true
				break
			}
		}
		if !placed {
			out = append(out, []span{sp})
			open = append(open, []engine.Time{sp.end})
		}
	}
	return out
}

func cmp64(a, b engine.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// threads lays a process's tracks out as Chrome threads.
func (p *Process) threads(allRanks bool) []thread {
	tracks := p.merged()
	var out []thread
	add := func(name string, ls [][]span, what string) {
		for i, l := range ls {
			n := name
			if what != "" {
				n += " " + what
			}
			if i > 0 {
				n += " " + strconv.Itoa(i+1)
			}
			out = append(out, thread{tid: len(out) + 1, name: n, spans: l})
		}
	}
	for _, tr := range tracks {
		var main, comm []span
		for _, sp := range tr.spans {
			if sp.comm {
				comm = append(comm, sp)
			} else {
				main = append(main, sp)
			}
		}
		ml, cl := lanes(main, true), lanes(comm, false)
		if len(ml) == 0 {
			ml = [][]span{nil} // a track with no main span still shows its ranks
		}
		names := []string{trackName(tr.label, tr.ranks)}
		if allRanks && len(tr.ranks) > 1 {
			names = names[:0]
			for _, r := range tr.ranks {
				names = append(names, trackName(tr.label, []int32{r}))
			}
		}
		for _, n := range names {
			add(n, ml, "")
			add(n, cl, "comm")
		}
	}
	return out
}

// trackName is a track's thread name: its label and its ranks.
func trackName(label string, ranks []int32) string {
	var parts []string
	if label != "" {
		parts = append(parts, label)
	}
	switch len(ranks) {
	case 0:
	case 1:
		parts = append(parts, "rank "+strconv.Itoa(int(ranks[0])))
	default:
		parts = append(parts, "ranks "+Ranges(ranks))
	}
	return strings.Join(parts, " · ")
}

// Micros formats t, in picoseconds, in microseconds with up to six decimals, exactly.
func Micros(t engine.Time) string {
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(int64(t/engine.Microsecond), 10)
	if f := int64(t % engine.Microsecond); f != 0 {
		frac := strings.TrimRight(strconv.FormatInt(f+1_000_000, 10)[1:], "0")
		s += "." + frac
	}
	if neg {
		s = "-" + s
	}
	return s
}

// event is one line of traceEvents, kept for sorting.
type event struct {
	ts   engine.Time
	pid  int
	tid  int
	dur  engine.Time
	seq  int
	line []byte
}

// WriteJSON writes the trace in the JSON Object Format: {"traceEvents": [...],
// "displayTimeUnit": "ns", "otherData": {...}}, one event per line; the metadata events
// (process and thread names and sort orders) first, then the spans and counters by time.
func (t *Trace) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\"displayTimeUnit\":\"ns\",\"otherData\":")
	writeArgs(bw, t.Meta)
	bw.WriteString(",\n\"traceEvents\":[")
	first := true
	line := func(b []byte) {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.WriteByte('\n')
		bw.Write(b)
	}
	var evs []event
	var buf []byte
	for _, p := range t.procs {
		line(meta("process_name", p.pid, 0, "name", jsonString(p.name)))
		line(meta("process_sort_index", p.pid, 0, "sort_index", strconv.Itoa(p.pid)))
		for _, th := range p.threads(t.AllRanks) {
			line(meta("thread_name", p.pid, th.tid, "name", jsonString(th.name)))
			line(meta("thread_sort_index", p.pid, th.tid, "sort_index", strconv.Itoa(th.tid)))
			for _, sp := range th.spans {
				buf = buf[:0]
				buf = append(buf, `{"name":`...)
				buf = append(buf, jsonString(sp.name)...)
				buf = append(buf, `,"cat":`...)
				buf = append(buf, jsonString(sp.cat)...)
				buf = append(buf, `,"ph":"X","ts":`...)
				buf = append(buf, Micros(sp.start)...)
				buf = append(buf, `,"dur":`...)
				buf = append(buf, Micros(sp.end-sp.start)...)
				buf = append(buf, `,"pid":`...)
				buf = strconv.AppendInt(buf, int64(p.pid), 10)
				buf = append(buf, `,"tid":`...)
				buf = strconv.AppendInt(buf, int64(th.tid), 10)
				if len(sp.args) > 0 {
					buf = append(buf, `,"args":`...)
					buf = appendArgs(buf, sp.args)
				}
				buf = append(buf, '}')
				evs = append(evs, event{ts: sp.start, pid: p.pid, tid: th.tid, dur: sp.end - sp.start, seq: sp.seq, line: slices.Clone(buf)})
			}
		}
		for _, c := range p.counters {
			buf = buf[:0]
			buf = append(buf, `{"name":`...)
			buf = append(buf, jsonString(c.name)...)
			buf = append(buf, `,"ph":"C","ts":`...)
			buf = append(buf, Micros(c.at)...)
			buf = append(buf, `,"pid":`...)
			buf = strconv.AppendInt(buf, int64(p.pid), 10)
			buf = append(buf, `,"tid":0,"args":`...)
			buf = appendArgs(buf, c.values)
			buf = append(buf, '}')
			evs = append(evs, event{ts: c.at, pid: p.pid, tid: 0, seq: c.seq, line: slices.Clone(buf)})
		}
	}
	// By time; on a tie by process and thread, then the longer span first (a parent before
	// its children), then the order added.
	slices.SortStableFunc(evs, func(a, b event) int {
		switch {
		case a.ts != b.ts:
			return cmp64(a.ts, b.ts)
		case a.pid != b.pid:
			return a.pid - b.pid
		case a.tid != b.tid:
			return a.tid - b.tid
		case a.dur != b.dur:
			return cmp64(b.dur, a.dur)
		}
		return a.seq - b.seq
	})
	for _, e := range evs {
		line(e.line)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func meta(name string, pid, tid int, key, value string) []byte {
	return []byte(`{"name":"` + name + `","ph":"M","pid":` + strconv.Itoa(pid) + `,"tid":` + strconv.Itoa(tid) +
		`,"args":{"` + key + `":` + value + `}}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeArgs(w *bufio.Writer, args []Arg) { w.Write(appendArgs(nil, args)) }

// appendArgs appends args as a JSON object, keys in the order given.
func appendArgs(buf []byte, args []Arg) []byte {
	buf = append(buf, '{')
	for i, a := range args {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, jsonString(a.Key)...)
		buf = append(buf, ':')
		switch v := a.Value.(type) {
		case string:
			buf = append(buf, jsonString(v)...)
		case int:
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int64:
			buf = strconv.AppendInt(buf, v, 10)
		case uint64:
			buf = strconv.AppendUint(buf, v, 10)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0 // JSON has no NaN or infinity
			}
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		case bool:
			buf = strconv.AppendBool(buf, v)
		default:
			buf = append(buf, jsonString("?")...)
		}
	}
	return append(buf, '}')
}
