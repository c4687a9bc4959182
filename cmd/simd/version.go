package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// versionLine is simd -version: the module version (a tagged release when built with go
// install module@version), the source revision and whether the tree had local changes when the
// go tool recorded them, and the Go toolchain.
func versionLine() string {
	var b strings.Builder
	b.WriteString("simd")
	info, ok := debug.ReadBuildInfo()
	if !ok {
		b.WriteString(" (no build information) ")
		b.WriteString(runtime.Version())
		return b.String()
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	b.WriteString(" " + v)
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+changes"
			}
		}
	}
	if rev != "" {
		b.WriteString(" " + rev[:min(12, len(rev))] + dirty)
	}
	b.WriteString(" " + info.GoVersion)
	return b.String()
}
