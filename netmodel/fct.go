package netmodel

import (
	"bufio"
	"io"
	"math/bits"
	"strconv"

	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// FCTLog writes ns-3's fct.txt (simai-formats.md §6.3), one line per flow as it arrives:
//
//	%08x %08x %u %u %lu %lu %lu %lu
//	sip  dip  sport dport size_bytes start_ns fct_ns standalone_fct_ns
//
// start is when the flow began transmitting (after the send latency) and fct the time to its
// last byte's arrival, both in whole ns. The standalone (ideal) FCT is SimAI's
// pairRtt + (size + ⌈size/payload⌉·52)·8e9/pairBw with pairRtt and pairBw from the routes
// (§7.6; 0 and the direct link's rate when an endpoint is an NVSwitch). SimAI computes the last
// term in 64-bit integers, which overflows above about 2.3 GB; simd keeps 128 bits.
type FCTLog struct {
	w       *bufio.Writer
	fab     *Fabric
	payload int
	pairs   map[uint64]pairFigures
	line    []byte
	err     error
}

type pairFigures struct {
	rttNs uint64
	bw    uint64 // bits/s
}

// NewFCTLog writes to w; payload is SimAI.conf's PACKET_PAYLOAD_SIZE.
func NewFCTLog(w io.Writer, fab *Fabric, payload int) *FCTLog {
	if payload < 1 {
		payload = 1
	}
	return &FCTLog{w: bufio.NewWriterSize(w, 1<<16), fab: fab, payload: payload, pairs: map[uint64]pairFigures{}}
}

// FlowDone implements Observer.
func (l *FCTLog) FlowDone(r *FlowRecord) {
	if l.err != nil {
		return
	}
	pf := l.pair(r)
	size := uint64(r.Bytes)
	total := size + (size+uint64(l.payload)-1)/uint64(l.payload)*52
	hi, lo := bits.Mul64(total, 8_000_000_000)
	var tx uint64
	if pf.bw > 0 && hi < pf.bw {
		tx, _ = bits.Div64(hi, lo, pf.bw)
	}
	b := l.line[:0]
	b = appendHex8(b, route.NodeIP(r.Src))
	b = append(b, ' ')
	b = appendHex8(b, route.NodeIP(r.Dst))
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(r.Sport), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(r.Dport), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Start/engine.Nanosecond), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64((r.Arrived-r.Start)/engine.Nanosecond), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, pf.rttNs+tx, 10)
	b = append(b, '\n')
	l.line = b
	if _, err := l.w.Write(b); err != nil {
		l.err = err
	}
}

func (l *FCTLog) pair(r *FlowRecord) pairFigures {
	key := uint64(uint32(r.Src))<<32 | uint64(uint32(r.Dst))
	if pf, ok := l.pairs[key]; ok {
		return pf
	}
	var pf pairFigures
	t := l.fab.Topo
	if t.Kind(r.Src) != topo.GPU || t.Kind(r.Dst) != topo.GPU {
		if len(r.Path) > 0 {
			pf.bw = uint64(l.fab.Graph.Rate(r.Path[0]))
		}
	} else if m, err := l.fab.Router.PairMetrics(r.Src, r.Dst, l.payload); err == nil {
		pf.rttNs, pf.bw = uint64(m.RTT/engine.Nanosecond), uint64(m.Bandwidth)
	}
	l.pairs[key] = pf
	return pf
}

func appendHex8(b []byte, v uint32) []byte {
	const hex = "0123456789abcdef"
	for s := 28; s >= 0; s -= 4 {
		b = append(b, hex[(v>>uint(s))&0xf])
	}
	return b
}

// Flush writes what is buffered and reports the first write error.
func (l *FCTLog) Flush() error {
	if l.err != nil {
		return l.err
	}
	return l.w.Flush()
}
