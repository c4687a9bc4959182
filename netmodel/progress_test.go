package netmodel

import (
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// Progress counts a flow ⅔ when it starts, 1/30 as its bytes are sent and 3/10 when it is done
// (½, ⅕ and 3/10 under congestion control): one 1 MB flow across the 16-GPU fabric, alone at 400
// Gb/s, is 0 before its start and 0.6833 (0.6) halfway through its sending; once sent it is done with
// ideal sharing, which reports it then (1), and 0.7 under congestion control, done at the ACK of
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
		half, sent := 41.0/60, 1.0
		if cc == 1 {
			half, sent = 0.6, 0.7
		}
		for name, want := range map[string]float64{"before": 0, "half sent": half, "sent": sent, "done": 1} {
			if math.Abs(got[name]-want) > 1e-3 {
				t.Errorf("CC_MODE %d, %s: progress %.4f, want %.4f", cc, name, got[name], want)
			}
		}
	}
}

// ProgressCounted counts the starts and ends of now with the bytes the last Progress measured
// (or the flows done, if more): the same 1 MB flow counts ⅔ (½) halfway through its sending
// before any measurement, 0.6833 (0.6) once Progress has measured its half; once sent, with ideal
// sharing it is done (1), and under congestion control still at the measured half's 0.6 where
// Progress says 0.7 — the bytes since the measurement are the lag, never more than Progress.
func TestSimulatorProgressCounted(t *testing.T) {
	tr := fluid.SimAITransport(9000, 0)
	const rate = 400e9
	start := 10 * engine.Microsecond
	sendTime := psOf(float64(tr.Wire(1e6)*8) / rate)
	for _, c := range []struct {
		cc                                     int
		halfCounted, halfMeasured, sentCounted float64
	}{
		{0, 2.0 / 3, 41.0 / 60, 1},
		{1, 0.5, 0.6, 0.6},
	} {
		s, sim := shippedSimulator(t, c.cc, tr)
		sim.StartRaw([]RawFlow{{Src: 0, Dst: 9, Bytes: 1e6, DPort: DPort, Start: start}})
		got := map[string]float64{}
		s.AtFunc(start-1, func() { got["before"] = sim.ProgressCounted() })
		s.AtFunc(start+sendTime/2, func() {
			got["half, counted"] = sim.ProgressCounted()
			got["half, measured"] = sim.Progress()
			got["half, counted after"] = sim.ProgressCounted()
		})
		s.AtFunc(start+sendTime+engine.Nanosecond, func() {
			got["sent, counted"] = sim.ProgressCounted()
			if p := sim.Progress(); got["sent, counted"] > p+1e-12 {
				t.Errorf("CC_MODE %d: counted %.4f once sent, more than measured %.4f", c.cc, got["sent, counted"], p)
			}
		})
		s.Run()
		got["done"] = sim.ProgressCounted()
		for name, want := range map[string]float64{"before": 0, "half, counted": c.halfCounted, "half, measured": c.halfMeasured,
			"half, counted after": c.halfMeasured, "sent, counted": c.sentCounted, "done": 1} {
			if math.Abs(got[name]-want) > 1e-3 {
				t.Errorf("CC_MODE %d, %s: progress %.4f, want %.4f", c.cc, name, got[name], want)
			}
		}
	}
}
