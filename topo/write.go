package topo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"simd/configs/atomicfile"
	"simd/configs/lex"
)

// Write writes t as a SimAI topology file in the generator's exact layout: fields separated by
// single spaces, the header line without a trailing space, the id line (NVSwitches, then
// switches) with one, every line ending in LF. Link fields are written from their *Text
// strings; an empty text is replaced by the value in plain units ("400000000000bps",
// "500000ps", "0"). Write refuses a topology that does not pass Validate, since the file it
// would write could not be read back.
func (t *Topology) Write(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte

	b = strconv.AppendInt(b, int64(len(t.Kinds)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(t.GPUsPerServer), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(t.NVSwitches)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(t.Switches)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(t.Links)), 10)
	b = append(b, ' ')
	b = append(b, t.GPUType...)
	b = append(b, '\n')
	if _, err := bw.Write(b); err != nil {
		return err
	}

	for _, ids := range [2][]int32{t.NVSwitches, t.Switches} {
		for _, id := range ids {
			b = strconv.AppendInt(b[:0], int64(id), 10)
			b = append(b, ' ')
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	if err := bw.WriteByte('\n'); err != nil {
		return err
	}

	for i := range t.Links {
		l := &t.Links[i]
		b = strconv.AppendInt(b[:0], int64(l.Src), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(l.Dst), 10)
		b = append(b, ' ')
		if l.RateText != "" {
			b = append(b, l.RateText...)
		} else {
			format := byte('f')
			if l.Rate >= 1e21 {
				format = 'g' // keep the number short enough for units.ParseRate
			}
			b = strconv.AppendFloat(b, l.Rate, format, -1, 64)
			b = append(b, "bps"...)
		}
		b = append(b, ' ')
		if l.DelayText != "" {
			b = append(b, l.DelayText...)
		} else {
			b = strconv.AppendInt(b, int64(l.Delay), 10)
			b = append(b, "ps"...)
		}
		b = append(b, ' ')
		if l.ErrorText != "" {
			b = append(b, l.ErrorText...)
		} else {
			b = strconv.AppendFloat(b, l.ErrorRate, 'g', -1, 64)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes the generated topology into the folder dir (created if needed) under the
// generator's file name, atomically: a refused or interrupted write leaves no file under that
// name. It returns the file's path.
func (g *Generated) WriteFile(dir string) (string, error) {
	path := filepath.Join(dir, g.FileName)
	return path, atomicfile.Write(path, func(f *os.File) error { return g.Topology.Write(f) })
}

// GenerateFile builds the topology o describes (Generate), writes it into the folder dir under
// the generator's name (Generated.WriteFile), and prints what simd topo prints: the warning
// about -asn on stderr, then the generator's console lines on stdout, the last one the file's
// path. It returns that path. Nothing is written when the generator refuses the options; the
// error is then an input error (lex.InputError). It lives here, beside the generator, because
// simd topo and each generated topology of simd sweep's runs (package workloads/sweep) make
// their file and console the same way.
func (o GeneratorOptions) GenerateFile(dir string, stdout, stderr io.Writer) (string, error) {
	g, err := o.Generate()
	if err != nil {
		return "", lex.BadInput(err)
	}
	if g.Warning != "" {
		fmt.Fprintf(stderr, "simd topo: warning: %s\n", g.Warning)
	}
	path, err := g.WriteFile(dir)
	if err != nil {
		return "", err
	}
	lines := g.Console()
	lines[len(lines)-1] = path
	_, err = fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	return path, err
}
