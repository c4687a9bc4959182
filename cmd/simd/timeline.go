package main

import (
	"os"

	"simd/workloads/sim"
)

// -trace FILE writes the run's timeline, a Chrome trace (sim.Timeline), in every mode: this
// file checks the flag and makes the recorder; the modes attach it and write it after the run.

// checkTrace refuses, before anything is simulated, a -trace naming a folder or a
// -trace-all-ranks without -trace.
func checkTrace(path string, allRanks bool) error {
	if path == "" {
		if allRanks {
			return badInputf("-trace-all-ranks: only with -trace FILE")
		}
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return badInputf("-trace %s: a folder; expected the file to write, e.g. trace.json", path)
	}
	return nil
}

// newTimeline is the recorder -trace asks for (nil without it), with the run's description in
// the file's otherData.
func newTimeline(path string, allRanks bool, meta ...string) *sim.Timeline {
	if path == "" {
		return nil
	}
	tl := sim.NewTimeline(allRanks)
	for i := 0; i+1 < len(meta); i += 2 {
		tl.Meta(meta[i], meta[i+1])
	}
	return tl
}
