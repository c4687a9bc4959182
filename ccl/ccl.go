package ccl

import (
	"fmt"
	"strings"
)

// Op is a collective operation. The order follows SimAI's ComType (system/Common.hh) for the
// operations a workload file can name.
type Op uint8

// Collective operations.
const (
	OpNone Op = iota
	OpReduceScatter
	OpAllGather
	OpAllReduce
	OpAllToAll
	// OpSend is a point-to-point send between pipeline stages: every rank of one stage sends
	// Bytes to the rank in the same place of another (SendDAG). No workload file names it;
	// the pipeline schedule issues it.
	OpSend
)

var opNames = [...]string{"none", "reducescatter", "allgather", "allreduce", "alltoall", "send"}

// String is the lower-case name SimAI's busbw code uses ("allreduce", "alltoall", ...).
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ParseOp reads the name of a collective as String spells it, in any case ("allreduce",
// "AllGather"); ok is false for any other name, "none" included.
func ParseOp(s string) (op Op, ok bool) {
	for _, op := range []Op{OpReduceScatter, OpAllGather, OpAllReduce, OpAllToAll} {
		if strings.EqualFold(s, op.String()) {
			return op, true
		}
	}
	return OpNone, false
}

// GroupKind is the kind of communication group a collective runs on. The order follows SimAI's
// MockNccl::GroupType: TP=0, DP=1, PP=2, EP=3, DP_EP=4, NONE=5.
type GroupKind uint8

// Group kinds.
const (
	GroupTP GroupKind = iota
	GroupDP
	GroupPP
	GroupEP
	GroupDPEP
	GroupNone
)

var groupNames = [...]string{"TP", "DP", "PP", "EP", "DP_EP", "NONE"}

// String is SimAI's name of the group kind.
func (g GroupKind) String() string {
	if int(g) < len(groupNames) {
		return groupNames[g]
	}
	return fmt.Sprintf("GroupKind(%d)", int(g))
}

// ParseGroupKind reads SimAI's name of a group kind in any case ("TP", "dp_ep"); ok is false for
// any other name, "NONE" included.
func ParseGroupKind(s string) (g GroupKind, ok bool) {
	for _, g := range []GroupKind{GroupTP, GroupDP, GroupPP, GroupEP, GroupDPEP} {
		if strings.EqualFold(s, g.String()) {
			return g, true
		}
	}
	return GroupNone, false
}
