package netmodel

import (
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// Progress counts a flow half when it starts and the other half as its bytes are sent (⅓ and
// ⅔ under congestion control): one 1 MB flow across the 16-GPU fabric, alone at 400 Gb/s, is
// 0 before its start, ¾ (⅔) halfway through its sending, 1 once sent and still 1 when done.
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
		half := 0.75
		if cc == 1 {
			half = 2.0 / 3
		}
		for name, want := range map[string]float64{"before": 0, "half sent": half, "sent": 1, "done": 1} {
			if math.Abs(got[name]-want) > 1e-3 {
				t.Errorf("CC_MODE %d, %s: progress %.4f, want %.4f", cc, name, got[name], want)
			}
		}
	}
}
