package configs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sha256 of the upstream files (aliyun/SimAI @ cef83f9), so that an accidental edit of an
// embedded copy is caught.
var upstreamSHA256 = map[string]string{
	"SimAI.conf":              "1fe56bee9c2a0e0f27fdbe816c2c51c9254b5d5a6c5e05adaac347a758e77fcf",
	"ata_ratio.csv":           "fe66fed8dfd51b86fdae71b8165265e090749c0d6872f5207d5d23e0450197c5",
	"nic_ratio.csv":           "ddd43a3287a4b34ff78b242be00a70c121712afdcc2704c17752494dfd5c53a8",
	"nvlink_ratio.csv":        "bb97c4a4d9c8742ffc11bb5c6254dc4a31ea3bba7f1fead8dfa39844d68a0f5d",
	"microAllReduce.txt":      "5aea5b1afc033d4423897323348c0ed8eac6596ef7b5ce66a6017c259c0caae2",
	"workload_analytical.txt": "8c2e255aa7397d8c5c7e01daa04d4b3c97a6b015a27bd425770ef8e7e5cbe0a1",
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestEmbeddedFilesAreUpstreamCopies(t *testing.T) {
	got := map[string]string{"SimAI.conf": sum(ShippedSimAIConfText())}
	for _, name := range []string{"ata_ratio.csv", "nic_ratio.csv", "nvlink_ratio.csv"} {
		text, ok := ShippedRatioText(name)
		if !ok {
			t.Fatalf("%s not embedded", name)
		}
		got[name] = sum(text)
	}
	for _, name := range ExampleWorkloadNames() {
		text, ok := ExampleWorkload(name)
		if !ok {
			t.Fatalf("%s listed but not found", name)
		}
		got[name] = sum(text)
	}
	if !reflect.DeepEqual(got, upstreamSHA256) {
		t.Errorf("embedded files differ from the upstream copies:\n got %v\nwant %v", got, upstreamSHA256)
	}
}

func TestExampleWorkloads(t *testing.T) {
	names := ExampleWorkloadNames()
	if want := []string{"microAllReduce.txt", "workload_analytical.txt"}; !reflect.DeepEqual(names, want) {
		t.Errorf("ExampleWorkloadNames() = %q, want %q", names, want)
	}
	text, ok := ExampleWorkload("microAllReduce.txt")
	if !ok || len(text) != 343 || string(text[:31]) != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" {
		t.Fatalf("microAllReduce.txt: %d bytes, %v", len(text), ok)
	}
	// The result is a copy: changing it does not change the embedded file.
	text[0] = 'X'
	if again, _ := ExampleWorkload("microAllReduce.txt"); again[0] != 'H' {
		t.Error("ExampleWorkload returned the embedded bytes themselves")
	}
	if text, ok := ExampleWorkload("workload_analytical.txt"); !ok || len(text) != 140398 {
		t.Errorf("workload_analytical.txt: %d bytes, %v", len(text), ok)
	}
	for _, bad := range []string{"", ".", "examples/microAllReduce.txt", "../data/SimAI.conf", "MICROALLREDUCE.TXT", "busbw.yaml"} {
		if _, ok := ExampleWorkload(bad); ok {
			t.Errorf("ExampleWorkload(%q) found something", bad)
		}
	}
	conf := ShippedSimAIConfText()
	conf[0] = 'X'
	if ShippedSimAIConfText()[0] != 'E' {
		t.Error("ShippedSimAIConfText returned the embedded bytes themselves")
	}
}

// TestReadWorkloadText: a file is read as it is, "example:NAME" is the shipped example, and the
// errors say which of the two failed.
func TestReadWorkloadText(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.txt")
	if err := os.WriteFile(file, []byte("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	micro, _ := ExampleWorkload("microAllReduce.txt")
	for _, c := range []struct {
		in, name, text string
		err            string
	}{
		{file, file, "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1\n0\n", ""},
		{"example:microAllReduce.txt", "microAllReduce.txt", string(micro), ""},
		{"example:nope.txt", "", "", "example:nope.txt: no such example (there are microAllReduce.txt, workload_analytical.txt)"},
		{file + "x", "", "", "no such file"},
	} {
		text, name, err := ReadWorkloadText(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || name != c.name || string(text) != c.text {
			t.Errorf("%s: %q, %q, %v", c.in, name, text, err)
		}
	}
	var pe *fs.PathError
	if _, _, err := ReadWorkloadText(file + "x"); !errors.As(err, &pe) {
		t.Errorf("a missing file: %T, want *fs.PathError", err)
	}
	var ue UnknownExampleError
	if _, _, err := ReadWorkloadText("example:nope"); !errors.As(err, &ue) || ue.Name != "nope" {
		t.Errorf("an unknown example: %#v", err)
	}
}

// TestReadSimAIConf: "" is the shipped file; a path is read and parsed.
func TestReadSimAIConf(t *testing.T) {
	shipped, err := ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	if c, warns, err := ReadSimAIConf(""); err != nil || len(warns) != 0 || !reflect.DeepEqual(c, shipped) {
		t.Errorf("shipped: %v %v", warns, err)
	}
	file := filepath.Join(t.TempDir(), "SimAI.conf")
	if err := os.WriteFile(file, ShippedSimAIConfText(), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _, err := ReadSimAIConf(file); err != nil || !reflect.DeepEqual(c, shipped) {
		t.Errorf("a copy of the shipped file: %v", err)
	}
	var pe *fs.PathError
	if _, _, err := ReadSimAIConf(file + "x"); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want *fs.PathError", err)
	}
}
