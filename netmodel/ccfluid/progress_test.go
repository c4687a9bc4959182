package ccfluid

import (
	"fmt"
	"math"
	"testing"

	"simd/engine"
	"simd/netmodel/fluid"
)

// visitedProgress is InFlightProgress as a visit of every flow slot computes it (a weight
// function makes InFlightProgressWeighted visit).
func visitedProgress(n *Network) float64 {
	return n.InFlightProgressWeighted(func(int64) float64 { return 1 })
}

// checkProgressLine fails t unless the progress line InFlightProgress reads is what a visit of
// every flow finds, to a millionth of a flow.
func checkProgressLine(t testing.TB, n *Network) {
	t.Helper()
	line, visit := n.InFlightProgress(), visitedProgress(n)
	if math.Abs(line-visit) > 1e-6 {
		t.Fatalf("at %d ps: the progress line reads %.9f flows, a visit %.9f", n.s.Now(), line, visit)
	}
}

// The progress line (InFlightProgress: the sending flows' injected shares summed as a line kept
// by every change of an injection, and 1 for every flow sent) is what a visit of every flow
// finds, every microsecond of all-to-alls under DCQCN with and without windows, with SimAI's
// packets and departures, with turns, on two switches where flows queue before their last link
// and ports pause; and it is 0 once every flow has arrived.
func TestProgressLineIsTheVisit(t *testing.T) {
	windowed := repoConfig()
	windowed.Window = 100e3
	simai := departureConfig()
	simai.Window, simai.VarWin, simai.FirstWindowBurst = 200e3, true, true
	turns := repoConfig()
	turns.Transport = fluid.Transport{Payload: 9000, Header: 52, Ack: 60, NanosecondClock: true}
	turns.Turns = true
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"dcqcn", repoConfig()}, {"dcqcn-window", windowed}, {"simai", simai}, {"turns", turns}} {
		for seed := range uint64(2) {
			t.Run(fmt.Sprintf("%s/%d", tc.name, seed), func(t *testing.T) {
				var last *Network
				looks := 0
				watch := func(n *Network) {
					checkProgressLine(t, n)
					last = n
					looks++
				}
				run := allToAllTwoLeaves(t, tc.cfg, 12, 3, seed, watch)
				if looks < 10 || len(run.arrived) != 12*11*3 {
					t.Fatalf("%d looks, %d flows arrived: the case does not test it", looks, len(run.arrived))
				}
				if p := last.InFlightProgress(); math.Abs(p) > 1e-6 || last.progSending != 0 || last.progRate != 0 {
					t.Errorf("after the run: progress %v, %d sending, rate %v; want 0", p, last.progSending, last.progRate)
				}
				t.Logf("%d looks, %d rate changes, %d marks, %d pauses", looks, run.stats.RateChanges, run.stats.Marks, run.stats.Pauses)
			})
		}
	}
}

// A flow moved mid-transfer keeps its place on the progress line, as does a flow with no link
// to cross (sent as it starts).
func TestProgressLineThroughReroute(t *testing.T) {
	s, n, _, _ := setup(t, twoPaths(t), repoConfig())
	f := n.Start([]int32{0, 2}, nil, 10*MB, 1)
	n.Start(nil, nil, 1000, 2)
	n.Start([]int32{4, 6}, nil, 2*MB, 3)
	for at := engine.Time(0); at <= 300*engine.Microsecond; at += engine.Microsecond {
		s.RunUntil(at)
		if at == 100*engine.Microsecond {
			n.Reroute(f, []int32{4, 6}, nil)
		}
		checkProgressLine(t, n)
	}
	s.Run()
	if p := n.InFlightProgress(); math.Abs(p) > 1e-6 {
		t.Errorf("after the run: progress %v, want 0", p)
	}
}

// Where the NVLink goes packet by packet, its flows' parts come from the packet model:
// flows over the NVLink and over the fabric, started every 200 ns in both directions, checked
// every 50 ns.
func TestProgressLineWithNVLinkPackets(t *testing.T) {
	s, n, rec, _ := setup(t, nvlinkServer(t), nvlinkConfig(NVLinkPackets))
	sizes := []int64{8192, 100e3, 1 << 20, 30e3}
	for i := range 16 {
		s.AtFunc(engine.Time(i)*200*engine.Nanosecond, func() {
			b := sizes[i%len(sizes)]
			switch i % 4 {
			case 0:
				n.Start(nvPath, nvAck, b, int64(i))
			case 1:
				n.Start(fabricPath, fabrAck, b, int64(i))
			case 2:
				n.Start([]int32{2, 1}, []int32{0, 3}, b, int64(i))
			default:
				n.Start([]int32{6, 5}, []int32{4, 7}, b, int64(i))
			}
		})
	}
	looks := 0
	for s.Len() > 0 {
		s.RunUntil(s.Now() + 50*engine.Nanosecond)
		checkProgressLine(t, n)
		looks++
	}
	if len(rec.arrived) != 16 || n.PacketStats().Flows != 8 {
		t.Fatalf("%d flows arrived, %d by packets: the case does not test it", len(rec.arrived), n.PacketStats().Flows)
	}
	if p := n.InFlightProgress(); math.Abs(p) > 1e-6 || len(n.pkFlows) != 0 {
		t.Errorf("after the run: progress %v, %d packet flows listed; want 0", p, len(n.pkFlows))
	}
	t.Logf("%d looks", looks)
}
