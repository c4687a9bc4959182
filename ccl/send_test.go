package ccl

import "testing"

func TestSendDAG(t *testing.T) {
	l := Layout{GPUs: 8, GPUsPerServer: 4, TP: 2, PP: 2, EP: 1}
	src, dst := l.StageRanks(0), l.StageRanks(1)
	if src[0] != 0 || src[3] != 3 || dst[0] != 4 || dst[3] != 7 {
		t.Fatalf("stage ranks %v %v", src, dst)
	}
	d, err := SendDAG(src, dst, 4, 8, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFlows() != 4 {
		t.Fatalf("%d flows, want 4", d.NumFlows())
	}
	for i := range 4 {
		f := d.Flow(FlowID(i))
		if f.Src != int32(i) || f.Dst != int32(i+4) || f.Bytes != 1000 || f.Kind != KindP2P {
			t.Errorf("flow %d = %+v", i, f)
		}
		if p := d.Parents(FlowID(i), nil); len(p) != 0 {
			t.Errorf("flow %d has parents %v", i, p)
		}
	}
	for _, bad := range []struct {
		src, dst []int32
		bytes    int64
	}{{src, dst[:1], 10}, {src, dst, 0}} {
		if _, err := SendDAG(bad.src, bad.dst, 4, 8, bad.bytes); err == nil {
			t.Errorf("SendDAG(%v, %v, %d) accepted", bad.src, bad.dst, bad.bytes)
		}
	}
}
