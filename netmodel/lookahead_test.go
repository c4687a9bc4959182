package netmodel

import (
	"reflect"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/netmodel/fluid"
)

// Looking ahead only asks for memory: the same runs give the same flow records, field for
// field, with it on and off — a ring all-reduce (released flows: the simulator's hints) and an
// all-to-all (raw flows) over the 16-GPU Spectrum-X fabric under SimAI's shipped SimAI.conf,
// with ideal sharing (CC_MODE 0) and with DCQCN (1). A new simulator on that fabric does not
// look ahead: its link tables are far below LookAheadBytes.
func TestLookAheadSameRecords(t *testing.T) {
	ring, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(16), GPUsPerServer: 8, TotalGPUs: 16, Bytes: 4 << 20}, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var raw []RawFlow
	for s := range int32(16) {
		for d := range int32(16) {
			if s != d {
				raw = append(raw, RawFlow{Src: s, Dst: d, Bytes: 256 << 10, Sport: uint16(10000 + d), DPort: DPort})
			}
		}
	}
	for _, cc := range []int{0, 1} {
		var want [2][]FlowRecord
		for _, on := range []bool{false, true} {
			for k := range 2 {
				s, sim := shippedSimulator(t, cc, fluid.SimAITransport(9000, 0))
				if got, b := sim.LookingAhead(); got || b <= 0 || b >= LookAheadBytes {
					t.Fatalf("CC_MODE %d: a new simulator looks ahead %v, its link tables %d bytes", cc, got, b)
				}
				sim.SetLookAhead(on)
				var recs []FlowRecord
				sim.Observe(recorder{&recs})
				if k == 0 {
					sim.Run(ring, Latency{Intra: 6 * engine.Microsecond, Inter: 6 * engine.Microsecond}, nil)
				} else {
					sim.StartRaw(raw)
				}
				s.Run()
				if err := sim.Err(); err != nil {
					t.Fatal(err)
				}
				if len(recs) == 0 {
					t.Fatalf("CC_MODE %d, run %d: no flow", cc, k)
				}
				if !on {
					want[k] = recs
				} else if !reflect.DeepEqual(recs, want[k]) {
					t.Errorf("CC_MODE %d, run %d: the records differ with looking ahead", cc, k)
				}
			}
		}
	}
}
