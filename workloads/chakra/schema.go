package chakra

import (
	"fmt"
	"math"
)

// NodeType is a node's kind (Chakra's NodeType enum).
type NodeType int32

// Node types.
const (
	InvalidNode NodeType = iota
	MetadataNode
	MemLoadNode
	MemStoreNode
	CompNode
	CommSendNode
	CommRecvNode
	CommCollNode
)

var nodeTypeNames = [...]string{"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"}

func (t NodeType) String() string {
	if t >= 0 && int(t) < len(nodeTypeNames) {
		return nodeTypeNames[t]
	}
	return fmt.Sprintf("NodeType(%d)", int32(t))
}

// CommType is a collective's kind (Chakra's CollectiveCommType enum).
type CommType int64

// Collective kinds.
const (
	AllReduce CommType = iota
	Reduce
	AllGather
	Gather
	Scatter
	Broadcast
	AllToAll
	ReduceScatter
	ReduceScatterBlock
	Barrier
)

var commTypeNames = [...]string{"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"}

func (c CommType) String() string {
	if c >= 0 && int(c) < len(commTypeNames) {
		return commTypeNames[c]
	}
	return fmt.Sprintf("CommType(%d)", int64(c))
}

// AttrKind is which member of AttributeProto's value oneof an attribute holds: its field
// number (3 double … 32 bytes_list), 0 for an attribute without a value.
type AttrKind uint8

// The members of AttributeProto's value oneof, by field number.
const (
	AttrNone AttrKind = iota
	_
	_
	AttrDouble
	AttrDoubleList
	AttrFloat
	AttrFloatList
	AttrInt32
	AttrInt32List
	AttrInt64
	AttrInt64List
	AttrUint32
	AttrUint32List
	AttrUint64
	AttrUint64List
	AttrSint32
	AttrSint32List
	AttrSint64
	AttrSint64List
	AttrFixed32
	AttrFixed32List
	AttrFixed64
	AttrFixed64List
	AttrSfixed32
	AttrSfixed32List
	AttrSfixed64
	AttrSfixed64List
	AttrBool
	AttrBoolList
	AttrString
	AttrStringList
	AttrBytes
	AttrBytesList
	attrKinds
)

var attrKindNames = [...]string{"none", "", "", "double", "double_list", "float", "float_list", "int32", "int32_list", "int64", "int64_list",
	"uint32", "uint32_list", "uint64", "uint64_list", "sint32", "sint32_list", "sint64", "sint64_list", "fixed32", "fixed32_list",
	"fixed64", "fixed64_list", "sfixed32", "sfixed32_list", "sfixed64", "sfixed64_list", "bool", "bool_list", "string",
	"string_list", "bytes", "bytes_list"}

func (k AttrKind) String() string {
	if k < attrKinds {
		return attrKindNames[k]
	}
	return fmt.Sprintf("AttrKind(%d)", uint8(k))
}

// IsList reports whether the member is one of the *List messages.
func (k AttrKind) IsList() bool { return k >= AttrDoubleList && k < attrKinds && k%2 == 0 }

// scalar is the member a list member holds a list of.
func (k AttrKind) scalar() AttrKind {
	if k.IsList() {
		return k - 1
	}
	return k
}

// isSigned, isUnsigned and isFloat classify a scalar member.
func (k AttrKind) isSigned() bool {
	switch k.scalar() {
	case AttrInt32, AttrInt64, AttrSint32, AttrSint64, AttrSfixed32, AttrSfixed64:
		return true
	}
	return false
}

func (k AttrKind) isUnsigned() bool {
	switch k.scalar() {
	case AttrUint32, AttrUint64, AttrFixed32, AttrFixed64, AttrBool:
		return true
	}
	return false
}

func (k AttrKind) isFloat() bool { s := k.scalar(); return s == AttrDouble || s == AttrFloat }

func (k AttrKind) isBytes() bool { s := k.scalar(); return s == AttrString || s == AttrBytes }

// Attr is one AttributeProto. A scalar integer is in Int (signed members) or Uint (unsigned
// members and bool), a floating one in Float, a string or bytes in Str; a list in the slice of
// the same family.
type Attr struct {
	Name, Doc string
	Kind      AttrKind
	Int       int64
	Uint      uint64
	Float     float64
	Str       string
	Ints      []int64
	Uints     []uint64
	Floats    []float64
	Strs      []string
}

// AsInt64 converts a scalar integer member to int64, as ASTRA-sim's FeederV3 does: any integer
// member (bool included) is accepted if its value fits; floating, string and list members are
// refused.
func (a *Attr) AsInt64() (int64, error) {
	switch {
	case a.Kind.IsList() || a.Kind == AttrNone:
		return 0, fmt.Errorf("holds %s, not an integer", a.Kind)
	case a.Kind.isSigned():
		return a.Int, nil
	case a.Kind.isUnsigned():
		if a.Uint > math.MaxInt64 {
			return 0, fmt.Errorf("%s %d does not fit in int64", a.Kind, a.Uint)
		}
		return int64(a.Uint), nil
	}
	return 0, fmt.Errorf("holds %s, not an integer", a.Kind)
}

// AsFloat converts a scalar numeric member to float64 (integers are converted, as FeederV3's
// int→float conversion).
func (a *Attr) AsFloat() (float64, error) {
	switch {
	case a.Kind.IsList() || a.Kind == AttrNone:
		return 0, fmt.Errorf("holds %s, not a number", a.Kind)
	case a.Kind.isFloat():
		return a.Float, nil
	case a.Kind.isSigned():
		return float64(a.Int), nil
	case a.Kind.isUnsigned():
		return float64(a.Uint), nil
	}
	return 0, fmt.Errorf("holds %s, not a number", a.Kind)
}

// AsString returns a string or bytes member.
func (a *Attr) AsString() (string, error) {
	if a.Kind == AttrString || a.Kind == AttrBytes {
		return a.Str, nil
	}
	return "", fmt.Errorf("holds %s, not a string", a.Kind)
}

// IOInfo is a node's inputs or outputs as PyTorch's converter writes them.
type IOInfo struct {
	Values, Shapes, Types string
}

// Node is one node of a rank's trace.
type Node struct {
	ID                 uint64
	Name               string
	Type               NodeType
	CtrlDeps, DataDeps []uint64
	StartMicros        uint64
	DurationMicros     uint64
	Inputs, Outputs    *IOInfo
	Attrs              []Attr
}

// Attr is the node's attribute of that name (the last one if it repeats), nil if none.
func (n *Node) Attr(name string) *Attr {
	for i := len(n.Attrs) - 1; i >= 0; i-- {
		if n.Attrs[i].Name == name {
			return &n.Attrs[i]
		}
	}
	return nil
}

// Metadata is a file's GlobalMetadata record.
type Metadata struct {
	Version string
	Attrs   []Attr
}

// File is one rank's trace.
type File struct {
	// Name is the file's path, for messages.
	Name string
	// Metadata is nil for a legacy trace without a GlobalMetadata record.
	Metadata *Metadata
	Nodes    []Node
}
