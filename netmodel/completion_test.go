package netmodel

import (
	"math"
	"testing"

	"simd/configs"
	"simd/engine"
	"simd/netmodel/fluid"
)

// psOf is seconds in picoseconds, rounded up as the models round.
func psOf(s float64) engine.Time { return engine.Time(math.Ceil(s * 1e12)) }

// rawFCT runs raw flows on a 16-GPU Spectrum-X fabric with SimAI's shipped SimAI.conf (with
// CC_MODE cc) and the transport tr, and returns each flow's FCT (done − start).
func rawFCT(t *testing.T, cc int, tr fluid.Transport, flows []RawFlow) []engine.Time {
	t.Helper()
	s, sim := shippedSimulator(t, cc, tr)
	var recs []FlowRecord
	sim.Observe(recorder{&recs})
	sim.StartRaw(flows)
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	fct := make([]engine.Time, len(flows))
	for _, r := range recs {
		fct[r.Flow] = r.Arrived - r.Start
	}
	return fct
}

// shippedSimulator is a simulator on a 16-GPU Spectrum-X fabric with SimAI's shipped
// SimAI.conf (with CC_MODE cc) and the transport tr, and its scheduler.
func shippedSimulator(t *testing.T, cc int, tr fluid.Transport) (*engine.Scheduler, *Simulator) {
	t.Helper()
	fab := spectrumX16(t, 8)
	conf, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	conf.CCMode = cc
	s := engine.NewScheduler()
	if cfg, on, err := CCConfig(&conf, fab, 1); err != nil {
		t.Fatal(err)
	} else if on {
		cfg.Transport = tr
		sim, err := NewCCSimulator(s, fab, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, sim
	}
	return s, NewSimulator(s, fab, Options{Transport: tr})
}

// When a flow is done, on an idle path, in both models. An 8 KiB flow is one packet of 8,244
// bytes on the wire. Across the fabric (GPU 0 to GPU 9: NIC, ASW, PSW, ASW, each 400 Gb/s and
// 500 ns) SimAI's ns-3 completes it when the ACK of its last packet reaches the sender: the
// sender's serialisation and three switches each storing the packet before sending it on
// (4·8,244·8/C), the way there (4·500 ns), and the 60-byte ACK's way back (4·500 ns +
// 4·60·8/C): 4,664.32 ns; ns-3 prints 4,660 (it truncates every serialisation to whole
// nanoseconds). At the receiver's last byte (-completion arrival) it is done after the first
// 2,659.52 ns. Inside a server (GPU 0 to GPU 1 through the NVSwitch, 2,880 Gb/s, 25 ns): two
// serialisations, 50 ns there, 50 ns and two ACK serialisations back: 146.13 ns (ns-3: 144).
// On ns-3's clock (Transport.NanosecondClock) the links send at what whole nanoseconds make of
// full packets (9,052 bytes in 181 ns at 400 Gb/s, in 25 at 2,880), this one-packet flow's
// bytes too, and an ACK takes 1 ns at 400 Gb/s and none on the NVLink: 4,663.36 and 145.54 ns
// (ns-3 sends the 8,244 bytes in 164 ns and 22 ns, rounded down on their own).
func TestCompletionRule(t *testing.T) {
	const c, nv = 400e9, 2880e9
	wire := 8244.0 * 8
	ack := 60.0 * 8
	across := psOf(4*wire/c) + 2000*engine.Nanosecond
	inside := psOf(2*wire/nv) + 50*engine.Nanosecond
	flows := []RawFlow{{Src: 0, Dst: 9, Bytes: 8192, DPort: DPort}, {Src: 0, Dst: 1, Bytes: 8192, DPort: DPort}}
	atAck := fluid.SimAITransport(9000, 0)
	atArrival := atAck
	atArrival.AtAck = false
	clock := atAck
	clock.NanosecondClock = true
	const c400, cnv = 9052 * 8 / 181e-9, 9052 * 8 / 25e-9
	for _, cc := range []int{0, 1} {
		for _, tc := range []struct {
			name string
			tr   fluid.Transport
			want [2]engine.Time
		}{
			{"ack", atAck, [2]engine.Time{across + 2000*engine.Nanosecond + psOf(4*ack/c), inside + 50*engine.Nanosecond + psOf(2*ack/nv)}},
			{"arrival", atArrival, [2]engine.Time{across, inside}},
			{"ack, ns-3's clock", clock, [2]engine.Time{psOf(4*wire/c400) + 4000*engine.Nanosecond + 4*engine.Nanosecond, psOf(2*wire/cnv) + 100*engine.Nanosecond}},
		} {
			got := rawFCT(t, cc, tc.tr, flows)
			for i := range flows {
				if !near(got[i], tc.want[i], 3) {
					t.Errorf("CC_MODE %d, done at %s: flow %d→%d took %v, want %v", cc, tc.name, flows[i].Src, flows[i].Dst, got[i], tc.want[i])
				}
			}
		}
	}
}

// N flows sharing a link get rate/N each, under the completion rule in force: two 1 MB flows from
// GPUs 0 and 2 to GPU 9 (both across the fabric, four 400 Gb/s hops) share its NIC link. Each
// carries 1,000,000 + 112·52 bytes, so both are sent after 2·1,005,824·8/C = 40,232.96 ns (ideal
// sharing: each at C/2 from the start); then the last packet's tail through the switches
// (fluid.Transport.Tail at C/2), the path's 2 µs and, with ACK completion, the ACK's 2 µs and
// 4·60·8/C back.
func TestSharedLinkCompletion(t *testing.T) {
	const c = 400e9
	tr := fluid.SimAITransport(9000, 0)
	flows := []RawFlow{{Src: 0, Dst: 9, Bytes: 1e6, DPort: DPort}, {Src: 2, Dst: 9, Bytes: 1e6, DPort: DPort}}
	got := rawFCT(t, 0, tr, flows)
	sent := psOf(float64(2*tr.Wire(1e6)*8) / c)
	tail := tr.Tail(1e6, c/2, []float64{c, c, c, c})
	want := sent + tail + 4000*engine.Nanosecond + psOf(4*60*8/c)
	for i := range flows {
		if !near(got[i], want, 4) {
			t.Errorf("flow %d took %v, want %v", i, got[i], want)
		}
	}
}
