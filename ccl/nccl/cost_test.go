package nccl

import (
	"fmt"
	"math"
	"testing"

	"simd/ccl"
)

// NVLink: 1 µs, 300 GB/s; network: 5 µs, 50 GB/s; reduction 1 TB/s.
var testCosts = ccl.LinkCosts{
	Intra: ccl.AlphaBeta{Alpha: 1e-6, Beta: 1 / 300e9, Gamma: 1e-12},
	Inter: ccl.AlphaBeta{Alpha: 5e-6, Beta: 1 / 50e9},
}

// alphaOnly makes every hop cost 1 and bytes free, so a time counts the hops on the critical
// path.
var alphaOnly = ccl.LinkCosts{Intra: ccl.AlphaBeta{Alpha: 1}, Inter: ccl.AlphaBeta{Alpha: 1}}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Each formula against a number worked out by hand (see the comments).
func TestCostsByHand(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		name string
		f    func() (float64, error)
		want float64
	}{
		// 16 GPUs, 8 per server, 64 MiB: S/n = 4 MiB per step; NVLink carries 7/8 of it
		// (1 µs + 3.5 MiB/300 GB/s = 13.23 µs), the network 1/8 (5 µs + 512 KiB/50 GB/s =
		// 15.49 µs): 30 steps × 15.48576 µs + 15/16 × 64 MiB × 1 ps = 527.48736 µs.
		{"ring 16/8", func() (float64, error) { return RingTime(ccl.OpAllReduce, 16, 8, 64*MiB, testCosts) }, 527.48736e-6},
		// One GPU per server, 4 ranks, 16 MiB: 2(n−1)α + 2(n−1)/n·Sβ + (n−1)/n·Sγ =
		// 30 µs + 1.5 × 16 MiB / 50 GB/s + 0.75 × 16 MiB × 1 ps = 545.899392 µs.
		{"ring 4/1", func() (float64, error) { return RingTime(ccl.OpAllReduce, 4, 1, 16*MiB, testCosts) }, 545.899392e-6},
		// One server of 8, 64 MiB: 14 × (1 µs + 8 MiB/300 GB/s) + 7/8 × 64 MiB × 1 ps.
		{"ring 8/8", func() (float64, error) { return RingTime(ccl.OpAllReduce, 8, 8, 64*MiB, testCosts) }, 464.1886293333333e-6},
		{"ring 8/8 all-gather", func() (float64, error) { return RingTime(ccl.OpAllGather, 8, 8, 64*MiB, testCosts) }, 7 * (1e-6 + 8*MiB/300e9)},
		{"ring 8/8 reduce-scatter", func() (float64, error) { return RingTime(ccl.OpReduceScatter, 8, 8, 64*MiB, testCosts) }, 7*(1e-6+8*MiB/300e9) + 7.0/8*64*MiB*1e-12},
		// SimCCL's PXN, 16 GPUs, 8 per server: 30 split steps of (1 µs + 4 MiB/300 GB/s) +
		// (5 µs + 512 KiB/50 GB/s) = 30.466773 µs, and the reduction 62.91456 µs: 976.91776 µs.
		{"pxn 16/8", func() (float64, error) { return PXNTime(ccl.OpAllReduce, 16, 8, 64*MiB, testCosts, PXNSimCCL) }, 976.91776e-6},
		// The NCCL-like PXN: 22 split steps (15 + 7), no direct step, 7 dropped steps of 1 µs +
		// 3.5 MiB/300 GB/s = 13.233387 µs, the last step (6 of 8 send) 1 µs + 3 MiB/300 GB/s =
		// 11.48576 µs, and the reduction: 837.30304 µs.
		{"pxn nccl 16/8", func() (float64, error) { return PXNTime(ccl.OpAllReduce, 16, 8, 64*MiB, testCosts, PXNNCCL) }, 837.30304e-6},
		// SimCCL's PXN all-gather is the plain ring's.
		{"pxn all-gather 16/8", func() (float64, error) { return PXNTime(ccl.OpAllGather, 16, 8, 64*MiB, testCosts, PXNSimCCL) }, 15 * 15.48576e-6},
		// All-to-all, 16 GPUs, 8 per server, 16 MiB: 1 MiB to each; NVLink 7 MiB, network
		// 8 MiB: max(1 µs + 7 MiB/300 GB/s, 5 µs + 8 MiB/50 GB/s).
		{"all-to-all 16/8", func() (float64, error) { return RingTime(ccl.OpAllToAll, 16, 8, 16*MiB, testCosts) }, 5e-6 + 8*MiB/50e9},
		// 4 servers of one GPU, 1 MiB, 2 chunks: the tree over 4 nodes is 0→2→{1,3}, two
		// network hops deep; up hop 5 µs + 512 KiB/50 GB/s + 512 KiB × 1 ps = 16.010048 µs,
		// down hop 15.48576 µs; 2 × (up + down) + 1 × up = 79.001664 µs.
		{"tree 4/1", func() (float64, error) { return TreeTime(4, 1, MiB, 2, testCosts) }, 79.001664e-6},
		// NVLS, 8 GPUs, 64 MiB in 4 chunks: 5 × (1 µs + 16 MiB/300 GB/s).
		{"nvls 8", func() (float64, error) { return NVLSTime(8, 64*MiB, 0, testCosts) }, 284.62026666666665e-6},
		// NVLS-Tree, 2 servers of 8, 1 MiB, 2 chunks: per chunk step 512 KiB, heads 64 KiB;
		// tree height 1: up 6.376256 µs + down 6.31072 µs; to the NVSwitch 2.5291733 µs twice,
		// to the head 1.2839893 µs, back 1.2184533 µs; plus 1 × the worst hop (up).
		{"nvlstree 16/8", func() (float64, error) { return NVLSTreeTime(16, 8, MiB, 2, testCosts) }, 26.624021333333335e-6},
	} {
		got, err := c.f()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !near(got, c.want) {
			t.Errorf("%s: %.12g s, want %.12g", c.name, got, c.want)
		}
	}
}

// The α terms of each formula are the steps on the critical path of the DAG the generator
// builds: with α = 1 and free bytes the formula counts them.
func TestCostsCountTheCriticalPath(t *testing.T) {
	type shape struct{ n, m int }
	shapes := []shape{{2, 1}, {2, 2}, {5, 1}, {8, 8}, {8, 2}, {12, 4}, {16, 8}, {24, 8}, {13, 1}, {12, 3}, {32, 8}}
	for _, s := range shapes {
		for _, op := range []ccl.Op{ccl.OpAllReduce, ccl.OpReduceScatter, ccl.OpAllGather, ccl.OpAllToAll} {
			req := consecutive(op, s.n, s.m, int64(s.n)*4096)
			for _, opt := range []Options{{}, {PXN: true}, {PXN: true, PXNVariant: PXNNCCL}} {
				pxn := opt.PXN
				name := fmt.Sprintf("n=%d m=%d %s pxn=%v/%s", s.n, s.m, op, pxn, opt.PXNVariant)
				d, err := Ring(req, opt)
				if err != nil {
					t.Fatal(err)
				}
				f := RingTime
				if pxn {
					f = func(op ccl.Op, n, m int, bytes int64, c ccl.LinkCosts) (float64, error) {
						return PXNTime(op, n, m, bytes, c, opt.PXNVariant)
					}
				}
				want, err := f(op, s.n, s.m, req.Bytes, alphaOnly)
				if err != nil {
					t.Fatal(err)
				}
				got := lockstepDepth(d)
				if op == ccl.OpAllToAll {
					got = longestChain(d) // no steps: one shot, or relay then network
				}
				if float64(got) != want {
					t.Errorf("%s: the DAG's critical path is %d steps, the formula counts %g", name, got, want)
				}
				if !pxn && op != ccl.OpAllToAll && longestChain(d) != got {
					t.Errorf("%s: longest chain %d ≠ %d steps", name, longestChain(d), got)
				}
			}
		}
		req := consecutive(ccl.OpAllReduce, s.n, s.m, 1<<20)
		for _, K := range []int{1, 3} {
			d, err := Tree(req, Options{Chunks: K})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := TreeTime(s.n, s.m, req.Bytes, K, alphaOnly)
			if got := longestChain(d); float64(got) != want {
				t.Errorf("tree n=%d m=%d K=%d: longest chain %d, formula %g", s.n, s.m, K, got, want)
			}
			if s.n == s.m {
				d, err := NVLS(req, Options{Chunks: K})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := NVLSTime(s.n, req.Bytes, K, alphaOnly)
				if got := longestChain(d); float64(got) != want {
					t.Errorf("NVLS n=%d K=%d: longest chain %d, formula %g", s.n, K, got, want)
				}
			} else {
				d, err := NVLSTree(req, Options{Chunks: K})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := NVLSTreeTime(s.n, s.m, req.Bytes, K, alphaOnly)
				if got := longestChain(d); float64(got) != want {
					t.Errorf("NVLS-Tree n=%d m=%d K=%d: longest chain %d, formula %g", s.n, s.m, K, got, want)
				}
			}
		}
	}
}

// The default chunk counts of the formulas are the generators'.
func TestCostsDefaultChunks(t *testing.T) {
	req := consecutive(ccl.OpAllReduce, 32, 8, 48<<20)
	d, err := Tree(req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := TreeTime(32, 8, req.Bytes, 0, alphaOnly)
	if got := longestChain(d); float64(got) != want {
		t.Errorf("tree: longest chain %d, formula %g", got, want)
	}
	d, err = NVLSTree(req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ = NVLSTreeTime(32, 8, req.Bytes, 0, alphaOnly)
	if got := longestChain(d); float64(got) != want {
		t.Errorf("NVLS-Tree: longest chain %d, formula %g", got, want)
	}
}

// Sanity: more bytes never cost less; a ring on one server is the textbook formula; NVLS beats
// the ring at large sizes (about half the bytes through each port).
func TestCostsShape(t *testing.T) {
	prev := 0.0
	for b := int64(1); b < 1<<34; b *= 4 {
		r, _ := RingTime(ccl.OpAllReduce, 64, 8, b, testCosts)
		if r < prev {
			t.Fatalf("ring time falls at %d bytes", b)
		}
		prev = r
	}
	const S = 1 << 30
	r, _ := RingTime(ccl.OpAllReduce, 8, 8, S, testCosts)
	textbook := 14*1e-6 + 2*7.0/8*S/300e9 + 7.0/8*S*1e-12
	if !near(r, textbook) {
		t.Errorf("one-server ring %g, textbook %g", r, textbook)
	}
	nv, _ := NVLSTime(8, S, 64, testCosts)
	if nv > 0.6*r {
		t.Errorf("NVLS %g s against ring %g s", nv, r)
	}
	for _, f := range []func() (float64, error){
		func() (float64, error) { return RingTime(ccl.OpAllReduce, 12, 5, 1, testCosts) },
		func() (float64, error) { return RingTime(ccl.OpAllReduce, 0, 1, 1, testCosts) },
		func() (float64, error) { return PXNTime(ccl.OpAllReduce, 8, 4, -1, testCosts, PXNSimCCL) },
		func() (float64, error) { return TreeTime(8, 4, 1, -1, testCosts) },
		func() (float64, error) { return NVLSTreeTime(8, 8, 1, 0, testCosts) },
		func() (float64, error) { return RingTime(ccl.OpNone, 8, 8, 1, testCosts) },
	} {
		if _, err := f(); err == nil {
			t.Error("bad input accepted")
		}
	}
}
