package chakra

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func intAttr(name string, v int64) Attr { return Attr{Name: name, Kind: AttrInt64, Int: v} }

func coll(id uint64, ct CommType, size int64, deps ...uint64) Node {
	return Node{ID: id, Name: "coll", Type: CommCollNode, DataDeps: deps,
		Attrs: []Attr{{Name: "is_cpu_op", Kind: AttrBool}, intAttr("comm_type", int64(ct)), intAttr("comm_size", size)}}
}

func comp(id uint64, us uint64, deps ...uint64) Node {
	return Node{ID: id, Name: "comp", Type: CompNode, DurationMicros: us, DataDeps: deps}
}

func p2p(id uint64, send bool, peer int32, tag, size int64, deps ...uint64) Node {
	n := Node{ID: id, Name: "p2p", Type: CommRecvNode, DataDeps: deps,
		Attrs: []Attr{intAttr("comm_tag", tag), intAttr("comm_size", size), {Name: "comm_src", Kind: AttrInt32, Int: int64(peer)}}}
	if send {
		n.Type = CommSendNode
		n.Attrs[2].Name = "comm_dst"
	}
	return n
}

func withAttr(n Node, a Attr) Node { n.Attrs = append(append([]Attr(nil), n.Attrs...), a); return n }

// writeTrace writes one file per rank under dir and returns the bare prefix.
func writeTrace(t *testing.T, dir string, ranks [][]Node) string {
	t.Helper()
	prefix := filepath.Join(dir, "t")
	for r, nodes := range ranks {
		var b bytes.Buffer
		if err := Write(&b, &Metadata{Version: "0.0.4"}, nodes); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t."+strconv.Itoa(r)+".et"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
}

// TestChecks: each bad trace is refused with an error naming the file, rank, node id and
// field.
func TestChecks(t *testing.T) {
	ok2 := [][]Node{{coll(1, AllReduce, 1024)}, {coll(7, AllReduce, 1024)}}
	cases := []struct {
		name   string
		ranks  [][]Node
		groups string
		want   []string // substrings of the error; none: no error
	}{
		{name: "fine", ranks: ok2},
		{name: "missing dep", ranks: [][]Node{{comp(1, 5, 9)}}, want: []string{"t.0.et: rank 0: node 1", "data_deps", "node 9, which is not in the file"}},
		{name: "self dep", ranks: [][]Node{{comp(1, 5, 1)}}, want: []string{"node 1", "depends on itself"}},
		{name: "cycle", ranks: [][]Node{{comp(1, 5, 3), comp(2, 5, 1), comp(3, 5, 2), comp(4, 1)}}, want: []string{"rank 0", "dependency cycle through nodes", "data_deps"}},
		{name: "duplicate id", ranks: [][]Node{{comp(1, 5), comp(1, 6)}}, want: []string{"node 1", "id", "appears twice"}},
		{name: "coll without type", ranks: [][]Node{{{ID: 3, Type: CommCollNode, Attrs: []Attr{intAttr("comm_size", 8)}}}}, want: []string{"node 3", "comm_type", "needs comm_type"}},
		{name: "coll without size", ranks: [][]Node{{{ID: 3, Type: CommCollNode, Attrs: []Attr{intAttr("comm_type", 0)}}}}, want: []string{"node 3", "comm_size"}},
		{name: "unsupported", ranks: [][]Node{{coll(4, Barrier, 8)}}, want: []string{"node 4", "comm_type", "BARRIER is not supported", "ALL_REDUCE, ALL_GATHER"}},
		{name: "float comm_size", ranks: [][]Node{{withAttr(coll(4, AllReduce, 8), Attr{Name: "comm_size", Kind: AttrDouble, Float: 8})}}, want: []string{"node 4", "comm_size", "holds double, not an integer"}},
		{name: "send without recv", ranks: [][]Node{{p2p(5, true, 1, 3, 64)}, {comp(1, 1)}}, want: []string{"t.0.et: rank 0: node 5", "comm_tag", "no COMM_RECV_NODE in rank 1's trace"}},
		{name: "recv without send", ranks: [][]Node{{comp(1, 1)}, {p2p(6, false, 0, 3, 64)}}, want: []string{"t.1.et: rank 1: node 6", "no COMM_SEND_NODE in rank 0's trace"}},
		{name: "size mismatch", ranks: [][]Node{{p2p(5, true, 1, 3, 64)}, {p2p(6, false, 0, 3, 32)}}, want: []string{"rank 0: node 5", "no COMM_RECV_NODE"}},
		{name: "send to nowhere", ranks: [][]Node{{p2p(5, true, 4, 3, 64)}}, want: []string{"node 5", "comm_dst", "rank 4 is not one of the trace's 1 ranks"}},
		{name: "send pair", ranks: [][]Node{{p2p(5, true, 1, 3, 64)}, {p2p(6, false, 0, 3, 64)}}},
		{name: "unknown group", ranks: [][]Node{{withAttr(coll(1, AllReduce, 8), Attr{Name: "pg_name", Kind: AttrString, Str: "3"})}}, want: []string{"node 1", "pg_name", `group "3" is not defined`}},
		{name: "group order", ranks: [][]Node{{coll(1, AllReduce, 8), coll(2, AllGather, 8)}, {coll(1, AllGather, 8), coll(2, AllReduce, 8)}}, want: []string{"t.1.et: rank 1: node 1", "comm_type/comm_size", "same order"}},
		{name: "group count", ranks: [][]Node{{coll(1, AllReduce, 8), coll(2, AllReduce, 8)}, {coll(1, AllReduce, 8)}}, want: []string{"rank 0: node 2", "no counterpart in rank 1's trace"}},
		{name: "sub group", groups: `{"1": [1, 2]}`, ranks: [][]Node{{comp(1, 1)}, {withAttr(coll(1, AllReduce, 8), Attr{Name: "pg_name", Kind: AttrString, Str: "1"})}, {withAttr(coll(9, AllReduce, 8), Attr{Name: "pg_name", Kind: AttrString, Str: "1"})}}},
		{name: "not a member", groups: `{"1": [1]}`, ranks: [][]Node{{withAttr(coll(1, AllReduce, 8), Attr{Name: "pg_name", Kind: AttrString, Str: "1"})}, {comp(1, 1)}}, want: []string{"rank 0: node 1", "pg_name", "not a member"}},
		{name: "group id 0", groups: `{"0": [0]}`, ranks: [][]Node{{comp(1, 1)}}, want: []string{"groups.json", `group "0"`, "above 0"}},
		{name: "group rank", groups: `{"1": [0, 5]}`, ranks: [][]Node{{comp(1, 1)}}, want: []string{"groups.json", "rank 5 is not one of the trace's 1 ranks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prefix := writeTrace(t, dir, tc.ranks)
			opt := Options{}
			if tc.groups != "" {
				opt.CommGroups = filepath.Join(dir, "groups.json")
				if err := os.WriteFile(opt.CommGroups, []byte(tc.groups), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(prefix, opt)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestRankFiles: the rank count comes from the files, which must be contiguous, or is given.
func TestRankFiles(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []int{0, 1, 2, 4} {
		if err := os.WriteFile(filepath.Join(dir, "p."+strconv.Itoa(r)+".et"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := FilePattern(filepath.Join(dir, "p"))
	if _, err := RankFiles(p, 0); err == nil || !strings.Contains(err.Error(), "p.3.et is missing but") {
		t.Errorf("gap: %v", err)
	}
	if fs, err := RankFiles(p, 3); err != nil || len(fs) != 3 {
		t.Errorf("-g 3: %v %v", fs, err)
	}
	if _, err := RankFiles(p, 6); err == nil || !strings.Contains(err.Error(), "rank 3 of 6") {
		t.Errorf("-g 6: %v", err)
	}
	if _, err := RankFiles(filepath.Join(dir, "q.%d.et"), 0); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("none: %v", err)
	}
}

// TestWriteRoundTrip: every attribute member, IOInfo, both dependency lists and the legacy
// layout survive Write and Decode.
func TestWriteRoundTrip(t *testing.T) {
	var attrs []Attr
	for k := AttrDouble; k < attrKinds; k++ {
		a := Attr{Name: k.String(), Kind: k}
		switch {
		case k.IsList() && k.scalar().isFloat():
			a.Floats = []float64{1.5, -2}
		case k.IsList() && k.scalar().isSigned():
			a.Ints = []int64{-3, 7}
		case k.IsList() && k.scalar().isUnsigned():
			a.Uints = []uint64{1, 0}
			if k != AttrBoolList {
				a.Uints = []uint64{9, 1 << 31}
			}
		case k.IsList():
			a.Strs = []string{"a", ""}
		case k.isFloat():
			a.Float = 0.25
		case k.isSigned():
			a.Int = -5
		case k.isUnsigned():
			a.Uint = 1
		default:
			a.Str = "x"
		}
		attrs = append(attrs, a)
	}
	nodes := []Node{
		{ID: 0, Name: "first", Type: CompNode, DurationMicros: 3, CtrlDeps: []uint64{2}, DataDeps: []uint64{1, 300},
			Inputs: &IOInfo{Values: "[1]", Shapes: "[[2]]", Types: "['Int']"}, Outputs: &IOInfo{}, Attrs: attrs},
		{ID: 1 << 40, Type: CommCollNode, StartMicros: 4, Attrs: []Attr{{Name: "empty"}}},
	}
	for _, md := range []*Metadata{{Version: "0.0.4", Attrs: []Attr{{Name: "schema", Kind: AttrString, Str: "s"}}}, nil} {
		var b bytes.Buffer
		if err := Write(&b, md, nodes); err != nil {
			t.Fatal(err)
		}
		f, err := Decode(b.Bytes(), "rt")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Metadata, md) {
			t.Errorf("metadata %+v, want %+v", f.Metadata, md)
		}
		if !reflect.DeepEqual(f.Nodes, nodes) {
			t.Errorf("nodes differ:\n%+v\nwant\n%+v", f.Nodes, nodes)
		}
	}
	if err := Write(&bytes.Buffer{}, nil, []Node{{}}); err == nil {
		t.Error("an all-default node was written")
	}
}

// TestDecodeErrors: truncated and corrupt files are refused naming the file and place; an
// unpacked repeated field and unknown fields are read.
func TestDecodeErrors(t *testing.T) {
	unpacked := []byte{0x08, 0x03, 0x18, 0x04, 0x28, 0x01, 0x28, 0x02, 0xf8, 0x07, 0x05} // id 3, type COMP, data_deps 1, 2 unpacked, field 127
	rec := append([]byte{byte(len(unpacked))}, unpacked...)
	f, err := Decode(append([]byte{0x07, 0x0a, 0x05, '0', '.', '0', '.', '4'}, rec...), "u")
	if err != nil || len(f.Nodes) != 1 || !reflect.DeepEqual(f.Nodes[0].DataDeps, []uint64{1, 2}) {
		t.Fatalf("unpacked: %+v %v", f, err)
	}
	// A record of length 0 ends the file.
	f, err = Decode(append(append([]byte{0x00}, rec...), 0xff), "z")
	if err != nil || len(f.Nodes) != 0 {
		t.Fatalf("zero record: %+v %v", f, err)
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte{0x10, 0x01}, "x: byte 0: record of 16 bytes but only 1 left"},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "record length"},
		{[]byte{0x02, 0x0a, 0x00, 0x04, 0x08, 0x05, 0x18, 0xff}, "x: byte 3: node id 5"},
		{[]byte{0x1f, 0x8b, 0x00}, "x: gzip"},
	} {
		_, err := Decode(tc.data, "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%x: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// FuzzDecode: Decode never panics, and what it reads is written back and read again to the
// same nodes.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 60s ./workloads/chakra
func FuzzDecode(f *testing.F) {
	for _, p := range []string{"testdata/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et",
		"testdata/tutorials-micro2024/demo1/allreduce/allreduce.0.et", "testdata/legacy-2023/resnet50_DataParallel/resnet50_DataParallel.0.et"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data, "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var b bytes.Buffer
		if err := Write(&b, file.Metadata, file.Nodes); err != nil {
			return // an all-default node read from a legacy first record
		}
		again, err := Decode(b.Bytes(), "again")
		if err != nil {
			t.Fatalf("re-reading what was written: %v", err)
		}
		if len(again.Nodes) != len(file.Nodes) {
			t.Fatalf("%d nodes written, %d read back", len(file.Nodes), len(again.Nodes))
		}
		_, _ = New("fuzz", []*File{file}, nil, "", DepsBoth)
	})
}
