package packets

import (
	"testing"

	"simd/engine"
)

// BenchmarkRing runs one server's ring step over and over: eight GPUs, each sending seven
// 128 KiB flows (15 packets) to the next at once, the next step when all are done. It reports
// the cost of a packet (its data and its ACK over both links: eight events).
func BenchmarkRing(b *testing.B) {
	st := newStar(b, 8, 2880e9, 25*ns, Config{Transport: nvlinkTransport(), Window: 236000})
	var step func()
	left := 0
	steps := 0
	st.n.owner = ownerFunc{done: func() {
		if left--; left == 0 && steps < b.N {
			step()
		}
	}}
	step = func() {
		steps++
		slot := int32(0)
		for g := range int32(8) {
			for range 7 {
				st.n.Start(slot, []int32{2 * g, 2*((g+1)%8) + 1}, []int32{2 * ((g + 1) % 8), 2*g + 1}, 131072)
				slot++
			}
		}
		left = int(slot)
	}
	b.ReportAllocs()
	b.ResetTimer()
	st.s.AtFunc(0, step)
	st.s.Run()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(st.n.Stats().Packets), "ns/packet")
	b.ReportMetric(float64(st.n.Stats().Events)/float64(st.n.Stats().Packets), "events/packet")
}

type ownerFunc struct{ done func() }

func (ownerFunc) PacketsSent(int32, engine.Time)   {}
func (o ownerFunc) PacketsDone(int32, engine.Time) { o.done() }
