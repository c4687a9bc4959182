package netmodel

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"simd/configs"
	"simd/engine"
	"simd/netmodel/ccfluid"
	"simd/netmodel/fluid"
)

// The monitor files of SimAI.conf (simai-formats.md §6.5), as SimAI's ns-3 would write them if
// it started its monitors (common.h: schedule_monitor; switch-node.cc: PrintSwitchQlen,
// PrintSwitchBw; rdma-hw.cc: PrintHostBW, PrintQPRate, PrintQPCnpNumber). Each file has a
// header line and then rows of comma-and-space separated values; times are in ns.
//
//	qlen: time, sw_id, port_id, q_id, q_len, port_len
//	bw:   time, node_id, port_id, bandwidth
//	rate: time, src, dst, sport, dport, size, curr_rate
//	cnp:  time, src, dst, sport, dport, size, cnp_number
//
// The samplers are ccfluid's (ccfluid.Monitor): qlen gets a row per switch or NVSwitch egress
// port whose backlog (bytes) changed since its last row; the model has one data queue per port,
// SimAI's priority 3, so q_id is always 3 and q_len = port_len (SimAI writes all 8 queues of a
// changed port, the other 7 empty here). bw gets a row per port (of any node) that sent
// something in the period, in Gbit/s (%f); port_id is the ns-3 device index, as in pfc.txt.
// rate and cnp get a row per flow in flight whose rate (bit/s) or cumulative CNP count changed;
// src and dst are node ids, sport the flow's source port (10000 up, per node pair), dport 100,
// size the flow's bytes.

// MonitorTimes is the sampling window and periods SimAI.conf gives (MON_START, MON_END,
// QLEN_MON_INTERVAL, BW_MON_INTERVAL, QP_MON_INTERVAL), with no sampler on yet.
func MonitorTimes(c *configs.SimAIConf) ccfluid.Monitor {
	return ccfluid.Monitor{Start: c.MonStart, End: c.MonEnd,
		QlenInterval: c.QlenMonInterval, BWInterval: c.BWMonInterval, QPInterval: c.QPMonInterval}
}

// Monitor starts the monitors of the congestion-controlled network (ccfluid.Network.Monitor).
// It must be called before the first flow starts. The ideal model (no congestion control) has
// no queues or rates to monitor: an error.
func (m *Simulator) Monitor(mon ccfluid.Monitor) error {
	if m.ccnet == nil {
		return errors.New("the monitors need congestion control (CC_MODE 1)")
	}
	m.track = true
	return m.ccnet.Monitor(mon)
}

// FlowInfo describes in-flight flow f of the network: its endpoints (nodes), ports and bytes.
// The simulator keeps them once an observer or Monitor asks for them.
func (m *Simulator) FlowInfo(f fluid.FlowID) (src, dst int32, sport, dport uint16, bytes int64) {
	in := &m.inflight[f]
	return in.src, in.dst, in.sport, in.dport, m.net.Bytes(f)
}

// monLog is the buffered writer of one monitor file.
type monLog struct {
	w    *bufio.Writer
	line []byte
	err  error
	rows uint64
}

func newMonLog(w io.Writer, header string) monLog {
	l := monLog{w: bufio.NewWriterSize(w, 1<<16)}
	_, l.err = l.w.WriteString(header)
	return l
}

// start begins a row with the time in ns.
func (l *monLog) start(at engine.Time) []byte {
	return strconv.AppendInt(l.line[:0], int64(at/engine.Nanosecond), 10)
}

// appendInt appends ", v".
func appendInt(b []byte, v int64) []byte {
	return strconv.AppendInt(append(b, ", "...), v, 10)
}

func (l *monLog) put(b []byte) {
	b = append(b, '\n')
	l.line = b
	l.rows++
	if l.err == nil {
		_, l.err = l.w.Write(b)
	}
}

// Rows is the number of rows written (the header not counted).
func (l *monLog) Rows() uint64 { return l.rows }

// Flush writes what is buffered and returns the first error.
func (l *monLog) Flush() error {
	if l.err != nil {
		return l.err
	}
	return l.w.Flush()
}

// QlenLog writes the qlen monitor; it implements ccfluid.QlenObserver.
type QlenLog struct{ monLog }

// NewQlenLog writes the header to w.
func NewQlenLog(w io.Writer) *QlenLog {
	return &QlenLog{newMonLog(w, "time, sw_id, port_id, q_id, q_len, port_len\n")}
}

// dataQueue is the priority of SimAI's data packets, the one queue the model has per port.
const dataQueue = 3

// QueueLength implements ccfluid.QlenObserver.
func (l *QlenLog) QueueLength(at engine.Time, _, node int32, ifindex int, bytes int64) {
	b := l.start(at)
	b = appendInt(b, int64(node))
	b = appendInt(b, int64(ifindex))
	b = appendInt(b, dataQueue)
	b = appendInt(b, bytes)
	b = appendInt(b, bytes)
	l.put(b)
}

// BWLog writes the bw monitor; it implements ccfluid.BWObserver.
type BWLog struct{ monLog }

// NewBWLog writes the header to w.
func NewBWLog(w io.Writer) *BWLog {
	return &BWLog{newMonLog(w, "time, node_id, port_id, bandwidth\n")}
}

// Bandwidth implements ccfluid.BWObserver.
func (l *BWLog) Bandwidth(at engine.Time, _, node int32, ifindex int, gbps float64) {
	b := l.start(at)
	b = appendInt(b, int64(node))
	b = appendInt(b, int64(ifindex))
	b = strconv.AppendFloat(append(b, ", "...), gbps, 'f', 6, 64)
	l.put(b)
}

// QPLog writes the rate or the cnp monitor (NewRateLog, NewCNPLog); it implements
// ccfluid.RateObserver and ccfluid.CNPObserver, and looks flows up in the simulator.
type QPLog struct {
	monLog
	sim *Simulator
}

// NewRateLog writes the rate monitor's header to w; flows are sim's.
func NewRateLog(w io.Writer, sim *Simulator) *QPLog {
	return &QPLog{newMonLog(w, "time, src, dst, sport, dport, size, curr_rate\n"), sim}
}

// NewCNPLog writes the cnp monitor's header to w; flows are sim's.
func NewCNPLog(w io.Writer, sim *Simulator) *QPLog {
	return &QPLog{newMonLog(w, "time, src, dst, sport, dport, size, cnp_number\n"), sim}
}

// FlowRate implements ccfluid.RateObserver.
func (l *QPLog) FlowRate(at engine.Time, f ccfluid.FlowID, bps int64) { l.row(at, f, bps) }

// FlowCNPs implements ccfluid.CNPObserver.
func (l *QPLog) FlowCNPs(at engine.Time, f ccfluid.FlowID, cnps int64) { l.row(at, f, cnps) }

func (l *QPLog) row(at engine.Time, f ccfluid.FlowID, v int64) {
	src, dst, sport, dport, bytes := l.sim.FlowInfo(f)
	b := l.start(at)
	b = appendInt(b, int64(src))
	b = appendInt(b, int64(dst))
	b = appendInt(b, int64(sport))
	b = appendInt(b, int64(dport))
	b = appendInt(b, bytes)
	b = appendInt(b, v)
	l.put(b)
}
