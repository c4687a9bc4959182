package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// -memprofile is written as the simulation ends, while its model is still held: a run stopped
// by -max-events shows the network model's tables as live memory. Written at the end of the
// process, as it was, the profile had let them go and showed none of them.
func TestMemProfileHoldsTheModel(t *testing.T) {
	was := runtime.MemProfileRate
	runtime.MemProfileRate = 1 // every allocation sampled, so that a small run's tables show
	defer func() { runtime.MemProfileRate = was }()
	dir := t.TempDir()
	mem := filepath.Join(dir, "mem.prof")
	code, _, errOut := runCLI(t, dir, "-w", "example:microAllReduce.txt", "-o", "out", "-max-events", "1500", "-quiet", "-memprofile", mem)
	if code != exitStopped {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	live := liveBytesUnder(t, []byte(readFile(t, mem)), "simd/netmodel")
	if live < 64<<10 {
		t.Errorf("the heap profile holds %d live bytes allocated in simd/netmodel; want the model's tables (64 KiB or more)", live)
	}
}

// liveBytesUnder reads a heap profile (pprof's gzipped protocol buffer: profile.proto) and
// returns the in-use bytes of the samples one of whose stack's functions is named with prefix.
func liveBytesUnder(t *testing.T, gz []byte, prefix string) int64 {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	type sample struct{ locs, vals []uint64 }
	var (
		types   []uint64                // sample_type: each ValueType's type, a string index
		samples []sample                // sample
		locFns  = map[uint64][]uint64{} // location id → function ids of its lines
		fnName  = map[uint64]uint64{}   // function id → name, a string index
		strs    []string                // string_table
	)
	// fields calls f with each field of message m; a malformed message fails the test.
	fields := func(m []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64)) {
		for len(m) > 0 {
			num, typ, n := protowire.ConsumeTag(m)
			if n < 0 {
				t.Fatal("heap profile: bad tag")
			}
			m = m[n:]
			switch typ {
			case protowire.VarintType:
				x, n := protowire.ConsumeVarint(m)
				if n < 0 {
					t.Fatal("heap profile: bad varint")
				}
				f(num, typ, nil, x)
				m = m[n:]
			case protowire.BytesType:
				v, n := protowire.ConsumeBytes(m)
				if n < 0 {
					t.Fatal("heap profile: bad bytes")
				}
				f(num, typ, v, 0)
				m = m[n:]
			default:
				n := protowire.ConsumeFieldValue(num, typ, m)
				if n < 0 {
					t.Fatal("heap profile: bad field")
				}
				m = m[n:]
			}
		}
	}
	// ints reads a repeated integer field, packed or not.
	ints := func(dst []uint64, typ protowire.Type, v []byte, x uint64) []uint64 {
		if typ == protowire.VarintType {
			return append(dst, x)
		}
		for len(v) > 0 {
			y, n := protowire.ConsumeVarint(v)
			if n < 0 {
				t.Fatal("heap profile: bad packed varint")
			}
			dst, v = append(dst, y), v[n:]
		}
		return dst
	}
	fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
		switch num {
		case 1: // sample_type
			fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) {
				if num == 1 {
					types = append(types, x)
				}
			})
		case 2: // sample
			var s sample
			fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
				switch num {
				case 1:
					s.locs = ints(s.locs, typ, v, x)
				case 2:
					s.vals = ints(s.vals, typ, v, x)
				}
			})
			samples = append(samples, s)
		case 4: // location
			var id uint64
			var fns []uint64
			fields(v, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) {
				switch num {
				case 1:
					id = x
				case 4: // line
					fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) {
						if num == 1 {
							fns = append(fns, x)
						}
					})
				}
			})
			locFns[id] = fns
		case 5: // function
			var id, name uint64
			fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) {
				switch num {
				case 1:
					id = x
				case 2:
					name = x
				}
			})
			fnName[id] = name
		case 6: // string_table
			strs = append(strs, string(v))
		}
	})
	inuse := -1
	for i, ty := range types {
		if int(ty) < len(strs) && strs[ty] == "inuse_space" {
			inuse = i
		}
	}
	if inuse < 0 {
		t.Fatal("heap profile: no inuse_space values")
	}
	var live int64
	for _, s := range samples {
		if inuse >= len(s.vals) {
			continue
		}
	stack:
		for _, loc := range s.locs {
			for _, fn := range locFns[loc] {
				if name := fnName[fn]; int(name) < len(strs) && strings.HasPrefix(strs[name], prefix) {
					live += int64(s.vals[inuse])
					break stack
				}
			}
		}
	}
	return live
}
