// Package atomicfile writes output files so that none is ever seen half-written under its real
// name: every output of simd (reports, logs, generated topologies, manifests) goes through it.
// It sits under configs, the lowest folder that reads and writes files, so that topo's writer
// and workloads/sim's reports share it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes a file under a temporary name in the same folder and renames it into
// place, so an interrupted run never leaves a half-written file under the real name. The
// folder is created if needed.
func Write(path string, write func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the output folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
