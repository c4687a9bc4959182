package ccfluid

import (
	"testing"

	"simd/engine"
)

// boundRuns are the scenarios the PFC bound is tried on: the incast of victimScenario in a 4 MB
// buffer (its port to the incast's receiver fills until it pauses the link between the
// switches), and all-to-alls on two switches whose 16 MB buffers pause ports again and again (and the bound answers
// thousands of checks between the storms).
var boundRuns = []struct {
	name string
	// storm: the run's ports pause and resume thousands of times, and the checks' timing moves
	// the occupancies' rounding and the storm with it, as a seed does; its frames and arrivals
	// are then compared in aggregate.
	storm bool
	run   func(t *testing.T, cfg Config) (arrived map[int64]engine.Time, frames []pfcFrame, st Stats)
}{
	{"incast", false, func(t *testing.T, cfg Config) (map[int64]engine.Time, []pfcFrame, Stats) {
		cfg.BufferBytes = 4 * MB
		s, n, rec, pl := startVictim(t, cfg, 8*MB)
		s.Run()
		return rec.arrived, pl.frames, n.Stats()
	}},
	{"all-to-all", true, func(t *testing.T, cfg Config) (map[int64]engine.Time, []pfcFrame, Stats) {
		cfg.BufferBytes = 16 * MB
		r := allToAllTwoLeaves(t, cfg, 16, 2, 7, nil)
		return r.arrived, r.frames, r.stats
	}},
}

// Where the bound answers a switch's check (pfcbound.go), no port can pause: every port's
// occupancy, summed afresh from what each queue of the switch holds of the bytes that came in
// through it, is within the bound, the total backlog within its line, and the shared pool's
// test says no port is at its level.
func TestPFCBoundNeverHidesAPause(t *testing.T) {
	for _, tc := range boundRuns {
		t.Run(tc.name, func(t *testing.T) {
			answered := 0
			boundCheck = func(n *Network, w int32, now engine.Time) {
				answered++
				sw := &n.sw[w]
				held := make([]float64, len(sw.ports))
				tot := 0.0
				for l := range n.links {
					lk := &n.links[l]
					if lk.outSw != w {
						continue
					}
					n.advanceLink(int32(l), now)
					tot += lk.qs.q
					if len(lk.feeds) > 0 {
						n.advanceFeeds(int32(l))
						for _, fd := range lk.feeds {
							held[fd.port] += fd.held
						}
					}
				}
				if tot > (sw.tot+sw.totSlack)*(1+1e-9) {
					t.Fatalf("at %v switch %d: its queues hold %.3f bytes, its line says %.3f + %.3f", now, w, tot, sw.tot, sw.totSlack)
				}
				total, most := 0.0, 0.0
				for p, u := range held {
					if u > sw.mub*(1+1e-9)+1e-3 {
						t.Fatalf("at %v switch %d port %d holds %.1f bytes, above the bound %.1f", now, w, p, u, sw.mub)
					}
					if y := u - sw.res; y > 0 {
						total += y
						most = max(most, y*sw.ports[p].mul)
					}
				}
				if sw.paused > 0 || !sw.buf.CannotPauseGiven(total, most) {
					t.Fatalf("at %v switch %d: the bound answered, but a port may pause (%d paused, shared use %.0f, largest %.0f)",
						now, w, sw.paused, total, most)
				}
			}
			defer func() { boundCheck = nil }()
			cfg := repoConfig()
			cfg.BoundedPFCChecks = true
			_, frames, st := tc.run(t, cfg)
			if answered == 0 || st.SwitchChecks == 0 || len(frames) == 0 {
				t.Fatalf("%d answers of the bound, %d full checks, %d PFC frames: the scenario does not exercise both", answered, st.SwitchChecks, len(frames))
			}
			t.Logf("%d checks answered by the bound, %d full, %d PFC frames", answered, st.SwitchChecks, len(frames))
		})
	}
}

// The bound takes the decisions the full checks take: where ports pause a few times, the same
// frames at the same times and the same arrivals (the checks' timing moves the occupancies only
// by rounding); in a storm, where that rounding moves which port pauses first, as many frames
// within 2% and the same completion within 1%.
func TestPFCBoundKeepsThePauses(t *testing.T) {
	for _, tc := range boundRuns {
		t.Run(tc.name, func(t *testing.T) {
			exactArr, exactFrames, exactSt := tc.run(t, repoConfig())
			cfg := repoConfig()
			cfg.BoundedPFCChecks = true
			arr, frames, st := tc.run(t, cfg)
			if st.SwitchChecks >= exactSt.SwitchChecks {
				t.Errorf("%d full checks with the bound, %d without", st.SwitchChecks, exactSt.SwitchChecks)
			}
			t.Logf("full checks %d → %d (%d answered by the bound), frames %d → %d", exactSt.SwitchChecks, st.SwitchChecks,
				st.SwitchChecksBounded, len(exactFrames), len(frames))
			if tc.storm {
				last := func(m map[int64]engine.Time) (l engine.Time) {
					for _, at := range m {
						l = max(l, at)
					}
					return l
				}
				if d := float64(len(frames)) / float64(len(exactFrames)); d < 0.98 || d > 1.02 {
					t.Errorf("%d PFC frames with the bound, %d without", len(frames), len(exactFrames))
				}
				if a, e := last(arr), last(exactArr); len(arr) != len(exactArr) || float64(absDiff(a, e)) > 0.01*float64(e) {
					t.Errorf("%d flows done at %v with the bound, %d at %v without", len(arr), a, len(exactArr), e)
				}
				return
			}
			if len(frames) != len(exactFrames) {
				t.Fatalf("%d PFC frames with the bound, %d without", len(frames), len(exactFrames))
			}
			for i, f := range frames {
				if e := exactFrames[i]; f.node != e.node || f.ifidx != e.ifidx || f.pause != e.pause || absDiff(f.at, e.at) > engine.Nanosecond {
					t.Fatalf("frame %d: %+v with the bound, %+v without", i, f, e)
				}
			}
			for tag, at := range exactArr {
				if absDiff(arr[tag], at) > engine.Nanosecond {
					t.Errorf("flow %d arrives at %v with the bound, %v without", tag, arr[tag], at)
				}
			}
		})
	}
}

func absDiff(a, b engine.Time) engine.Time {
	if a > b {
		return a - b
	}
	return b - a
}
