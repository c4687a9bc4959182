package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"go.uber.org/zap"

	"simd/configs/lex"
	"simd/engine"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads"
)

// runFlowFile is simd -flows FILE -n TOPO [-c SimAI.conf]: the flows of an ns-3/HPCC flow file
// over the fabric, without a workload, for network studies; it writes fct.txt (and pfc.txt,
// summary.json) as the event mode does.
func runFlowFile(o *options, log *zap.Logger, stdout, stderr io.Writer) error {
	if o.workload != "" {
		return badInputf("-flows and -w are alternatives: give one")
	}
	if o.topology == "" {
		return badInputf("-flows needs a topology (-n TOPO): the flow file names its nodes")
	}
	conf, err := loadConf(o, log)
	if err != nil {
		return err
	}
	f, err := os.Open(o.topology)
	if err != nil {
		return badInputf("-n: %v", err)
	}
	t, err := topo.Parse(f, o.topology)
	f.Close()
	if err != nil {
		return badInput(err)
	}
	ff, err := os.Open(o.flows)
	if err != nil {
		return badInputf("-flows: %v", err)
	}
	flows, err := workloads.ParseFlowFile(ff, o.flows)
	ff.Close()
	if err != nil {
		return badInput(err)
	}
	if err := checkFlowNodes(flows, t, o.flows, o.topology); err != nil {
		return badInput(err)
	}
	raw := make([]netmodel.RawFlow, len(flows))
	for i, fl := range flows {
		raw[i] = netmodel.RawFlow{Src: fl.Src, Dst: fl.Dst, Bytes: fl.Bytes, Sport: rawSport(i), DPort: fl.DPort, Start: fl.Start}
	}
	fab, err := netmodel.NewFabric(t)
	if err != nil {
		return badInputf("%s: %v", o.topology, err)
	}
	s := &session{o: o, log: log, stdout: stdout, conf: conf}
	out := s.eventOutputs()
	if err := out.check(); err != nil {
		return err
	}
	sched := engine.NewScheduler()
	pfc, err := out.open("PFC_OUTPUT_FILE", "pfc.txt")
	if err != nil {
		return err
	}
	defer pfc.abort()
	sim, pfcLog, err := newSimulator(&conf, o.conf, sched, fab, false, o.seed, o.completion, pfc)
	if err != nil {
		return err
	}
	fct, err := out.open("FCT_OUTPUT_FILE", "fct.txt")
	if err != nil {
		return err
	}
	defer fct.abort()
	var fctLog *netmodel.FCTLog
	if fct != nil {
		fctLog = netmodel.NewFCTLog(fct.f, fab, conf.PacketPayloadSize)
		if secondCore(o.threads) {
			fctLog.Concurrent()
			defer fctLog.Stop()
		}
		sim.Observe(fctLog)
	}
	mons, err := startMonitors(out, sim, &conf, o.conf, log)
	if err != nil {
		return err
	}
	defer mons.abort()
	var last engine.Time
	var arrived int
	sim.Observe(lastArrival{&last, &arrived})
	sim.StartRaw(raw)
	prog := newProgress(stderr, o.quiet, o.progressEvery, sched, "flows", func() (int, int) { return arrived, len(raw) })
	began := time.Now()
	guard := guardRun(sched, o.limits, prog)
	sched.Run()
	stopped := guard.finish()
	wall := time.Since(began)
	if stopped != nil {
		last = sched.Now()
	}
	if err := linkDownResult(&conf, o.conf, sim.Err(), last, log); err != nil {
		return err
	}
	var files []string
	if fct != nil {
		if err := fctLog.Flush(); err != nil {
			return err
		}
		p, err := fct.commit()
		if err != nil {
			return err
		}
		files = append(files, p)
	}
	if pfc != nil {
		p, err := commitPFC(pfc, pfcLog)
		if err != nil {
			return err
		}
		files = append(files, p)
	}
	paths, err := mons.commit()
	if err != nil {
		return err
	}
	files = append(files, paths...)
	r := &eventRun{res: &workloads.RunResult{End: last}, net: &collectiveNetwork{}, sim: sim, events: sched.Processed(), wall: wall, stopped: stopped}
	if stopped != nil {
		r.note = fmt.Sprintf("stopped by %s after %d events at %s us simulated; %d of %d flows arrived",
			stopped.reason, r.events, strconv.FormatFloat(last.Microseconds(), 'f', 3, 64), arrived, len(raw))
	}
	s.wname, s.cl.fabric = o.flows, o.topology
	s.layout.GPUs = t.NumGPUs()
	p, err := s.writeSummaryJSON(out, r, nil)
	if err != nil {
		return err
	}
	files = append(files, p)
	fmt.Fprintf(stdout, "simd flows: %s on %s: %d flows, the last arriving at %.3f us; %d events in %.2f s\n",
		o.flows, o.topology, len(raw), last.Microseconds(), sched.Processed(), wall.Seconds())
	for _, p := range files {
		fmt.Fprintf(stdout, "results: %s\n", p)
	}
	if stopped != nil {
		fmt.Fprintf(stdout, "  incomplete: %s\n", r.note)
	}
	return r.stoppedErr("fct.txt holds the flows that arrived; summary.json is marked incomplete")
}

// checkFlowNodes makes sure every flow of the flow file (named flowsName) starts and ends at a
// GPU or NVSwitch of topology t (named topoName): a node id beyond the topology, or a network
// switch, is refused with the flow's line and the field.
func checkFlowNodes(flows []workloads.TrafficFlow, t *topo.Topology, flowsName, topoName string) error {
	n := t.NumNodes()
	for _, fl := range flows {
		for _, end := range [2]struct {
			field string
			id    int32
		}{{"src", fl.Src}, {"dst", fl.Dst}} {
			switch {
			case int(end.id) >= n:
				return lex.Errorf(flowsName, fl.Line, end.field, "node %d is beyond the %d nodes of %s (ids 0 to %d)", end.id, n, topoName, n-1)
			case t.Kind(end.id) == topo.Switch:
				return lex.Errorf(flowsName, fl.Line, end.field, "node %d is a network switch of %s: a flow goes between GPUs or NVSwitches", end.id, topoName)
			}
		}
	}
	return nil
}

// lastArrival keeps the time the last flow arrived and counts the arrivals.
type lastArrival struct {
	t *engine.Time
	n *int
}

func (l lastArrival) FlowDone(r *netmodel.FlowRecord) {
	*l.t = max(*l.t, r.Arrived)
	*l.n++
}

// rawSport is the source port of a flow file's flow i: 40000 + i, as SimAI's ns-3 sends the
// flows of a FLOW_FILE with the raw-flow patch its reference runs use (16 bits: the port
// wraps after 25,535 flows). The port is an input of the ECMP hash, so the same file takes
// the same paths in both, and the fct.txt lines of both carry the same ports.
func rawSport(i int) uint16 { return uint16(40000 + i) }
