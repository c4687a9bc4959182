package route

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"simd/configs/lex"
	"simd/topo"
)

// Summary is what simd topo -info reports about a topology: its nodes and servers, its links
// by rate, its switch tiers with their capacity, and its bisection bandwidth.
type Summary struct {
	Name          string // what the topology is called, such as its file's path
	Nodes         NodeCounts
	Servers       int
	GPUsPerServer int
	GPUType       string
	NIC           topo.NIC // the first GPU's network interface (Topology.NICOf)
	Links         int
	LinksByRate   []RateCount // ascending rate (Graph.LinkCountsByRate)
	Tiers         []TierLoad  // ascending tier (Graph.Loads)
	Bisection     Bisection
	BisectionErr  error // why Bisection is empty: fewer than two servers
}

// Summarize describes t, called name, from g, its graph (NewGraph(t)).
func Summarize(name string, t *topo.Topology, g *Graph) Summary {
	_, tiers := g.Loads()
	b, err := g.Bisection()
	return Summary{
		Name: name, Nodes: g.NodeCounts(), Servers: t.NumServers(), GPUsPerServer: t.GPUsPerServer,
		GPUType: t.GPUType, NIC: t.NICOf(t.FirstGPU()), Links: t.NumLinks(), LinksByRate: g.LinkCountsByRate(), Tiers: tiers,
		Bisection: b, BisectionErr: err,
	}
}

// Info is what simd topo -info asks about: the topology file File and, when Pair is set, the
// equal-cost paths between GPUs Src and Dst, at most Limit of them.
type Info struct {
	File     string
	Pair     bool
	Src, Dst int32
	Limit    int
}

// WriteText reads the file (topo.ReadFile) and writes its Summary, then the paths q asks for, as
// simd topo -info prints them. An error caused by the file or by the GPUs asked about is an
// input error (lex.InputError). It lives here, beside Summarize and EqualCostPaths, which it
// puts together, so that simd topo keeps only its flags.
func (q Info) WriteText(w io.Writer) error {
	t, err := topo.ReadFile(q.File, "-info")
	if err != nil {
		return err
	}
	r, err := New(t)
	if err != nil {
		return lex.BadInputf("%s: %v", q.File, err)
	}
	s := Summarize(q.File, t, r.Graph())
	if err := s.WriteText(w); err != nil || !q.Pair {
		return err
	}
	for _, id := range []int32{q.Src, q.Dst} {
		if int(id) >= t.NumNodes() || t.Kind(id) != topo.GPU {
			return lex.BadInputf("-paths: %d is not a GPU of %s", id, q.File)
		}
	}
	paths, err := r.EqualCostPaths(q.Src, q.Dst, q.Limit)
	if err != nil {
		return lex.BadInputf("-paths %d,%d: %v", q.Src, q.Dst, err)
	}
	return paths.WriteText(w)
}

// tierNames are the usual names of the tiers of SimAI's generated fabrics (see Graph.Tiers).
var tierNames = map[int32]string{1: "leaf (ASW)", 2: "spine (PSW)", 3: "core"}

// WriteText writes s as simd topo -info prints it, one line per fact, rates in Gbps or Tbps.
func (s *Summary) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "topology %s\n", s.Name)
	fmt.Fprintf(&b, "nodes: %d GPUs, %d NVSwitches, %d switches; servers: %d of %d GPUs (%s)\n",
		s.Nodes.GPUs, s.Nodes.NVSwitches, s.Nodes.Switches, s.Servers, s.GPUsPerServer, s.GPUType)
	fmt.Fprintf(&b, "NIC per GPU: %s\n", nicText(s.NIC))
	fmt.Fprintf(&b, "links: %d\n", s.Links)
	for _, rc := range s.LinksByRate {
		fmt.Fprintf(&b, "  %-12s %d\n", gbps(rc.Rate), rc.Links)
	}
	fmt.Fprintln(&b, "switch tiers (capacity toward GPUs / away from them):")
	for _, tl := range s.Tiers {
		name := tierNames[tl.Tier]
		if name == "" {
			name = "tier " + strconv.Itoa(int(tl.Tier))
		}
		over := "none (top tier)"
		if tl.Up > 0 {
			over = strconv.FormatFloat(tl.Oversubscription(), 'f', 2, 64) + ":1"
		}
		fmt.Fprintf(&b, "  %d %-24s %6d switches, down %s, up %s, oversubscription %s\n",
			tl.Tier, name, tl.Switches, gbps(tl.Down), gbps(tl.Up), over)
	}
	if s.BisectionErr != nil {
		fmt.Fprintf(&b, "bisection: %v\n", s.BisectionErr)
	} else {
		bi := &s.Bisection
		fmt.Fprintf(&b, "bisection: %s between the first %d servers and the other %d (their NICs: %s and %s)\n",
			gbps(bi.Bandwidth), bi.FirstHalf, bi.Servers-bi.FirstHalf, gbps(bi.NIC[0]), gbps(bi.NIC[1]))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// nicText says how many ports a NIC has, where they go and what they carry.
func nicText(n topo.NIC) string {
	switch {
	case n.Ports == 0:
		return "none (the first GPU has no link to a network switch)"
	case n.Ports == 1:
		return fmt.Sprintf("1 port of %s (single ToR); %s per NIC", gbps(n.PortRate), gbps(n.Rate))
	case n.Ports == 2 && n.ToRs == 2:
		return fmt.Sprintf("2 ports of %s, each to a different ToR (dual ToR); %s per NIC", gbps(n.PortRate), gbps(n.Rate))
	case n.ToRs == n.Ports:
		return fmt.Sprintf("%d ports of %s, each to a different ToR; %s per NIC", n.Ports, gbps(n.PortRate), gbps(n.Rate))
	}
	return fmt.Sprintf("%d ports of %s, to %d different ToRs; %s per NIC", n.Ports, gbps(n.PortRate), n.ToRs, gbps(n.Rate))
}

// PathList is the routes between two nodes, as simd topo -info -paths lists them.
type PathList struct {
	Src, Dst int32
	Hops     int          // links on each route: every route is a shortest one
	Count    int64        // routes in all (CountPaths)
	Paths    []ListedPath // the first routes, in next-hop order (AllPaths)
	Complete bool         // Paths holds every route
}

// ListedPath is one route of a PathList.
type ListedPath struct {
	Nodes []int32         // from Src to Dst
	Kinds []topo.NodeKind // Nodes' kinds
	Stats PathStats
}

// EqualCostPaths lists the routes from src to dst: how many there are, and the first limit of
// them with their nodes, delay and bottleneck. The error is Distance's: there is no route.
func (r *Router) EqualCostPaths(src, dst int32, limit int) (PathList, error) {
	hops, err := r.Distance(src, dst)
	if err != nil {
		return PathList{}, err
	}
	count, err := r.CountPaths(src, dst)
	if err != nil {
		return PathList{}, err
	}
	paths, complete, err := r.AllPaths(src, dst, limit)
	if err != nil {
		return PathList{}, err
	}
	l := PathList{Src: src, Dst: dst, Hops: hops, Count: count, Complete: complete, Paths: make([]ListedPath, len(paths))}
	for i, links := range paths {
		p := ListedPath{Nodes: []int32{src}, Kinds: []topo.NodeKind{r.g.Kind(src)}, Stats: r.g.Stats(links)}
		for _, link := range links {
			to := r.g.To(link)
			p.Nodes = append(p.Nodes, to)
			p.Kinds = append(p.Kinds, r.g.Kind(to))
		}
		l.Paths[i] = p
	}
	return l, nil
}

// WriteText writes l as simd topo -info -paths prints it: a line with the counts, then a line
// per route with its nodes (the kind of each one between the ends), delay and bottleneck. The
// ends are called GPUs, the only nodes simd topo -paths asks about.
func (l *PathList) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "paths from GPU %d to GPU %d: %d hops, %d equal-cost paths", l.Src, l.Dst, l.Hops, l.Count)
	if !l.Complete {
		fmt.Fprintf(&b, " (the first %d)", len(l.Paths))
	}
	fmt.Fprintln(&b)
	for _, p := range l.Paths {
		nodes := make([]string, len(p.Nodes))
		for i, x := range p.Nodes {
			nodes[i] = fmt.Sprintf("%d(%s)", x, p.Kinds[i])
		}
		nodes[0], nodes[len(nodes)-1] = strconv.Itoa(int(l.Src)), strconv.Itoa(int(l.Dst))
		fmt.Fprintf(&b, "  %s   delay %s, bottleneck %s\n", strings.Join(nodes, " -> "), p.Stats.Delay, gbps(p.Stats.Bottleneck))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// gbps prints a rate in bits per second as Gbps or Tbps.
func gbps(bps float64) string {
	if bps >= 1e12 {
		return strconv.FormatFloat(bps/1e12, 'f', -1, 64) + " Tbps"
	}
	return strconv.FormatFloat(bps/1e9, 'f', -1, 64) + " Gbps"
}
