package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Go may compile x*y + z into one fused multiply-add, which rounds once instead of twice, on
// arm64, ppc64le, s390x, riscv64 and on amd64 built with GOAMD64=v3: results would then differ
// in the last bits from amd64's and could reorder events. simd's packages keep every product
// that meets an addition apart with an explicit conversion (float64(x*y) + z), which the Go
// spec says rounds and forbids the fusion. This test compiles every package of the module for
// arm64 and for amd64 v3 with -S and fails on any fused instruction not listed in fusionKnown.
//
// The first run after a change recompiles the packages concerned for both targets (seconds);
// on an empty build cache it also compiles the standard library and the dependencies for
// them, a minute or two, which is why -short skips it.

// fusionKnown lists the lines where the compiler may fuse, each with the reason it is harmless
// or what is pending; they are matched by file and source text, so an edited line is checked
// again.
var fusionKnown = []struct{ file, text, why string }{}

// fusedOp matches the fused multiply-add mnemonics of Go's arm64 and amd64 assemblers.
var fusedOp = regexp.MustCompile(`^(F(N?)M(ADD|SUB)[DS]|VF(N?)M(ADD|SUB)\w*)$`)

func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the module twice with -S")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{} // "file:text" → why
	for _, k := range fusionKnown {
		known[k.file+":"+k.text] = k.why
	}
	lines := map[string][]string{} // file → its lines, read on demand
	sourceLine := func(file string, n int) string {
		if _, ok := lines[file]; !ok {
			b, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			lines[file] = strings.Split(string(b), "\n")
		}
		if n < 1 || n > len(lines[file]) {
			return ""
		}
		return strings.TrimSpace(lines[file][n-1])
	}
	for _, target := range []struct{ name, arch, amd64 string }{
		{"arm64", "arm64", ""},
		{"amd64-v3", "amd64", "v3"},
	} {
		t.Run(target.name, func(t *testing.T) {
			cmd := exec.Command(goBin, "build", "-gcflags=simd/...=-S", "./...")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+target.arch, "GOAMD64="+target.amd64, "CGO_ENABLED=0", "GOFLAGS=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("go build for %s: %v\n%.2000s", target.name, err, out.String())
			}
			found := map[string]bool{}
			var bad []string
			fn, instructions := "", 0
			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				if f, _, ok := strings.Cut(line, " STEXT"); ok && !strings.HasPrefix(line, "\t") {
					fn = f
					continue
				}
				// "\t0x0010 00016 (/path/file.go:12)\tFMADDD\tF1, F2, F3, F4"
				fields := strings.Split(line, "\t")
				if len(fields) < 3 || !strings.HasPrefix(fields[1], "0x") {
					continue
				}
				instructions++
				if !fusedOp.MatchString(fields[2]) {
					continue
				}
				pos := fields[1][strings.IndexByte(fields[1], '(')+1 : len(fields[1])-1]
				colon := strings.LastIndexByte(pos, ':')
				file, n := pos[:colon], 0
				if v, err := strconv.Atoi(pos[colon+1:]); err == nil {
					n = v
				}
				if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
					file = filepath.ToSlash(rel)
				}
				text := sourceLine(file, n)
				if _, ok := known[file+":"+text]; ok {
					found[file+":"+text] = true
					continue
				}
				bad = append(bad, fmt.Sprintf("%s (%s:%d: %s): %s", fn, file, n, text, fields[2]))
			}
			if instructions == 0 {
				t.Fatalf("no assembly in the output of go build -gcflags=-S:\n%.2000s", out.String())
			}
			if len(bad) > 0 {
				slices.Sort(bad)
				t.Errorf("fused multiply-adds for %s; keep the product apart with float64(x*y), or use math.FMA where fusion is meant:\n%s",
					target.name, strings.Join(slices.Compact(bad), "\n"))
			}
			for _, k := range fusionKnown {
				if !found[k.file+":"+k.text] {
					t.Logf("%s: %q no longer fuses for %s; its fusionKnown entry can go", k.file, k.text, target.name)
				}
			}
		})
	}
}
