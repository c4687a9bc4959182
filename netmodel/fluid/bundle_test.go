package fluid

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"simd/engine"
)

// sharedPathScenario is randomGraphScenario with its flows' paths drawn from a few, so that
// many flows are in flight on one path at once, as a ring's channels and steps are.
func sharedPathScenario(t testing.TB, seed uint64) scenario {
	sc := randomGraphScenario(t, seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	pool := make([][]int32, 1+rng.IntN(4))
	for i := range pool {
		pool[i] = sc.specs[rng.IntN(len(sc.specs))].path
	}
	for i := range sc.specs {
		if rng.IntN(5) > 0 {
			sc.specs[i].path = pool[rng.IntN(len(pool))]
		}
	}
	sc.name = fmt.Sprintf("shared paths seed %d", seed)
	return sc
}

// TestBundlesAgainstReference runs scenarios whose flows often share a path with bundles on
// and checks them as TestAgainstReference does: after every recompute every flow's rate is the
// from-scratch water-filling's and the max-min conditions hold, and every flow is sent and
// arrives when the reference simulation of the flows apart says, within its tolerance.
func TestBundlesAgainstReference(t *testing.T) {
	defer func(o Options) { scenarioOptions = o }(scenarioOptions)
	scenarioOptions = Options{Bundles: true}
	scs := scenarios(t)
	for seed := uint64(1); seed <= 40; seed++ {
		scs = append(scs, sharedPathScenario(t, seed))
	}
	if againstReference(t, scs) == 0 {
		t.Fatal("no flow was bundled")
	}
}

// TestBundlesRerouteAgainstReference moves flows, members of bundles among them, as
// TestRerouteAgainstReference does, with bundles on: a member that moves leaves its bundle (the
// bundle's links are charged with what it sent over them) and goes on on its own.
func TestBundlesRerouteAgainstReference(t *testing.T) {
	defer func(o Options) { scenarioOptions = o }(scenarioOptions)
	scenarioOptions = Options{Bundles: true}
	var scs []scenario
	var allMoves [][]move
	for seed := uint64(1); seed <= 30; seed++ {
		sc := sharedPathScenario(t, seed)
		scs = append(scs, sc)
		allMoves = append(allMoves, movesToOtherPaths(rand.New(rand.NewPCG(seed, 5)), sc))
	}
	if moved := rerouteAgainstReference(t, scs, allMoves); moved < 200 {
		t.Errorf("only %d flows were moved while transmitting", moved)
	}
}

// TestBundleEqualFlows is the closed form of N equal flows started together on one link,
// bundled: each gets rate/N and all are sent at N·bytes·8/rate; one started later on the same
// path joins the bundle, and the first ones speed up when it is the last left.
func TestBundleEqualFlows(t *testing.T) {
	g := lineGraph(t, G100, G100)
	s := engine.NewScheduler()
	rec := newRecorder()
	n := NewWithOptions(s, g, rec, Options{Bundles: true})
	rec.n = n
	path := []int32{0, 2}
	for i := range 4 {
		n.Start(path, 1*MB, 0, int64(i))
	}
	// A fifth, 0.5 MB, 40 µs in: the four have sent 1 MB·... at 25 Gb/s each: 125 KB; from
	// then on five share 100 Gb/s.
	s.AtFunc(40*us, func() { n.Start(path, MB/2, 0, 4) })
	s.RunUntil(41 * us)
	if got := n.Stats().Bundled; got != 4 {
		t.Errorf("%d flows bundled, want 4 (all but the first)", got)
	}
	if n.LinkFlows(0) != 5 || n.Rate(0) != G100/5 || len(n.links[0].on) != 1 {
		t.Errorf("link 0: %d flows at %v in %d entries, want 5 at %v in one bundle", n.LinkFlows(0), n.Rate(0), len(n.links[0].on), G100/5)
	}
	s.Run()
	// The fifth: 0.5 MB at 20 Gb/s from 40 µs: sent at 240 µs. The four: 125 KB by 40 µs, then
	// 20 Gb/s × 200 µs = 500 KB by 240 µs, then 375 KB at 25 Gb/s: 120 µs more, at 360 µs.
	if got := rec.sentAt[4]; got != 240*us {
		t.Errorf("the late flow sent at %v, want 240µs", got)
	}
	for i := range int64(4) {
		if got := rec.sentAt[i]; got < 360*us-2 || got > 360*us+2 {
			t.Errorf("flow %d sent at %v, want 360µs", i, got)
		}
	}
	if n.Active() != 0 || len(n.links[0].on) != 0 || n.LinkBytes(0) != 4.5*MB {
		t.Errorf("after: %d active, %d entries on link 0, %v bytes carried", n.Active(), len(n.links[0].on), n.LinkBytes(0))
	}
}

// TestBundleFull starts 300 equal flows on one path at once: a bundle holds at most 255
// members, so the 256th starts on its own and the rest join it; the two bundles share the link
// as 300 flows, and all are sent together at 300·bytes·8/rate.
func TestBundleFull(t *testing.T) {
	g := lineGraph(t, G100)
	s := engine.NewScheduler()
	rec := newRecorder()
	n := NewWithOptions(s, g, rec, Options{Bundles: true})
	rec.n = n
	for i := range 300 {
		n.Start([]int32{0}, 10*KB, 0, int64(i))
	}
	s.RunUntil(1)
	if n.LinkFlows(0) != 300 || len(n.links[0].on) != 2 || n.Stats().Bundled != 298 {
		t.Errorf("%d flows in %d entries, %d bundled; want 300 in 2, 298", n.LinkFlows(0), len(n.links[0].on), n.Stats().Bundled)
	}
	if err := n.Check(); err != nil {
		t.Error(err)
	}
	s.Run()
	want := engine.Time(300 * 10 * KB * 8 / G100 * 1e12)
	for i := range int64(300) {
		if got := rec.sentAt[i]; got < want-2 || got > want+2 {
			t.Fatalf("flow %d sent at %v, want %v", i, got, engine.Time(want))
		}
	}
}
