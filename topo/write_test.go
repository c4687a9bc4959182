package topo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/configs/lex"
)

// GenerateFile writes the generator's file into the folder and prints its console lines with the
// file's path last; an -asn that differs draws the warning on stderr; a refused topology is an
// input error and writes nothing. ReadFile reads the file back, and names the flag when the file
// is not there.
func TestGenerateFile(t *testing.T) {
	dir := t.TempDir()
	o := NewGeneratorOptions("Spectrum-X", false, false, false)
	o.GPUs, o.ASWs = 16, 3
	var stdout, stderr bytes.Buffer
	path, err := o.GenerateFile(dir, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := "asw_switch_num: 8\npsw_switch_num: 64\nCreating Topology of totally 1 segment(s), totally 1 pod(s).\n" + path + "\n"
	if stdout.String() != want || filepath.Dir(path) != dir {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if !strings.HasPrefix(stderr.String(), "simd topo: warning: -asn 3 does not match the fabric: ") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr %q, want the -asn warning on one line", stderr.String())
	}
	top, err := ReadFile(path, "-n")
	if err != nil || top.NumGPUs() != 16 {
		t.Errorf("ReadFile: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), "-info"); !lex.IsInputError(err) || !strings.HasPrefix(err.Error(), "-info: open ") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}

	o.GPUs = 12 // not a multiple of -gps
	empty := t.TempDir()
	stdout.Reset()
	if _, err := o.GenerateFile(empty, &stdout, &stderr); !lex.IsInputError(err) || !strings.Contains(err.Error(), "not a multiple of -gps") {
		t.Errorf("refused options: %v, want an input error", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 || stdout.Len() != 0 {
		t.Errorf("a refused topology wrote %d files and printed %q", len(entries), stdout.String())
	}
}
