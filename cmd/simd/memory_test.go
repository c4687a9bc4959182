package main

import (
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"simd/workloads/sim"
)

// The memory guard refuses, before simulating, a run whose estimated peak exceeds -max-memory
// (or the memory available), naming the estimate and the collective behind it; nothing is
// written. An all-to-all over 16,384 ranks (268,419,072 flows in flight) is refused in
// milliseconds; the shipped example fits.
func TestMemoryGuard(t *testing.T) {
	dir := t.TempDir()
	a2a := writeFile(t, dir, "a2a.txt", "MICRO\n1\na2a -1 1 NONE 0 1 NONE 0 1 ALLTOALL 1073741824 1\n")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-max-memory", "1MiB"}, exitBadInput, "the run would need about 16.3 MiB of memory (ring allreduce of 16.0 MiB on 1 TP groups of 8 ranks: 64 flows in flight at ~1200 B each), more than the 1.0 MiB -max-memory allows"},
		{[]string{"-w", a2a, "-g", "16384", "-max-memory", "64GiB"}, exitBadInput, "the run would need about 300.0 GiB of memory (direct alltoall of 1.0 GiB on 1 DP groups of 16384 ranks: 268419072 flows in flight at ~1200 B each), more than the 64.0 GiB -max-memory allows"},
		{[]string{"-max-memory", "64MiB"}, exitOK, ""},
	} {
		out := t.TempDir()
		code, _, errOut := runCLI(t, dir, append(tc.args, "-o", out, "-quiet")...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.msg)
		}
		if code != exitOK {
			if files := listFiles(t, out); len(files) != 0 {
				t.Errorf("%v: files left: %v", tc.args, files)
			}
		}
	}
}

// The memory a run may use is the Go runtime's soft limit while it runs: -max-memory, else the
// memory available (where it is known); the limit before comes back after.
func TestRunMemoryLimit(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: simd leaves it alone")
	}
	before := debug.SetMemoryLimit(-1)
	avail, _, known := sim.AvailableMemory()
	for _, tc := range []struct {
		args []string
		want func(int64) bool
		what string
	}{
		{[]string{"-max-memory", "64MiB"}, func(l int64) bool { return l == 64<<20 }, "64 MiB"},
		{nil, func(l int64) bool {
			if !known {
				return l == before
			}
			return l > 0 && l < math.MaxInt64 && l <= 2*avail
		}, "the memory available"},
	} {
		o, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		lim := limitMemory(o.req.Event.MaxMemory)
		got := debug.SetMemoryLimit(-1)
		lim.Restore()
		if !tc.want(got) {
			t.Errorf("%v: limit %d, want %s", tc.args, got, tc.what)
		}
		if after := debug.SetMemoryLimit(-1); after != before {
			t.Errorf("%v: limit after the run %d, want %d as before", tc.args, after, before)
		}
	}
}
