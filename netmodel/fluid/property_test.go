package fluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// scenario is a graph and the flows to run on it.
type scenario struct {
	name  string
	g     *route.Graph
	specs []spec
}

// capacities returns the capacity of every directed link of g.
func capacities(g *route.Graph) []float64 {
	c := make([]float64, g.NumDirLinks())
	for l := range c {
		c[l] = g.Rate(int32(l))
	}
	return c
}

// randomSpecs draws nf flows over the paths given by path(rng): about a third of them are
// children of an earlier flow; start times and gaps are often multiples of a coarse grid so
// that many changes share an instant; some sizes are tiny.
func randomSpecs(rng *rand.Rand, nf int, path func() []int32) []spec {
	specs := make([]spec, nf)
	for i := range specs {
		sp := spec{path: path(), parent: -1}
		switch rng.IntN(10) {
		case 0:
			sp.bytes = int64(rng.IntN(3)) // 0, 1 or 2 bytes
		case 1:
			sp.bytes = int64(1 + rng.IntN(10*KB))
		default:
			sp.bytes = int64(1 + rng.IntN(2*MB))
		}
		if rng.IntN(3) > 0 {
			sp.delay = engine.Time(rng.IntN(2000)) * engine.Nanosecond
		}
		if i > 0 && rng.IntN(3) == 0 {
			sp.parent = rng.IntN(i)
			if rng.IntN(2) == 0 {
				sp.gap = engine.Time(rng.IntN(5)) * us
			}
		} else if rng.IntN(2) == 0 {
			sp.at = engine.Time(rng.IntN(20)) * 10 * us
		} else {
			sp.at = engine.Time(rng.Int64N(int64(200 * us)))
		}
		specs[i] = sp
	}
	return specs
}

// randomGraphScenario: a random multigraph of 4–12 nodes whose links have rates from a small
// set (so that fair shares often tie) or drawn at random, and flows on random walks of 1–6
// directed links that never reuse a directed link.
func randomGraphScenario(t testing.TB, seed uint64) scenario {
	rng := rand.New(rand.NewPCG(seed, 1))
	nodes := 4 + rng.IntN(9)
	nl := nodes + rng.IntN(2*nodes)
	links := make([][2]int32, nl)
	rates := make([]float64, nl)
	tied := rng.IntN(2) == 0
	for i := range links {
		a := rng.Int32N(int32(nodes))
		b := rng.Int32N(int32(nodes - 1))
		if b >= a {
			b++
		}
		links[i] = [2]int32{a, b}
		if tied {
			rates[i] = []float64{G100, G200, G400, 2880e9}[rng.IntN(4)]
		} else {
			rates[i] = 10e9 + rng.Float64()*390e9
		}
	}
	g := graphOf(t, nodes, links, rates)
	path := func() []int32 {
		for {
			x := rng.Int32N(int32(nodes))
			var p []int32
			hops := 1 + rng.IntN(6)
			for range hops {
				_, out := g.Adjacent(x)
				var free []int32
				for _, l := range out {
					used := false
					for _, m := range p {
						used = used || m == l
					}
					if !used {
						free = append(free, l)
					}
				}
				if len(free) == 0 {
					break
				}
				l := free[rng.IntN(len(free))]
				p = append(p, l)
				x = g.To(l)
			}
			if len(p) > 0 {
				return p
			}
		}
	}
	nf := 20 + rng.IntN(200)
	return scenario{fmt.Sprintf("random graph seed %d", seed), g, randomSpecs(rng, nf, path)}
}

// fabricScenario: a generated Spectrum-X fabric and flows between random GPUs on the paths
// route.Router gives them (random source ports, so ECMP spreads them).
func fabricScenario(t testing.TB, seed uint64, gpus, gps, nicsPerASW, psws int) scenario {
	rng := rand.New(rand.NewPCG(seed, 2))
	r := spectrumXRouter(t, gpus, gps, nicsPerASW, psws)
	path := func() []int32 {
		src := rng.Int32N(int32(gpus))
		dst := rng.Int32N(int32(gpus - 1))
		if dst >= src {
			dst++
		}
		p, err := r.Route(nil, src, dst, uint16(10000+rng.IntN(64)), 100)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	nf := 50 + rng.IntN(250)
	name := fmt.Sprintf("fabric %d GPUs seed %d", gpus, seed)
	return scenario{name, r.Graph(), randomSpecs(rng, nf, path)}
}

// spectrumXRouter builds a generated Spectrum-X fabric and its router.
func spectrumXRouter(t testing.TB, gpus, gps, nicsPerASW, psws int) *route.Router {
	p := topo.SpectrumXDefaults(gpus)
	p.GPUsPerServer, p.NICsPerASW, p.PSWs, p.CheckCapacity = gps, nicsPerASW, psws, false
	tp, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := route.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// driver starts a scenario's flows on a network: roots at their times, children gap after
// their parent arrives (from the arrival callback itself when the gap is 0). It logs every
// callback and the rates after every recompute, for the determinism test.
type driver struct {
	s        *engine.Scheduler
	n        *Network
	specs    []spec
	children [][]int
	res      []refResult
	log      []string
	onStart  func(i int, f FlowID) // optional
}

func (d *driver) start(i int) {
	sp := d.specs[i]
	d.res[i].start = d.s.Now()
	f := d.n.Start(sp.path, sp.bytes, sp.delay, int64(i))
	if d.onStart != nil {
		d.onStart(i, f)
	}
}

func (d *driver) FlowSent(f FlowID, now engine.Time) {
	i := d.n.Tag(f)
	d.res[i].sent = now
	d.log = append(d.log, fmt.Sprintf("%d sent %d slot %d", now, i, f))
}

func (d *driver) FlowArrived(f FlowID, now engine.Time) {
	i := d.n.Tag(f)
	d.res[i].arrived = now
	d.log = append(d.log, fmt.Sprintf("%d arrived %d slot %d", now, i, f))
	for _, c := range d.children[i] {
		if d.specs[c].gap == 0 {
			d.start(c)
		} else {
			d.s.AtFunc(now+d.specs[c].gap, func() { d.start(c) })
		}
	}
}

// runScenario runs sc on a fresh network, calling check after every recompute.
func runScenario(sc scenario, check func(n *Network)) (*driver, *Network) {
	s, d, n := newScenarioRun(sc)
	n.afterRecompute = func() {
		h := uint64(0)
		for id := range n.hot {
			h = h*31 + math.Float64bits(n.hot[id].rate) + uint64(n.hot[id].bn)
		}
		d.log = append(d.log, fmt.Sprintf("%d recompute %x", s.Now(), h))
		if check != nil {
			check(n)
		}
	}
	s.Run()
	return d, n
}

// scenarioOptions are the options of the networks newScenarioRun builds (the defaults unless a
// test sets them).
var scenarioOptions Options

// newScenarioRun prepares sc on a fresh scheduler and network: a driver that starts every
// flow when its parent arrives, with the roots scheduled at their times.
func newScenarioRun(sc scenario) (*engine.Scheduler, *driver, *Network) {
	s := engine.NewScheduler()
	d := &driver{s: s, specs: sc.specs, children: make([][]int, len(sc.specs)), res: make([]refResult, len(sc.specs))}
	for i, sp := range sc.specs {
		if sp.parent >= 0 {
			d.children[sp.parent] = append(d.children[sp.parent], i)
		}
	}
	n := NewWithOptions(s, sc.g, d, scenarioOptions)
	d.n = n
	for i, sp := range sc.specs {
		if sp.parent < 0 {
			s.AtFunc(sp.at, func() { d.start(i) })
		}
	}
	return s, d, n
}

// checkEachRecompute returns a recompute hook that compares the rates with the from-scratch
// reference and runs Check, reporting at most the first few failures.
func checkEachRecompute(t *testing.T, capa []float64) func(n *Network) {
	failures := 0
	return func(n *Network) {
		if failures > 3 {
			return
		}
		if err := referenceRates(n, capa); err != nil {
			failures++
			t.Errorf("at %v: %v", n.s.Now(), err)
		}
		if err := n.Check(); err != nil {
			failures++
			t.Errorf("at %v: %v", n.s.Now(), err)
		}
	}
}

// referenceRates compares the network's rates with refMaxMin over its transmitting flows.
func referenceRates(n *Network, capa []float64) error {
	var ids []FlowID
	var paths [][]int32
	for id := range n.hot {
		if st := n.hot[id].state; st == stateActive || st == stateMember {
			ids = append(ids, FlowID(id))
			paths = append(paths, append([]int32(nil), n.Path(FlowID(id))...))
		}
	}
	for k, want := range refMaxMin(capa, paths) {
		if got := n.Rate(ids[k]); !relEq(got, want, 1e-9) {
			return fmt.Errorf("flow %d (tag %d, path %v): rate %v, reference %v", ids[k], n.Tag(ids[k]), paths[k], got, want)
		}
	}
	return nil
}

func scenarios(t testing.TB) []scenario {
	var scs []scenario
	for seed := uint64(1); seed <= 40; seed++ {
		scs = append(scs, randomGraphScenario(t, seed))
	}
	for seed := uint64(1); seed <= 6; seed++ {
		scs = append(scs, fabricScenario(t, seed, 64, 8, 64, 8))   // one segment, 8 spines
		scs = append(scs, fabricScenario(t, seed, 128, 4, 16, 4))  // 8 segments, thin spine layer
		scs = append(scs, fabricScenario(t, seed, 256, 8, 16, 16)) // 16 segments
	}
	return scs
}

// TestAgainstReference runs random scenarios and checks, after every recompute, that the
// incremental rates are the from-scratch water-filling's and satisfy the max-min conditions
// (Check), and at the end that every flow was sent and arrived when the reference simulation
// says.
func TestAgainstReference(t *testing.T) {
	againstReference(t, scenarios(t))
}

// againstReference runs TestAgainstReference's checks on the scenarios scs (on networks with
// scenarioOptions) and returns how many flows were bundled.
func againstReference(t *testing.T, scs []scenario) (bundled uint64) {
	var worst engine.Time
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			capa := capacities(sc.g)
			d, n := runScenario(sc, checkEachRecompute(t, capa))
			worst = max(worst, checkTimes(t, d.res, refSim(capa, sc.specs)))
			st := n.Stats()
			bundled += st.Bundled
			if st.Started != uint64(len(sc.specs)) || st.Arrived != st.Started || n.InFlight() != 0 || n.Active() != 0 {
				t.Errorf("stats %+v, in flight %d, active %d", st, n.InFlight(), n.Active())
			}
		})
	}
	t.Logf("%d flows bundled; largest difference from the reference times: %d ps", bundled, worst)
	return bundled
}

// checkTimes compares every flow's start, send and arrival with the reference's, within
// timeTol, and returns the largest difference.
func checkTimes(t *testing.T, got, want []refResult) (worst engine.Time) {
	t.Helper()
	for i, g := range got {
		w := want[i]
		for _, c := range []struct {
			what      string
			got, want engine.Time
		}{{"start", g.start, w.start}, {"sent", g.sent, w.sent}, {"arrived", g.arrived, w.arrived}} {
			diff := c.got - c.want
			worst = max(worst, diff, -diff)
			if diff > timeTol || diff < -timeTol {
				t.Errorf("flow %d %s at %d, reference %d", i, c.what, c.got, c.want)
			}
		}
	}
	return worst
}

// timeTol is how far (in picoseconds) the network's times may be from the reference
// simulation's: the two compute the same rates through different sums, so a rate can differ
// in its last bits, and a completion rounded up to the picosecond can land one picosecond
// apart; later flows inherit such differences through their remaining bytes.
const timeTol = 4

// TestDeterminism runs scenarios twice and compares the logs of callbacks and of the rates
// after every recompute, byte for byte.
func TestDeterminism(t *testing.T) {
	scs := scenarios(t)
	for _, sc := range []scenario{scs[0], scs[7], scs[len(scs)-1]} {
		a, _ := runScenario(sc, nil)
		b, _ := runScenario(sc, nil)
		sameLogs(t, sc.name, a.log, b.log)
	}
}

// sameLogs fails the test at the first difference between two runs' logs of callbacks and rates.
func sameLogs(t *testing.T, name string, a, b []string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: logs of %d and %d lines", name, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: line %d differs:\n%s\n%s", name, i, a[i], b[i])
		}
	}
}

// TestSortedFillIsTheHeap runs scenarios with every solve filled from the heap and with every
// solve filled from the sorted slice (sortedFill) and compares the logs of callbacks and rates
// byte for byte: the two queues must fix the same flows at the same levels in the same order.
func TestSortedFillIsTheHeap(t *testing.T) {
	defer func(k int) { sortedFill = k }(sortedFill)
	for _, sc := range scenarios(t) {
		sortedFill = 0
		a, _ := runScenario(sc, nil)
		sortedFill = 1 << 30
		b, _ := runScenario(sc, nil)
		sameLogs(t, sc.name, a.log, b.log)
	}
}

// TestShadowsLeaveTheFill runs scenarios with every solve looking for twin links (shadowFill 0)
// and with none looking, each with the heap and with the sorted slice, flows apart and bundled,
// and compares the logs of callbacks and rates byte for byte: a link left out of the fill as
// another's twin must not change which flows are fixed, at what level or in what order. The
// fabric scenarios' NIC links give twins (a host's uplink and the next host's downlink carry
// the same flows); the test fails if none was found. With every hash made the same, the
// flow-by-flow check alone must tell twins from links that only have as many flows and the same
// residual.
func TestShadowsLeaveTheFill(t *testing.T) {
	defer func(k, f int, h uint64) { shadowFill, sortedFill, hashBits = k, f, h }(shadowFill, sortedFill, hashBits)
	defer func(o Options) { scenarioOptions = o }(scenarioOptions)
	var shadows uint64
	for _, bits := range []uint64{^uint64(0), 0} {
		hashBits = bits
		shadows += shadowsLeaveTheFill(t)
	}
	if shadows == 0 {
		t.Fatal("no scenario had twin links: the comparison tested nothing")
	}
	t.Logf("%d links left out as twins", shadows)
}

// shadowsLeaveTheFill is one round of TestShadowsLeaveTheFill at the current hashBits; it
// returns how many links were left out as twins.
func shadowsLeaveTheFill(t *testing.T) (shadows uint64) {
	for _, bundles := range []bool{false, true} {
		scenarioOptions = Options{Bundles: bundles}
		for _, fill := range []int{0, 1 << 30} {
			sortedFill = fill
			for _, sc := range scenarios(t) {
				shadowFill = 0
				a, n := runScenario(sc, nil)
				shadows += n.Stats().Shadows
				shadowFill = 1 << 30
				b, m := runScenario(sc, nil)
				if m.Stats().Shadows != 0 {
					t.Fatalf("%s: %d shadows with shadowFill off", sc.name, m.Stats().Shadows)
				}
				sameLogs(t, sc.name, a.log, b.log)
			}
		}
	}
	return shadows
}
