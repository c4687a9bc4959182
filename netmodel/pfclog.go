package netmodel

import (
	"bufio"
	"io"
	"strconv"

	"simd/engine"
	"simd/topo"
)

// PFCLog writes SimAI's pfc.txt (simai-formats.md §6.4), one line per PFC frame as the port
// that receives it logs it:
//
//	%lu %u %u %u %u
//	time_ns node_id node_type ifindex type
//
// node_type is 0 for a host (GPU), 1 for a switch, 2 for an NVSwitch; type 1 is a pause and 0
// a resume.
type PFCLog struct {
	w    *bufio.Writer
	line []byte
	err  error
	n    uint64
}

// NewPFCLog writes to w.
func NewPFCLog(w io.Writer) *PFCLog { return &PFCLog{w: bufio.NewWriterSize(w, 1<<16)} }

// PFC implements ccfluid.PFCObserver.
func (l *PFCLog) PFC(at engine.Time, node int32, kind topo.NodeKind, ifindex int, pause bool) {
	if l.err != nil {
		return
	}
	typ := 0
	switch kind {
	case topo.Switch:
		typ = 1
	case topo.NVSwitch:
		typ = 2
	}
	b := strconv.AppendInt(l.line[:0], int64(at/engine.Nanosecond), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(node), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(typ), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(ifindex), 10)
	if pause {
		b = append(b, " 1\n"...)
	} else {
		b = append(b, " 0\n"...)
	}
	l.line = b
	l.n++
	_, l.err = l.w.Write(b)
}

// Frames is the number of frames logged.
func (l *PFCLog) Frames() uint64 { return l.n }

// Flush writes what is buffered and returns the first error.
func (l *PFCLog) Flush() error {
	if l.err != nil {
		return l.err
	}
	return l.w.Flush()
}
