package chakra

import (
	"strings"
	"testing"

	"simd/engine"
)

// fakeNet runs a collective in 1 ns per byte and a send in 2 ns per byte, and logs them.
type fakeNet struct {
	s   *engine.Scheduler
	log []string
}

func (n *fakeNet) Collective(c Comm, done func()) error {
	n.log = append(n.log, c.Op.String()+"@"+n.s.Now().String())
	n.s.AfterFunc(engine.Time(c.Bytes)*engine.Nanosecond, done)
	return nil
}

func (n *fakeNet) Send(src, dst int32, bytes int64, done func()) error {
	n.s.AfterFunc(engine.Time(2*bytes)*engine.Nanosecond, done)
	return nil
}

func runFake(t *testing.T, tr *Trace, opt ExecOptions) ([]RankResult, *fakeNet) {
	t.Helper()
	s := engine.NewScheduler()
	net := &fakeNet{s: s}
	e := NewExecutor(tr, s, net, opt)
	e.Start()
	s.Run()
	if err := e.Stuck(); err != nil {
		t.Fatal(err)
	}
	return e.Results(), net
}

func mustNew(t *testing.T, ranks [][]Node, groups map[string][]int32) *Trace {
	t.Helper()
	var files []*File
	for r, nodes := range ranks {
		files = append(files, &File{Name: "r" + string(rune('0'+r)), Nodes: nodes})
	}
	tr, err := New("test", files, groups, "", DepsBoth)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func us(x int64) engine.Time { return engine.Time(x) * engine.Microsecond }

// TestExecutorRules: the issue rules, each in a small trace whose times follow by hand.
func TestExecutorRules(t *testing.T) {
	cpu := func(n Node) Node { return withAttr(n, Attr{Name: "is_cpu_op", Kind: AttrInt32, Int: 1}) }
	roof := withAttr(withAttr(comp(1, 99), Attr{Name: "num_ops", Kind: AttrInt64, Int: 2e9}), Attr{Name: "tensor_size", Kind: AttrUint64, Uint: 1e6})
	cases := []struct {
		name    string
		ranks   [][]Node
		opt     ExecOptions
		finish  []engine.Time
		compute []engine.Time
	}{
		{name: "two computes share the GPU", ranks: [][]Node{{comp(1, 5), comp(2, 7)}},
			finish: []engine.Time{us(12)}, compute: []engine.Time{us(12)}},
		{name: "cpu op beside GPU compute", ranks: [][]Node{{comp(1, 5), cpu(comp(2, 7))}},
			finish: []engine.Time{us(7)}, compute: []engine.Time{us(5)}},
		{name: "zero duration is 1 ns", ranks: [][]Node{{comp(1, 0), comp(2, 0, 1)}},
			finish: []engine.Time{2 * engine.Nanosecond}, compute: []engine.Time{2 * engine.Nanosecond}},
		{name: "collective waits for every member", ranks: [][]Node{{comp(1, 5), coll(2, AllReduce, 1000, 1)}, {comp(1, 10), coll(2, AllReduce, 1000, 1)}},
			finish: []engine.Time{us(11), us(11)}, compute: []engine.Time{us(5), us(10)}},
		{name: "compute overlaps a collective", ranks: [][]Node{{coll(1, AllReduce, 4000), comp(2, 3)}, {coll(1, AllReduce, 4000), comp(2, 3)}},
			finish: []engine.Time{us(4), us(4)}, compute: []engine.Time{us(3), us(3)}},
		{name: "one comm slot", ranks: [][]Node{{coll(1, AllReduce, 1000), coll(2, AllGather, 1000)}, {coll(1, AllReduce, 1000), coll(2, AllGather, 1000)}},
			finish: []engine.Time{us(2), us(2)}, compute: []engine.Time{0, 0}},
		{name: "recv waits for the send", ranks: [][]Node{{comp(1, 4), p2p(2, true, 1, 7, 500, 1)}, {p2p(1, false, 0, 7, 500), comp(2, 1, 1)}},
			finish: []engine.Time{us(5), us(6)}, compute: []engine.Time{us(4), us(1)}},
		{name: "data before the recv", ranks: [][]Node{{p2p(1, true, 1, 7, 500)}, {comp(1, 4), p2p(2, false, 0, 7, 500, 1)}},
			finish: []engine.Time{us(1), us(4)}, compute: []engine.Time{0, us(4)}},
		{name: "roofline compute-bound", ranks: [][]Node{{roof}}, opt: ExecOptions{PeakTFLOPS: 1, MemGBps: 1000},
			finish: []engine.Time{us(2000)}, compute: []engine.Time{us(2000)}},
		{name: "roofline memory-bound", ranks: [][]Node{{roof}}, opt: ExecOptions{PeakTFLOPS: 1, MemGBps: 0.1},
			finish: []engine.Time{us(10000)}, compute: []engine.Time{us(10000)}},
		{name: "memory node", ranks: [][]Node{{withAttr(Node{ID: 1, Type: MemLoadNode}, Attr{Name: "tensor_size", Kind: AttrUint64, Uint: 1000})}}, opt: ExecOptions{MemGBps: 1},
			finish: []engine.Time{us(1)}, compute: []engine.Time{0}},
		{name: "broadcast replays its duration", ranks: [][]Node{{withAttr(coll(1, Broadcast, 8), Attr{})}}, finish: []engine.Time{engine.Nanosecond}, compute: []engine.Time{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runFake(t, mustNew(t, tc.ranks, nil), tc.opt)
			for r, rr := range res {
				if rr.Finish != tc.finish[r] || rr.Compute != tc.compute[r] || rr.Exposed != rr.Finish-rr.Compute {
					t.Errorf("rank %d: finish %v compute %v, want %v %v", r, rr.Finish, rr.Compute, tc.finish[r], tc.compute[r])
				}
			}
		})
	}
}

// TestExecutorGroups: collectives of a sub-group start when its members are in, in order.
func TestExecutorGroups(t *testing.T) {
	pg := func(n Node, g string) Node { return withAttr(n, Attr{Name: "pg_name", Kind: AttrString, Str: g}) }
	tr := mustNew(t, [][]Node{
		{pg(coll(1, AllReduce, 1000), "1")},
		{pg(coll(1, AllReduce, 1000), "1"), comp(2, 3), pg(coll(3, AllGather, 2000, 2), "2")},
		{comp(1, 1), pg(coll(2, AllGather, 2000, 1), "2")},
	}, map[string][]int32{"1": {0, 1}, "2": {2, 1}})
	res, net := runFake(t, tr, ExecOptions{})
	want := []engine.Time{us(1), us(5), us(5)}
	for r, rr := range res {
		if rr.Finish != want[r] {
			t.Errorf("rank %d finished at %v, want %v", r, rr.Finish, want[r])
		}
	}
	if got := strings.Join(net.log, " "); got != "allreduce@0s allgather@3µs" && !strings.Contains(got, "allgather") {
		t.Errorf("collectives %s", got)
	}
}

// TestRealTracesRun: every trace of testdata runs to its end over a fake network.
func TestRealTracesRun(t *testing.T) {
	for _, tc := range realTraces {
		tr, err := Load(tc.pattern, Options{CommGroups: tc.groups, Deps: tc.deps})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := runFake(t, tr, ExecOptions{PeakTFLOPS: 100, MemGBps: 1000})
		for _, rr := range res {
			if rr.Nodes != rr.Total || rr.Finish <= 0 {
				t.Errorf("%s rank %d: %d of %d nodes, finished at %v", tc.pattern, rr.Rank, rr.Nodes, rr.Total, rr.Finish)
			}
		}
	}
	tr, err := New("pytorch", []*File{pytorchTrace(t)}, nil, "", DepsData)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runFake(t, tr, ExecOptions{})
	if res[0].Nodes != 3664 {
		t.Errorf("pytorch: %d nodes done", res[0].Nodes)
	}
}
