package main

import (
	"strings"
	"testing"
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
