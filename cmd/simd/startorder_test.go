package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// firstStepEnds reads an fct.txt and returns, for the flows inside a server of eight GPUs that
// start at the earliest start time, their end (start + FCT, ns) by "src dst sport".
func firstStepEnds(t *testing.T, r io.Reader) map[string]int64 {
	t.Helper()
	type flow struct {
		key        string
		start, end int64
	}
	var flows []flow
	first := int64(-1)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		var start, fct int64
		if _, err := fmt.Sscan(f[5], &start); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscan(f[6], &fct); err != nil {
			t.Fatal(err)
		}
		if first < 0 || start < first {
			first = start
		}
		var src, dst uint32
		if _, err := fmt.Sscanf(f[0]+" "+f[1], "%x %x", &src, &dst); err != nil {
			t.Fatal(err)
		}
		if (src>>8&0xffff)/8 != (dst>>8&0xffff)/8 {
			continue // between servers: one flow a NIC port, whatever the order
		}
		flows = append(flows, flow{f[0] + " " + f[1] + " " + f[2], start, start + fct})
	}
	ends := map[string]int64{}
	for _, f := range flows {
		if f.start == first {
			ends[f.key] = f.end
		}
	}
	return ends
}

// -start-order mailbox, the default: the first step of the 64 MiB ring over two Spectrum-X
// servers makes each GPU's queue pairs in the order SimAI's ns-3 delivers them through a
// server's mailbox (netmodel's TestMailboxOrder: each GPU's channels in reverse, GPUs 0 and 4
// with their first first), so its NVLink port serves them in that order and they end as ns-3's
// do: every one of the 112 NVLink flows of the first step within 5 ns of the reference run. In the
// order they were issued (-start-order issue) GPU 1's channel 0 (source port 10000) ends first
// where ns-3 ends it last, 42 ns later.
func TestStartOrderMailbox(t *testing.T) {
	dir := t.TempDir()
	ref := mustAbs(t, "testdata/ns3ref")
	c := filepath.Join(ref, "tp16_allreduce_64MB__SpX16")
	t.Setenv("AS_SEND_LAT", "6")
	run := func(out string, args ...string) map[string]int64 {
		t.Helper()
		args = append([]string{"-w", filepath.Join(ref, "workloads", "tp16_allreduce_64MB.txt"),
			"-n", filepath.Join(ref, "topo", "Spectrum-X_16g_8gps_400Gbps_H100"),
			"-c", filepath.Join(c, "SimAI.conf"), "-quiet", "-o", out}, args...)
		if code, _, errOut := runCLI(t, dir, args...); code != 0 {
			t.Fatal(errOut)
		}
		f, err := os.Open(filepath.Join(dir, out, "fct.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return firstStepEnds(t, f)
	}
	r, err := openMaybeGzip(filepath.Join(c, "fct.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ns3 := firstStepEnds(t, r)
	r.Close()
	if len(ns3) != 112 {
		t.Fatalf("the reference run's first step has %d flows inside a server, want 112", len(ns3))
	}
	def := run("default")
	for k, want := range ns3 {
		got, ok := def[k]
		if !ok {
			t.Errorf("flow %s of ns-3's first step is not in simd's", k)
			continue
		}
		if d := got - want; d < -5 || d > 5 {
			t.Errorf("flow %s ends at %d ns, ns-3 at %d", k, got, want)
		}
	}
	if got := run("mailbox", "-start-order", "mailbox"); fmt.Sprint(got) != fmt.Sprint(def) {
		t.Error("-start-order mailbox differs from the default")
	}
	issue := run("issue", "-start-order", "issue")
	const c0, c7 = "0b000101 0b000201 10000", "0b000101 0b000201 10006"
	if !(ns3[c0] > ns3[c7] && issue[c0] < issue[c7]) {
		t.Errorf("GPU 1 → 2, channels 0 and 7: ns-3 ends them at %d and %d ns, -start-order issue at %d and %d: want ns-3's reversed",
			ns3[c0], ns3[c7], issue[c0], issue[c7])
	}
}
