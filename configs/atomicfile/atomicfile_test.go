package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Write puts the whole file under its real name, creating the folder; a failed write leaves
// neither the file nor a temporary one, and an earlier file of that name stays as it was.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out", "report.csv")
	cases := []struct {
		name    string
		write   func(f *os.File) error
		wantErr bool
		want    string // the file's content afterwards
	}{
		{"new file in a new folder", func(f *os.File) error { _, err := f.WriteString("a,b\n1,2\n"); return err }, false, "a,b\n1,2\n"},
		{"a failed write keeps the old file", func(f *os.File) error {
			f.WriteString("half")
			return errors.New("disk full")
		}, true, "a,b\n1,2\n"},
		{"replaced whole", func(f *os.File) error { _, err := f.WriteString("x\n"); return err }, false, "x\n"},
	}
	for _, c := range cases {
		err := Write(path, c.write)
		if (err != nil) != c.wantErr {
			t.Fatalf("%s: error %v, want error %v", c.name, err, c.wantErr)
		}
		got, rerr := os.ReadFile(path)
		if rerr != nil || string(got) != c.want {
			t.Errorf("%s: file holds %q (%v), want %q", c.name, got, rerr, c.want)
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		if len(entries) != 1 {
			t.Errorf("%s: the folder holds %d entries, want only the file", c.name, len(entries))
		}
		if st, _ := os.Stat(path); st != nil && st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", c.name, st.Mode().Perm())
		}
	}
}
