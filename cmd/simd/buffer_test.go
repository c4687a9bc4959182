package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A SimAI.conf whose BUFFER_SIZE does not cover a switch's headroom and reserve runs as SimAI's
// ns-3 runs it: the switch never pauses (ns-3's uint32 threshold wraps around), with a warning
// naming the key, not a refusal. The DCN+ incast without windows (the ns3ref case
// flows_incast8_4MB__DCNS16_nowin, 27 MB) gives the same FCTs with 1 MB, as it does in ns-3
// (flows_incast8_4MB__DCNS16_nowin_buf1).
func TestBufferWithoutSharedPool(t *testing.T) {
	ref := ns3RefDir + "/flows_incast8_4MB__DCNS16_nowin"
	conf := readFile(t, ref+"/SimAI.conf")
	small := regexp.MustCompile(`(?m)^BUFFER_SIZE .*$`).ReplaceAllString(conf, "BUFFER_SIZE 1")
	if small == conf {
		t.Fatal("no BUFFER_SIZE line in the case's SimAI.conf")
	}
	t.Setenv("AS_SEND_LAT", "6")
	dir := t.TempDir()
	writeFile(t, dir, "small.conf", small)
	args := func(c, out string) []string {
		return []string{"-flows", mustAbs(t, ns3RefDir+"/flows/incast8_4MB.txt"), "-n", mustAbs(t, ns3RefDir+"/topo/DCN+SingleToR_16g_8gps_400Gbps_H100"),
			"-c", c, "-o", out, "-quiet"}
	}
	code, _, errOut := runCLI(t, dir, args(mustAbs(t, ref+"/SimAI.conf"), "big")...)
	if code != exitOK {
		t.Fatalf("27 MB: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, dir, args("small.conf", "small")...)
	if code != exitOK {
		t.Fatalf("1 MB: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "small.conf:55: BUFFER_SIZE is not larger than the ports' headroom and reserve") {
		t.Errorf("no warning naming small.conf:55 BUFFER_SIZE in:\n%s", errOut)
	}
	if a, b := readFile(t, filepath.Join(dir, "big", "fct.txt")), readFile(t, filepath.Join(dir, "small", "fct.txt")); a != b {
		t.Errorf("1 MB fct.txt differs from 27 MB's:\n%s\n%s", b, a)
	}
	if p := readFile(t, filepath.Join(dir, "small", "pfc.txt")); p != "" {
		t.Errorf("1 MB: PFC frames %q", p)
	}
}
