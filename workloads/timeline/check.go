package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Check reads a trace file and returns the first way it breaks the rules of the trace-event
// format as this package writes it: a JSON object with a traceEvents array and a displayTimeUnit
// of "ns" or "ms"; every event a name, a phase and a pid; complete events ("X") a tid, a ts and
// a dur ≥ 0; counters ("C") a ts and numeric args; metadata ("M") a name among process_name,
// thread_name, process_sort_index and thread_sort_index with its argument; a name for every
// process and thread that has events; on every thread, complete events in the order of their
// ts, each either nested in or disjoint from the others. Tests of every writer use it.
func Check(data []byte) error {
	var f struct {
		TraceEvents     []map[string]json.RawMessage `json:"traceEvents"`
		DisplayTimeUnit string                       `json:"displayTimeUnit"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON object")
	}
	if f.TraceEvents == nil {
		return fmt.Errorf("no traceEvents array")
	}
	if f.DisplayTimeUnit != "ns" && f.DisplayTimeUnit != "ms" {
		return fmt.Errorf("displayTimeUnit %q: expected ns or ms", f.DisplayTimeUnit)
	}
	type key struct{ pid, tid int64 }
	procNamed := map[int64]bool{}
	threadNamed := map[key]bool{}
	used := map[key]bool{}
	open := map[key][]float64{} // per thread: ends of the open complete events
	lastTs := map[key]float64{}
	for i, e := range f.TraceEvents {
		where := func(format string, a ...any) error {
			return fmt.Errorf("event %d (%s): %s", i, e["name"], fmt.Sprintf(format, a...))
		}
		var name, ph string
		if err := str(e, "name", &name); err != nil {
			return where("%v", err)
		}
		if err := str(e, "ph", &ph); err != nil {
			return where("%v", err)
		}
		pid, err := num(e, "pid")
		if err != nil {
			return where("%v", err)
		}
		switch ph {
		case "M":
			tid, _ := num(e, "tid")
			var args map[string]json.RawMessage
			if err := json.Unmarshal(e["args"], &args); err != nil {
				return where("metadata without args")
			}
			switch name {
			case "process_name", "thread_name":
				var n string
				if err := str(args, "name", &n); err != nil || n == "" {
					return where("%s without a name", name)
				}
				if name == "process_name" {
					procNamed[int64(pid)] = true
				} else {
					threadNamed[key{int64(pid), int64(tid)}] = true
				}
			case "process_sort_index", "thread_sort_index":
				if _, err := num(args, "sort_index"); err != nil {
					return where("%s: %v", name, err)
				}
			default:
				return where("unknown metadata %q", name)
			}
		case "X":
			tid, err := num(e, "tid")
			if err != nil {
				return where("%v", err)
			}
			ts, err := num(e, "ts")
			if err != nil {
				return where("%v", err)
			}
			dur, err := num(e, "dur")
			if err != nil {
				return where("%v", err)
			}
			if dur < 0 {
				return where("dur %g < 0", dur)
			}
			k := key{int64(pid), int64(tid)}
			used[k] = true
			if last, ok := lastTs[k]; ok && ts < last {
				return where("ts %g before the previous event's %g on its thread", ts, last)
			}
			lastTs[k] = ts
			st := open[k]
			for len(st) > 0 && st[len(st)-1] <= ts+eps(ts) {
				st = st[:len(st)-1]
			}
			if len(st) > 0 && ts+dur > st[len(st)-1]+eps(ts+dur) {
				return where("[%g, %g] overlaps an enclosing event ending at %g without nesting in it", ts, ts+dur, st[len(st)-1])
			}
			open[k] = append(st, ts+dur)
		case "C":
			if _, err := num(e, "ts"); err != nil {
				return where("%v", err)
			}
			var args map[string]float64
			if err := json.Unmarshal(e["args"], &args); err != nil || len(args) == 0 {
				return where("a counter needs numeric args")
			}
			used[key{int64(pid), -1}] = true
		default:
			return where("phase %q: this writer writes only M, X and C", ph)
		}
	}
	for k := range used {
		if !procNamed[k.pid] {
			return fmt.Errorf("process %d has events but no process_name", k.pid)
		}
		if k.tid >= 0 && !threadNamed[k] {
			return fmt.Errorf("thread %d of process %d has events but no thread_name", k.tid, k.pid)
		}
	}
	return nil
}

// eps is the rounding of a time in µs printed with six decimals and read as a float64.
func eps(t float64) float64 { return float64(1e-9 * math.Max(1, math.Abs(t))) } // rounded apart: no fused multiply-add where it is added

func str(m map[string]json.RawMessage, k string, out *string) error {
	v, ok := m[k]
	if !ok {
		return fmt.Errorf("no %q", k)
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("%q is not a string", k)
	}
	return nil
}

func num(m map[string]json.RawMessage, k string) (float64, error) {
	v, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("no %q", k)
	}
	var x float64
	if err := json.Unmarshal(v, &x); err != nil {
		return 0, fmt.Errorf("%q is not a number", k)
	}
	return x, nil
}
