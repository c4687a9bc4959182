package netmodel

import (
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// Progress counts a flow ½ when it starts, ⅒ as its bytes are sent and ⅖ when it is done (⅓, ⅙
// and ½ under congestion control): one 1 MB flow across the 16-GPU fabric, alone at 400 Gb/s,
// is 0 before its start and 0.55 (5/12) halfway through its sending; once sent it is done with
// ideal sharing, which reports it then (1), and ½ under congestion control, done at the ACK of
// its last packet, when it is 1.
func TestSimulatorProgress(t *testing.T) {
	tr := fluid.SimAITransport(9000, 0)
	const c = 400e9
	start := 10 * engine.Microsecond
	sendTime := psOf(float64(tr.Wire(1e6)*8) / c)
	for _, cc := range []int{0, 1} {
		s, sim := shippedSimulator(t, cc, tr)
		sim.StartRaw([]RawFlow{{Src: 0, Dst: 9, Bytes: 1e6, DPort: DPort, Start: start}})
		got := map[string]float64{}
		look := func(name string, at engine.Time) {
			s.AtFunc(at, func() { got[name] = sim.Progress() })
		}
		look("before", start-1)
		look("half sent", start+sendTime/2)
		look("sent", start+sendTime+engine.Nanosecond)
		s.Run()
		got["done"] = sim.Progress()
		half, sent := 0.55, 1.0
		if cc == 1 {
			half, sent = 5.0/12, 0.5
		}
		for name, want := range map[string]float64{"before": 0, "half sent": half, "sent": sent, "done": 1} {
			if math.Abs(got[name]-want) > 1e-3 {
				t.Errorf("CC_MODE %d, %s: progress %.4f, want %.4f", cc, name, got[name], want)
			}
		}
	}
}
