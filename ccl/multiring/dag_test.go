package multiring

import (
	"errors"
	"fmt"
	"testing"

	"simd/ccl"
)

var sizes = []int{2, 3, 5, 7, 8, 9, 10, 12, 13, 16, 24, 31, 32, 48, 63, 64}

var ops = []ccl.Op{ccl.OpAllGather, ccl.OpReduceScatter, ccl.OpAllReduce}

// request is a group of n consecutive GPUs starting at first, gps GPUs per server.
func request(op ccl.Op, first, n, gps int, bytes int64) ccl.Request {
	ranks := make([]int32, n)
	for i := range ranks {
		ranks[i] = int32(first + i)
	}
	total := (first + n + gps - 1) / gps * gps
	return ccl.Request{Op: op, Ranks: ranks, GPUsPerServer: gps, TotalGPUs: total, Bytes: bytes}
}

// Every Multi-Ring DAG inside one server passes the checker; 4 and 6 GPUs have no rings.
func TestCheckOneServer(t *testing.T) {
	for _, n := range append([]int{1, 4, 6}, sizes...) {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s/n=%d", op, n), func(t *testing.T) {
				if n >= 48 {
					if testing.Short() && op == ccl.OpAllReduce {
						t.Skip("-short: the largest all-reduces take seconds to check")
					}
					t.Parallel()
				}
				// A buffer that does not divide evenly, on a server bigger than the group.
				req := request(op, 64, n, 128, 1<<20+7)
				d, err := New(req)
				if n == 4 || n == 6 {
					if !errors.Is(err, ErrNoDecomposition) {
						t.Fatalf("err = %v, want ErrNoDecomposition", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := ccl.Check(d); err != nil {
					t.Fatal(err)
				}
				R := max(n-1, 0)
				want := R * n * (n - 1)
				if op == ccl.OpAllReduce {
					want *= 2
				}
				if d.NumFlows() != want {
					t.Errorf("%d flows, want %d", d.NumFlows(), want)
				}
			})
		}
	}
}

// The multi-server rings pass the checker for 1, 2, 4 and 8 GPUs per server, for every size in
// the list the servers divide; 3 GPUs per server have no local paths, uneven groups no rings.
func TestCheckServers(t *testing.T) {
	for _, gps := range []int{1, 2, 3, 4, 8} {
		for _, n := range sizes {
			if n <= gps {
				continue
			}
			for _, op := range ops {
				t.Run(fmt.Sprintf("%s/gps=%d/n=%d", op, gps, n), func(t *testing.T) {
					d, err := New(request(op, 0, n, gps, 1<<20+3))
					switch {
					case gps == 3 && n%3 == 0:
						if !errors.Is(err, ErrNoDecomposition) {
							t.Fatalf("err = %v, want ErrNoDecomposition", err)
						}
						return
					case n%gps != 0:
						if !errors.Is(err, ErrShape) {
							t.Fatalf("err = %v, want ErrShape", err)
						}
						return
					case err != nil:
						t.Fatal(err)
					}
					if err := ccl.Check(d); err != nil {
						t.Fatal(err)
					}
					m, R := gps, gps
					want := R * n * (n - 1)
					if op == ccl.OpAllReduce {
						want *= 2
					}
					if d.NumFlows() != want {
						t.Errorf("%d flows, want %d (%d rings)", d.NumFlows(), want, m)
					}
				})
			}
		}
	}
}

// Groups laid out as ccl.Layout lays them out: a DP group takes one GPU per server (m = 1, one
// ring through the servers), an EP group of 16 takes 2 GPUs on each of 8 servers.
func TestCheckStridedGroups(t *testing.T) {
	l := ccl.Layout{GPUs: 64, GPUsPerServer: 8, TP: 4, PP: 1, EP: 4}
	for _, kind := range []ccl.GroupKind{ccl.GroupTP, ccl.GroupDP, ccl.GroupEP, ccl.GroupDPEP} {
		for _, g := range l.Groups(kind)[:2] {
			ranks := make([]int32, len(g))
			for i, r := range g {
				ranks[i] = int32(r)
			}
			req := ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks, GPUsPerServer: 8, TotalGPUs: 64, Bytes: 12345}
			d, err := New(req)
			if len(g) == 4 && req.Servers() == 1 {
				if !errors.Is(err, ErrNoDecomposition) {
					t.Errorf("%s %v: err = %v", kind, g, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %v: %v", kind, g, err)
			}
			if err := ccl.Check(d); err != nil {
				t.Errorf("%s %v: %v", kind, g, err)
			}
		}
	}
}

// On one server every ordered pair of GPUs carries exactly one flow per step: the Multi-Ring
// all-gather is one all-to-all per step (§6.4).
func TestEveryPairOncePerStep(t *testing.T) {
	for _, n := range []int{3, 8, 10, 12, 31} {
		d, err := New(request(ccl.OpAllReduce, 0, n, n, int64(n*(n-1)*10)))
		if err != nil {
			t.Fatal(err)
		}
		count := map[[3]int32]int{}
		for _, f := range d.Flows {
			count[[3]int32{f.Chunk, f.Src, f.Dst}]++
		}
		for s := range 2 * (n - 1) {
			for i := range n {
				for j := range n {
					if i != j && count[[3]int32{int32(s), int32(i), int32(j)}] != 1 {
						t.Fatalf("n=%d step %d: %d→%d carries %d flows", n, s, i, j, count[[3]int32{int32(s), int32(i), int32(j)}])
					}
				}
			}
		}
		for _, f := range d.Flows {
			if f.Bytes != 10 {
				t.Fatalf("n=%d: a flow of %d bytes, want S/(n(n−1)) = 10", n, f.Bytes)
			}
		}
	}
}

// Across servers every GPU sends, per step, m flows: one over the network, rail-aligned where
// ServerCycles says so, and m−1 to distinct GPUs of its own server.
func TestOneNICFlowPerStep(t *testing.T) {
	for _, c := range []struct{ m, u int }{{1, 5}, {2, 2}, {2, 3}, {4, 2}, {4, 3}, {7, 2}, {7, 3}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {6, 3}, {12, 3}} {
		n := c.m * c.u
		req := request(ccl.OpAllGather, 0, n, c.m, int64(n*c.m*8))
		rings, topo, err := Rings(req)
		if err != nil {
			t.Fatal(err)
		}
		wantAligned := c.u%2 == 0 || c.m%4 == 0 || c.m == 1
		if !topo.MultiServer || topo.Servers != c.u || topo.PerServer != c.m || topo.RailAligned != wantAligned {
			t.Errorf("m=%d u=%d: topology %+v", c.m, c.u, topo)
		}
		d, err := Build(req, rings)
		if err != nil {
			t.Fatal(err)
		}
		type key struct{ step, src int32 }
		inter := map[key]int{}
		intra := map[key]map[int32]bool{}
		crossRail := 0
		for _, f := range d.Flows {
			k := key{f.Chunk, f.Src}
			if f.Src/int32(c.m) != f.Dst/int32(c.m) {
				inter[k]++
				if f.Src%int32(c.m) != f.Dst%int32(c.m) {
					crossRail++
				}
				continue
			}
			if intra[k] == nil {
				intra[k] = map[int32]bool{}
			}
			if intra[k][f.Dst] {
				t.Fatalf("m=%d u=%d: %d sends twice to %d in step %d", c.m, c.u, f.Src, f.Dst, f.Chunk)
			}
			intra[k][f.Dst] = true
		}
		for s := range n - 1 {
			for g := range n {
				k := key{int32(s), int32(g)}
				if inter[k] != 1 || len(intra[k]) != c.m-1 {
					t.Fatalf("m=%d u=%d: GPU %d step %d sends %d inter, %d intra", c.m, c.u, g, s, inter[k], len(intra[k]))
				}
			}
		}
		if (crossRail == 0) != wantAligned {
			t.Errorf("m=%d u=%d: %d cross-rail flows, rail-aligned %v", c.m, c.u, crossRail, wantAligned)
		}
	}
}

// ServerCycles: m Hamiltonian cycles of the m·u GPUs, arc-disjoint, using every intra-server
// arc once and giving every GPU one inter-server out-arc and in-arc.
func TestServerCycles(t *testing.T) {
	for _, m := range []int{1, 2, 4, 6, 7, 8, 9, 10, 12, 16} {
		for u := 2; u <= 7; u++ {
			rings, aligned, err := ServerCycles(m, u)
			if err != nil {
				t.Fatal(err)
			}
			n := m * u
			if len(rings) != m {
				t.Fatalf("m=%d u=%d: %d rings", m, u, len(rings))
			}
			used := map[[2]int]int{}
			out := make([]int, n)
			in := make([]int, n)
			for _, r := range rings {
				if err := checkRing(r, n); err != nil {
					t.Fatalf("m=%d u=%d: %v", m, u, err)
				}
				for j, v := range r {
					w := r[(j+1)%n]
					used[[2]int{v, w}]++
					if v/m != w/m {
						out[v]++
						in[w]++
						if aligned && v%m != w%m {
							t.Errorf("m=%d u=%d: hop %d→%d is not rail-aligned", m, u, v, w)
						}
					}
				}
			}
			for a, k := range used {
				if k != 1 {
					t.Fatalf("m=%d u=%d: arc %v used %d times", m, u, a, k)
				}
			}
			for v := range n {
				if out[v] != 1 || in[v] != 1 {
					t.Fatalf("m=%d u=%d: GPU %d has %d inter-server out-arcs, %d in-arcs", m, u, v, out[v], in[v])
				}
				for w := range n {
					if v != w && v/m == w/m && used[[2]int{v, w}] != 1 {
						t.Fatalf("m=%d u=%d: intra arc %d→%d unused", m, u, v, w)
					}
				}
			}
			if want := u%2 == 0 || m%4 == 0 || m == 1; aligned != want {
				t.Errorf("m=%d u=%d: rail-aligned %v, want %v", m, u, aligned, want)
			}
		}
	}
}
