package ccfluid

import (
	"testing"

	"simd/cc"
	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// Rates and sizes used in the tests.
const (
	G400 = 400e9
	KB   = 1000.0
	MB   = 1 << 20
)

// node is a test topology node.
type node struct{ kind topo.NodeKind }

// graphOf builds a graph from node kinds and links (a, b, rate, delay); directed link 2i goes
// from links[i].a to links[i].b.
type tlink struct {
	a, b  int32
	rate  float64
	delay engine.Time
}

func graphOf(t testing.TB, kinds []topo.NodeKind, links []tlink) *route.Graph {
	t.Helper()
	tp := &topo.Topology{GPUsPerServer: 1, GPUType: "H100", Kinds: kinds}
	for id, k := range kinds {
		switch k {
		case topo.Switch:
			tp.Switches = append(tp.Switches, int32(id))
		case topo.NVSwitch:
			tp.NVSwitches = append(tp.NVSwitches, int32(id))
		}
	}
	for _, l := range links {
		tp.Links = append(tp.Links, topo.Link{Src: l.a, Dst: l.b, Rate: l.rate, Delay: l.delay})
	}
	g, err := route.NewGraph(tp)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// star is hosts 0..n-1 on switch n, every link at rate with delay: host i sends on directed
// link 2i and receives on 2i+1.
func star(t testing.TB, n int, rate float64, delay engine.Time) *route.Graph {
	kinds := make([]topo.NodeKind, n+1)
	kinds[n] = topo.Switch
	var links []tlink
	for i := range n {
		links = append(links, tlink{int32(i), int32(n), rate, delay})
	}
	return graphOf(t, kinds, links)
}

// repoConfig is SimAI's shipped SimAI.conf as a Config: DCQCN with α every 1 µs, decreases
// every 4 µs, increases every 900 µs, g = 1/256, one fast-recovery stage, AI 50 Mb/s, HAI
// 100 Mb/s, floor 100 Mb/s; ECN at 400 Gb/s ports between 800 KB and 3200 KB up to 20%;
// 9000-byte packets; 32 MB switch buffers.
func repoConfig() Config {
	return Config{
		DCQCN: cc.DCQCNConfig{
			MinRate: 100e6, RateAI: 50e6, RateHAI: 100e6, G: 0.00390625,
			AlphaResumeInterval: engine.Microsecond, RateDecreaseInterval: 4 * engine.Microsecond,
			RPTimer: 900 * engine.Microsecond, FastRecoveryTimes: 1, RateOnFirstCNP: 1,
		},
		ECN: func(rate float64) (cc.ECNMarker, bool) {
			if rate == G400 {
				return cc.ECNMarker{KMin: 800 * KB, KMax: 3200 * KB, PMax: 0.2}, true
			}
			return cc.ECNMarker{}, false
		},
		PacketBytes: 9000,
		PFC:         true,
		BufferBytes: 32 * MB,
		NICRate:     G400,
		Seed:        1,
		Reshape:     true,
	}
}

// recorder keeps each tag's sent and arrival times.
type recorder struct {
	n       *Network
	sentAt  map[int64]engine.Time
	arrived map[int64]engine.Time
}

func (r *recorder) FlowSent(f FlowID, now engine.Time)    { r.sentAt[r.n.Tag(f)] = now }
func (r *recorder) FlowArrived(f FlowID, now engine.Time) { r.arrived[r.n.Tag(f)] = now }

// pfcLog keeps the PFC frames.
type pfcLog struct{ frames []pfcFrame }

type pfcFrame struct {
	at    engine.Time
	node  int32
	kind  topo.NodeKind
	ifidx int
	pause bool
}

func (p *pfcLog) PFC(at engine.Time, node int32, kind topo.NodeKind, ifindex int, pause bool) {
	p.frames = append(p.frames, pfcFrame{at, node, kind, ifindex, pause})
}

// setup returns a scheduler, a network over g with cfg, its recorder and PFC log.
func setup(t testing.TB, g *route.Graph, cfg Config) (*engine.Scheduler, *Network, *recorder, *pfcLog) {
	t.Helper()
	s := engine.NewScheduler()
	rec := &recorder{sentAt: map[int64]engine.Time{}, arrived: map[int64]engine.Time{}}
	pl := &pfcLog{}
	n, err := New(s, g, rec, pl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec.n = n
	return s, n, rec, pl
}
