package netmodel

import (
	"io"
	"math/bits"
	"slices"

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
	w       io.Writer
	fab     *Fabric
	payload int
	// buf holds the lines not yet written: they are formatted into it in place and it goes to
	// w whole when it is nearly full (a bufio.Writer would copy every line once more).
	buf []byte
	err error

	// router computes the figures of the pairs, kept in pairs, on the goroutine that formats
	// the lines: the fabric's router, or a Concurrent log's own (a Router is not safe for
	// concurrent use; the graph it reads is).
	router *route.Router
	pairs  pairTable[pairFigures]

	pipe *pipe[fctLine] // Concurrent: the lines are formatted and written on its goroutine
}

type pairFigures struct {
	rttNs uint64
	bw    uint64 // bits/s
	known bool   // computed (figures)
}

const (
	fctBuffer  = 1 << 18 // bytes of lines written at once
	fctLineMax = 128     // the longest line: 2 × 8 hex digits, 2 × 5 and 4 × 20 digits, 8 separators
)

// fctLine is what one line of fct.txt is made of, before it is formatted: 40 bytes.
type fctLine struct {
	src, dst       int32 // nodes
	sport, dport   uint16
	first          int32 // the first link of the path, -1 if none
	size           uint64
	startNs, fctNs int64
}

// NewFCTLog writes to w; payload is SimAI.conf's PACKET_PAYLOAD_SIZE.
func NewFCTLog(w io.Writer, fab *Fabric, payload int) *FCTLog {
	if payload < 1 {
		payload = 1
	}
	return &FCTLog{w: w, fab: fab, payload: payload, buf: make([]byte, 0, fctBuffer), router: fab.Router}
}

// Concurrent moves the formatting and writing of the lines to a goroutine of the log's own
// (see pipe), with a router of its own for the pairs' figures: FlowDone only records what the
// line is made of, in batches. The file is the same byte for byte. Call it before the first
// FlowDone; Flush or Stop end the goroutine.
//
// A pair's figures are taken from the routes when its first flow arrives, and kept. The log's
// router has every link up, so once the fabric's router has a link down (LinkDown) FlowDone
// waits for the goroutine to finish and goes on formatting the lines itself, with the
// fabric's router, as a log that was never Concurrent does.
func (l *FCTLog) Concurrent() {
	if l.pipe == nil {
		l.router = route.NewRouter(l.fab.Graph)
		l.pipe = newPipe(l.writeLines)
	}
}

// FlowDone implements Observer.
func (l *FCTLog) FlowDone(r *FlowRecord) {
	if l.pipe != nil && l.fab.Router.LinksDown() > 0 {
		l.Stop()
	}
	if l.err != nil {
		return
	}
	var line *fctLine
	if l.pipe != nil {
		line = l.pipe.next()
	} else {
		line = new(fctLine) // does not escape: stays on the stack
	}
	*line = fctLine{src: r.Src, dst: r.Dst, sport: r.Sport, dport: r.Dport, first: -1, size: uint64(r.Bytes),
		startNs: int64(r.Start / engine.Nanosecond), fctNs: int64((r.Arrived - r.Start) / engine.Nanosecond)}
	if len(r.Path) > 0 {
		line.first = r.Path[0]
	}
	if l.pipe == nil {
		l.err = l.format(line)
	}
}

// writeLines formats and writes a batch of lines (on the pipe's goroutine).
func (l *FCTLog) writeLines(batch []fctLine) error {
	for i := range batch {
		if err := l.format(&batch[i]); err != nil {
			return err
		}
	}
	return nil
}

// format appends line r to the buffer, writing the buffer out first when r might not fit.
func (l *FCTLog) format(r *fctLine) error {
	if cap(l.buf)-len(l.buf) < fctLineMax {
		if err := l.writeOut(); err != nil {
			return err
		}
	}
	l.buf = l.appendLine(l.buf, r)
	return nil
}

// writeOut writes the buffered lines to w.
func (l *FCTLog) writeOut() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// appendLine appends the text of line r to b: the ideal FCT is computed here, in 128 bits.
func (l *FCTLog) appendLine(b []byte, r *fctLine) []byte {
	pf := l.pair(r)
	size := r.size
	total := size + (size+uint64(l.payload)-1)/uint64(l.payload)*52
	hi, lo := bits.Mul64(total, 8_000_000_000)
	var tx uint64
	if pf.bw > 0 && hi < pf.bw {
		tx, _ = bits.Div64(hi, lo, pf.bw)
	}
	b = appendHex8(b, route.NodeIP(r.src))
	b = append(b, ' ')
	b = appendHex8(b, route.NodeIP(r.dst))
	b = append(b, ' ')
	b = appendDecimal(b, uint64(r.sport))
	b = append(b, ' ')
	b = appendDecimal(b, uint64(r.dport))
	b = append(b, ' ')
	b = appendDecimal(b, size)
	b = append(b, ' ')
	b = appendSigned(b, r.startNs)
	b = append(b, ' ')
	b = appendSigned(b, r.fctNs)
	b = append(b, ' ')
	b = appendDecimal(b, pf.rttNs+tx)
	return append(b, '\n')
}

// pair returns the figures of line r's pair: those kept since its first flow, else the
// router's now.
func (l *FCTLog) pair(r *fctLine) pairFigures {
	pf := l.pairs.get(r.src, r.dst)
	if !pf.known {
		*pf = l.figures(r)
		pf.known = true
	}
	return *pf
}

// figures computes the figures of line r's pair.
func (l *FCTLog) figures(r *fctLine) pairFigures {
	var pf pairFigures
	t := l.fab.Topo
	if t.Kind(r.src) != topo.GPU || t.Kind(r.dst) != topo.GPU {
		if r.first >= 0 {
			pf.bw = uint64(l.fab.Graph.Rate(r.first))
		}
	} else if m, err := l.router.PairMetrics(r.src, r.dst, l.payload); err == nil {
		pf.rttNs, pf.bw = uint64(m.RTT/engine.Nanosecond), uint64(m.Bandwidth)
	}
	return pf
}

// appendDecimal appends v in decimal. It writes the digits where they go, from the last: strconv's
// AppendUint formats into a buffer of its own and copies that, which was a tenth of the log's
// cost at 16,384 GPUs.
func appendDecimal(b []byte, v uint64) []byte {
	n := decimalDigits(v)
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	i := len(b)
	for v >= 100 {
		q := v / 100
		d := (v - q*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if v >= 10 {
		b[i-2], b[i-1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		b[i-1] = byte('0' + v)
	}
	return b
}

// appendSigned appends v in decimal, with a minus sign if it is negative.
func appendSigned(b []byte, v int64) []byte {
	if v < 0 {
		return appendDecimal(append(b, '-'), uint64(-v)) // -MinInt64 wraps to its magnitude
	}
	return appendDecimal(b, uint64(v))
}

// decimalDigits is the number of decimal digits of v (1 for 0).
func decimalDigits(v uint64) int {
	// ⌊log10 v⌋ from the bit length (1233/4096 ≈ log10 2), then one comparison.
	n := (bits.Len64(v) * 1233) >> 12
	if n < len(powersOf10) && v >= powersOf10[n] {
		n++
	}
	return max(n, 1)
}

var powersOf10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

func appendHex8(b []byte, v uint32) []byte {
	const hex = "0123456789abcdef"
	return append(b, hex[v>>28], hex[v>>24&0xf], hex[v>>20&0xf], hex[v>>16&0xf],
		hex[v>>12&0xf], hex[v>>8&0xf], hex[v>>4&0xf], hex[v&0xf])
}

// Flush writes what is buffered and reports the first write error. A Concurrent log first
// waits for its goroutine to write every line and stops it (see Stop).
func (l *FCTLog) Flush() error {
	l.Stop()
	if l.err != nil {
		return l.err
	}
	l.err = l.writeOut()
	return l.err
}

// Stop waits for a Concurrent log's goroutine to format every line logged so far and ends it,
// without flushing; the lines logged after Stop are formatted by FlowDone itself, with the
// fabric's router. A run that ends in an error stops its log; Stop does nothing on a log that
// is not Concurrent (or no longer).
func (l *FCTLog) Stop() {
	if l.pipe == nil {
		return
	}
	if err := l.pipe.close(); l.err == nil {
		l.err = err
	}
	l.pipe = nil
	l.router = l.fab.Router
}
