package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/configs/units"
	"simd/workloads"
	"simd/workloads/chakra"
)

// The memory guard: before an event run simulates anything it estimates the run's peak memory
// from closed forms (ccl/algo's Footprint: the flows each distinct collective's DAG stores and
// the flows it can have in flight, without generating it) and refuses, with the estimate, a run
// that would need more than the machine has (or -max-memory). An all-to-all over a
// 16,384-rank group has 268 M flows in flight at once: simd says so in a millisecond instead of
// being killed by the kernel an hour later.

// Bytes per flow: what a flow holds, measured with bench/run's all-to-alls, whose flows are all
// in flight at once, under a memory limit far below them (GOMEMLIMIT=64MiB: the collector runs
// back to back, so the peak is what the run holds and not its garbage). Peak resident memory
// of alltoall-1024 minus alltoall-256 over the difference of their flows (1,047,552 − 65,280):
// 440 − 52 MiB with congestion control off, 1,089 − 83 MiB with DCQCN, 414 and 1,074 B a flow
// (2026-12-02); the figures keep a tenth more. A run is held to its budget by the collector
// (cmd/simd makes the budget the runtime's memory limit), so what it needs is what it holds:
// without a limit the same runs peak at 582 and 1,437 MiB, the collector's room (earlier
// figures, 770 and 1,200 B, were such peaks). They cover the flow's DAG entry, its network
// state and the runner's records.
const (
	bytesPerFlowMaxMin = 460
	bytesPerFlowCC     = 1200
	// bytesPerStoredFlow is a flow kept by a generated DAG that is not running: its ccl.Flow
	// record and its parent and child ids.
	bytesPerStoredFlow = 64
	// bytesBase is the runtime, the fabric and its router (the 128-GPU ring all-reduce of
	// bench/run peaks at 11 MiB), and bytesPerLink what each link adds (the 16,384-GPU fabric).
	bytesBase    = 16 << 20
	bytesPerLink = 400
)

// memoryEstimate is an event run's estimated peak memory and what dominates it.
type memoryEstimate struct {
	Bytes int64
	What  string // the largest part, in words
	// Flows is the number of flows of the whole iteration, every collective counted each time
	// it runs (the progress report's yardstick); 0 if a count overflowed.
	Flows int64
}

// estimateMemory estimates the peak memory of running w on the fabric: every distinct
// collective's plans stay generated for the run (they are shared by every collective like
// them), and the largest collective's flows in flight at once.
//
// With qps QPs per connection every flow in flight may be that many flows of the network (flows
// inside a server are not split, so this bounds the cost from above).
func (s *Simulation) estimateMemory(sel *algo.Selector, links, totalGPUs int, cc bool, chunks, qps int) (memoryEstimate, error) {
	perFlow := int64(bytesPerFlowMaxMin)
	if cc {
		perFlow = bytesPerFlowCC
	}
	perFlow *= int64(max(qps, 1))
	type key struct {
		op    ccl.Op
		group ccl.GroupKind
		bytes uint64
	}
	seen := map[key]int64{} // a distinct collective's flows, all groups together
	var stored, widest, flows int64
	var widestWhat string
	flowsOK := true
	issues, sends, stages, err := s.issueCounts()
	if err != nil {
		return memoryEstimate{}, err
	}
	// count adds n issues of a collective whose groups, every stage's together, have f flows:
	// a pipeline stage issues its own stage's groups, a 1/stages part.
	count := func(f int64, n int) {
		if n == 0 {
			return
		}
		sum, ok1 := units.Product(f/int64(stages), int64(n))
		total, ok2 := units.Sum(flows, sum)
		flows, flowsOK = total, flowsOK && ok1 && ok2
	}
	for i := range s.in.Workload.Layers {
		for ph := workloads.Fwd; ph <= workloads.WG; ph++ {
			c := s.in.Workload.Collective(s.layout, i, ph)
			k := key{c.Op, c.Group, c.Bytes}
			if c.Op == ccl.OpNone || c.Group == ccl.GroupNone || c.GroupSize <= 1 {
				continue
			}
			n := issues[[2]int{i, int(ph)}]
			if f, ok := seen[k]; ok {
				count(f, n)
				continue
			}
			fp, groups, choice, err := sel.Footprint(s.layout, totalGPUs, c.Op, c.Group, int64(c.Bytes), chunks)
			if err != nil {
				return memoryEstimate{}, err
			}
			all, err := fp.Scaled(groups)
			seen[k] = all.Flows
			flowsOK = flowsOK && err == nil
			count(all.Flows, n)
			overflow := func() (memoryEstimate, error) {
				return memoryEstimate{Bytes: math.MaxInt64, What: fmt.Sprintf("%s %s on %d %s groups of %d ranks: more flows than an int64 counts", choice.Algorithm, c.Op, groups, c.Group, c.GroupSize)}, nil
			}
			var ok bool
			if stored, ok = units.Sum(stored, all.Stored); err != nil || !ok {
				return overflow()
			}
			if all.Width > widest {
				widest = all.Width
				widestWhat = fmt.Sprintf("%s %s of %s on %d %s groups of %d ranks: %d flows in flight at ~%d B each", choice.Algorithm, c.Op, units.FormatBytes(int64(c.Bytes)), groups, c.Group, c.GroupSize, widest, perFlow)
			}
		}
	}
	// A pipeline send is one flow from every rank of a stage (the job's ranks, not the
	// fabric's GPUs) to its peer in the next.
	count(int64(s.layout.GPUs), sends)
	est := memoryTotal(links, stored, widest, perFlow, widestWhat)
	if flowsOK && est.Bytes != math.MaxInt64 {
		est.Flows = flows
	}
	return est, nil
}

// issueCounts is how many times the iteration issues each layer's collective, by (layer,
// phase), over every pipeline stage; the pipeline sends with bytes to move; and the stages (1
// without a simulated pipeline). Without a pipeline the pass is the workload's Plan; with one,
// every stage's StagePlan, where a micro-batch's layers run ga times.
func (s *Simulation) issueCounts() (issues map[[2]int]int, sends, stages int, err error) {
	w := s.in.Workload
	issues = map[[2]int]int{}
	add := func(plan []workloads.PlanStep) {
		for _, st := range plan {
			switch st.Kind {
			case workloads.StepIssue:
				issues[[2]int{int(st.Layer), int(st.Phase)}]++
			case workloads.StepSend:
				if w.Header.PPCommBytes > 0 {
					sends++
				}
			}
		}
	}
	if !w.Pipelined(s.layout) {
		add(w.Plan())
		return issues, 0, 1, nil
	}
	pl, err := w.PipelineLayers()
	if err != nil {
		return nil, 0, 0, BadInput(err)
	}
	for stage := range s.layout.PP {
		add(w.StagePlan(pl, s.layout.PP, stage))
	}
	return issues, sends, s.layout.PP, nil
}

// memoryTotal is the estimate of a run whose plans store stored flows and whose widest
// collective has widest flows in flight at perFlow bytes each (described by what), on a fabric
// of links links.
func memoryTotal(links int, stored, widest, perFlow int64, what string) memoryEstimate {
	plans, ok1 := units.Product(stored, bytesPerStoredFlow)
	flight, ok2 := units.Product(widest, perFlow)
	base, ok3 := units.Product(int64(links), bytesPerLink)
	total, ok4 := units.Sum(bytesBase, base, plans, flight)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return memoryEstimate{Bytes: math.MaxInt64, What: "more bytes than an int64 counts"}
	}
	est := memoryEstimate{Bytes: total, What: what}
	if plans > flight {
		est.What = fmt.Sprintf("%d flows of generated collective plans at ~%d B each", stored, bytesPerStoredFlow)
	}
	return est
}

// estimateTraceMemory estimates a Chakra trace's event run as estimateMemory does a
// workload's: every distinct collective's plan stays generated for the run, and the one with
// the most flows in flight at once sets the flight (the trace's sends are single flows).
func estimateTraceMemory(t *chakra.Trace, sel *algo.Selector, gps, totalGPUs, links int, cc bool, p algo.Params, qps int) (memoryEstimate, error) {
	perFlow := int64(bytesPerFlowMaxMin)
	if cc {
		perFlow = bytesPerFlowCC
	}
	perFlow *= int64(max(qps, 1))
	var stored, widest int64
	var what string
	var err error
	t.Collectives(func(c chakra.Comm) {
		if err != nil {
			return
		}
		req := ccl.Request{Op: c.Op, Ranks: c.Ranks, GPUsPerServer: gps, TotalGPUs: totalGPUs, Bytes: c.Bytes, Truncate: sel.Truncates()}
		var choice algo.Choice
		if choice, err = sel.Choose(c.Op, groupKind(&req), &req); err != nil {
			return
		}
		var fp algo.Footprint
		if fp, err = algo.FootprintOf(choice.Algorithm, req, p); err != nil {
			return
		}
		var ok bool
		if stored, ok = units.Sum(stored, fp.Stored); !ok {
			stored = math.MaxInt64
		}
		if fp.Width > widest {
			widest = fp.Width
			what = fmt.Sprintf("%s %s of %s on %d ranks: %d flows in flight at ~%d B each", choice.Algorithm, c.Op, units.FormatBytes(c.Bytes), len(c.Ranks), widest, perFlow)
		}
	})
	if err != nil {
		return memoryEstimate{}, err
	}
	return memoryTotal(links, stored, widest, perFlow, what), nil
}

// checkMemory refuses a run whose estimate exceeds the limit: maxMemory (-max-memory), or,
// when it is 0, the memory available to simd.
func checkMemory(est memoryEstimate, maxMemory int64) error {
	limit, source := maxMemory, "-max-memory"
	if limit == 0 {
		var ok bool
		if limit, source, ok = AvailableMemory(); !ok {
			return nil // unknown (not Linux): no guard
		}
	}
	if est.Bytes <= limit {
		return nil
	}
	return BadInputf("the run would need about %s of memory (%s), more than the %s %s allows; a smaller group or -max-memory BYTES (at your own risk) changes that",
		units.FormatBytes(est.Bytes), est.What, units.FormatBytes(limit), source)
}

// AvailableMemory is what the machine can give simd: /proc/meminfo's MemAvailable, or the
// cgroup's limit minus its usage if lower (a container's limit is what the kernel enforces),
// and which of the two it is; ok is false where neither can be read (not Linux).
func AvailableMemory() (int64, string, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, "", false
	}
	var avail int64 = -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					avail = kb << 10
				}
			}
		}
	}
	if avail < 0 {
		return 0, "", false
	}
	source := "memory available (MemAvailable)"
	for _, c := range []struct{ limit, usage string }{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		lim, ok1 := readInt(c.limit)
		use, ok2 := readInt(c.usage)
		if ok1 && ok2 && lim-use < avail {
			avail, source = max(lim-use, 0), "memory left under the cgroup's limit"
		}
	}
	return avail, source, true
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max" fails: no limit
	return v, err == nil
}
