package topo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Files that are well formed but cannot be simulated as meant: the exact error of each.
func TestParseStructureErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"duplicate link, same direction", strings.Replace(small, " 3 H100", " 4 H100", 1) + "0 2 2880Gbps 0.000025ms 0\n",
			"t:6: link 4: joins nodes 0 and 2, as line 3 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{"duplicate link, reversed", smallHead + "0 2 2880Gbps 0.000025ms 0\n1 2 2880Gbps 0.000025ms 0\n2 0 400Gbps 1ns 0\n",
			"t:5: link 3: joins nodes 2 and 0, as line 3 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{"the first repeated line is named", "4 1 0 1 5 H\n3\n0 3 1Gbps 0 0\n1 3 1Gbps 0 0\n2 3 1Gbps 0 0\n3 2 1Gbps 0 0\n1 3 1Gbps 0 0\n",
			"t:6: link 4: joins nodes 3 and 2, as line 5 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{"three links on one line", "3 1 0 1 3 H\n2\n0 2 1Gbps 0 0 1 2 1Gbps 0 0 0 2 1Gbps 0 0\n",
			"t:3: link 3: joins nodes 0 and 2, as line 3 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{"GPU without links", "4 2 1 1 2 H100\n2 3 \n0 2 2880Gbps 0.000025ms 0\n0 3 400Gbps 0.0005ms 0\n",
			"t:3: GPU 0 reaches no other GPU: its links (lines 3 and 4) lead to no other GPU; neither does GPU 1"},
		{"GPU without links among others", "4 1 0 1 2 H100\n3 \n0 3 1Gbps 0 0\n1 3 1Gbps 0 0\n",
			"t: GPU 2 reaches no other GPU: no link has it as an end"},
		{"GPU behind a switch no GPU reaches", "4 2 1 1 2 H100\n2 3 \n0 2 2880Gbps 0.000025ms 0\n1 3 400Gbps 0.0005ms 0\n",
			"t:3: GPU 0 reaches no other GPU: its link (line 3) leads to no other GPU; neither does GPU 1"},
		{"several isolated GPUs", "10 1 0 4 5 H\n6 7 8 9\n0 6 1Gbps 0 0\n1 6 1Gbps 0 0\n2 7 1Gbps 0 0\n2 8 1Gbps 0 0\n9 2 1Gbps 0 0\n",
			"t:5: GPU 2 reaches no other GPU: its links (lines 5, 6 and 7) lead to no other GPU; neither do GPUs 3, 4, 5"},
		{"many isolated GPUs", "14 1 0 6 7 H\n8 9 10 11 12 13\n0 8 1Gbps 0 0\n7 8 1Gbps 0 0\n1 9 1Gbps 0 0\n1 10 1Gbps 0 0\n1 11 1Gbps 0 0\n1 12 1Gbps 0 0\n1 13 1Gbps 0 0\n",
			"t:5: GPU 1 reaches no other GPU: its links (lines 5, 6, 7 and 2 more) lead to no other GPU; neither do GPUs 2, 3, 4, 5 and 1 more"},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.in), "t")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// Neither check fires on what is allowed: one GPU alone, GPUs reaching each other through a
// direct link or through GPUs, switches or NVSwitches no GPU uses.
func TestParseStructureAllowed(t *testing.T) {
	for name, in := range map[string]string{
		"one GPU, no links":         "1 1 0 0 0 H\n\n",
		"one GPU and a switch":      "2 1 0 1 1 H\n1\n0 1 1Gbps 0 0\n",
		"GPU to GPU":                "2 2 0 0 1 H\n\n0 1 1Gbps 0 0\n",
		"a chain of GPUs":           "3 3 0 0 2 H\n\n0 1 1Gbps 0 0\n1 2 1Gbps 0 0\n",
		"an unused switch":          "4 2 1 1 2 H\n2 3\n0 2 1Gbps 0 0\n1 2 1Gbps 0 0\n",
		"two islands of two GPUs":   "4 2 0 0 2 H\n\n0 1 1Gbps 0 0\n2 3 1Gbps 0 0\n",
		"parallel paths, no repeat": small,
	} {
		if _, err := Parse(strings.NewReader(in), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// CheckStructure on topologies built in memory names links by number; Validate does not check
// structure (the router accepts parallel links and islands).
func TestCheckStructure(t *testing.T) {
	dup := &Topology{GPUsPerServer: 1, GPUType: "H", Kinds: []NodeKind{GPU, GPU},
		Links: []Link{{Src: 0, Dst: 1, Rate: 1}, {Src: 1, Dst: 0, Rate: 1}}}
	island := &Topology{GPUsPerServer: 1, GPUType: "H", Kinds: []NodeKind{GPU, GPU, Switch}, Switches: []int32{2},
		Links: []Link{{Src: 0, Dst: 2, Rate: 1}}}
	for _, c := range []struct {
		t    *Topology
		want string
	}{
		{dup, "topo: link 2 joins nodes 1 and 0, as link 1 already does: give each pair of nodes one link (SimAI would keep only the last)"},
		{island, "topo: GPU 0 reaches no other GPU: its link (link 1) leads to no other GPU; neither does GPU 1"},
	} {
		if err := c.t.Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
		err := c.t.CheckStructure()
		var se *StructureError
		if !errors.As(err, &se) || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
	island.Links = append(island.Links, Link{Src: 1, Dst: 2, Rate: 1})
	if err := island.CheckStructure(); err != nil {
		t.Error(err)
	}
}

// Every generated fabric passes, and the check is cheap at 131,072 GPUs.
func TestCheckStructureGenerated(t *testing.T) {
	for _, o := range []GeneratorOptions{
		NewGeneratorOptions("Spectrum-X", false, false, false),
		NewGeneratorOptions("AlibabaHPN", false, false, true),
		NewGeneratorOptions("DCN+", false, true, false),
	} {
		o.GPUs, o.Pods = 1024, AutoPods
		g, err := o.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Topology.CheckStructure(); err != nil {
			t.Errorf("%s: %v", g.FileName, err)
		}
		var b bytes.Buffer
		if err := g.Topology.Write(&b); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(&b, g.FileName); err != nil {
			t.Errorf("%s: %v", g.FileName, err)
		}
	}
}

// go test -run '^$' -bench CheckStructure -benchmem ./topo
func BenchmarkCheckStructure131072(b *testing.B) {
	o := NewGeneratorOptions("Spectrum-X", false, false, false)
	o.GPUs, o.Pods = 131072, AutoPods
	g, err := o.Generate()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Topology.CheckStructure(); err != nil {
			b.Fatal(err)
		}
	}
}
