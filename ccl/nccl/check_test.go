package nccl

import (
	"fmt"
	"slices"
	"testing"

	"simd/ccl"
)

type generator struct {
	name  string
	ops   []ccl.Op
	build func(ccl.Request) (ccl.DAG, error)
	// builds says whether the generator takes the group (else it must refuse it).
	builds func(op ccl.Op, g *geometry) bool
	// redundant says its all-reduce delivers finished chunks to ranks that hold them, which the
	// check must allow.
	redundant bool
}

// check is ccl.CheckWith with what the generator needs.
func (g *generator) check(d ccl.DAG) error {
	return ccl.CheckWith(d, ccl.CheckOptions{AllowRedundant: g.redundant && d.Collective().Op == ccl.OpAllReduce})
}

var allOps = []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather, ccl.OpAllToAll}

var generators = []generator{
	{"ring", allOps, func(r ccl.Request) (ccl.DAG, error) { return Ring(r, Options{}) }, nil, false},
	{"pxn", allOps, func(r ccl.Request) (ccl.DAG, error) { return Ring(r, Options{PXN: true}) },
		func(op ccl.Op, g *geometry) bool {
			return op == ccl.OpAllGather || op == ccl.OpAllToAll || g.nsrv == 1 || g.uniform()
		}, true},
	{"pxn-nccl", allOps, func(r ccl.Request) (ccl.DAG, error) { return Ring(r, Options{PXN: true, PXNVariant: PXNNCCL}) },
		func(op ccl.Op, g *geometry) bool { return op == ccl.OpAllToAll || g.nsrv == 1 || g.uniform() }, false},
	{"tree", []ccl.Op{ccl.OpAllReduce}, func(r ccl.Request) (ccl.DAG, error) { return Tree(r, Options{Chunks: 2}) }, nil, false},
	{"nvls", []ccl.Op{ccl.OpAllReduce}, func(r ccl.Request) (ccl.DAG, error) { return NVLS(r, Options{Chunks: 2}) },
		func(_ ccl.Op, g *geometry) bool { return g.nsrv == 1 }, false},
	{"nvlstree", []ccl.Op{ccl.OpAllReduce}, func(r ccl.Request) (ccl.DAG, error) { return NVLSTree(r, Options{Chunks: 2}) },
		func(_ ccl.Op, g *geometry) bool { return g.nsrv >= 2 }, false},
}

// groupsFor is the groups of n ranks with gps GPUs per server the property test runs: the
// consecutive ranks (a TP group), a DP group of TP=2 (every other rank), and a DP group with one
// GPU per server, on its last rail.
func groupsFor(op ccl.Op, n, gps int, bytes int64) []ccl.Request {
	out := []ccl.Request{consecutive(op, n, gps, bytes)}
	if gps >= 2 {
		out = append(out, strided(op, n, gps, 2, 1, bytes))
	}
	if gps >= 4 {
		out = append(out, strided(op, n, gps, gps, gps-1, bytes))
	}
	return out
}

// Every generator, for every collective it supports, passes ccl.Check on groups of 1 to 64
// ranks (primes included), 1 to 8 GPUs per server, consecutive and strided.
func TestCheckAll(t *testing.T) {
	sizes := []int{1, 2, 3, 5, 7, 8, 12, 13, 16, 24, 31, 32, 48, 64}
	for _, gen := range generators {
		for _, op := range gen.ops {
			for _, n := range sizes {
				for _, gps := range []int{1, 2, 4, 8} {
					for gi, req := range groupsFor(op, n, gps, int64(n)*1000+7) {
						big := n >= 48
						if testing.Short() && big && !(gps == 8 && gi == 0) {
							continue
						}
						name := fmt.Sprintf("%s/%s/n%d/gps%d/group%d", gen.name, op, n, gps, gi)
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							g := newGeometry(&req)
							d, err := gen.build(req)
							if gen.builds != nil && !gen.builds(op, &g) {
								if err == nil {
									t.Fatal("accepted a group it cannot build")
								}
								return
							}
							if err != nil {
								t.Fatal(err)
							}
							if err := gen.check(d); err != nil {
								t.Fatal(err)
							}
						})
					}
				}
			}
		}
	}
}

// Larger chunk counts and explicit channel counts also check.
func TestCheckOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		d    func() (ccl.DAG, error)
	}{
		{"tree K=5", func() (ccl.DAG, error) { return Tree(consecutive(ccl.OpAllReduce, 12, 4, 1<<20), Options{Chunks: 5}) }},
		{"tree 3 channels", func() (ccl.DAG, error) {
			r := consecutive(ccl.OpAllReduce, 10, 4, 1<<20)
			r.Channels = 3
			return Tree(r, Options{Chunks: 2})
		}},
		{"tree default", func() (ccl.DAG, error) { return Tree(consecutive(ccl.OpAllReduce, 16, 8, 1<<20), Options{}) }},
		{"nvls default", func() (ccl.DAG, error) { return NVLS(consecutive(ccl.OpAllReduce, 8, 8, 1<<20), Options{}) }},
		{"nvlstree K=4 5 channels", func() (ccl.DAG, error) {
			r := consecutive(ccl.OpAllReduce, 24, 8, 1<<20)
			r.Channels = 5
			return NVLSTree(r, Options{Chunks: 4})
		}},
		{"ring 3 channels on 8 per server", func() (ccl.DAG, error) {
			r := consecutive(ccl.OpAllReduce, 16, 8, 1<<20)
			r.Channels = 3
			return Ring(r, Options{})
		}},
		{"pxn 12 channels", func() (ccl.DAG, error) {
			r := consecutive(ccl.OpAllReduce, 12, 4, 1<<20)
			r.Channels = 12
			return Ring(r, Options{PXN: true, PXNVariant: PXNNCCL})
		}},
		{"pxn reduce-scatter 12 channels", func() (ccl.DAG, error) {
			r := consecutive(ccl.OpReduceScatter, 12, 4, 1<<20)
			r.Channels = 12
			return Ring(r, Options{PXN: true})
		}},
		{"ring of 0 bytes", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllGather, 6, 2, 0), Options{}) }},
		{"ring of fewer bytes than pieces", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllReduce, 8, 4, 5), Options{}) }},
	} {
		d, err := c.d()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := ccl.Check(d); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	r := consecutive(ccl.OpAllReduce, 12, 4, 1<<20)
	r.Channels = 12
	d, err := Ring(r, Options{PXN: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ccl.CheckWith(d, ccl.CheckOptions{AllowRedundant: true}); err != nil {
		t.Errorf("SimCCL's pxn 12 channels: %v", err)
	}
}

// Deliberately broken variants of each generator's DAGs are rejected.
func TestCheckRejectsBroken(t *testing.T) {
	cases := []struct {
		name string
		d    func() (ccl.DAG, error)
		// redundant: the DAG delivers finished chunks to ranks that hold them (SimCCL's PXN
		// all-reduce), which the check allows; the chunk duplicated is then one of the
		// reduce-scatter phase (a finished one sent again would be allowed).
		redundant bool
	}{
		{"ring", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllReduce, 12, 4, 12000), Options{}) }, false},
		{"ring reduce-scatter", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpReduceScatter, 6, 2, 600), Options{}) }, false},
		{"ring all-gather", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllGather, 6, 2, 600), Options{}) }, false},
		{"pxn", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllReduce, 12, 4, 12000), Options{PXN: true}) }, true},
		{"pxn reduce-scatter", func() (ccl.DAG, error) {
			return Ring(consecutive(ccl.OpReduceScatter, 12, 4, 12000), Options{PXN: true})
		}, false},
		{"pxn-nccl", func() (ccl.DAG, error) {
			return Ring(consecutive(ccl.OpAllReduce, 12, 4, 12000), Options{PXN: true, PXNVariant: PXNNCCL})
		}, false},
		{"pxn-nccl all-gather", func() (ccl.DAG, error) {
			return Ring(consecutive(ccl.OpAllGather, 12, 4, 12000), Options{PXN: true, PXNVariant: PXNNCCL})
		}, false},
		{"pxn-nccl all-to-all", func() (ccl.DAG, error) {
			return Ring(consecutive(ccl.OpAllToAll, 8, 4, 800), Options{PXN: true, PXNVariant: PXNNCCL})
		}, false},
		{"all-to-all", func() (ccl.DAG, error) { return Ring(consecutive(ccl.OpAllToAll, 5, 4, 500), Options{}) }, false},
		{"tree", func() (ccl.DAG, error) { return Tree(consecutive(ccl.OpAllReduce, 12, 4, 12000), Options{Chunks: 2}) }, false},
		{"nvls", func() (ccl.DAG, error) { return NVLS(consecutive(ccl.OpAllReduce, 8, 8, 8000), Options{}) }, false},
		{"nvlstree", func() (ccl.DAG, error) {
			return NVLSTree(consecutive(ccl.OpAllReduce, 12, 4, 12000), Options{Chunks: 2})
		}, false},
	}
	for _, c := range cases {
		d, err := c.d()
		if err != nil {
			t.Fatal(err)
		}
		opt := ccl.CheckOptions{AllowRedundant: c.redundant}
		if err := ccl.CheckWith(d, opt); err != nil {
			t.Fatalf("%s: the original fails: %v", c.name, err)
		}
		nf := d.NumFlows()
		// The deepest flow with parents, and a flow in the middle.
		deep := -1
		for i := nf - 1; i >= 0 && deep < 0; i-- {
			if len(d.Parents(ccl.FlowID(i), nil)) > 0 {
				deep = i
			}
		}
		mid, dup := nf/2, nf/2
		if c.redundant {
			dup = nf / 4
		}
		variants := map[string]ccl.DAG{
			"drop the last flow": rebuild(t, d, func(id int, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool) {
				return ps, id != nf-1
			}),
			"drop a middle flow": rebuild(t, d, func(id int, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool) {
				return ps, id != mid
			}),
			"duplicate a chunk": func() ccl.DAG {
				fd := materialize(t, d)
				b := ccl.NewDAGBuilder(fd.Coll)
				for i, f := range fd.Flows {
					b.Add(f, fd.Parents(ccl.FlowID(i), nil)...)
				}
				b.Add(fd.Flows[dup], fd.Parents(ccl.FlowID(dup), nil)...)
				out, err := b.Build()
				if err != nil {
					t.Fatal(err)
				}
				return out
			}(),
			"wrong bytes": rebuild(t, d, func(id int, f *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool) {
				if id == mid {
					f.Bytes++
				}
				return ps, true
			}),
		}
		if deep >= 0 {
			variants["wrong parent"] = rebuild(t, d, func(id int, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool) {
				if id != deep {
					return ps, true
				}
				wrong := ccl.FlowID(0)
				if slices.Contains(ps, wrong) {
					wrong = 1
				}
				return []ccl.FlowID{wrong}, true
			})
			variants["missing parent"] = rebuild(t, d, func(id int, _ *ccl.Flow, ps []ccl.FlowID) ([]ccl.FlowID, bool) {
				if id == deep {
					return nil, true
				}
				return ps, true
			})
		}
		for name, v := range variants {
			if err := ccl.CheckWith(v, opt); err == nil {
				t.Errorf("%s, %s: accepted", c.name, name)
			}
		}
	}
}

// Every generator's Children are the inverse of its Parents, and Generate dispatches.
func TestParentsAndChildrenAgree(t *testing.T) {
	for _, gen := range generators {
		for _, op := range gen.ops {
			for _, req := range []ccl.Request{consecutive(op, 12, 4, 1<<20), consecutive(op, 8, 8, 1<<20), strided(op, 6, 4, 3, 1, 1<<20)} {
				d, err := gen.build(req)
				if err != nil {
					continue // refused groups are TestCheckAll's business
				}
				sameDAG(t, d, materialize(t, d))
			}
		}
	}
	req := consecutive(ccl.OpAllReduce, 16, 8, 1<<20)
	for _, a := range []Algorithm{AlgoRing, AlgoTree, AlgoNVLSTree} {
		d, err := Generate(a, req, Options{Chunks: 1})
		if err != nil || ccl.Check(d) != nil {
			t.Errorf("Generate(%s): %v", a, err)
		}
	}
	if _, err := Generate(AlgoNVLS, consecutive(ccl.OpAllReduce, 8, 8, 1), Options{}); err != nil {
		t.Error(err)
	}
	for _, a := range []Algorithm{AlgoCollNetDirect, AlgoCollNetChain, AlgoPAT, Algorithm(42)} {
		if _, err := Generate(a, req, Options{}); err == nil {
			t.Errorf("Generate(%s) accepted", a)
		}
	}
}

// A DAG that lists its roots (ccl.RootsDAG) lists exactly the flows without parents, in id
// order.
func TestRootsAreTheFlowsWithoutParents(t *testing.T) {
	tested := 0
	for _, gen := range generators {
		for _, op := range gen.ops {
			for n := 1; n <= 24; n++ {
				for _, gps := range []int{1, 2, 4, 8} {
					for _, req := range groupsFor(op, n, gps, 1<<20) {
						d, err := gen.build(req)
						if err != nil {
							continue
						}
						rd, ok := d.(ccl.RootsDAG)
						if !ok {
							continue
						}
						var want []ccl.FlowID
						for id := range ccl.FlowID(d.NumFlows()) {
							if len(d.Parents(id, nil)) == 0 {
								want = append(want, id)
							}
						}
						if got := rd.Roots(nil); !slices.Equal(got, want) {
							t.Fatalf("%s %s, %d ranks, %d per server: Roots %v, want %v", gen.name, op, n, gps, got, want)
						}
						tested++
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Fatal("no generator lists its roots")
	}
}
