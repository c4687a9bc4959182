package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// topoTestdata holds copies of SimAI's generated topology files.
const topoTestdata = "../../topo/testdata"

// runTopoCLI runs simd topo with args and returns the exit status and outputs.
func runTopoCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := runTopo(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestTopoSimAIFiles: the generator's flags (simai-inputs/README.md) give SimAI's six files,
// byte for byte, under SimAI's names, with the generator's console lines.
func TestTopoSimAIFiles(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		console []string
		warn    string
	}{
		{"Spectrum-X_8g_8gps_400Gbps_H100", []string{"-topo", "Spectrum-X", "-g", "8", "-psn", "1"},
			[]string{"asw_switch_num: 8", "psw_switch_num: 1"}, ""},
		{"DCN+SingleToR_16g_8gps_400Gbps_H100", []string{"-topo", "DCN+", "-g", "16", "-psn", "2"},
			[]string{"asw_switch_num: 1", "psw_switch_num: 2"}, ""},
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", []string{"-topo", "AlibabaHPN", "-g", "32", "-psn", "4"},
			[]string{"asw_switch_num: 16", "psw_switch_num: 4"}, ""},
		{"AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100", []string{"-topo", "AlibabaHPN", "-g", "32", "-psn", "4", "-asn", "240"},
			[]string{"asw_switch_num: 16", "psw_switch_num: 4"}, "-asn 240 does not match the fabric: its 32 GPUs fill 1 segment(s)"},
		{"AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100", []string{"-topo", "AlibabaHPN", "--dp", "-g", "64", "-asn", "16", "-psn", "16"},
			[]string{"asw_switch_num: 16", "psw_switch_num: 16"}, ""},
		{"DCN+DualToR_128g_8gps_200Gbps_H100", []string{"-topo", "DCN+", "--dt", "-g", "128", "-asn", "2", "-psn", "8"},
			[]string{"asw_switch_num: 2", "psw_switch_num: 8"}, ""},
		{"Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", []string{"--ro", "-g", "16", "-gt", "H20", "-bw", "200Gbps", "-nvbw", "2400Gbps"},
			[]string{"asw_switch_num: 8", "psw_switch_num: 64"}, ""},
	}
	for _, c := range cases {
		dir := t.TempDir()
		code, out, errOut := runTopoCLI(append(c.args, "-o", dir)...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, errOut)
			continue
		}
		if files := listFiles(t, dir); len(files) != 1 || files[0] != c.name {
			t.Errorf("%s: wrote %v", c.name, files)
			continue
		}
		if got, want := readFile(t, filepath.Join(dir, c.name)), readFile(t, filepath.Join(topoTestdata, c.name)); got != want {
			t.Errorf("%s: the file differs from SimAI's", c.name)
		}
		wantOut := strings.Join(c.console, "\n") + "\nCreating Topology of totally 1 segment(s), totally 1 pod(s).\n" +
			filepath.Join(dir, c.name) + "\n"
		if out != wantOut {
			t.Errorf("%s: stdout %q, want %q", c.name, out, wantOut)
		}
		if c.warn == "" && errOut != "" || c.warn != "" && (!strings.HasPrefix(errOut, "simd topo: warning: -asn") ||
			!strings.Contains(errOut, c.warn) || strings.Count(errOut, "\n") != 1) {
			t.Errorf("%s: stderr %q", c.name, errOut)
		}
		info, err := os.Stat(filepath.Join(dir, c.name))
		if err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v", c.name, info.Mode(), err)
		}
	}
}

// TestTopoDefaultDir: without -o the file goes to the current folder and stdout names it
// alone, as the generator does; simd dispatches "simd topo" to runTopo.
func TestTopoDefaultDir(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, "topo", "-topo", "Spectrum-X", "-g", "8", "-psn", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasSuffix(out, "\nSpectrum-X_8g_8gps_400Gbps_H100\n") {
		t.Errorf("stdout %q", out)
	}
	if got := readFile(t, filepath.Join(dir, "Spectrum-X_8g_8gps_400Gbps_H100")); got != readFile(t, filepath.Join(topoTestdata, "Spectrum-X_8g_8gps_400Gbps_H100")) {
		t.Error("the file differs from SimAI's")
	}
}

// TestTopoLongNames: SimAI's long flag names mean the same as the short ones.
func TestTopoLongNames(t *testing.T) {
	short := []string{"-topo", "AlibabaHPN", "--dp", "-g", "128", "-er", "0.001", "-gps", "4", "-gt", "H800",
		"-nsps", "2", "-nvbw", "1600Gbps", "-nl", "0.00003ms", "-l", "0.001ms", "-bw", "800Gbps", "-asn", "16",
		"-npa", "16", "-psn", "6", "-apbw", "1.6Tbps", "-app", "48"}
	long := []string{"--topology", "AlibabaHPN", "--dp", "--gpu", "128", "--error_rate", "0.001", "--gpu_per_server", "4",
		"--gpu_type", "H800", "--nv_switch_per_server", "2", "--nvlink_bw", "1600Gbps", "--nv_latency", "0.00003ms",
		"--latency", "0.001ms", "--bandwidth", "800Gbps", "--asw_switch_num", "16", "--nics_per_aswitch", "16",
		"--psw_switch_num", "6", "--ap_bandwidth", "1.6Tbps", "--asw_per_psw", "48"}
	var files [2]string
	for i, args := range [][]string{short, long} {
		dir := t.TempDir()
		code, out, errOut := runTopoCLI(append(args, "-o", dir)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		const name = "AlibabaHPN_128g_4gps_DualToR_DualPlane_800Gbps_H800"
		if !strings.HasSuffix(out, name+"\n") {
			t.Fatalf("stdout %q", out)
		}
		files[i] = readFile(t, filepath.Join(dir, name))
	}
	if files[0] != files[1] {
		t.Error("long names give another file")
	}
	if !strings.HasPrefix(files[0], "214 4 64 22 ") || !strings.Contains(files[0], " 1.6Tbps 0.001ms 0.001\n") {
		t.Errorf("file starts %q", files[0][:40])
	}
}

// TestTopoExtensions: simd's additions through the command line.
func TestTopoExtensions(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runTopoCLI("-topo", "Spectrum-X", "-g", "16384", "-pods", "auto", "-pcbw", "800Gbps", "-os", "2", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "asw_switch_num: 256\npsw_switch_num: 128\ncore_switch_num: 1024\n" +
		"Creating Topology of totally 32 segment(s), totally 4 pod(s).\n" +
		filepath.Join(dir, "Spectrum-X_16384g_8gps_400Gbps_H100_4pods_os2") + "\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	dir = t.TempDir()
	code, out, errOut = runTopoCLI("--mesh", "-g", "16", "-gt", "MI300X", "-nvbw", "1024Gbps", "-o", dir)
	if code != 0 || !strings.HasSuffix(out, "No_Rail_Opti_16g_8gps_SingleToR_400Gbps_MI300X_mesh\n") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	head := strings.SplitN(readFile(t, filepath.Join(dir, "No_Rail_Opti_16g_8gps_SingleToR_400Gbps_MI300X_mesh")), "\n", 2)[0]
	if head != "81 8 0 65 136 MI300X" { // 16 GPUs, 1 ASW, 64 PSWs; 56 mesh + 16 NIC + 64 uplinks
		t.Errorf("header %q", head)
	}
}

// TestTopoErrors: bad flags and topologies the generator refuses exit 2 with one line and
// leave the folder empty.
func TestTopoErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--dp", "-g", "16"}, "--dp"},
		{[]string{"--ro", "--dp"}, "--dp"},
		{[]string{"-topo", "Spectrum-X", "-g", "8192"}, "16 segments"},
		{[]string{"-topo", "DCN+", "-g", "520"}, "9 segments"},
		{[]string{"-g", "12"}, "not a multiple of -gps"},
		{[]string{"-bw", "fast"}, "-bw"},
		{[]string{"-g", "eight"}, "-g"},
		{[]string{"-g", "0x10"}, "-g"},
		{[]string{"-pods", "0"}, "-pods"},
		{[]string{"-os", "-1"}, "-os"},
		{[]string{"-os", "3"}, "-os 3"},
		{[]string{"-csn", "64"}, "-csn"},
		{[]string{"-nope"}, "-nope"},
		{[]string{"stray"}, "stray"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		code, out, errOut := runTopoCLI(append(c.args, "-o", dir)...)
		if code != 2 {
			t.Errorf("%v: exit %d", c.args, code)
		}
		if !strings.HasPrefix(errOut, "simd topo: ") || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) ||
			strings.Contains(errOut, "topo: topo:") {
			t.Errorf("%v: stderr %q", c.args, errOut)
		}
		if out != "" {
			t.Errorf("%v: stdout %q", c.args, out)
		}
		if files := listFiles(t, dir); len(files) != 0 {
			t.Errorf("%v: left %v", c.args, files)
		}
	}
	// A folder that cannot be created is not the input's fault: exit 1.
	file := writeFile(t, t.TempDir(), "file", "x")
	if code, _, errOut := runTopoCLI("-g", "8", "-o", filepath.Join(file, "sub")); code != 1 || !strings.HasPrefix(errOut, "simd topo: ") {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// TestTopoHelp: -h documents every flag with its default.
func TestTopoHelp(t *testing.T) {
	code, out, errOut := runTopoCLI("-h")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r topoRaw
	fs, groups := newTopoFlagSet(&r)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(out, " -"+f.Name+" ") && !strings.Contains(out, " -"+f.Name+",") && !strings.Contains(out, " -"+f.Name+"\n") &&
			!strings.Contains(out, " --"+f.Name) {
			t.Errorf("-h does not list -%s", f.Name)
		}
	})
	specs := 0
	for _, g := range groups {
		for _, f := range g.Flags {
			specs++
			if f.Default == "" || !strings.Contains(out, f.Usage+" (default: "+f.Default+")") {
				t.Errorf("-h: %v has no default", f.Names)
			}
		}
	}
	if strings.Count(out, "(default: ") != specs {
		t.Errorf("%d defaults for %d flags", strings.Count(out, "(default: "), specs)
	}
	for _, name := range []string{"-topo", "--topology", "--ro", "--dt", "--dp", "-g", "--gpu", "-gps", "--gpu_per_server",
		"-gt", "--gpu_type", "-nsps", "--nv_switch_per_server", "-nvbw", "--nvlink_bw", "-nl", "--nv_latency", "-l",
		"--latency", "-bw", "--bandwidth", "-asn", "--asw_switch_num", "-npa", "--nics_per_aswitch", "-psn",
		"--psw_switch_num", "-apbw", "--ap_bandwidth", "-app", "--asw_per_psw", "-er", "--error_rate",
		"-pods", "-csn", "-pcbw", "-os", "--mesh", "-o", "-h"} {
		if fs.Lookup(strings.TrimLeft(name, "-")) == nil && name != "-h" {
			t.Errorf("no flag %s", name)
		}
		if !strings.Contains(out, "  "+name+" ") && !strings.Contains(out, "  "+name+",") && !strings.Contains(out, " "+name+"\n") &&
			!strings.Contains(out, ", "+name+" ") {
			t.Errorf("-h does not show %s", name)
		}
	}
	if n < 40 {
		t.Errorf("%d flag names", n)
	}
	if code, out2, _ := runCLI(t, t.TempDir(), "topo", "--help"); code != 0 || out2 != out {
		t.Error("simd topo --help differs from -h")
	}
}
