package route

// maxFlow is Dinic's algorithm on a graph with int64 capacities: BFS levels from the source,
// then blocking flows by DFS along level-increasing arcs with per-node arc pointers. Arcs are
// stored in pairs (arc a and its residual partner a^1).
type maxFlow struct {
	n     int
	head  []int32 // per node: first arc, -1 if none
	next  []int32 // per arc: next arc of the same tail
	to    []int32
	cap   []int64 // residual capacity
	level []int32
	iter  []int32
	queue []int32
}

func newMaxFlow(n int) *maxFlow {
	f := &maxFlow{n: n, head: make([]int32, n), level: make([]int32, n), iter: make([]int32, n)}
	for i := range f.head {
		f.head[i] = -1
	}
	return f
}

// addArc adds an arc u→v of capacity c and its residual partner v→u of capacity rc (rc = c
// makes an undirected edge).
func (f *maxFlow) addArc(u, v int32, c, rc int64) {
	f.to = append(f.to, v, u)
	f.cap = append(f.cap, c, rc)
	f.next = append(f.next, f.head[u], f.head[v])
	a := int32(len(f.to) - 2)
	f.head[u], f.head[v] = a, a+1
}

func (f *maxFlow) bfs(s, t int32) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	q := append(f.queue[:0], s)
	for i := 0; i < len(q); i++ {
		u := q[i]
		for a := f.head[u]; a >= 0; a = f.next[a] {
			if v := f.to[a]; f.cap[a] > 0 && f.level[v] < 0 {
				f.level[v] = f.level[u] + 1
				q = append(q, v)
			}
		}
	}
	f.queue = q
	return f.level[t] >= 0
}

// dfs pushes at most limit units from u toward t along level-increasing arcs.
func (f *maxFlow) dfs(u, t int32, limit int64) int64 {
	if u == t {
		return limit
	}
	for ; f.iter[u] >= 0; f.iter[u] = f.next[f.iter[u]] {
		a := f.iter[u]
		v := f.to[a]
		if f.cap[a] <= 0 || f.level[v] != f.level[u]+1 {
			continue
		}
		if d := f.dfs(v, t, min(limit, f.cap[a])); d > 0 {
			f.cap[a] -= d
			f.cap[a^1] += d
			return d
		}
	}
	return 0
}

// run returns the value of a maximum flow from s to t (saturating at the int64 range).
func (f *maxFlow) run(s, t int32) int64 {
	var total int64
	const big = int64(1) << 62
	for f.bfs(s, t) {
		copy(f.iter, f.head)
		for {
			d := f.dfs(s, t, big)
			if d == 0 {
				break
			}
			total += d
			if total >= big {
				return big
			}
		}
	}
	return total
}

// sourceSide marks the nodes reachable from s in the residual graph after run: the source side
// of a minimum cut.
func (f *maxFlow) sourceSide(s int32) []bool {
	seen := make([]bool, f.n)
	seen[s] = true
	q := []int32{s}
	for i := 0; i < len(q); i++ {
		u := q[i]
		for a := f.head[u]; a >= 0; a = f.next[a] {
			if v := f.to[a]; f.cap[a] > 0 && !seen[v] {
				seen[v] = true
				q = append(q, v)
			}
		}
	}
	return seen
}
