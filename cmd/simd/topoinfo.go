package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"simd/topo"
	"simd/topo/route"
)

// topoInfoRequest is simd topo -info: describe an existing topology file.
type topoInfoRequest struct {
	file     string
	pathPair bool
	src, dst int32
	limit    int
}

func newTopoInfoRequest(file, paths string, limit int, given []string) (topoInfoRequest, error) {
	req := topoInfoRequest{file: file, limit: limit}
	if file == "" {
		return req, badInputf("-paths needs -info FILE")
	}
	for _, g := range given {
		switch g {
		case "-info", "-paths", "-path-limit":
		default:
			return req, badInputf("%s is a generator flag; -info describes an existing file and takes only -paths and -path-limit", g)
		}
	}
	if limit < 1 {
		return req, badInputf("-path-limit %d: expected at least 1", limit)
	}
	if paths != "" {
		a, b, ok := strings.Cut(paths, ",")
		src, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 32)
		dst, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if !ok || err1 != nil || err2 != nil || src < 0 || dst < 0 {
			return req, badInputf("-paths %q: expected two GPU ids, SRC,DST", paths)
		}
		req.pathPair, req.src, req.dst = true, int32(src), int32(dst)
	}
	return req, nil
}

// gbps prints a rate in bits per second as Gbps or Tbps.
func gbps(bps float64) string {
	if bps >= 1e12 {
		return strconv.FormatFloat(bps/1e12, 'f', -1, 64) + " Tbps"
	}
	return strconv.FormatFloat(bps/1e9, 'f', -1, 64) + " Gbps"
}

var tierNames = map[int32]string{1: "leaf (ASW)", 2: "spine (PSW)", 3: "core"}

func (q topoInfoRequest) run(w io.Writer) error {
	f, err := os.Open(q.file)
	if err != nil {
		return badInputf("-info: %v", err)
	}
	t, err := topo.Parse(f, q.file)
	f.Close()
	if err != nil {
		return badInput(err)
	}
	r, err := route.New(t)
	if err != nil {
		return badInputf("%s: %v", q.file, err)
	}
	g := r.Graph()
	nc := g.NodeCounts()
	fmt.Fprintf(w, "topology %s\n", q.file)
	fmt.Fprintf(w, "nodes: %d GPUs, %d NVSwitches, %d switches; servers: %d of %d GPUs (%s)\n",
		nc.GPUs, nc.NVSwitches, nc.Switches, t.NumServers(), t.GPUsPerServer, t.GPUType)
	fmt.Fprintf(w, "links: %d\n", t.NumLinks())
	for _, rc := range g.LinkCountsByRate() {
		fmt.Fprintf(w, "  %-12s %d\n", gbps(rc.Rate), rc.Links)
	}
	_, tiers := g.Loads()
	fmt.Fprintln(w, "switch tiers (capacity toward GPUs / away from them):")
	for _, tl := range tiers {
		name := tierNames[tl.Tier]
		if name == "" {
			name = "tier " + strconv.Itoa(int(tl.Tier))
		}
		over := "none (top tier)"
		if tl.Up > 0 {
			over = strconv.FormatFloat(tl.Oversubscription(), 'f', 2, 64) + ":1"
		}
		fmt.Fprintf(w, "  %d %-24s %6d switches, down %s, up %s, oversubscription %s\n",
			tl.Tier, name, tl.Switches, gbps(tl.Down), gbps(tl.Up), over)
	}
	if b, err := g.Bisection(); err != nil {
		fmt.Fprintf(w, "bisection: %v\n", err)
	} else {
		fmt.Fprintf(w, "bisection: %s between the first %d servers and the other %d (their NICs: %s and %s)\n",
			gbps(b.Bandwidth), b.FirstHalf, b.Servers-b.FirstHalf, gbps(b.NIC[0]), gbps(b.NIC[1]))
	}
	if !q.pathPair {
		return nil
	}
	for _, id := range []int32{q.src, q.dst} {
		if int(id) >= t.NumNodes() || t.Kind(id) != topo.GPU {
			return badInputf("-paths: %d is not a GPU of %s", id, q.file)
		}
	}
	hops, err := r.Distance(q.src, q.dst)
	if err != nil {
		return badInputf("-paths %d,%d: %v", q.src, q.dst, err)
	}
	count, _ := r.CountPaths(q.src, q.dst)
	paths, complete, err := r.AllPaths(q.src, q.dst, q.limit)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "paths from GPU %d to GPU %d: %d hops, %d equal-cost paths", q.src, q.dst, hops, count)
	if !complete {
		fmt.Fprintf(w, " (the first %d)", len(paths))
	}
	fmt.Fprintln(w)
	for _, p := range paths {
		st := g.Stats(p)
		nodes := []string{strconv.Itoa(int(q.src))}
		for _, l := range p {
			to := g.To(l)
			nodes = append(nodes, fmt.Sprintf("%d(%s)", to, t.Kind(to)))
		}
		nodes[len(nodes)-1] = strconv.Itoa(int(q.dst))
		fmt.Fprintf(w, "  %s   delay %s, bottleneck %s\n", strings.Join(nodes, " -> "), st.Delay, gbps(st.Bottleneck))
	}
	return nil
}
