package nccl

import (
	"fmt"

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

// Options tune the generators. The zero value is SimCCL's behaviour where SimCCL has one.
type Options struct {
	// PXN relays the server-crossing hops of Ring (all-reduce, reduce-scatter, all-gather) and
	// of the all-to-all through the sender's server-mate on the receiver's rail, as SimAI does
	// with AS_PXN_ENABLE=1 (ccl-facts.md §1.4, §2.5).
	PXN bool
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
	return nil
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
