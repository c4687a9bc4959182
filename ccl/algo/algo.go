// Package algo names every algorithm simd can decompose a collective with, builds its flow DAG
// and its closed-form time, and chooses one for each collective the way the user asks: SimCCL's
// rule (the default, so that simd's flows are SimAI's), NCCL's tuning model, or an algorithm
// forced per group kind. FootprintOf and Selector.Footprint count the flows a DAG would hold
// (all of them, those released at once, those kept in memory, and a bound of those in flight)
// without generating it, so that a run too large for the machine can be refused up front. A
// Study is one collective's DAG with its size, closed-form time and proof of correctness, and
// StudyRequest builds one from simd dag's flags' values.
//
// Environment variables read (ccl-facts.md §1.5, simai-formats.md §1.4): AS_NVLS_ENABLE=1
// enables NVLS for TP all-reduces on H100/H800/H20 with at least 8 ranks; AS_PXN_ENABLE=1
// relays server-crossing ring hops through the rail-aligned GPU (PXN): as SimCCL v1.6 does by
// default (all-reduce and reduce-scatter only), or NCCL-like (Options.PXNVariant; all-gather and
// all-to-all pairs too). The same switches exist as Options fields, which command-line flags set.
package algo

import (
	"fmt"
	"strings"

	"simd/ccl"
	"simd/ccl/alltoall"
	"simd/ccl/multiring"
	"simd/ccl/nccl"
	"simd/ccl/rhd"
)

// Name is an algorithm.
type Name string

// The algorithms, by the names the command line uses.
const (
	Ring      Name = "ring"      // SimCCL's rings (ccl/nccl)
	Tree      Name = "tree"      // NCCL's double binary tree, all-reduce only
	NVLS      Name = "nvls"      // NVSwitch reduction inside one server, all-reduce only
	NVLSTree  Name = "nvlstree"  // NVLS inside servers, tree between them, all-reduce only
	PXN       Name = "pxn"       // rings (or all-to-all) with PXN relays, as Params.PXN says
	MultiRing Name = "multiring" // TASP's edge-disjoint Hamiltonian rings
	RHD       Name = "rhd"       // recursive halving-doubling
	Direct    Name = "direct"    // all-to-all, every pair at once
	Pairwise  Name = "pairwise"  // all-to-all, one shift per round
)

// Names lists every algorithm.
var Names = []Name{Ring, Tree, NVLS, NVLSTree, PXN, MultiRing, RHD, Direct, Pairwise}

// ParseName reads an algorithm name (any case).
func ParseName(s string) (Name, error) {
	for _, n := range Names {
		if strings.EqualFold(s, string(n)) {
			return n, nil
		}
	}
	list := make([]string, len(Names))
	for i, n := range Names {
		list[i] = string(n)
	}
	return "", fmt.Errorf("unknown algorithm %q; expected one of %s", s, strings.Join(list, ", "))
}

// Supports says whether an algorithm implements an operation.
func Supports(a Name, op ccl.Op) bool {
	switch a {
	case Ring, PXN:
		return op != ccl.OpNone
	case Tree, NVLS, NVLSTree:
		return op == ccl.OpAllReduce
	case MultiRing, RHD:
		return op == ccl.OpAllReduce || op == ccl.OpAllGather || op == ccl.OpReduceScatter
	case Direct, Pairwise:
		return op == ccl.OpAllToAll
	}
	return false
}

// Params are what an algorithm's DAG depends on besides the request. The zero value is every
// algorithm's default.
type Params struct {
	// Chunks sets the chunk count of the chunked algorithms (tree, NVLS, NVLS-Tree); 0 means
	// their default.
	Chunks int
	// PXN is how the pxn algorithm decomposes: SimCCL v1.6's PXN (the zero value: every
	// server-crossing step of an all-reduce or reduce-scatter relayed, all-gather and all-to-all
	// without PXN) or the NCCL-like one (no rank sent what it holds; all-gather and all-to-all
	// relayed too). See package nccl.
	PXN nccl.PXNVariant
}

// options are the nccl generators' options for algorithm a.
func (p Params) options(a Name) nccl.Options {
	return nccl.Options{Chunks: p.Chunks, PXN: a == PXN, PXNVariant: p.PXN}
}

// Generate builds the flow DAG of req with algorithm a.
func Generate(a Name, req ccl.Request, p Params) (ccl.DAG, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if !Supports(a, req.Op) {
		return nil, fmt.Errorf("%s does not implement %s", a, req.Op)
	}
	opt := p.options(a)
	switch a {
	case Ring, PXN:
		return nccl.Ring(req, opt)
	case Tree:
		return nccl.Tree(req, opt)
	case NVLS:
		return nccl.NVLS(req, opt)
	case NVLSTree:
		return nccl.NVLSTree(req, opt)
	case MultiRing:
		return multiring.New(req)
	case RHD:
		return rhd.New(req)
	case Direct:
		return alltoall.Direct(req)
	case Pairwise:
		return alltoall.Pairwise(req)
	}
	return nil, fmt.Errorf("unknown algorithm %q", a)
}

// Fabric is how the GPUs of a server are wired, which changes some closed forms.
type Fabric = multiring.Fabric

// Server fabrics.
const (
	Switch   = multiring.Switch   // every GPU has one port into an NVSwitch
	FullMesh = multiring.FullMesh // every pair of GPUs has its own link
)

// CheckOptions is what ccl.CheckWith must be told about Generate(a, req, p)'s DAG for an
// operation op: SimCCL's PXN all-reduce delivers finished chunks to ranks that hold them.
func CheckOptions(a Name, op ccl.Op, p Params) ccl.CheckOptions {
	opt := p.options(a)
	return ccl.CheckOptions{AllowRedundant: opt.RedundantDeliveries(op)}
}

// Time is the closed-form alpha-beta-gamma time, in seconds, of op with algorithm a on n ranks
// of which perServer share a server (in a group spread evenly over servers), for bytes, with
// costs c and the algorithm's parameters p.
func Time(a Name, op ccl.Op, n, perServer int, bytes int64, p Params, fabric Fabric, c ccl.LinkCosts) (float64, error) {
	chunks := p.Chunks
	if !Supports(a, op) {
		return 0, fmt.Errorf("%s does not implement %s", a, op)
	}
	if perServer < 1 || n < 1 || n%perServer != 0 {
		return 0, fmt.Errorf("%d ranks, %d per server: the servers must hold equal shares", n, perServer)
	}
	servers := n / perServer
	ab := c.Intra // a single-link-class formula uses the slowest class the group crosses
	if servers > 1 {
		ab = c.Inter
	}
	switch a {
	case Ring:
		return nccl.RingTime(op, n, perServer, bytes, c)
	case PXN:
		return nccl.PXNTime(op, n, perServer, bytes, c, p.PXN)
	case Tree:
		return nccl.TreeTime(n, perServer, bytes, chunks, c)
	case NVLS:
		return nccl.NVLSTime(n, bytes, chunks, c)
	case NVLSTree:
		return nccl.NVLSTreeTime(n, perServer, bytes, chunks, c)
	case MultiRing:
		if servers == 1 {
			return multiring.Time(op, n, bytes, fabric, c.Intra)
		}
		return multiring.ServerTime(op, perServer, servers, bytes, fabric, c)
	case RHD:
		return rhd.Time(op, n, bytes, ab)
	case Direct:
		if fabric == FullMesh && servers == 1 {
			return alltoall.DirectMeshTime(n, bytes, ab)
		}
		return alltoall.DirectTime(n, bytes, ab)
	case Pairwise:
		return alltoall.PairwiseTime(n, bytes, ab)
	}
	return 0, fmt.Errorf("unknown algorithm %q", a)
}
