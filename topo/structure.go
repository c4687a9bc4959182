package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// StructureError is a topology that is well formed but cannot be simulated as meant: two links
// join the same pair of nodes, or a GPU reaches no other GPU.
type StructureError struct {
	// Link is the index (from 0) of the offending link: the second of a duplicate pair; -1 when
	// the problem is a GPU.
	Link int
	// First is the index of the earlier link joining the same nodes as Link; -1 otherwise.
	First int
	// Src and Dst are Link's ends as written.
	Src, Dst int32
	// GPU is the first GPU that reaches no other GPU; -1 otherwise.
	GPU int32
	// GPULinks are the indices of GPU's links (none when it has none).
	GPULinks []int
	// Others are further GPUs that reach no other GPU (at most a few, see More).
	Others []int32
	// More counts the isolated GPUs beyond GPU and Others.
	More int
}

// maxOthers bounds the isolated GPUs a StructureError lists after the first.
const maxOthers = 4

// message describes the problem; line gives the file line of a link index (0: unknown), and the
// links are then named by line, else by number.
func (e *StructureError) message(line func(int) int) string {
	where := func(i int) string {
		if l := line(i); l > 0 {
			return "line " + strconv.Itoa(l)
		}
		return "link " + strconv.Itoa(i+1)
	}
	if e.Link >= 0 {
		return fmt.Sprintf("joins nodes %d and %d, as %s already does: give each pair of nodes one link (SimAI would keep only the last)",
			e.Src, e.Dst, where(e.First))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GPU %d reaches no other GPU", e.GPU)
	switch len(e.GPULinks) {
	case 0:
		b.WriteString(": no link has it as an end")
	case 1:
		fmt.Fprintf(&b, ": its link (%s) leads to no other GPU", where(e.GPULinks[0]))
	default:
		b.WriteString(": its links (")
		listLinks(&b, e.GPULinks, where)
		b.WriteString(") lead to no other GPU")
	}
	switch {
	case len(e.Others) == 1 && e.More == 0:
		fmt.Fprintf(&b, "; neither does GPU %d", e.Others[0])
	case len(e.Others) > 0:
		b.WriteString("; neither do GPUs ")
		for k, g := range e.Others {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(int(g)))
		}
		if e.More > 0 {
			fmt.Fprintf(&b, " and %d more", e.More)
		}
	}
	return b.String()
}

// listLinks writes "lines 3, 4 and 5" (or "links 1, 2 and 7"), at most three, then "and N
// more".
func listLinks(b *strings.Builder, links []int, where func(int) string) {
	const show = 3
	for k, i := range links {
		w := where(i)
		if k == 0 {
			b.WriteString(strings.Replace(w, " ", "s ", 1)) // "line 3" → "lines 3"
			continue
		}
		if k == show {
			fmt.Fprintf(b, " and %d more", len(links)-show)
			return
		}
		if k == len(links)-1 {
			b.WriteString(" and ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(w[strings.IndexByte(w, ' ')+1:])
	}
}

// Error names links by number (1-based, in file order).
func (e *StructureError) Error() string {
	msg := e.message(func(int) int { return 0 })
	if e.Link >= 0 {
		return fmt.Sprintf("topo: link %d %s", e.Link+1, msg)
	}
	return "topo: " + msg
}

// CheckStructure checks what Validate does not: that no two links join the same pair of nodes
// (in either direction), and that, when there are several GPUs, every GPU reaches at least one
// other GPU over the links. Parse refuses files that fail it; the generators never build such
// topologies. The error is a *StructureError. It runs in time linear in the nodes and links,
// on a few flat slices (a 131,072-GPU fabric takes milliseconds). t must pass Validate.
func (t *Topology) CheckStructure() error {
	if e := t.checkStructure(); e != nil {
		return e
	}
	return nil
}

func (t *Topology) checkStructure() *StructureError {
	n := len(t.Kinds)
	// Repeated pairs: every link is listed under its lower end (compressed sparse rows); a node's
	// list then has a repeated upper end exactly when two links join the same pair. seen[v]
	// holds 1 + the link that last reached v from the node being scanned.
	start := make([]int32, n+1)
	for i := range t.Links {
		start[min(t.Links[i].Src, t.Links[i].Dst)+1]++
	}
	for v := 0; v < n; v++ {
		start[v+1] += start[v]
	}
	byLow := make([]int32, len(t.Links))
	fill := make([]int32, n)
	copy(fill, start[:n])
	for i := range t.Links {
		lo := min(t.Links[i].Src, t.Links[i].Dst)
		byLow[fill[lo]] = int32(i)
		fill[lo]++
	}
	seen := fill // reused: the fill counters are no longer needed
	clear(seen)
	dupFirst, dupSecond := -1, -1
	for u := 0; u < n; u++ {
		list := byLow[start[u]:start[u+1]]
		for _, i := range list {
			hi := max(t.Links[i].Src, t.Links[i].Dst)
			// A node's list is in file order, so j < i: link i repeats link j. The lowest
			// such i wins, so that the error names the first repeated line of the file.
			if j := seen[hi] - 1; j >= 0 && isLinkOf(t, int(j), u) && (dupSecond < 0 || int(i) < dupSecond) {
				dupFirst, dupSecond = int(j), int(i)
			}
			seen[hi] = i + 1
		}
	}
	if dupSecond >= 0 {
		l := &t.Links[dupSecond]
		return &StructureError{Link: dupSecond, First: dupFirst, Src: l.Src, Dst: l.Dst, GPU: -1}
	}

	// Connectivity: union-find with path halving over every link; then the GPUs whose
	// component holds no other GPU.
	gpus := t.NumGPUs()
	if gpus < 2 {
		return nil
	}
	parent := start[:n] // reused
	for v := range parent {
		parent[v] = int32(v)
	}
	find := func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for i := range t.Links {
		a, b := find(t.Links[i].Src), find(t.Links[i].Dst)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	count := seen // reused: GPUs per component root
	clear(count)
	for v, k := range t.Kinds {
		if k == GPU {
			count[find(int32(v))]++
		}
	}
	e := StructureError{Link: -1, First: -1, GPU: -1}
	for v, k := range t.Kinds {
		if k != GPU || count[find(int32(v))] > 1 {
			continue
		}
		switch {
		case e.GPU < 0:
			e.GPU = int32(v)
		case len(e.Others) < maxOthers:
			e.Others = append(e.Others, int32(v))
		default:
			e.More++
		}
	}
	if e.GPU < 0 {
		return nil
	}
	for i := range t.Links {
		if t.Links[i].Src == e.GPU || t.Links[i].Dst == e.GPU {
			e.GPULinks = append(e.GPULinks, i)
		}
	}
	return &e
}

// isLinkOf reports whether link i has node u as its lower end.
func isLinkOf(t *Topology, i, u int) bool {
	return int(min(t.Links[i].Src, t.Links[i].Dst)) == u
}
