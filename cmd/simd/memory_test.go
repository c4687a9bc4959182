package main

import (
	"runtime"
	"strings"
	"testing"

	"go.uber.org/zap"
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
		{[]string{"-w", a2a, "-g", "16384", "-max-memory", "64GiB"}, exitBadInput, "the run would need about 316.0 GiB of memory (direct alltoall of 1.0 GiB on 1 DP groups of 16384 ranks: 268419072 flows in flight at ~1200 B each), more than the 64.0 GiB -max-memory allows"},
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

// The estimate is the sum of its closed-form parts: the base, the links, and the widest
// collective's flows in flight (a direct all-to-all: n(n−1), all at once, also stored).
func TestEstimateMemoryParts(t *testing.T) {
	dir := t.TempDir()
	a2a := writeFile(t, dir, "a2a.txt", "MICRO\n1\na2a -1 1 NONE 0 1 NONE 0 1 ALLTOALL 1048576 1\n")
	o, err := parseFlags([]string{"-w", a2a, "-g", "64", "-c", writeFile(t, dir, "cc0.conf", "CC_MODE 0\n")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(o, zap.NewNop(), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := s.selector()
	if err != nil {
		t.Fatal(err)
	}
	const links, n = 1000, 64
	est, err := s.estimateMemory(sel, links, n, false)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(bytesBase + links*bytesPerLink + n*(n-1)*(bytesPerFlowMaxMin+bytesPerStoredFlow))
	if est.bytes != want {
		t.Errorf("estimate %d B, want %d", est.bytes, want)
	}
	if cc, _ := s.estimateMemory(sel, links, n, true); cc.bytes-est.bytes != n*(n-1)*(bytesPerFlowCC-bytesPerFlowMaxMin) {
		t.Errorf("congestion control adds %d B", cc.bytes-est.bytes)
	}
}

func TestFmtBytes(t *testing.T) {
	for _, tc := range []struct {
		b    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {3 << 29, "1.5 GiB"}, {1 << 62, "4.0 EiB"}} {
		if got := fmtBytes(tc.b); got != tc.want {
			t.Errorf("fmtBytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// On Linux the machine's available memory is known and plausible.
func TestAvailableMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/meminfo")
	}
	b, source, ok := availableMemory()
	if !ok || b <= 0 || source == "" {
		t.Errorf("availableMemory() = %d, %q, %v", b, source, ok)
	}
}
