package ccfluid

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// shareRun is what a run of allToAllStar left: every flow's send and arrival times, the PFC
// frames and the counters.
type shareRun struct {
	sentAt, arrived map[int64]engine.Time
	frames          []pfcFrame
	stats           Stats
}

// allToAllStar runs an all-to-all among hosts hosts of a 400 Gb/s star under cfg: every host
// sends flows to every other, of 64 KB to 2 MB, started over the first 20 µs (seeded), so that
// every port shares among dozens of flows while DCQCN cuts them one at a time. With check,
// every port's sharing record is checked every microsecond (checkNICShares).
func allToAllStar(t testing.TB, cfg Config, hosts, perPair int, seed uint64, check bool) shareRun {
	t.Helper()
	pathOf := func(a, b int32) (path, ack []int32) {
		return []int32{2 * a, 2*b + 1}, []int32{2 * b, 2*a + 1}
	}
	var watch func(*Network)
	if check {
		watch = func(n *Network) { checkNICShares(t, n) }
	}
	return allToAll(t, star(t, hosts, G400, engine.Microsecond), cfg, hosts, perPair, seed, watch, pathOf)
}

// allToAllTwoLeaves is allToAllStar on two switches of hosts/2 hosts each, joined by one 400
// Gb/s link: the flows between the halves cross three links and queue at the one between the
// switches, so that what reaches the last link falls short of what the senders inject. watch,
// if not nil, looks at the network every microsecond.
func allToAllTwoLeaves(t testing.TB, cfg Config, hosts, perPair int, seed uint64, watch func(*Network)) shareRun {
	t.Helper()
	m := int32(hosts / 2)
	kinds := make([]topo.NodeKind, 2*m+2)
	kinds[2*m], kinds[2*m+1] = topo.Switch, topo.Switch
	var links []tlink
	for i := range 2 * m {
		links = append(links, tlink{i, 2*m + i/m, G400, engine.Microsecond})
	}
	links = append(links, tlink{2 * m, 2*m + 1, G400, engine.Microsecond})
	between := 2 * (2 * m) // the directed link from the first switch to the second
	pathOf := func(a, b int32) (path, ack []int32) {
		switch {
		case a/m == b/m:
			return []int32{2 * a, 2*b + 1}, []int32{2 * b, 2*a + 1}
		case a < m:
			return []int32{2 * a, between, 2*b + 1}, []int32{2 * b, between + 1, 2*a + 1}
		default:
			return []int32{2 * a, between + 1, 2*b + 1}, []int32{2 * b, between, 2*a + 1}
		}
	}
	return allToAll(t, graphOf(t, kinds, links), cfg, int(2*m), perPair, seed, watch, pathOf)
}

// allToAll runs the all-to-all of allToAllStar on g, each flow from a to b on pathOf(a, b);
// watch, if not nil, looks at the network every microsecond.
func allToAll(t testing.TB, g *route.Graph, cfg Config, hosts, perPair int, seed uint64, watch func(*Network), pathOf func(a, b int32) (path, ack []int32)) shareRun {
	t.Helper()
	s, n, rec, pl := setup(t, g, cfg)
	rng := rand.New(rand.NewPCG(seed, 7))
	type start struct {
		at       engine.Time
		src, dst int32
		bytes    int64
	}
	var starts []start
	for a := range int32(hosts) {
		for b := range int32(hosts) {
			if a == b {
				continue
			}
			for range perPair {
				starts = append(starts, start{
					at:  engine.Time(rng.IntN(20)) * engine.Microsecond,
					src: a, dst: b, bytes: int64(64e3 + rng.IntN(2e6)),
				})
			}
		}
	}
	for tag, st := range starts {
		s.RunUntil(st.at) // (the starts are not in time order: a late one starts at once)
		path, ack := pathOf(st.src, st.dst)
		n.Start(path, ack, st.bytes, int64(tag))
	}
	if watch != nil {
		for s.Len() > 0 {
			s.RunUntil(s.Now() + engine.Microsecond)
			watch(n)
		}
	}
	s.Run()
	if len(rec.arrived) != len(starts) {
		t.Fatalf("%d of %d flows arrived", len(rec.arrived), len(starts))
	}
	return shareRun{rec.sentAt, rec.arrived, pl.frames, n.Stats()}
}

// checkNICShares checks what every port's last sharing left where it is valid: the port's
// flows in the order a sharing in full leaves them, by (demand, flow), with the demands
// recorded where they are not stale, and the level between the flows below and above it.
func checkNICShares(t testing.TB, n *Network) {
	t.Helper()
	for l := range n.nics {
		ns := &n.nics[l]
		if !ns.valid {
			continue
		}
		src := n.links[l].src
		if len(ns.dem) != len(src) {
			t.Fatalf("port %d: %d demands for %d flows", l, len(ns.dem), len(src))
		}
		for i, id := range src {
			if f := &n.flows[id]; !f.stale && f.dem != ns.dem[i] {
				t.Fatalf("port %d, flow %d at %d: demand %g recorded as %g", l, id, i, f.dem, ns.dem[i])
			}
			if i > 0 && (ns.dem[i] < ns.dem[i-1] || ns.dem[i] == ns.dem[i-1] && id < src[i-1]) {
				t.Fatalf("port %d: flow %d (%g) after flow %d (%g)", l, id, ns.dem[i], src[i-1], ns.dem[i-1])
			}
			if below := int32(i) < ns.brk; below != (ns.dem[i] <= ns.level) {
				t.Fatalf("port %d: flow %d at %d asks %g, level %g from %d", l, id, i, ns.dem[i], ns.level, ns.brk)
			}
		}
	}
}

// A port's sharing that keeps the last one where nothing can have changed (shareStands) gives
// what sharing in full gives, to the picosecond: every flow's send and arrival times, every
// PFC frame and every counter but those of the sharing itself are the same, on all-to-alls
// whose ports cut flows one at a time, with and without windows, ns-3's packets and PFC, on a
// star and on two switches.
func TestShareStandsIsTheFullSharing(t *testing.T) {
	windowed := repoConfig()
	windowed.Window = 100e3
	simai := departureConfig()
	simai.Window, simai.VarWin, simai.FirstWindowBurst = 200e3, true, true
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"dcqcn", repoConfig()}, {"dcqcn-window", windowed}, {"simai", simai}} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/%d", tc.name, seed), func(t *testing.T) {
				for _, fabric := range []string{"star", "two switches"} {
					run := func(check bool) shareRun {
						if fabric == "star" {
							return allToAllStar(t, tc.cfg, 12, 3, seed, check)
						}
						return allToAllTwoLeaves(t, tc.cfg, 12, 3, seed, nil)
					}
					kept := run(true)
					shareSkips = false
					full := run(false)
					shareSkips = true
					if kept.stats.SharesKept == 0 || kept.stats.RateChanges == 0 {
						t.Fatalf("%s: no sharing kept (%d) or no rate cut (%d): the case does not test it", fabric, kept.stats.SharesKept, kept.stats.RateChanges)
					}
					if full.stats.SharesKept != 0 {
						t.Fatalf("%s: %d sharings kept with shareSkips off", fabric, full.stats.SharesKept)
					}
					for tag, at := range full.arrived {
						if kept.arrived[tag] != at || kept.sentAt[tag] != full.sentAt[tag] {
							t.Fatalf("%s: flow %d: sent %d, arrived %d; in full %d, %d", fabric, tag, kept.sentAt[tag], kept.arrived[tag], full.sentAt[tag], at)
						}
					}
					if fmt.Sprint(kept.frames) != fmt.Sprint(full.frames) {
						t.Errorf("%s: PFC frames differ: %d against %d in full", fabric, len(kept.frames), len(full.frames))
					}
					ks, fs := kept.stats, full.stats
					ks.SharesKept, ks.Demands, fs.Demands = 0, 0, 0
					if ks != fs {
						t.Errorf("%s: counters %+v, in full %+v", fabric, ks, fs)
					}
					t.Logf("%s: %d of %d sharings kept, %d rate changes, %d marks, %d pauses", fabric, kept.stats.SharesKept, kept.stats.Shares, kept.stats.RateChanges, kept.stats.Marks, kept.stats.Pauses)
				}
			})
		}
	}
}

// A link's window target kept while none of the terms it read has moved (windowTarget) is the
// one computing it again gives: with windowCheck every kept target is computed as well and a
// difference panics, on the all-to-alls of TestShareStandsIsTheFullSharing with windows, and on
// two switches, where flows queue before their last link.
func TestWindowTargetKeptIsComputed(t *testing.T) {
	windowed := repoConfig()
	windowed.Window = 100e3
	varwin := windowed
	varwin.VarWin = true
	simai := departureConfig()
	simai.Window, simai.VarWin, simai.FirstWindowBurst = 200e3, true, true
	windowCheck = true
	defer func() { windowCheck, keepAfter, keepFlows = false, 4096, 32 }()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"window", windowed}, {"var-window", varwin}, {"simai", simai}} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/%d", tc.name, seed), func(t *testing.T) {
				// As it decides (keepWhenLong): the star's links carry 11 flows each, too few to
				// keep for; the link between the two switches 108.
				star := allToAllStar(t, tc.cfg, 12, 3, seed, false)
				leaves := allToAllTwoLeaves(t, tc.cfg, 12, 3, seed, nil)
				if star.stats.TargetsKept != 0 || leaves.stats.TargetsKept == 0 {
					t.Fatalf("window targets kept: %d on the star, %d on two switches: want none, and some", star.stats.TargetsKept, leaves.stats.TargetsKept)
				}
				// Keeping from the first call.
				keepAfter, keepFlows = 0, 0
				star = allToAllStar(t, tc.cfg, 12, 3, seed, false)
				keepAfter, keepFlows = 4096, 32
				if star.stats.TargetsKept == 0 {
					t.Fatal("no window target kept on the star: the case does not test it")
				}
				t.Logf("%d and %d targets kept", star.stats.TargetsKept, leaves.stats.TargetsKept)
			})
		}
	}
}

// Every pass at the end of an instant has something to act on: the changes a pass makes itself
// (a port shared anew moves the arrivals at its flows' links) are acted on in its own rounds, not
// in a second pass queued for the same instant (instantEnd). With instantCheck a pass that finds
// nothing panics; on the all-to-alls above, with and without windows, PFC and ns-3's packets, and
// on an idle ring of windowed flows (one flow at a time on each port: no queue, no mark), where
// such passes were a third of the instants.
func TestEveryInstantPassActs(t *testing.T) {
	windowed := repoConfig()
	windowed.Window = 100e3
	simai := departureConfig()
	simai.Window, simai.VarWin, simai.FirstWindowBurst = 200e3, true, true
	instantCheck = true
	defer func() { instantCheck = false }()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"dcqcn", repoConfig()}, {"dcqcn-window", windowed}, {"simai", simai}} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(2) {
				star := allToAllStar(t, tc.cfg, 12, 3, seed, false)
				two := allToAllTwoLeaves(t, tc.cfg, 12, 3, seed, nil)
				for _, r := range []shareRun{star, two} {
					if r.stats.EventsByKind[evInstant] == 0 {
						t.Fatal("no instant: the case does not test it")
					}
				}
			}
			// A ring of 8 hosts on a star: each sends 16 chunks of 64 KB to the next, each chunk
			// 1 µs after the one before arrived (a send latency), so every port carries one flow
			// at a time and no queue forms.
			s := engine.NewScheduler()
			ring := &ringChunks{s: s, hosts: 8, chunks: 16}
			n, err := New(s, star(t, 8, G400, engine.Microsecond), ring, nil, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ring.n = n
			for h := range int64(8) {
				ring.start(h)
			}
			s.Run()
			if ring.arrived != 8*16 {
				t.Fatalf("%d of %d chunks arrived", ring.arrived, 8*16)
			}
			st := n.Stats()
			if st.Marks != 0 || st.EventsByKind[evInstant] == 0 {
				t.Fatalf("ring: %d marks, %d instants: not the idle case", st.Marks, st.EventsByKind[evInstant])
			}
		})
	}
}

// ringChunks drives the ring of TestEveryInstantPassActs: chunk tag goes from host tag mod
// hosts to the next host, and its arrival starts chunk tag+hosts a microsecond later.
type ringChunks struct {
	s                      *engine.Scheduler
	n                      *Network
	hosts, chunks, arrived int64
}

func (r *ringChunks) start(tag int64) {
	h, to := int32(tag%r.hosts), int32((tag+1)%r.hosts)
	r.n.Start([]int32{2 * h, 2*to + 1}, []int32{2 * to, 2*h + 1}, 64e3, tag)
}

func (r *ringChunks) FlowSent(FlowID, engine.Time) {}

func (r *ringChunks) FlowArrived(f FlowID, at engine.Time) {
	r.arrived++
	if next := r.n.Tag(f) + r.hosts; next < r.hosts*r.chunks {
		r.s.AtFunc(at+engine.Microsecond, func() { r.start(next) })
	}
}

// A link keeps only what it has queued: its last-byte markers and queued weight changes are
// dropped once taken (fluid.DropTaken), also where its backlog never drains. On two switches whose
// link between them stays backlogged (and paused) through an all-to-all 12 times as long as
// the others here, each link's lists are looked at every microsecond: neither ever holds more
// than three times the most it had pending at a look, and 64 entries. Before, they kept every
// entry since the link's backlog last drained: at 1.03 ms one link held 111,192 weight changes
// for at most 36,969 pending.
func TestLinkQueuesKeepWhatIsQueued(t *testing.T) {
	var livemk, livewm []int
	watch := func(n *Network) {
		if livemk == nil {
			livemk, livewm = make([]int, len(n.links)), make([]int, len(n.links))
		}
		for l := range n.links {
			livemk[l] = max(livemk[l], len(n.links[l].mk)-int(n.links[l].mhead))
			lw := &n.weights[l]
			livewm[l] = max(livewm[l], len(lw.wm)-int(lw.whead))
			if len(n.links[l].mk) > 3*livemk[l]+64 || len(lw.wm) > 3*livewm[l]+64 {
				t.Fatalf("link %d at %d: %d markers kept for at most %d pending, %d weight changes for at most %d",
					l, n.s.Now(), len(n.links[l].mk), livemk[l], len(lw.wm), livewm[l])
			}
		}
	}
	r := allToAllTwoLeaves(t, repoConfig(), 12, 12, 1, watch)
	if r.stats.Pauses == 0 || r.stats.RateChanges == 0 {
		t.Fatalf("%d pauses, %d rate changes: the case does not test it", r.stats.Pauses, r.stats.RateChanges)
	}
}
