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
	res, _ := refMoves(capa, specs, nil)
	return res
}
