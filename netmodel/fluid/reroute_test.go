package fluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"simd/engine"
)

// twoLinks is two parallel links from node 0 to node 1: directed link 0 at 100 Gb/s and
// directed link 2 at 200 Gb/s, two disjoint paths between the same nodes.
func twoLinks(t *testing.T) (*engine.Scheduler, *Network, *segRecorder) {
	g := graphOf(t, 2, [][2]int32{{0, 1}, {0, 1}}, []float64{G100, G200})
	s := engine.NewScheduler()
	rec := &segRecorder{recorder: *newRecorder()}
	n := NewWithOptions(s, g, rec, Options{TrackBottlenecks: true})
	rec.n = n
	return s, n, rec
}

// A flow alone on the 100 Gb/s link moves at 300 µs to the idle 200 Gb/s one: it sent
// 100e9·300e-6/8 = 3.75 MB on the old path and sends the other 6.25 MB at 200 Gb/s in 250 µs,
// so it is sent at 550 µs and arrives the new path's delay later.
func TestRerouteOneFlow(t *testing.T) {
	s, n, rec := twoLinks(t)
	const d2 = 3 * us
	f := n.Start([]int32{0}, 10*MB, 1*us, 7)
	s.AtFunc(300*us, func() {
		n.Reroute(f, []int32{2}, d2)
		if n.Rate(f) != 0 {
			t.Errorf("rate before the instant's recompute %v, want 0", n.Rate(f))
		}
		if got := n.Remaining(f); !relEq(got, 6.25*MB, 1e-12) {
			t.Errorf("remaining at the move %v, want 6.25e6", got)
		}
	})
	s.RunUntil(300 * us)
	if n.Rate(f) != G200 || n.Bottleneck(f) != 2 {
		t.Errorf("after the move: rate %v bottleneck %d, want 200e9 on link 2", n.Rate(f), n.Bottleneck(f))
	}
	if n.LinkFlows(0) != 0 || !slices.Equal(n.LinkFlowIDs(2, nil), []FlowID{f}) || !slices.Equal(n.Path(f), []int32{2}) {
		t.Errorf("links: %d flows on 0, %v on 2, path %v", n.LinkFlows(0), n.LinkFlowIDs(2, nil), n.Path(f))
	}
	if err := n.Check(); err != nil {
		t.Error(err)
	}
	if got := n.LinkBytes(0); !relEq(got, 3.75*MB, 1e-12) {
		t.Errorf("old link carried %v bytes, want 3.75e6", got)
	}
	s.Run()
	if err := roundedUp(rec.sentAt[7], float64(550*us)); err != nil {
		t.Errorf("sent: %v", err)
	}
	if rec.arrived[7] != rec.sentAt[7]+d2 {
		t.Errorf("arrived %v, want sent %v + the new delay", rec.arrived[7], rec.sentAt[7])
	}
	if a, b := n.LinkBytes(0), n.LinkBytes(2); !relEq(a, 3.75*MB, 1e-12) || !relEq(b, 6.25*MB, 1e-12) {
		t.Errorf("link bytes %v and %v, want 3.75e6 and 6.25e6", a, b)
	}
	if st := n.Stats(); st.Rerouted != 1 || st.Arrived != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Rates are re-solved on both paths. A and C (10 MB each) share the 100 Gb/s link, 50 Gb/s
// each; B (20 MB) has the 200 Gb/s link. At 400 µs A and C have 7.5 MB left, B 10 MB, and A
// moves to B's link: C gets 100 Gb/s alone, A and B 100 Gb/s each. C and A finish their 7.5 MB
// in 600 µs (1000 µs); B then has 2.5 MB left, alone at 200 Gb/s: 100 µs more (1100 µs).
// Bottleneck bytes: the 100 Gb/s link limited A for 2.5 MB and C for 10 MB, the 200 Gb/s link
// A for 7.5 MB and B for 20 MB.
func TestRerouteSharesTheNewPath(t *testing.T) {
	s, n, rec := twoLinks(t)
	a := n.Start([]int32{0}, 10*MB, 0, 0)
	b := n.Start([]int32{2}, 20*MB, 0, 1)
	c := n.Start([]int32{0}, 10*MB, 0, 2)
	s.AtFunc(400*us, func() { n.Reroute(a, []int32{2}, 0) })
	s.RunUntil(400 * us)
	for _, x := range []struct {
		f    FlowID
		rate float64
		bn   int32
	}{{a, G100, 2}, {b, G100, 2}, {c, G100, 0}} {
		if n.Rate(x.f) != x.rate || n.Bottleneck(x.f) != x.bn {
			t.Errorf("flow %d: rate %v bottleneck %d, want %v on %d", x.f, n.Rate(x.f), n.Bottleneck(x.f), x.rate, x.bn)
		}
	}
	ids := n.LinkFlowIDs(2, n.LinkFlowIDs(0, nil))
	slices.Sort(ids)
	if !slices.Equal(ids, []FlowID{a, b, c}) {
		t.Errorf("LinkFlowIDs appended %v", ids)
	}
	if err := n.Check(); err != nil {
		t.Error(err)
	}
	s.Run()
	for tag, want := range map[int64]float64{0: 1000e6, 1: 1100e6, 2: 1000e6} {
		if err := roundedUp(rec.sentAt[tag], want); err != nil {
			t.Errorf("flow %d sent: %v", tag, err)
		}
	}
	perFlow := map[int64]float64{}
	for _, sg := range rec.segs {
		perFlow[sg.tag] += sg.bytes
	}
	for tag, want := range map[int64]float64{0: 10 * MB, 1: 20 * MB, 2: 10 * MB} {
		if !relEq(perFlow[tag], want, 1e-9) {
			t.Errorf("flow %d: bottleneck segments add up to %v bytes, want %v", tag, perFlow[tag], want)
		}
	}
	if x, y := n.BottleneckBytes(0), n.BottleneckBytes(2); !relEq(x, 12.5*MB, 1e-9) || !relEq(y, 27.5*MB, 1e-9) {
		t.Errorf("bottleneck bytes %v and %v, want 12.5e6 and 27.5e6", x, y)
	}
	if x, y := n.LinkBytes(0), n.LinkBytes(2); !relEq(x, 12.5*MB, 1e-9) || !relEq(y, 27.5*MB, 1e-9) {
		t.Errorf("link bytes %v and %v, want 12.5e6 and 27.5e6", x, y)
	}
}

// A flow that is sent keeps its arrival, and a move onto a longer path of another arena chunk
// and back works; a move in the instant the flow starts takes it before it ever has a rate.
func TestRerouteEdges(t *testing.T) {
	// Chain 0→1→2 (links 0, 2) plus a direct 0→2 link (directed 4), all 100 Gb/s.
	g := graphOf(t, 3, [][2]int32{{0, 1}, {1, 2}, {0, 2}}, []float64{G100, G100, G100})
	s, n, rec := setup(g)
	f := n.Start([]int32{4}, 1*MB, 10*us, 1) // sent at 80 µs, arrives at 90 µs
	s.AtFunc(85*us, func() { n.Reroute(f, []int32{0, 2}, 0) })
	g2 := n.Start([]int32{4}, 1*MB, 0, 2)
	n.Reroute(g2, []int32{0, 2}, 0) // before its first recompute
	s.Run()
	if rec.sentAt[1] != 80*us || rec.arrived[1] != 90*us {
		t.Errorf("the sent flow: sent %v arrived %v, want 80µs and 90µs", rec.sentAt[1], rec.arrived[1])
	}
	if rec.sentAt[2] != 80*us || n.LinkBytes(4) != 1*MB || n.LinkBytes(0) != 1*MB {
		t.Errorf("the flow moved at its start: sent %v; link bytes %v on the old path, %v on the new", rec.sentAt[2], n.LinkBytes(4), n.LinkBytes(0))
	}
	if st := n.Stats(); st.Rerouted != 1 {
		t.Errorf("%d reroutes counted, want 1", st.Rerouted)
	}

	// A path longer than the slot's chunk (8 links) moves the flow to a new chunk.
	rates := make([]float64, 12)
	for i := range rates {
		rates[i] = G100
	}
	lg := lineGraph(t, rates...)
	s, n, rec = setup(lg)
	long := make([]int32, 12)
	for i := range long {
		long[i] = int32(2 * i)
	}
	f = n.Start([]int32{0}, 1*MB, 0, 1)
	other := n.Start([]int32{4}, 1*MB, 0, 2)
	s.AtFunc(40*us, func() { n.Reroute(f, long, 0) })
	s.RunUntil(40 * us)
	if !slices.Equal(n.Path(f), long) || !slices.Equal(n.Path(other), []int32{4}) || n.Rate(f) != G100/2 {
		t.Errorf("path %v (other %v), rate %v", n.Path(f), n.Path(other), n.Rate(f))
	}
	if err := n.Check(); err != nil {
		t.Error(err)
	}
	s.Run()
	// 0.5 MB alone, then 0.5 MB at 50 Gb/s while the other has 0.5 MB left: both at 120 µs.
	if rec.sentAt[1] != 120*us || rec.sentAt[2] != 120*us {
		t.Errorf("sent at %v and %v, want 120µs", rec.sentAt[1], rec.sentAt[2])
	}
}

// TestBadReroute checks the programming errors Reroute refuses.
func TestBadReroute(t *testing.T) {
	g := lineGraph(t, G100, G100)
	cases := []struct {
		name  string
		flow  FlowID
		path  []int32
		delay engine.Time
		want  string
	}{
		{"no such flow", 5, []int32{0}, 0, "not in flight"},
		{"empty path", 0, nil, 0, "empty path"},
		{"negative delay", 0, []int32{2}, -1, "negative delay"},
		{"link out of range", 0, []int32{0, 4}, 0, "Reroute with link 4 out of range"},
		{"repeated link", 0, []int32{2, 2}, 0, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, n, _ := setup(g)
			n.Start([]int32{0}, MB, 0, 0)
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, c.want) {
					t.Errorf("panic %v, want one mentioning %q", r, c.want)
				}
			}()
			n.Reroute(c.flow, c.path, c.delay)
		})
	}
}

// move is a Reroute of a scenario: at time at, flow (a spec index) moves to path with delay.
type move struct {
	flow  int
	at    engine.Time
	path  []int32
	delay engine.Time
}

// withMoves adds random moves to a scenario: about a third of the flows move once or twice, to
// a path drawn by path(i) for flow i, at times on the scenario's coarse grid (so that moves
// share instants with starts and sends) or anywhere.
func withMoves(rng *rand.Rand, sc scenario, path func(i int) []int32) []move {
	var moves []move
	for i := range sc.specs {
		if rng.IntN(3) != 0 {
			continue
		}
		for range 1 + rng.IntN(2) {
			m := move{flow: i, path: path(i)}
			if rng.IntN(2) == 0 {
				m.at = engine.Time(rng.IntN(30)) * 10 * us
			} else {
				m.at = engine.Time(rng.Int64N(int64(300 * us)))
			}
			if rng.IntN(3) > 0 {
				m.delay = engine.Time(rng.IntN(2000)) * engine.Nanosecond
			}
			moves = append(moves, m)
		}
	}
	return moves
}

// runWithMoves runs sc like runScenario, with the moves: each is an event queued after the root
// starts, so at a shared instant it comes after the roots starting then and before every other
// event (sends, arrivals and the children they start). A move of a flow not started, or
// arrived, is skipped; the network ignores one of a flow already sent.
func runWithMoves(sc scenario, moves []move, check func(n *Network)) (*driver, *Network) {
	s, d, n := newScenarioRun(sc)
	n.afterRecompute = func() { check(n) }
	ids := make([]FlowID, len(sc.specs))
	started := make([]bool, len(sc.specs))
	d.onStart = func(i int, f FlowID) { ids[i], started[i] = f, true }
	for _, m := range moves {
		s.AtFunc(m.at, func() {
			// Not arrived: no flow arrives at time 0, so a zero arrival time means none yet.
			if started[m.flow] && d.res[m.flow].arrived == 0 {
				n.Reroute(ids[m.flow], m.path, m.delay)
			}
		})
	}
	s.Run()
	return d, n
}

// refMoves is refSim with moves, under the same rules plus: at an instant, the roots start,
// then the moves of flows transmitting then happen (the remaining bits are brought up to date
// at the old rate, the rate drops to 0, the path and delay change), then everything else. It
// also returns the bytes each directed link carried.
func refMoves(capa []float64, specs []spec, moves []move) ([]refResult, []float64) {
	const (
		waiting = iota
		active
		sent
		arrived
	)
	nf := len(specs)
	res := make([]refResult, nf)
	state := make([]int, nf)
	startAt := make([]engine.Time, nf)
	rem := make([]float64, nf)
	rate := make([]float64, nf)
	last := make([]engine.Time, nf)
	timer := make([]engine.Time, nf)
	paths := make([][]int32, nf)
	delay := make([]engine.Time, nf)
	carried := make([]float64, len(capa))
	for i, sp := range specs {
		startAt[i] = engine.Never
		if sp.parent < 0 {
			startAt[i] = sp.at
		}
		paths[i], delay[i] = sp.path, sp.delay
	}
	for {
		now := engine.Never
		for i := range specs {
			switch state[i] {
			case waiting:
				now = min(now, startAt[i])
			case active:
				now = min(now, timer[i])
			case sent:
				now = min(now, res[i].arrived)
			}
		}
		for _, m := range moves {
			if m.at >= 0 {
				now = min(now, m.at)
			}
		}
		if now == engine.Never {
			return res, carried
		}
		start := func(i int) {
			state[i], rem[i], rate[i], last[i], timer[i] = active, float64(max(specs[i].bytes, 1))*8, 0, now, engine.Never
			res[i].start = now
		}
		for i, sp := range specs {
			if state[i] == waiting && sp.parent < 0 && startAt[i] == now {
				start(i)
			}
		}
		for k := range moves {
			m := &moves[k]
			if m.at != now {
				continue
			}
			m.at = -1 // done
			i := m.flow
			if state[i] != active {
				continue
			}
			rem[i] = math.Max(rem[i]-rate[i]*float64(now-last[i])/1e12, 0)
			done := float64(max(specs[i].bytes, 1)) - rem[i]/8
			for _, l := range paths[i] {
				carried[l] += done
			}
			for _, l := range m.path {
				carried[l] -= done
			}
			rate[i], last[i], timer[i] = 0, now, engine.Never
			paths[i], delay[i] = m.path, m.delay
		}
		for progress := true; progress; {
			progress = false
			for i := range specs {
				switch {
				case state[i] == waiting && startAt[i] == now:
					start(i)
				case state[i] == active && timer[i] == now:
					state[i] = sent
					res[i].sent, res[i].arrived = now, now+delay[i]
					for _, l := range paths[i] {
						carried[l] += float64(max(specs[i].bytes, 1))
					}
				case state[i] == sent && res[i].arrived == now:
					state[i] = arrived
					for j := range specs {
						if specs[j].parent == i {
							startAt[j] = now + specs[j].gap
						}
					}
				default:
					continue
				}
				progress = true
			}
		}
		var ids []int
		var ps [][]int32
		for i := range specs {
			if state[i] == active {
				ids = append(ids, i)
				ps = append(ps, paths[i])
			}
		}
		for k, r := range refMaxMin(capa, ps) {
			i := ids[k]
			if r == rate[i] {
				continue
			}
			rem[i] = math.Max(rem[i]-rate[i]*float64(now-last[i])/1e12, 0)
			rate[i], last[i] = r, now
			timer[i] = now + engine.Time(math.Ceil(rem[i]*1e12/r))
		}
	}
}

// movesToOtherPaths is withMoves onto the paths of the scenario's other flows (same graph).
func movesToOtherPaths(rng *rand.Rand, sc scenario) []move {
	pool := make([][]int32, len(sc.specs))
	for i, sp := range sc.specs {
		pool[i] = sp.path
	}
	return withMoves(rng, sc, func(int) []int32 { return pool[rng.IntN(len(pool))] })
}

// TestRerouteAgainstReference runs random scenarios with random moves and checks, after every
// recompute, the rates against the from-scratch water-filling and the max-min conditions
// (Check, which also counts every link's bottlenecked flows), and at the end every flow's
// times and every link's bytes against the reference simulation with the same moves.
func TestRerouteAgainstReference(t *testing.T) {
	var scs []scenario
	var allMoves [][]move
	for seed := uint64(1); seed <= 30; seed++ {
		sc := randomGraphScenario(t, seed)
		scs = append(scs, sc)
		allMoves = append(allMoves, movesToOtherPaths(rand.New(rand.NewPCG(seed, 3)), sc))
	}
	for seed := uint64(1); seed <= 4; seed++ {
		for _, shape := range [][4]int{{64, 8, 64, 8}, {128, 4, 16, 4}} {
			sc, reroute := fabricScenarioRoutes(t, seed, shape[0], shape[1], shape[2], shape[3])
			rng := rand.New(rand.NewPCG(seed, 4))
			scs = append(scs, sc)
			allMoves = append(allMoves, withMoves(rng, sc, func(i int) []int32 { return reroute(i, rng) }))
		}
	}
	moved := rerouteAgainstReference(t, scs, allMoves)
	if moved < 200 {
		t.Errorf("only %d flows were moved while transmitting", moved)
	}
}

// rerouteAgainstReference runs TestRerouteAgainstReference's checks on the scenarios scs with
// the moves allMoves (by scenario) and returns how many flows moved while transmitting.
func rerouteAgainstReference(t *testing.T, scs []scenario, allMoves [][]move) int {
	var worst engine.Time
	moved := 0
	for k, sc := range scs {
		moves := allMoves[k]
		t.Run(sc.name, func(t *testing.T) {
			capa := capacities(sc.g)
			d, n := runWithMoves(sc, moves, checkEachRecompute(t, capa))
			want, carried := refMoves(capa, sc.specs, slices.Clone(moves))
			worst = max(worst, checkTimes(t, d.res, want))
			for l := range capa {
				// A byte of slack: a time one picosecond off moves a few hundredths of one.
				if got := n.LinkBytes(int32(l)); math.Abs(got-carried[l]) > max(1, 1e-9*math.Abs(carried[l])) {
					t.Errorf("link %d carried %v bytes, reference %v", l, got, carried[l])
				}
			}
			st := n.Stats()
			if st.Started != uint64(len(sc.specs)) || st.Arrived != st.Started || n.InFlight() != 0 {
				t.Errorf("stats %+v, in flight %d", st, n.InFlight())
			}
			moved += int(st.Rerouted)
		})
	}
	t.Logf("%d moves; largest difference from the reference times: %d ps", moved, worst)
	return moved
}

// fabricScenarioRoutes is fabricScenario that also returns, for a flow, another route between
// its endpoints: the one another source port gives, as a link failure's rerouting picks.
func fabricScenarioRoutes(t *testing.T, seed uint64, gpus, gps, nicsPerASW, psws int) (scenario, func(i int, rng *rand.Rand) []int32) {
	sc := fabricScenario(t, seed, gpus, gps, nicsPerASW, psws)
	r := spectrumXRouter(t, gpus, gps, nicsPerASW, psws)
	reroute := func(i int, rng *rand.Rand) []int32 {
		p := sc.specs[i].path
		src, dst := sc.g.From(p[0]), sc.g.To(p[len(p)-1])
		q, err := r.Route(nil, src, dst, uint16(10000+rng.IntN(64)), 100)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	sc.name = fmt.Sprintf("%s with moves", sc.name)
	return sc, reroute
}

// A flow moved in the instant it started, before its first rate, from one idle link to the
// other: its first rate is the new link's, its bottleneck that link, and the count of flows
// bottlenecked on the old link (which join took while the flow was alone there) is back to 0;
// moved back in the same instant, the old link's again. A second flow that joins the first's
// link before the recompute takes the first off that count too.
func TestRerouteBeforeTheFirstRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moves [][]int32
		rate  float64
		bn    int32
	}{
		{"moved once", [][]int32{{2}}, G200, 2},
		{"moved twice", [][]int32{{2}, {0}}, G100, 0},
	} {
		s, n, _ := twoLinks(t)
		f := n.Start([]int32{0}, 10*MB, 0, 0)
		for _, p := range tc.moves {
			n.Reroute(f, p, 0)
		}
		s.RunUntil(0)
		if n.Rate(f) != tc.rate || n.Bottleneck(f) != tc.bn {
			t.Errorf("%s: rate %v bottleneck %d, want %v on link %d", tc.name, n.Rate(f), n.Bottleneck(f), tc.rate, tc.bn)
		}
		if err := n.Check(); err != nil {
			t.Error(err)
		}
	}

	s, n, _ := twoLinks(t)
	f := n.Start([]int32{2}, 10*MB, 0, 0)
	g := n.Start([]int32{2}, 10*MB, 0, 1)
	s.RunUntil(0)
	if n.Rate(f) != G100 || n.Rate(g) != G100 {
		t.Errorf("two on one link: rates %v and %v, want 100e9 each", n.Rate(f), n.Rate(g))
	}
	if err := n.Check(); err != nil {
		t.Error(err)
	}
}
