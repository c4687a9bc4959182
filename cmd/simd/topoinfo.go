package main

import (
	"io"
	"strconv"
	"strings"

	"simd/topo"
	"simd/topo/route"
	"simd/workloads/sim"
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

// run reads the file and prints its summary (route.Summary), then the paths -paths asks for.
func (q topoInfoRequest) run(w io.Writer) error {
	t, err := sim.ReadTopology(q.file, "-info")
	if err != nil {
		return err
	}
	r, err := route.New(t)
	if err != nil {
		return badInputf("%s: %v", q.file, err)
	}
	s := route.Summarize(q.file, t, r.Graph())
	if err := s.WriteText(w); err != nil || !q.pathPair {
		return err
	}
	for _, id := range []int32{q.src, q.dst} {
		if int(id) >= t.NumNodes() || t.Kind(id) != topo.GPU {
			return badInputf("-paths: %d is not a GPU of %s", id, q.file)
		}
	}
	paths, err := r.EqualCostPaths(q.src, q.dst, q.limit)
	if err != nil {
		return badInputf("-paths %d,%d: %v", q.src, q.dst, err)
	}
	return paths.WriteText(w)
}
