package nccl

import (
	"fmt"
	"strconv"
	"strings"

	"simd/ccl"
)

// Algorithm is an NCCL algorithm. The values are NCCL's (and SimCCL's) enum: TREE=0, RING=1,
// COLLNET_DIRECT=2, COLLNET_CHAIN=3, NVLS=4, NVLS_TREE=5, PAT=6 (ccl-facts.md §1.1).
type Algorithm int8

// Algorithms.
const (
	AlgoTree Algorithm = iota
	AlgoRing
	AlgoCollNetDirect
	AlgoCollNetChain
	AlgoNVLS
	AlgoNVLSTree
	AlgoPAT
	numAlgorithms
)

var algoNames = [...]string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}

func (a Algorithm) String() string {
	if a >= 0 && int(a) < len(algoNames) {
		return algoNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// Protocol is an NCCL protocol: LL=0, LL128=1, Simple=2 (ProtoUndef=-1 is what SimCCL's basic
// version reports).
type Protocol int8

// Protocols.
const (
	ProtoUndef   Protocol = -1
	ProtoLL      Protocol = 0
	ProtoLL128   Protocol = 1
	ProtoSimple  Protocol = 2
	numProtocols          = 3
)

func (p Protocol) String() string {
	switch p {
	case ProtoLL:
		return "LL"
	case ProtoLL128:
		return "LL128"
	case ProtoSimple:
		return "Simple"
	case ProtoUndef:
		return "UNDEF"
	}
	return fmt.Sprintf("Protocol(%d)", int(p))
}

// PXNVariant is how Ring decomposes a collective with PXN (Options.PXN).
type PXNVariant uint8

// PXN variants.
const (
	// PXNSimCCL is SimCCL v1.6's PXN, flow for flow: at every step of an all-reduce or a
	// reduce-scatter each server's exit sends its flow to its own entry over NVLink and the
	// entry sends it on to the next server's entry, also when the entry or the next entry
	// already holds the chunk. All-gather and all-to-all run without PXN, as in SimCCL (its
	// all-gather compares AS_PXN_ENABLE by pointer, so PXN never turns on there, and its
	// all-to-all has no PXN).
	PXNSimCCL PXNVariant = iota
	// PXNNCCL is an NCCL-like PXN: the reduce-scatter phase is SimCCL's, but a gather phase
	// never sends a rank what it already holds, PXN also runs for all-gather, and an all-to-all
	// pair on different servers and rails goes through the sender's server-mate on the
	// receiver's rail (the MSCCL fork of SimCCL's PXN all-to-all).
	PXNNCCL
)

var pxnVariantNames = [...]string{"simccl", "nccl"}

func (v PXNVariant) String() string {
	if int(v) < len(pxnVariantNames) {
		return pxnVariantNames[v]
	}
	return fmt.Sprintf("PXNVariant(%d)", int(v))
}

// ParsePXNVariant reads a variant's name: simccl or nccl (any case).
func ParsePXNVariant(s string) (PXNVariant, error) {
	for i, name := range pxnVariantNames {
		if strings.EqualFold(s, name) {
			return PXNVariant(i), nil
		}
	}
	return 0, fmt.Errorf("unknown PXN variant %q; expected simccl or nccl", s)
}

// Options tune the generators. The zero value is SimCCL's behaviour where SimCCL has one.
type Options struct {
	// PXN relays the server-crossing hops of Ring through the rail-aligned GPU of the sender's
	// server, as SimAI does with AS_PXN_ENABLE=1 (ccl-facts.md §1.4, §2.5); PXNVariant says how.
	PXN bool
	// PXNVariant is the decomposition PXN uses: SimCCL's (the zero value) or the NCCL-like one.
	PXNVariant PXNVariant
	// Chunks is the number of chunks each channel of Tree, NVLS and NVLS-Tree is cut into; 0
	// picks the default (NCCL's chunk-size rule for Tree and NVLS-Tree, SimCCL's 4 for NVLS).
	Chunks int
	// MaxChunks caps the default number of chunks per channel (0 means 64), which bounds the
	// size of the DAG for very large messages.
	MaxChunks int
}

const defaultMaxChunks = 64

func (o *Options) maxChunks() int {
	if o.MaxChunks > 0 {
		return o.MaxChunks
	}
	return defaultMaxChunks
}

func (o *Options) validate() error {
	if o.Chunks < 0 || o.MaxChunks < 0 {
		return fmt.Errorf("negative chunk count (Chunks %d, MaxChunks %d)", o.Chunks, o.MaxChunks)
	}
	if int(o.PXNVariant) >= len(pxnVariantNames) {
		return fmt.Errorf("unknown %s", o.PXNVariant)
	}
	return nil
}

// PXNApplies says whether Ring relays op's server-crossing hops under these options (for a
// group on several servers with several members each): always with PXNNCCL, for all-reduce
// and reduce-scatter only with PXNSimCCL.
func (o *Options) PXNApplies(op ccl.Op) bool {
	if !o.PXN {
		return false
	}
	return o.PXNVariant == PXNNCCL || op == ccl.OpAllReduce || op == ccl.OpReduceScatter
}

// RedundantDeliveries says whether Ring's DAG for op under these options may deliver finished
// chunks to ranks that already hold them (SimCCL's PXN all-reduce does), which ccl.CheckWith
// must be told (ccl.CheckOptions.AllowRedundant).
func (o *Options) RedundantDeliveries(op ccl.Op) bool {
	return o.PXN && o.PXNVariant == PXNSimCCL && op == ccl.OpAllReduce
}

// Generate builds the DAG of algorithm a: Ring (with opt.PXN, the PXN ring), Tree, NVLS or
// NVLSTree. CollNet needs SHARP switches, which simd does not model, and PAT is not built.
func Generate(a Algorithm, req ccl.Request, opt Options) (ccl.DAG, error) {
	switch a {
	case AlgoRing:
		return Ring(req, opt)
	case AlgoTree:
		return Tree(req, opt)
	case AlgoNVLS:
		return NVLS(req, opt)
	case AlgoNVLSTree:
		return NVLSTree(req, opt)
	}
	return nil, fmt.Errorf("no flow DAG for algorithm %s", a)
}

// MaxQPsPerConnection is NCCL's bound on NCCL_IB_QPS_PER_CONNECTION (NCCL_IB_MAX_QPS).
const MaxQPsPerConnection = 128

// ParseQPsPerConnection reads a count of QPs per connection as NCCL reads its integer variables
// (strtoll with base 0: 4, 0x4 and 04 are 4), within NCCL's bounds, 1 to MaxQPsPerConnection.
func ParseQPsPerConnection(v string) (int, error) {
	k, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
	if err != nil || k < 1 || k > MaxQPsPerConnection {
		return 0, fmt.Errorf("expected a whole number of QPs from 1 to %d", MaxQPsPerConnection)
	}
	return int(k), nil
}
