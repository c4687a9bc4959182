package main

import (
	"strconv"
	"strings"

	"simd/topo/route"
)

// newTopoInfoRequest reads simd topo -info's flags (route.Info describes the file): -info FILE,
// -paths SRC,DST and -path-limit N, given alone (the generator's flags are not for an existing
// file).
func newTopoInfoRequest(file, paths string, limit int, given []string) (route.Info, error) {
	req := route.Info{File: file, Limit: limit}
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
		req.Pair, req.Src, req.Dst = true, int32(src), int32(dst)
	}
	return req, nil
}
