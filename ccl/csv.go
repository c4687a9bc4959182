package ccl

import (
	"bufio"
	"io"
	"strconv"
)

// CSVHeader is the first line WriteCSV writes: the names of its columns.
const CSVHeader = "id,src,dst,bytes,parents,channel,chunk,kind"

// WriteCSV writes d as simd dag's flow CSV (docs/formats.md, "simd dag flow CSV"): the
// CSVHeader line, then one line per flow in id order with its id, Src, Dst, Bytes, its parents'
// ids separated by ';' (empty for none), Channel, Chunk and Kind (FlowKind's SimCCL-style name).
// No field can hold a comma or a quote, so the file is RFC 4180 CSV without quoting. Lines are
// formatted into one reused buffer: a ring over 1,024 GPUs has 16.7 million flows.
func WriteCSV(out io.Writer, d DAG) error {
	w := bufio.NewWriter(out)
	w.WriteString(CSVHeader + "\n")
	var buf []FlowID
	var line []byte
	for i := range d.NumFlows() {
		f := d.Flow(FlowID(i))
		line = strconv.AppendInt(line[:0], int64(i), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Src), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Dst), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, f.Bytes, 10)
		line = append(line, ',')
		buf = d.Parents(FlowID(i), buf[:0])
		for j, p := range buf {
			if j > 0 {
				line = append(line, ';')
			}
			line = strconv.AppendInt(line, int64(p), 10)
		}
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Channel), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Chunk), 10)
		line = append(line, ',')
		line = append(line, f.Kind.String()...)
		line = append(line, '\n')
		w.Write(line)
	}
	return w.Flush()
}
