package fluid

import (
	"math"

	"simd/engine"
)

// This file is the deliberately simple reference the network is tested against: a max-min
// solver that water-fills every flow from scratch, and a simulation loop driven by it. Nothing
// here is incremental, indexed or clever.

// refMaxMin returns the max-min fair rates of flows with the given paths over directed links
// of the given capacities, by progressive filling: in each round, every link with unfixed flows
// offers (capacity − rates of its fixed flows) / (number of unfixed flows); the link with the
// smallest offer (the lowest link id among equal offers) fixes all its unfixed flows at it.
func refMaxMin(capa []float64, paths [][]int32) []float64 {
	rate := make([]float64, len(paths))
	fixed := make([]bool, len(paths))
	left := len(paths)
	used := make([]float64, len(capa))
	cnt := make([]int, len(capa))
	for left > 0 {
		clear(used)
		clear(cnt)
		for i, p := range paths {
			for _, l := range p {
				if fixed[i] {
					used[l] += rate[i]
				} else {
					cnt[l]++
				}
			}
		}
		best, bestLink := math.Inf(1), -1
		for l := range capa {
			if cnt[l] == 0 {
				continue
			}
			offer := math.Max(capa[l]-used[l], 0) / float64(cnt[l])
			if offer < best {
				best, bestLink = offer, l
			}
		}
		for i, p := range paths {
			if fixed[i] {
				continue
			}
			for _, l := range p {
				if int(l) == bestLink {
					rate[i], fixed[i] = best, true
					left--
					break
				}
			}
		}
	}
	return rate
}

// spec is one flow of a test scenario. A root flow (parent < 0) starts at at; a child starts
// gap after its parent (an earlier spec) arrives.
type spec struct {
	path   []int32
	bytes  int64
	delay  engine.Time
	at     engine.Time
	parent int
	gap    engine.Time
}

// refResult is what the reference simulation gives for each spec.
type refResult struct {
	start, sent, arrived engine.Time
}

// refSim simulates the scenario with refMaxMin, with the network's rules: at each instant,
// every start, send and arrival of that instant happens, then the rates are recomputed from
// scratch; a flow whose rate changed has its remaining bits brought up to date and its send
// time set to now + remaining/rate rounded up to a picosecond; it arrives delay after it is
// sent.
func refSim(capa []float64, specs []spec) []refResult {
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
	for i, sp := range specs {
		startAt[i] = engine.Never
		if sp.parent < 0 {
			startAt[i] = sp.at
		}
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
		if now == engine.Never {
			return res
		}
		for progress := true; progress; {
			progress = false
			for i, sp := range specs {
				switch {
				case state[i] == waiting && startAt[i] == now:
					state[i], rem[i], rate[i], last[i], timer[i] = active, float64(max(sp.bytes, 1))*8, 0, now, engine.Never
					res[i].start = now
				case state[i] == active && timer[i] == now:
					state[i] = sent
					res[i].sent, res[i].arrived = now, now+sp.delay
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
		var paths [][]int32
		for i := range specs {
			if state[i] == active {
				ids = append(ids, i)
				paths = append(paths, specs[i].path)
			}
		}
		for k, r := range refMaxMin(capa, paths) {
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
