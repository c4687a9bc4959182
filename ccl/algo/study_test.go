package algo

import (
	"bytes"
	"strings"
	"testing"

	"simd/ccl"
	"simd/configs/lex"
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

// StudyRequest takes the values of simd dag's flags: with auto it says what the selector chose
// and why before the DAG; each bad value is an input error naming its flag, and nothing is
// written for it.
func TestStudyRequest(t *testing.T) {
	ok := StudyRequest{Op: "allreduce", Algorithm: "auto", Size: "1MiB", Ranks: 16, GPUsPerServer: 8, Fabric: "switch", Check: true,
		Machine: Machine{NVLinkGBps: 360, NetworkGBps: 50}, Policy: "simccl", Group: "DP", GPUType: "H100"}
	var b bytes.Buffer
	st, err := ok.Run(&b)
	if err != nil {
		t.Fatal(err)
	}
	if out := b.String(); st.Algorithm != Ring || !strings.HasPrefix(out, "selected ring (") ||
		!strings.Contains(out, "\nallreduce ring on 16 ranks (2 servers of up to 8 GPUs), 1048576 bytes\n") || !strings.Contains(out, "check: ok") {
		t.Errorf("%s:\n%s", st.Algorithm, out)
	}
	for _, c := range []struct {
		set  func(r *StudyRequest)
		want string
	}{
		{func(r *StudyRequest) { r.Op = "bcast" }, `-op "bcast"`},
		{func(r *StudyRequest) { r.Size = "lots" }, `-size "lots"`},
		{func(r *StudyRequest) { r.Ranks = 0 }, "-n 0"},
		{func(r *StudyRequest) { r.GPUsPerServer = 0 }, "-gps 0"},
		{func(r *StudyRequest) { r.Machine.AlphaUs = -1 }, "-alpha"},
		{func(r *StudyRequest) { r.Fabric = "torus" }, `-fabric "torus"`},
		{func(r *StudyRequest) { r.Algorithm = "star" }, "-algo: "},
		{func(r *StudyRequest) { r.Force = "TP" }, "-force: "},
		{func(r *StudyRequest) { r.Policy = "fast" }, "-policy: "},
		{func(r *StudyRequest) { r.Group = "XP" }, `-group "XP"`},
		{func(r *StudyRequest) { r.Algorithm, r.Op = "tree", "alltoall" }, "tree alltoall on 16 ranks"},
	} {
		r := ok
		c.set(&r)
		b.Reset()
		if _, err := r.Run(&b); !lex.IsInputError(err) || !strings.Contains(err.Error(), c.want) || b.Len() != 0 {
			t.Errorf("%+v: %v (wrote %q), want an input error naming %s", r, err, b.String(), c.want)
		}
	}
}
