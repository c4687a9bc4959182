package ccl

import "testing"

func TestParseOp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Op
		ok   bool
	}{
		{"allreduce", OpAllReduce, true},
		{"AllGather", OpAllGather, true},
		{"REDUCESCATTER", OpReduceScatter, true},
		{"alltoall", OpAllToAll, true},
		{"none", OpNone, false},
		{"broadcast", OpNone, false},
		{"all_reduce", OpNone, false},
		{"", OpNone, false},
	} {
		if got, ok := ParseOp(c.in); got != c.want || ok != c.ok {
			t.Errorf("ParseOp(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for op := OpReduceScatter; op <= OpAllToAll; op++ {
		if got, ok := ParseOp(op.String()); got != op || !ok {
			t.Errorf("%v does not read back", op)
		}
	}
}

func TestParseGroupKind(t *testing.T) {
	for _, c := range []struct {
		in   string
		want GroupKind
		ok   bool
	}{
		{"TP", GroupTP, true},
		{"dp", GroupDP, true},
		{"Pp", GroupPP, true},
		{"EP", GroupEP, true},
		{"dp_ep", GroupDPEP, true},
		{"NONE", GroupNone, false},
		{"XP", GroupNone, false},
		{"", GroupNone, false},
	} {
		if got, ok := ParseGroupKind(c.in); got != c.want || ok != c.ok {
			t.Errorf("ParseGroupKind(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
