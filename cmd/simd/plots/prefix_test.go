package plots

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDetectPrefix checks the prefix simd plot and simd report take without -r.
func TestDetectPrefix(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"EndToEnd.csv", "runEndToEnd.csv"}, ""},
		{[]string{"fct.txt", "runEndToEnd.csv"}, ""},
		{[]string{"runEndToEnd.csv", "analytical-EndToEnd.csv"}, "run"},
		{[]string{"aEndToEnd.csv", "bEndToEnd.csv"}, ""},
		{nil, ""},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := DetectPrefix(dir); got != tc.want {
			t.Errorf("%v: DetectPrefix = %q, want %q", tc.files, got, tc.want)
		}
	}
}
