package chakra

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Write writes a trace file as Chakra's writers do: md first (none when md is nil: the legacy
// layout), then one record per node, each varint32(length) ‖ message, repeated scalars packed.
// A node that would serialize to 0 bytes (id 0, no name, type INVALID_NODE, nothing else) is
// refused: a record of length 0 ends a trace for every reader.
func Write(w io.Writer, md *Metadata, nodes []Node) error {
	bw := bufio.NewWriter(w)
	var buf, rec []byte
	put := func(msg []byte) error {
		if len(msg) > math.MaxUint32 {
			return fmt.Errorf("a record of %d bytes does not fit its varint32 length", len(msg))
		}
		rec = protowire.AppendVarint(rec[:0], uint64(len(msg)))
		rec = append(rec, msg...)
		_, err := bw.Write(rec)
		return err
	}
	if md != nil {
		buf = AppendMetadata(buf[:0], md)
		if err := put(buf); err != nil {
			return err
		}
	}
	for i := range nodes {
		buf = AppendNode(buf[:0], &nodes[i])
		if len(buf) == 0 {
			return fmt.Errorf("node %d (the %d-th) is all defaults and would be written as the end of the trace", nodes[i].ID, i)
		}
		if err := put(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// AppendMetadata appends md's serialization to b.
func AppendMetadata(b []byte, md *Metadata) []byte {
	if md.Version != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, md.Version)
	}
	for i := range md.Attrs {
		b = appendAttrField(b, 2, &md.Attrs[i])
	}
	return b
}

// AppendNode appends n's serialization to b (proto3: zero scalars are not written).
func AppendNode(b []byte, n *Node) []byte {
	if n.ID != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, n.ID)
	}
	if n.Name != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, n.Name)
	}
	if n.Type != 0 {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(n.Type)))
	}
	b = appendPackedVarints(b, 4, n.CtrlDeps)
	b = appendPackedVarints(b, 5, n.DataDeps)
	if n.StartMicros != 0 {
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, n.StartMicros)
	}
	if n.DurationMicros != 0 {
		b = protowire.AppendTag(b, 7, protowire.VarintType)
		b = protowire.AppendVarint(b, n.DurationMicros)
	}
	b = appendIO(b, 8, n.Inputs)
	b = appendIO(b, 9, n.Outputs)
	for i := range n.Attrs {
		b = appendAttrField(b, 10, &n.Attrs[i])
	}
	return b
}

func appendIO(b []byte, num protowire.Number, io *IOInfo) []byte {
	if io == nil {
		return b
	}
	var m []byte
	for i, s := range []string{io.Values, io.Shapes, io.Types} {
		if s != "" {
			m = protowire.AppendTag(m, protowire.Number(i+1), protowire.BytesType)
			m = protowire.AppendString(m, s)
		}
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendPackedVarints(b []byte, num protowire.Number, v []uint64) []byte {
	if len(v) == 0 {
		return b
	}
	var p []byte
	for _, x := range v {
		p = protowire.AppendVarint(p, x)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func appendAttrField(b []byte, num protowire.Number, a *Attr) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, AppendAttr(nil, a))
}

// AppendAttr appends a's serialization to b. A scalar member is written even when zero, as a
// set oneof member is.
func AppendAttr(b []byte, a *Attr) []byte {
	if a.Name != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, a.Name)
	}
	if a.Doc != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, a.Doc)
	}
	k := a.Kind
	if k == AttrNone || k >= attrKinds {
		return b
	}
	if !k.IsList() {
		b = protowire.AppendTag(b, protowire.Number(k), wireOf(k))
		return appendScalar(b, k, a.Int, a.Uint, a.Float, a.Str)
	}
	s := k.scalar()
	var m []byte
	if s.isBytes() {
		for _, v := range a.Strs {
			m = protowire.AppendTag(m, 1, protowire.BytesType)
			m = protowire.AppendString(m, v)
		}
	} else {
		var p []byte
		switch {
		case s.isFloat():
			for _, v := range a.Floats {
				p = appendScalar(p, s, 0, 0, v, "")
			}
		case s.isSigned():
			for _, v := range a.Ints {
				p = appendScalar(p, s, v, 0, 0, "")
			}
		default:
			for _, v := range a.Uints {
				p = appendScalar(p, s, 0, v, 0, "")
			}
		}
		if len(p) > 0 {
			m = protowire.AppendTag(m, 1, protowire.BytesType)
			m = protowire.AppendBytes(m, p)
		}
	}
	b = protowire.AppendTag(b, protowire.Number(k), protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// appendScalar appends one value of scalar member k, without a tag.
func appendScalar(b []byte, k AttrKind, i int64, u uint64, f float64, s string) []byte {
	switch k {
	case AttrDouble:
		return protowire.AppendFixed64(b, math.Float64bits(f))
	case AttrFloat:
		return protowire.AppendFixed32(b, math.Float32bits(float32(f)))
	case AttrInt32, AttrInt64:
		return protowire.AppendVarint(b, uint64(i))
	case AttrUint32, AttrUint64:
		return protowire.AppendVarint(b, u)
	case AttrSint32, AttrSint64:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(i))
	case AttrFixed32:
		return protowire.AppendFixed32(b, uint32(u))
	case AttrFixed64:
		return protowire.AppendFixed64(b, u)
	case AttrSfixed32:
		return protowire.AppendFixed32(b, uint32(int32(i)))
	case AttrSfixed64:
		return protowire.AppendFixed64(b, uint64(i))
	case AttrBool:
		if u != 0 {
			return protowire.AppendVarint(b, 1)
		}
		return protowire.AppendVarint(b, 0)
	}
	return protowire.AppendString(b, s)
}
