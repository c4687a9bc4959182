package ccl

import (
	"errors"
	"strings"
	"testing"
)

// diamond is flow 0 fanning out to 1 and 2, which both feed 3: three flows on its critical
// path, and a flow with two parents for the CSV.
func diamond() *DAGBuilder {
	b := NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(4), GPUsPerServer: 2, TotalGPUs: 4, Bytes: 100, Pieces: 4})
	a := b.Add(Flow{Src: 0, Dst: 1, Bytes: 10, Kind: KindTree})
	l := b.Add(Flow{Src: 1, Dst: 2, Bytes: 20, Chunk: 1, Kind: KindTree}, a)
	r := b.Add(Flow{Src: 1, Dst: 3, Bytes: 30, Channel: 1, Chunk: 1, Kind: KindTree}, a)
	b.Add(Flow{Src: 2, Dst: 4, Bytes: 40, Chunk: 2, Kind: KindNVLS}, l, r)
	return b
}

// TestStatsOf checks StatsOf against closed forms: a one-channel ring all-reduce on n ranks is
// 2(n−1) steps of n flows, one after the other, and each step sends the whole buffer once.
func TestStatsOf(t *testing.T) {
	cases := []struct {
		name string
		b    *DAGBuilder
		want DAGStats
	}{
		{"empty", NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(1), GPUsPerServer: 1, TotalGPUs: 1, Pieces: 1}), DAGStats{}},
		{"diamond", diamond(), DAGStats{Flows: 4, Bytes: 100, CriticalPath: 3}},
		{"ring n=2", refRingAllReduce(2, 1000), DAGStats{Flows: 2 * 2, Bytes: 2 * 1000, CriticalPath: 2}},
		{"ring n=5", refRingAllReduce(5, 1000), DAGStats{Flows: 8 * 5, Bytes: 8 * 1000, CriticalPath: 8}},
		{"ring n=13", refRingAllReduce(13, 12345), DAGStats{Flows: 24 * 13, Bytes: 24 * 12345, CriticalPath: 24}},
	}
	for _, c := range cases {
		got, err := StatsOf(build(t, c.b))
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestStatsOfRefusesACycle(t *testing.T) {
	b := NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(2), GPUsPerServer: 2, TotalGPUs: 2, Pieces: 2})
	first := b.Add(Flow{Src: 0, Dst: 1, Bytes: 1})
	second := b.Add(Flow{Src: 1, Dst: 0, Bytes: 1}, first)
	b.AddParent(first, second)
	if _, err := StatsOf(build(t, b)); err == nil || err.Error() != "the DAG has a cycle" {
		t.Errorf("a cycle gives %v", err)
	}
}

// TestWriteCSV compares WriteCSV with files written out by hand (docs/formats.md shows the
// format).
func TestWriteCSV(t *testing.T) {
	cases := []struct {
		name string
		b    *DAGBuilder
		want string
	}{
		{"empty", NewDAGBuilder(Collective{Op: OpAllReduce, Ranks: group(1), GPUsPerServer: 1, TotalGPUs: 1, Pieces: 1}),
			"id,src,dst,bytes,parents,channel,chunk,kind\n"},
		{"diamond", diamond(), `id,src,dst,bytes,parents,channel,chunk,kind
0,0,1,10,,0,0,TREE
1,1,2,20,0,0,1,TREE
2,1,3,30,0,1,1,TREE
3,2,4,40,1;2,0,2,NVLS
`},
		// Rank i sends piece i−s at step s; each flow waits for what its sender received last.
		{"ring n=3", refRingAllReduce(3, 3000), `id,src,dst,bytes,parents,channel,chunk,kind
0,0,1,1000,,0,0,RING
1,1,2,1000,,0,0,RING
2,2,0,1000,,0,0,RING
3,0,1,1000,2,0,1,RING
4,1,2,1000,0,0,1,RING
5,2,0,1000,1,0,1,RING
6,0,1,1000,5,0,2,RING
7,1,2,1000,3,0,2,RING
8,2,0,1000,4,0,2,RING
9,0,1,1000,8,0,3,RING
10,1,2,1000,6,0,3,RING
11,2,0,1000,7,0,3,RING
`},
	}
	for _, c := range cases {
		var b strings.Builder
		if err := WriteCSV(&b, build(t, c.b)); err != nil || b.String() != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.name, err, b.String(), c.want)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

var errFull = errors.New("disk full")

// TestWriteCSVReportsWriteErrors: a failed write is not lost in the buffer.
func TestWriteCSVReportsWriteErrors(t *testing.T) {
	if err := WriteCSV(failingWriter{}, build(t, diamond())); err != errFull {
		t.Errorf("got %v", err)
	}
}
