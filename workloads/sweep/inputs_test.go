package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckInputs names the spec's line and field of the first input that is missing: a workload
// file, a shipped example, a topology file, a generator's flags; BaseConf reads the spec's conf
// or gives the shipped one.
func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "topo"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	badFlags := func(args []string) error {
		if strings.Join(args, " ") == "-topo=Nope" {
			return errors.New("-topo Nope: unknown")
		}
		return nil
	}
	for _, tc := range []struct{ spec, want string }{
		{"workloads: [w.txt, example:microAllReduce.txt]\ntopologies: [{file: topo}, {topo: Spectrum-X, g: 8}]\n", ""},
		{"workloads: [w.txt, missing.txt]\n", "spec.yaml:1: workloads[1]: stat " + filepath.Join(dir, "missing.txt") + ": no such file or directory"},
		{"workloads: [example:nope.txt]\n", `spec.yaml:1: workloads[0]: "example:nope.txt": no such example (`},
		{"workloads: [w.txt]\ntopologies:\n  - {file: none}\n", "spec.yaml:3: topologies[0].file: stat " + filepath.Join(dir, "none")},
		{"workloads: [w.txt]\ntopologies:\n  - {topo: Nope}\n", "spec.yaml:3: topologies[0]: -topo Nope: unknown"},
	} {
		s, err := Parse([]byte(tc.spec), filepath.Join(dir, "spec.yaml"))
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		err = s.CheckInputs(badFlags)
		var e *Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.spec, err)
		case tc.want != "" && (!errors.As(err, &e) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", tc.spec, err, tc.want)
		}
	}
	s, _ := Parse([]byte("workloads: [w.txt]\nconf: my.conf\n"), filepath.Join(dir, "spec.yaml"))
	if _, err := s.BaseConf(); err == nil || !strings.Contains(err.Error(), "conf: open ") {
		t.Errorf("a missing conf: %v", err)
	}
	s.Conf = ""
	if b, err := s.BaseConf(); err != nil || len(b) == 0 {
		t.Errorf("the shipped conf: %d bytes, %v", len(b), err)
	}
}
