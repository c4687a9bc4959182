package sim

import (
	"context"

	"fmt"
	"go.uber.org/zap"
	"strconv"
	"time"

	"simd/configs"
	"simd/configs/lex"
	"simd/engine"
	"simd/netmodel"
	"simd/topo"
	"simd/workloads"
)

// FlowInputs are what a flow-file run reads: the flows of an ns-3/HPCC flow file, the topology
// that names their nodes and SimAI.conf.
type FlowInputs struct {
	Flows     []workloads.TrafficFlow
	FlowsName string // the flow file, for messages
	Topology  *topo.Topology
	// TopologyName is the topology's file, for messages.
	TopologyName string
	Conf         configs.SimAIConf
	ConfPath     string // "" for the shipped SimAI.conf
	Log          *zap.Logger
}

// RunFlows starts the flows at their times over the fabric, without a workload, in the network
// model SimAI.conf asks for, and runs until the last one has arrived (or ctx is done, or
// Options.MaxEvents is reached). Flow i leaves from source port RawSport(i). The result's End is
// the last arrival; Status.Done and Total count the flows arrived and given.
func RunFlows(ctx context.Context, in FlowInputs, opt EventOptions, att Attachments) (*Result, error) {
	if err := checkFlowNodes(in.Flows, in.Topology, in.FlowsName, in.TopologyName); err != nil {
		return nil, BadInput(err)
	}
	raw := make([]netmodel.RawFlow, len(in.Flows))
	for i, fl := range in.Flows {
		raw[i] = netmodel.RawFlow{Src: fl.Src, Dst: fl.Dst, Bytes: fl.Bytes, Sport: RawSport(i), DPort: fl.DPort, Start: fl.Start}
	}
	fab, err := netmodel.NewFabric(in.Topology)
	if err != nil {
		return nil, BadInputf("%s: %v", in.TopologyName, err)
	}
	log := orNop(in.Log)
	sched, sim, err := att.simulator(&in.Conf, in.ConfPath, fab, false, opt, true, log)
	if err != nil {
		return nil, err
	}
	var last engine.Time
	var arrived int
	sim.Observe(lastArrival{&last, &arrived})
	sim.StartRaw(raw)
	began := time.Now()
	flowsDone := newFlowsDone(sim.Progress, sim.ProgressCounted)
	g := watchRun(ctx, sched, opt.MaxEvents, att.Watch, func() Status {
		return flowsDone.status(Status{Events: sched.Processed(), Now: sched.Now(), Done: arrived, Total: len(raw), Started: true})
	})
	sched.Run()
	stopped := g.finish()
	wall := time.Since(began)
	if stopped != nil {
		last = sched.Now()
	}
	if err := linkDownResult(&in.Conf, in.ConfPath, sim.Err(), last, log); err != nil {
		return nil, err
	}
	r := &Result{Run: &workloads.RunResult{End: last}, Sim: sim, Events: sched.Processed(), Wall: wall, Stopped: stopped, End: last}
	if stopped != nil {
		r.Note = fmt.Sprintf("stopped by %s after %d events at %s us simulated; %d of %d flows arrived",
			stopped, r.Events, strconv.FormatFloat(last.Microseconds(), 'f', 3, 64), arrived, len(raw))
	}
	return r, nil
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

// RawSport is the source port of a flow file's flow i: 40000 + i, as SimAI's ns-3 sends the
// flows of a FLOW_FILE with the raw-flow patch its reference runs use (16 bits: the port
// wraps after 25,535 flows). The port is an input of the ECMP hash, so the same file takes
// the same paths in both, and the fct.txt lines of both carry the same ports.
func RawSport(i int) uint16 { return uint16(40000 + i) }
