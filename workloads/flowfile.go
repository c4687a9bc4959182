package workloads

import (
	"io"
	"strconv"

	"simd/configs/lex"
	"simd/configs/units"
	"simd/engine"
)

// TrafficFlow is one line of an ns-3/HPCC flow file: a point-to-point transfer at a set time,
// for network studies without a workload.
type TrafficFlow struct {
	Src, Dst int32 // node ids of the topology
	Priority int   // pg; SimAI's QPs all use 3
	DPort    uint16
	Bytes    int64
	Start    engine.Time
	Line     int
}

// maxTrafficFlows bounds a flow file's count line.
const maxTrafficFlows = 1 << 26

// ParseFlowFile reads the flow file of ns-3's RDMA examples (and HPCC's): the first token is the
// number of flows, then one record per flow, "src dst pg dport size start", start in seconds
// (converted exactly to picoseconds). Line breaks do not matter, as in ns-3's reader; every
// error names file, line and field. Sizes must be positive and start times not negative.
func ParseFlowFile(r io.Reader, file string) ([]TrafficFlow, error) {
	s := lex.NewScanner(r, file)
	t, ok := s.Next()
	if !ok {
		return nil, lex.Errorf(file, 1, "flow count", "the file is empty; expected the number of flows first")
	}
	n, err := strconv.ParseInt(t.Text, 10, 64)
	if err != nil || n < 0 || n > maxTrafficFlows {
		return nil, lex.Errorf(file, t.Line, "flow count", "%q is not a flow count between 0 and %d", t.Text, maxTrafficFlows)
	}
	fields := [...]string{"src", "dst", "pg", "dport", "size", "start"}
	out := make([]TrafficFlow, 0, min(n, 1<<16))
	var tok [6]lex.Token
	for k := int64(0); k < n; k++ {
		for i := range tok {
			x, ok := s.Next()
			if !ok {
				return nil, lex.Errorf(file, s.Line(), fields[i], "flow %d of %d is missing: the file ends after %d flows", k+1, n, k)
			}
			tok[i] = x
		}
		f := TrafficFlow{Line: tok[0].Line}
		for i, dst := range []*int32{&f.Src, &f.Dst} {
			v, err := strconv.ParseInt(tok[i].Text, 10, 32)
			if err != nil || v < 0 {
				return nil, lex.Errorf(file, tok[i].Line, fields[i], "%q is not a node id", tok[i].Text)
			}
			*dst = int32(v)
		}
		if f.Src == f.Dst {
			return nil, lex.Errorf(file, tok[1].Line, "dst", "flow %d goes from node %d to itself", k+1, f.Src)
		}
		pg, err := strconv.Atoi(tok[2].Text)
		if err != nil || pg < 0 || pg > 7 {
			return nil, lex.Errorf(file, tok[2].Line, "pg", "%q is not a priority group from 0 to 7", tok[2].Text)
		}
		f.Priority = pg
		dport, err := strconv.ParseUint(tok[3].Text, 10, 16)
		if err != nil {
			return nil, lex.Errorf(file, tok[3].Line, "dport", "%q is not a port number", tok[3].Text)
		}
		f.DPort = uint16(dport)
		size, err := strconv.ParseInt(tok[4].Text, 10, 64)
		if err != nil || size < 1 || size > maxBytes {
			return nil, lex.Errorf(file, tok[4].Line, "size", "%q is not a byte count from 1 to %d", tok[4].Text, int64(maxBytes))
		}
		f.Bytes = size
		start, err := units.ParseTime(tok[5].Text)
		if err != nil {
			return nil, lex.Errorf(file, tok[5].Line, "start", "%q is not a start time in seconds", tok[5].Text)
		}
		f.Start = start
		out = append(out, f)
	}
	if err := s.Err(); err != nil {
		return nil, lex.Errorf(file, s.Line(), "", "reading failed: %v", err)
	}
	return out, nil
}
