package nccl

import (
	"fmt"
	"slices"
	"testing"

	"simd/ccl"
)

// treeString lists parent→children for every node of tree t over n, ascending.
func treeString(n, t int) string {
	kids := make([][]int, n)
	root := -1
	for r := range n {
		p, _, _, _ := dtree(n, r, t)
		if p < 0 {
			root = r
			continue
		}
		kids[p] = append(kids[p], r)
	}
	s := fmt.Sprintf("root %d", root)
	for p, k := range kids {
		if len(k) > 0 {
			s += fmt.Sprintf("; %d:%v", p, k)
		}
	}
	return s
}

// The trees drawn in NCCL's trees.cc: the binary tree over 14 ranks, its mirror over 12 and its
// shift over 13.
func TestDoubleBinaryTreeByHand(t *testing.T) {
	for _, c := range []struct {
		n, t int
		want string
	}{
		{14, 0, "root 0; 0:[8]; 2:[1 3]; 4:[2 6]; 6:[5 7]; 8:[4 12]; 10:[9 11]; 12:[10 13]"},
		{12, 0, "root 0; 0:[8]; 2:[1 3]; 4:[2 6]; 6:[5 7]; 8:[4 10]; 10:[9 11]"},
		{12, 1, "root 11; 1:[0 2]; 3:[1 7]; 5:[4 6]; 7:[5 9]; 9:[8 10]; 11:[3]"},
		{13, 0, "root 0; 0:[8]; 2:[1 3]; 4:[2 6]; 6:[5 7]; 8:[4 12]; 10:[9 11]; 12:[10]"},
		{13, 1, "root 1; 0:[11]; 1:[9]; 3:[2 4]; 5:[3 7]; 7:[6 8]; 9:[0 5]; 11:[10 12]"},
		{2, 0, "root 0; 0:[1]"},
		{2, 1, "root 1; 1:[0]"},
		{3, 0, "root 0; 0:[2]; 2:[1]"},
		{3, 1, "root 1; 0:[2]; 1:[0]"}, // the shift of 0→2→1
		{1, 0, "root 0"},
	} {
		if got := treeString(c.n, c.t); got != c.want {
			t.Errorf("n=%d tree %d: %s, want %s", c.n, c.t, got, c.want)
		}
	}
}

// Both trees of every size are trees rooted where ncclGetDtreeRoots says, with at most one child
// of each type per node, and the children NCCL lists are the nodes that name it as parent.
func TestDoubleBinaryTreeProperties(t *testing.T) {
	for n := 1; n <= 130; n++ {
		for tr := range 2 {
			wantRoot := 0
			if tr == 1 {
				wantRoot = n - 1
				if n%2 == 1 && n > 1 {
					wantRoot = 1
				}
			}
			kids := make([][]int, n)
			types := make([][2]int, n)
			for r := range n {
				p, d0, d1, ct := dtree(n, r, tr)
				if p < 0 {
					if r != wantRoot {
						t.Fatalf("n=%d tree %d: root %d, want %d", n, tr, r, wantRoot)
					}
				} else {
					kids[p] = append(kids[p], r)
					types[p][ct]++
				}
				for _, d := range []int{d0, d1} {
					if d >= 0 {
						if pp, _, _, _ := dtree(n, d, tr); pp != r {
							t.Fatalf("n=%d tree %d: %d lists child %d whose parent is %d", n, tr, r, d, pp)
						}
					}
				}
			}
			for r := range n {
				if types[r][0] > 1 || types[r][1] > 1 {
					t.Fatalf("n=%d tree %d: node %d has children of types %v", n, tr, r, types[r])
				}
				_, d0, d1, _ := dtree(n, r, tr)
				var listed []int
				for _, d := range []int{d0, d1} {
					if d >= 0 {
						listed = append(listed, d)
					}
				}
				slices.Sort(listed)
				slices.Sort(kids[r])
				if !slices.Equal(listed, kids[r]) {
					t.Fatalf("n=%d tree %d: node %d lists %v, has %v", n, tr, r, listed, kids[r])
				}
			}
			up := make([]int32, n)
			for r := range n {
				p, _, _, _ := dtree(n, r, tr)
				up[r] = int32(p)
			}
			if order, _ := treeOrder(up); len(order) != n {
				t.Fatalf("n=%d tree %d: %d nodes reach the root", n, tr, len(order))
			}
		}
	}
}

// The rank-level tree: a chain inside each server in the channel's order, each server's first GPU
// sending to its parent server's second GPU (child 0) or first GPU (child 1).
func TestRankTree(t *testing.T) {
	// 4 servers × 3 GPUs; tree 0 over servers: 0→{2}, 2→{1,3}.
	g := uniformGeometry(12, 3)
	up := rankTree(&g, 0, 0)
	want := []int32{
		-1, 0, 1, // server 0: chain 0←1←2, root
		7, 3, 4, // server 1 (child 0 of server 2): head 3 → server 2's second GPU, 7
		0, 6, 7, // server 2 (child 1 of server 0): head 6 → server 0's first GPU
		6, 9, 10, // server 3 (child 1 of server 2): head 9 → server 2's first GPU
	}
	if !slices.Equal(up, want) {
		t.Errorf("channel 0: %v, want %v", up, want)
	}
	// Channel 3: tree 1 (the mirror: 3→{1}, 1→{2 (child 0), 0 (child 1)}), each server in the
	// order 3k+1, 3k+2, 3k.
	up = rankTree(&g, 1, 1)
	want = []int32{
		2, 4, 1, // server 0 (child 1 of server 1): head 1 → server 1's first GPU, 4
		5, 10, 4, // server 1 (child 1 of server 3): head 4 → server 3's first GPU, 10
		8, 5, 7, // server 2 (child 0 of server 1): head 7 → server 1's second GPU, 5
		11, -1, 10, // server 3: root
	}
	if !slices.Equal(up, want) {
		t.Errorf("channel 3: %v, want %v", up, want)
	}
	// Every channel: one tree over all ranks, at most 3 children per rank, N−1 links between
	// servers, each leaving a server from its head.
	for _, tr := range []int{0, 1} {
		for rot := range 3 {
			up := rankTree(&g, tr, rot)
			order, kids := treeOrder(up)
			if len(order) != 12 {
				t.Fatalf("tree %d rot %d: %d ranks reach the root", tr, rot, len(order))
			}
			inter := 0
			for r, p := range up {
				if len(kids[r]) > 3 {
					t.Fatalf("rank %d has %d children", r, len(kids[r]))
				}
				if p >= 0 && g.srv[r] != g.srv[p] {
					inter++
					if r != g.rotated(int(g.srv[r]), rot, 0) {
						t.Fatalf("tree %d rot %d: rank %d leaves its server but is not its head", tr, rot, r)
					}
				}
			}
			if inter != 3 {
				t.Fatalf("tree %d rot %d: %d links between servers, want 3", tr, rot, inter)
			}
		}
	}
}

// NCCL's tree chunk rule (enqueue.cc): 512 KiB halved while the channel gets fewer than 8, 4
// and 1 chunks per tree level.
func TestTreeChunks(t *testing.T) {
	for _, c := range []struct {
		bytes           int64
		channels, depth int
		want            int
	}{
		// 64 MiB over 16 channels (4 MiB each), depth 8: 512K gives 8 < 64 → 256K: 16 → 128K:
		// 32 (stops at 128K); 32 ≥ 32 and ≥ 8: 32 chunks of 128 KiB.
		{64 << 20, 16, 8, 32},
		// 1 GiB over 16 channels: 64 MiB / 512 KiB = 128 ≥ 64: capped at 64.
		{1 << 30, 16, 8, 64},
		// 256 KiB over 2 channels, depth 1: 128K per channel: 512K→256K→128K (0 < 8; the
		// first rule stops at 128K), →64K (1 < 4; the second stops at 64K), 2 ≥ 1: 2 chunks.
		{256 << 10, 2, 1, 2},
		{0, 4, 3, 1},
	} {
		if got := treeChunks(c.bytes, c.channels, c.depth, 64); got != c.want {
			t.Errorf("%d bytes, %d channels, depth %d: %d chunks, want %d", c.bytes, c.channels, c.depth, got, c.want)
		}
	}
}

// Tree all-reduce: 2(n−1) flows per channel and chunk, each rank sending one up and the ranks
// with children sending down; channel c on tree c%2.
func TestTreeFlows(t *testing.T) {
	req := consecutive(ccl.OpAllReduce, 32, 8, 32<<20)
	d, err := Tree(req, Options{Chunks: 3})
	if err != nil {
		t.Fatal(err)
	}
	C, K, n := 16, 3, 32
	if d.NumFlows() != C*K*2*(n-1) || d.Collective().Pieces != C*K {
		t.Fatalf("%d flows, %d pieces", d.NumFlows(), d.Collective().Pieces)
	}
	sent := map[[3]int32]int{}
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		if f.Kind != ccl.KindTree || f.Bytes != 32<<20/48 && f.Bytes != 32<<20/48+1 {
			t.Fatalf("flow %s", flowString(f))
		}
		sent[[3]int32{f.Channel, f.Chunk, f.Src}]++
		// Chunk k waits for chunk k-1 of the same connection.
		if f.Chunk > 0 {
			found := false
			for _, p := range d.Parents(ccl.FlowID(i), nil) {
				pf := d.Flow(p)
				found = found || pf.Chunk == f.Chunk-1 && pf.Src == f.Src && pf.Dst == f.Dst && pf.Channel == f.Channel
			}
			if !found {
				t.Fatalf("flow %s does not wait for its previous chunk", flowString(f))
			}
		}
	}
	// The default: 2 channels per member of a server and NCCL's chunk rule.
	d, err = Tree(req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	K = treeChunks(32<<20, 16, 8-1+2, 64)
	if d.NumFlows() != 16*K*2*31 {
		t.Fatalf("default: %d flows, want %d", d.NumFlows(), 16*K*2*31)
	}
	if _, err := Tree(consecutive(ccl.OpAllGather, 8, 8, 1), Options{}); err == nil {
		t.Fatal("tree all-gather accepted")
	}
}

func TestNVLS(t *testing.T) {
	// §1.4's example: TP=8, 64 MiB: 4 × (8 + 8) = 64 flows of 16 MiB.
	req := consecutive(ccl.OpAllReduce, 8, 8, 64<<20)
	d, err := NVLS(req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFlows() != 64 {
		t.Fatalf("%d flows", d.NumFlows())
	}
	nvs := int32(8)
	for i := 0; i < d.NumFlows(); i++ {
		f := d.Flow(ccl.FlowID(i))
		if f.Bytes != 16<<20 || f.Kind != ccl.KindNVLS || (f.Src != nvs) == (f.Dst != nvs) {
			t.Fatalf("flow %s", flowString(f))
		}
		ups := 0
		for _, p := range d.Parents(ccl.FlowID(i), nil) {
			if pf := d.Flow(p); pf.Dst == nvs && pf.Chunk == f.Chunk {
				ups++
			}
		}
		if f.Src == nvs && ups != 8 {
			t.Fatalf("down flow %s waits for %d up flows of its chunk, want 8", flowString(f), ups)
		}
	}
	if _, err := NVLS(consecutive(ccl.OpAllReduce, 16, 8, 1), Options{}); err == nil {
		t.Fatal("NVLS across servers accepted")
	}
	if _, err := NVLSTree(req, Options{}); err == nil {
		t.Fatal("NVLS-Tree on one server accepted")
	}
}

// NVLS-Tree per channel and chunk: in each server of m ≥ 2 members, m−1 flows to the NVSwitch,
// one to the head, one back from the head and m−1 to the members; 2(N−1) flows between heads.
func TestNVLSTreeFlows(t *testing.T) {
	for _, req := range []ccl.Request{
		consecutive(ccl.OpAllReduce, 32, 8, 1<<22),
		strided(ccl.OpAllReduce, 5, 4, 4, 1, 1<<20), // one member per server: no NVSwitch
		explicitRanks(ccl.OpAllReduce, 4, 12, 1<<20, 0, 1, 2, 4, 8, 9),
	} {
		g := newGeometry(&req)
		d, err := NVLSTree(req, Options{Chunks: 2})
		if err != nil {
			t.Fatal(err)
		}
		per := 2 * (g.nsrv - 1)
		for k := range g.nsrv {
			if m := g.count(k); m >= 2 {
				per += 2 * m
			}
		}
		C := 2 * g.maxM
		if d.NumFlows() != C*2*per {
			t.Errorf("%v: %d flows, want %d", req.Ranks, d.NumFlows(), C*2*per)
		}
		gps := int32(req.GPUsPerServer)
		for i := 0; i < d.NumFlows(); i++ {
			f := d.Flow(ccl.FlowID(i))
			if f.Kind != ccl.KindNVLSTree {
				t.Fatalf("flow %s", flowString(f))
			}
			if f.Src < int32(req.TotalGPUs) && f.Dst < int32(req.TotalGPUs) && f.Src/gps == f.Dst/gps {
				t.Fatalf("GPU-to-GPU flow inside a server: %s", flowString(f))
			}
		}
	}
}
