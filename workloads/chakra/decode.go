package chakra

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxFileBytes bounds the bytes of one trace file (after gzip), so that a corrupt length or a
// gzip bomb is refused instead of filling the machine's memory.
const MaxFileBytes = 1 << 32

// Decode reads one rank's trace from data (plain or gzip-compressed): a sequence of records
// varint32(length) ‖ message, a GlobalMetadata first (absent in legacy traces, see
// legacyFirst), then one Node per record up to the end or to a record of length 0. name is the
// file's name in messages; errors name it, the record's byte offset, the node id when known and
// the field.
func Decode(data []byte, name string) (*File, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %v", name, err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, MaxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %v", name, err)
		}
		if len(plain) > MaxFileBytes {
			return nil, fmt.Errorf("%s: more than %d bytes once uncompressed", name, int64(MaxFileBytes))
		}
		data = plain
	}
	f := &File{Name: name}
	first := true
	for off := 0; off < len(data); {
		n, l := protowire.ConsumeVarint(data[off:])
		if l < 0 || l > 5 || n > math.MaxUint32 {
			return nil, fmt.Errorf("%s: byte %d: record length: not a varint32", name, off)
		}
		start := off + l
		if n == 0 {
			break // Chakra's Python reader stops here; so does simd
		}
		if uint64(len(data)-start) < n {
			return nil, fmt.Errorf("%s: byte %d: record of %d bytes but only %d left (truncated file?)", name, off, n, len(data)-start)
		}
		rec := data[start : start+int(n)]
		off = start + int(n)
		if first {
			first = false
			if !legacyFirst(rec) {
				md, err := decodeMetadata(rec)
				if err != nil {
					return nil, fmt.Errorf("%s: byte %d: GlobalMetadata: %v", name, start-l, err)
				}
				f.Metadata = md
				continue
			}
		}
		var nd Node
		if err := decodeNode(rec, &nd); err != nil {
			return nil, fmt.Errorf("%s: byte %d: node %s: %v", name, start-l, nodeIDOf(rec), err)
		}
		f.Nodes = append(f.Nodes, nd)
	}
	return f, nil
}

// ReadFile reads a trace file from r (see Decode).
func ReadFile(r io.Reader, name string) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than %d bytes", name, int64(MaxFileBytes))
	}
	return Decode(data, name)
}

// legacyFirst reports whether a file's first record is a Node, not a GlobalMetadata: traces
// written before GlobalMetadata existed (2023) start with their first node. GlobalMetadata has
// only fields 1 (string version) and 2 (AttributeProto attr); a record with any other field (a
// node's type is field 3, almost always present), with field 1 as a varint (a node's id) or with
// a field 2 that does not parse as an AttributeProto (a node's name) is a Node.
func legacyFirst(rec []byte) bool {
	for len(rec) > 0 {
		num, typ, l := protowire.ConsumeTag(rec)
		if l < 0 {
			return false // let the metadata decoder report it
		}
		rec = rec[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
		case num == 2 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(rec)
			if m < 0 {
				return false
			}
			var a Attr
			if decodeAttr(v, &a) != nil || a.Name == "" {
				return true
			}
		default:
			return true
		}
		m := protowire.ConsumeFieldValue(num, typ, rec)
		if m < 0 {
			return false
		}
		rec = rec[m:]
	}
	return false
}

// nodeIDOf is the id of a node record that failed to parse, as text: "id N", or "(id unknown)".
func nodeIDOf(rec []byte) string {
	for len(rec) > 0 {
		num, typ, l := protowire.ConsumeTag(rec)
		if l < 0 {
			break
		}
		rec = rec[l:]
		if num == 1 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(rec)
			if m < 0 {
				break
			}
			return fmt.Sprintf("id %d", v)
		}
		m := protowire.ConsumeFieldValue(num, typ, rec)
		if m < 0 {
			break
		}
		rec = rec[m:]
	}
	return "(id unknown)"
}

// field is a field read by walk: its number, wire type and the bytes after its tag.
type fieldFn func(num protowire.Number, typ protowire.Type, b []byte) (int, error)

// walk calls fn for every field of message b; fn returns how many bytes it consumed, or -1 to
// have the field skipped.
func walk(b []byte, fn fieldFn) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return fmt.Errorf("bad field tag: %v", protowire.ParseError(l))
		}
		b = b[l:]
		n, err := fn(num, typ, b)
		if err != nil {
			return err
		}
		if n < 0 {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return fmt.Errorf("field %d: %v", num, protowire.ParseError(n))
			}
		}
		b = b[n:]
	}
	return nil
}

var errWireType = errors.New("unexpected wire type")

func fieldErr(name string, num protowire.Number, err error) error {
	return fmt.Errorf("field %d (%s): %w", num, name, err)
}

// consumeString reads a length-delimited field as a string.
func consumeString(name string, num protowire.Number, typ protowire.Type, b []byte, dst *string) (int, error) {
	if typ != protowire.BytesType {
		return 0, fieldErr(name, num, errWireType)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, fieldErr(name, num, protowire.ParseError(n))
	}
	*dst = string(v)
	return n, nil
}

// consumeUvarint reads a varint field.
func consumeUvarint(name string, num protowire.Number, typ protowire.Type, b []byte, dst *uint64) (int, error) {
	if typ != protowire.VarintType {
		return 0, fieldErr(name, num, errWireType)
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, fieldErr(name, num, protowire.ParseError(n))
	}
	*dst = v
	return n, nil
}

// consumeUvarints reads a repeated varint field, packed or not, appending to dst.
func consumeUvarints(name string, num protowire.Number, typ protowire.Type, b []byte, dst *[]uint64) (int, error) {
	switch typ {
	case protowire.VarintType:
		var v uint64
		n, err := consumeUvarint(name, num, typ, b, &v)
		*dst = append(*dst, v)
		return n, err
	case protowire.BytesType:
		p, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, fieldErr(name, num, protowire.ParseError(n))
		}
		for len(p) > 0 {
			v, m := protowire.ConsumeVarint(p)
			if m < 0 {
				return 0, fieldErr(name, num, protowire.ParseError(m))
			}
			*dst = append(*dst, v)
			p = p[m:]
		}
		return n, nil
	}
	return 0, fieldErr(name, num, errWireType)
}

func decodeMetadata(b []byte) (*Metadata, error) {
	md := &Metadata{}
	err := walk(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString("version", num, typ, b, &md.Version)
		case 2:
			return consumeAttr(num, typ, b, &md.Attrs)
		}
		return -1, nil
	})
	return md, err
}

func consumeAttr(num protowire.Number, typ protowire.Type, b []byte, dst *[]Attr) (int, error) {
	if typ != protowire.BytesType {
		return 0, fieldErr("attr", num, errWireType)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, fieldErr("attr", num, protowire.ParseError(n))
	}
	var a Attr
	if err := decodeAttr(v, &a); err != nil {
		if a.Name != "" {
			return 0, fmt.Errorf("attr %q: %w", a.Name, err)
		}
		return 0, fmt.Errorf("attr #%d: %w", len(*dst), err)
	}
	*dst = append(*dst, a)
	return n, nil
}

func consumeIO(name string, num protowire.Number, typ protowire.Type, b []byte, dst **IOInfo) (int, error) {
	if typ != protowire.BytesType {
		return 0, fieldErr(name, num, errWireType)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, fieldErr(name, num, protowire.ParseError(n))
	}
	io := &IOInfo{}
	err := walk(v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(name+".values", num, typ, b, &io.Values)
		case 2:
			return consumeString(name+".shapes", num, typ, b, &io.Shapes)
		case 3:
			return consumeString(name+".types", num, typ, b, &io.Types)
		}
		return -1, nil
	})
	if err != nil {
		return 0, err
	}
	*dst = io
	return n, nil
}

func decodeNode(b []byte, nd *Node) error {
	return walk(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeUvarint("id", num, typ, b, &nd.ID)
		case 2:
			return consumeString("name", num, typ, b, &nd.Name)
		case 3:
			var v uint64
			n, err := consumeUvarint("type", num, typ, b, &v)
			nd.Type = NodeType(int32(v))
			return n, err
		case 4:
			return consumeUvarints("ctrl_deps", num, typ, b, &nd.CtrlDeps)
		case 5:
			return consumeUvarints("data_deps", num, typ, b, &nd.DataDeps)
		case 6:
			return consumeUvarint("start_time_micros", num, typ, b, &nd.StartMicros)
		case 7:
			return consumeUvarint("duration_micros", num, typ, b, &nd.DurationMicros)
		case 8:
			return consumeIO("inputs", num, typ, b, &nd.Inputs)
		case 9:
			return consumeIO("outputs", num, typ, b, &nd.Outputs)
		case 10:
			return consumeAttr(num, typ, b, &nd.Attrs)
		}
		return -1, nil
	})
}

// decodeAttr reads an AttributeProto. A oneof member seen twice keeps the last, as protobuf
// does; a list member's values are appended to (a *List message may be split).
func decodeAttr(b []byte, a *Attr) error {
	return walk(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch {
		case num == 1:
			return consumeString("name", num, typ, b, &a.Name)
		case num == 2:
			return consumeString("doc_string", num, typ, b, &a.Doc)
		case num >= 3 && num < protowire.Number(attrKinds):
			k := AttrKind(num)
			if a.Kind != k {
				*a = Attr{Name: a.Name, Doc: a.Doc, Kind: k}
			}
			if k.IsList() {
				if typ != protowire.BytesType {
					return 0, fieldErr(k.String(), num, errWireType)
				}
				v, n := protowire.ConsumeBytes(b)
				if n < 0 {
					return 0, fieldErr(k.String(), num, protowire.ParseError(n))
				}
				err := walk(v, func(vn protowire.Number, vt protowire.Type, vb []byte) (int, error) {
					if vn != 1 {
						return -1, nil
					}
					return a.consumeValues(k.scalar(), vt, vb)
				})
				if err != nil {
					return 0, fmt.Errorf("%s: %w", k, err)
				}
				return n, nil
			}
			return a.consumeScalar(k, typ, b)
		}
		return -1, nil
	})
}

// wireOf is the wire type of a scalar member.
func wireOf(k AttrKind) protowire.Type {
	switch k {
	case AttrDouble, AttrFixed64, AttrSfixed64:
		return protowire.Fixed64Type
	case AttrFloat, AttrFixed32, AttrSfixed32:
		return protowire.Fixed32Type
	case AttrString, AttrBytes:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// scalarValue reads one value of scalar member k from b (in wire type wireOf(k)).
func scalarValue(k AttrKind, b []byte) (i int64, u uint64, f float64, s string, n int) {
	switch wireOf(k) {
	case protowire.Fixed64Type:
		v, m := protowire.ConsumeFixed64(b)
		if m < 0 {
			return 0, 0, 0, "", m
		}
		switch k {
		case AttrDouble:
			f = math.Float64frombits(v)
		case AttrFixed64:
			u = v
		default:
			i = int64(v)
		}
		return i, u, f, "", m
	case protowire.Fixed32Type:
		v, m := protowire.ConsumeFixed32(b)
		if m < 0 {
			return 0, 0, 0, "", m
		}
		switch k {
		case AttrFloat:
			f = float64(math.Float32frombits(v))
		case AttrFixed32:
			u = uint64(v)
		default:
			i = int64(int32(v))
		}
		return i, u, f, "", m
	case protowire.BytesType:
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return 0, 0, 0, "", m
		}
		return 0, 0, 0, string(v), m
	}
	v, m := protowire.ConsumeVarint(b)
	if m < 0 {
		return 0, 0, 0, "", m
	}
	switch k {
	case AttrInt32:
		i = int64(int32(v))
	case AttrInt64:
		i = int64(v)
	case AttrUint32:
		u = uint64(uint32(v))
	case AttrUint64:
		u = v
	case AttrSint32:
		i = int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))
	case AttrSint64:
		i = protowire.DecodeZigZag(v)
	case AttrBool:
		u = 0
		if v != 0 {
			u = 1
		}
	}
	return i, u, f, "", m
}

func (a *Attr) consumeScalar(k AttrKind, typ protowire.Type, b []byte) (int, error) {
	if typ != wireOf(k) {
		return 0, fieldErr(k.String(), protowire.Number(k), errWireType)
	}
	i, u, f, s, n := scalarValue(k, b)
	if n < 0 {
		return 0, fieldErr(k.String(), protowire.Number(k), protowire.ParseError(n))
	}
	a.Int, a.Uint, a.Float, a.Str = i, u, f, s
	return n, nil
}

// consumeValues reads field 1 of a *List message: one value, or a packed run of them.
func (a *Attr) consumeValues(k AttrKind, typ protowire.Type, b []byte) (int, error) {
	add := func(i int64, u uint64, f float64, s string) {
		switch {
		case k.isFloat():
			a.Floats = append(a.Floats, f)
		case k.isSigned():
			a.Ints = append(a.Ints, i)
		case k.isUnsigned():
			a.Uints = append(a.Uints, u)
		default:
			a.Strs = append(a.Strs, s)
		}
	}
	w := wireOf(k)
	if typ == w {
		i, u, f, s, n := scalarValue(k, b)
		if n < 0 {
			return 0, fmt.Errorf("values: %v", protowire.ParseError(n))
		}
		add(i, u, f, s)
		return n, nil
	}
	if typ != protowire.BytesType || w == protowire.BytesType {
		return 0, fmt.Errorf("values: %w", errWireType)
	}
	p, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, fmt.Errorf("values: %v", protowire.ParseError(n))
	}
	for len(p) > 0 {
		i, u, f, s, m := scalarValue(k, p)
		if m < 0 {
			return 0, fmt.Errorf("values (packed): %v", protowire.ParseError(m))
		}
		add(i, u, f, s)
		p = p[m:]
	}
	return n, nil
}
