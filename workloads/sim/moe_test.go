package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/configs"
	"simd/topo"
	"simd/workloads/moe"
)

// An MoE run's fabric is -n's file or the default one, and must fit the workload's GPUs.
func TestMoETopology(t *testing.T) {
	dir := t.TempDir()
	fabric := func(gpus, gps int) string {
		tp, err := topo.DefaultFabric(gpus, gps)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tp.Write(&b); err != nil {
			t.Fatal(err)
		}
		return writeTestFile(t, dir, fmt.Sprintf("fabric-%d-%d", gpus, gps), b.String())
	}
	cfg := &moe.Config{Nodes: 2, GPUsPerNode: 4}
	missing, junk := filepath.Join(dir, "missing"), writeTestFile(t, dir, "junk", "junk\n")
	small, wide, big := fabric(4, 4), fabric(8, 8), fabric(16, 4)
	for _, c := range []struct {
		path string
		gpus int    // of the fabric, when it is accepted
		want string // the error
	}{
		{"", 8, ""},
		{big, 16, ""},
		{missing, 0, "-n: open " + missing + ": no such file or directory"},
		{junk, 0, junk + ":1: header node_num:"},
		{small, 0, "-n " + small + ": 4 GPUs, the workload has 8"},
		{wide, 0, "-n " + wide + ": 8 GPUs per server, the workload's plans assume 4"},
	} {
		tp, err := MoETopology(c.path, cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.path, err)
		case c.want == "" && (tp.NumGPUs() != c.gpus || tp.GPUsPerServer != 4):
			t.Errorf("%q: %d GPUs, %d per server", c.path, tp.NumGPUs(), tp.GPUsPerServer)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || !IsInputError(err)):
			t.Errorf("%q: error %v, want an input error starting %q", c.path, err, c.want)
		}
	}
}

// simd moe run -o writes fct.txt alone, whatever SimAI.conf switches on or off.
func TestNewFCTFiles(t *testing.T) {
	shipped, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	bare, _, err := configs.ParseSimAIConf(strings.NewReader("CC_MODE 0\n"), "SimAI.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, conf := range []configs.SimAIConf{shipped, bare} {
		fs := NewFCTFiles(t.TempDir(), &conf, "")
		for _, key := range streamedKeys {
			if fs.on[key] != (key == "FCT_OUTPUT_FILE") {
				t.Errorf("%s is %v", key, fs.on[key])
			}
		}
	}
}

func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
