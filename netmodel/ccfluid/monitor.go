package ccfluid

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"simd/engine"
	"simd/topo"
)

// This file holds the monitors of SimAI.conf (QLEN_MON_FILE, BW_MON_FILE, RATE_MON_FILE,
// CNP_MON_FILE): samplers that read the network at fixed periods — switch queues, what every
// port sent, each flow's congestion-control rate and CNP count — and report what changed.
// SimAI's ns-3 defines them but never starts them; here they run on events of the network's own
// scheduler, only while the network carries flows, and read the model without changing it (a
// run with monitors gives the same results as one without).

// Monitor configures the network's samplers (SimAI.conf's MON_* keys). A sampler whose
// observer is nil is off; with all of them off the network never sees a sampling event.
//
// A sampler samples at Start + k·interval, for every k ≥ 0 with Start ≤ t < End (SimAI's
// MON_START, MON_END), but only while the network has flows: the sample that finds no flow in
// flight (after reporting what changed up to then) is the last one until the next flow starts,
// which resumes sampling at the next point of the grid. Nothing changes while no flow is in
// flight, so the rows are the same as if it had sampled all along, and a run ends when its last
// flow does, not at End.
type Monitor struct {
	Start, End engine.Time

	// QlenInterval is the queue sampler's period (QLEN_MON_INTERVAL). Qlen gets, for every
	// egress port of a switch or NVSwitch, its backlog whenever it changed since the port's
	// last report (the first report of a port is its first non-zero backlog).
	QlenInterval engine.Time
	Qlen         QlenObserver

	// BWInterval is the throughput sampler's period (BW_MON_INTERVAL). BW gets, for every port
	// of every node that sent something since the previous sample, the bytes it sent over the
	// period, as Gbit/s: Δbytes·8/interval. Ports that sent nothing get no report, as in SimAI.
	// A sample at Start reports nothing: it sets the reference the first period is measured
	// from.
	BWInterval engine.Time
	BW         BWObserver

	// QPInterval is the flow samplers' period (QP_MON_INTERVAL). Rate gets every flow in
	// flight whose congestion-control rate changed since its last report (the first report is
	// its line rate); CNP gets every flow whose count of CNPs received changed since its last
	// report (the count is cumulative over the flow, starting at 0).
	QPInterval engine.Time
	Rate       RateObserver
	CNP        CNPObserver
}

// QlenObserver receives the queue sampler's reports: at time at, directed link link, the egress
// port ifindex (its ns-3 device index) of switch node, holds bytes (rounded to whole bytes).
type QlenObserver interface {
	QueueLength(at engine.Time, link, node int32, ifindex int, bytes int64)
}

// BWObserver receives the throughput sampler's reports: over the period ending at at, port
// ifindex of node (directed link link) sent at gbps Gbit/s on average.
type BWObserver interface {
	Bandwidth(at engine.Time, link, node int32, ifindex int, gbps float64)
}

// RateObserver receives the rate sampler's reports: at time at, flow f's congestion-control
// rate is bps bit/s (rounded to a whole bit/s).
type RateObserver interface {
	FlowRate(at engine.Time, f FlowID, bps int64)
}

// CNPObserver receives the CNP sampler's reports: by time at, flow f's sender has received cnps
// CNPs.
type CNPObserver interface {
	FlowCNPs(at engine.Time, f FlowID, cnps int64)
}

// Samplers (event targets).
const (
	sampQlen int32 = iota
	sampBW
	sampQP
	numSamplers
)

// monitor is the sampling state of a network.
type monitor struct {
	n     *Network
	cfg   Monitor
	h     engine.HandlerID
	every [numSamplers]engine.Time // 0: off
	awake [numSamplers]bool        // its next sample is scheduled

	qports []monPort // egress ports of switches and NVSwitches, by node then ifindex
	qlast  []int64   // per qports entry: the backlog last reported
	bports []monPort // every port, by node then ifindex
	blast  []int64   // per bports entry: the bytes it had sent at the last sample

	fgen  []uint32 // per flow slot: the generation the values below belong to
	frate []int64  // the rate last reported
	fcnp  []int64  // the CNP count last reported
}

// monPort is a directed link and its sending port.
type monPort struct {
	link, node, ifindex int32
}

// Monitor starts the samplers m configures. It must be called before the first flow starts, at
// most once. Each sampler that is on needs a positive interval.
func (n *Network) Monitor(m Monitor) error {
	if n.mon != nil {
		return errors.New("ccfluid: Monitor called twice")
	}
	if n.stats.Started > 0 {
		return errors.New("ccfluid: Monitor called after flows started")
	}
	mon := &monitor{n: n, cfg: m}
	for _, s := range []struct {
		k     int32
		on    bool
		every engine.Time
		name  string
	}{
		{sampQlen, m.Qlen != nil, m.QlenInterval, "queue"},
		{sampBW, m.BW != nil, m.BWInterval, "bandwidth"},
		{sampQP, m.Rate != nil || m.CNP != nil, m.QPInterval, "flow"},
	} {
		if !s.on {
			continue
		}
		if s.every <= 0 {
			return fmt.Errorf("ccfluid: the %s monitor's interval %v must be positive", s.name, s.every)
		}
		mon.every[s.k] = s.every
	}
	if mon.every == [numSamplers]engine.Time{} {
		return nil
	}
	for x := range int32(n.g.NumNodes()) {
		_, dl := n.g.Adjacent(x)
		first := len(mon.bports)
		for _, l := range dl {
			mon.bports = append(mon.bports, monPort{l, x, int32(n.ifIndex(l))})
		}
		ports := mon.bports[first:]
		slices.SortFunc(ports, func(a, b monPort) int { return int(a.ifindex - b.ifindex) })
		if k := n.g.Kind(x); k == topo.Switch || k == topo.NVSwitch {
			mon.qports = append(mon.qports, ports...)
		}
	}
	mon.qlast = make([]int64, len(mon.qports))
	mon.blast = make([]int64, len(mon.bports))
	mon.h = n.s.Register(mon)
	n.mon = mon
	return nil
}

// IfIndex is the ns-3 device index of directed link l at the node it leaves: the port number
// SimAI's logs and monitors give.
func (n *Network) IfIndex(l int32) int { return n.ifIndex(l) }

// peekLink is link l's backlog and bytes sent at now, computed as advanceLink would without
// changing the link's state: sampling must not move the model's arithmetic.
func (n *Network) peekLink(l int32, now engine.Time) (q, served float64) {
	lk := &n.links[l]
	qs := lk.qs
	qs.advance(now, lk.arr, n.capOf(l), nil, n.cfg.PacketBytes)
	q, served = qs.q, qs.served
	if n.pk != nil && n.pk.Carries(l) {
		// An NVLink carries packets or the fluid, by turns (nvlink.go): what both sent.
		pq, ps := n.pk.LinkState(l, now)
		q, served = q+pq, served+ps
	}
	return q, served
}

// idle reports whether no flow is in flight.
func (m *monitor) idle() bool { return m.n.stats.Started == m.n.stats.Arrived }

// wake schedules the next sample of every sampler that is asleep; called when a flow starts.
func (m *monitor) wake() {
	now := m.n.s.Now()
	for k := range numSamplers {
		every := m.every[k]
		if every == 0 || m.awake[k] {
			continue
		}
		t := m.cfg.Start
		if now > t {
			t += (now - t + every - 1) / every * every
		}
		if t >= m.cfg.End {
			continue
		}
		m.awake[k] = true
		m.n.s.At(t, m.h, k, 0)
	}
}

// HandleEvent takes a sample and schedules the next one, unless the network has gone idle
// (wake resumes) or the window is over.
func (m *monitor) HandleEvent(s *engine.Scheduler, ev engine.Event) {
	k := ev.Target
	switch k {
	case sampQlen:
		m.sampleQlen(ev.At)
	case sampBW:
		m.sampleBW(ev.At)
	case sampQP:
		m.sampleQP(ev.At)
	}
	next := ev.At + m.every[k]
	if m.idle() || next >= m.cfg.End || next < ev.At {
		m.awake[k] = false
		return
	}
	s.At(next, m.h, k, 0)
}

func (m *monitor) sampleQlen(now engine.Time) {
	for i, p := range m.qports {
		q, _ := m.n.peekLink(p.link, now)
		b := int64(math.Round(q))
		if b == m.qlast[i] {
			continue
		}
		m.qlast[i] = b
		m.cfg.Qlen.QueueLength(now, p.link, p.node, int(p.ifindex), b)
	}
}

func (m *monitor) sampleBW(now engine.Time) {
	report := now != m.cfg.Start
	us := float64(m.every[sampBW]) / float64(engine.Microsecond)
	for i, p := range m.bports {
		_, served := m.n.peekLink(p.link, now)
		b := int64(math.Round(served))
		d := b - m.blast[i]
		if d == 0 {
			continue
		}
		m.blast[i] = b
		if report {
			m.cfg.BW.Bandwidth(now, p.link, p.node, int(p.ifindex), float64(d*8)*1e6/us/1e9)
		}
	}
}

func (m *monitor) sampleQP(now engine.Time) {
	n := m.n
	for len(m.fgen) < len(n.flows) {
		m.fgen = append(m.fgen, 0)
		m.frate = append(m.frate, 0)
		m.fcnp = append(m.fcnp, 0)
	}
	for id := range n.flows {
		f := &n.flows[id]
		if f.state == stateFree || f.state == stateAck {
			continue // an ended flow, or one whose last ACK is all that is left
		}
		if m.fgen[id] != f.gen {
			m.fgen[id], m.frate[id], m.fcnp[id] = f.gen, 0, 0
		}
		if m.cfg.Rate != nil && f.hops > 0 {
			if r := int64(math.Round(n.monitoredRate(int32(id)))); r != m.frate[id] {
				m.frate[id] = r
				m.cfg.Rate.FlowRate(now, FlowID(id), r)
			}
		}
		if m.cfg.CNP != nil {
			if c := int64(f.cnps); c != m.fcnp[id] {
				m.fcnp[id] = c
				m.cfg.CNP.FlowCNPs(now, FlowID(id), c)
			}
		}
	}
}

// monitoredRate is flow id's rate as the rate monitor reports it: its congestion-control rate,
// or for a flow of the packet model its first link's line rate, which nothing on the NVLink
// cuts.
func (n *Network) monitoredRate(id int32) float64 {
	if f := &n.flows[id]; f.state == statePacket {
		return n.g.Rate(n.arena[f.off])
	}
	return n.ccRate(id)
}
