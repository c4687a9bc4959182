package algo

import (
	"bytes"
	"strings"
	"testing"

	"simd/ccl"
)

// A ring all-reduce on one server of 8: the DAG's size, its closed form and its check.
func TestStudyRing(t *testing.T) {
	req := GroupRequest(ccl.OpAllReduce, 8, 8, 1<<20)
	if len(req.Ranks) != 8 || req.TotalGPUs != 8 {
		t.Fatalf("request %+v", req)
	}
	s, err := NewStudy(Ring, req, Params{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTime(&b, Machine{NVLinkGBps: 360, NetworkGBps: 50}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"allreduce ring on 8 ranks (1 servers of up to 8 GPUs), 1048576 bytes\n", "flows: ", "closed form: ", "switch); algbw", "check: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	// Servers holding unequal shares have no closed form: nothing is written.
	b.Reset()
	s, err = NewStudy(Ring, GroupRequest(ccl.OpAllReduce, 9, 8, 1<<20), Params{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTime(&b, Machine{NVLinkGBps: 360, NetworkGBps: 50}); err != nil || b.Len() != 0 {
		t.Errorf("9 ranks on servers of 8: %q, %v", b.String(), err)
	}
}
