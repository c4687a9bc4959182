package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// options are the command line of a simulation run.
type options struct {
	workload, topology, conf, mode string
	outDir, result, resultFolder   string
	gpus                           firstInt
	gpusPerServer, nicsPerServer   int
	nvlink, nic                    float32Flag
	nicType, gpuType               string
	dpo, epo, tpo, ppo             float32Flag
	visual                         int
	lang                           string
	busbw                          string
	logLevel                       string
	allowShortWorkload             bool

	set map[string]bool // canonical names of the flags given explicitly
}

// firstInt is an int flag that may be repeated; the first value wins, as in SimAI_analytical's -g.
type firstInt struct {
	v   int
	set bool
}

func (f *firstInt) String() string { return strconv.Itoa(f.v) }
func (f *firstInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("expected an integer")
	}
	if !f.set {
		f.v, f.set = v, true
	}
	return nil
}

// float32Flag parses straight to single precision, as SimAI's stof does; parsing to double
// first and rounding again can differ in the last bit.
type float32Flag float32

func (f *float32Flag) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 32) }
func (f *float32Flag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("expected a finite number")
	}
	*f = float32Flag(v)
	return nil
}

// flagSpec documents one flag and its aliases; the first name is the canonical one.
type flagSpec struct {
	names []string
	arg   string // placeholder for -h; "" for a boolean
	usage string
	def   string
}

// group is a heading in -h.
type group struct {
	title string
	flags []flagSpec
}

func newFlagSet(o *options) (*flag.FlagSet, []group) {
	fs := flag.NewFlagSet("simd", flag.ContinueOnError)
	*o = options{mode: "analytical", outDir: "results", ppo: 1, logLevel: "info", lang: "en"}
	groups := []group{
		{"Inputs", []flagSpec{
			{[]string{"w", "workload"}, "FILE", "workload file (SimAI/AICB format); example:NAME runs a shipped example (microAllReduce.txt, workload_analytical.txt)", "the shipped microAllReduce.txt"},
			{[]string{"n"}, "FILE", "topology file (SimAI format); gives the GPU count, GPUs per server, GPU type and NVLink/NIC bandwidths unless flags override them", "a Spectrum-X fabric for the GPU count"},
			{[]string{"c"}, "FILE", "SimAI.conf (network settings of the event mode; checked in every mode)", "the shipped SimAI.conf"},
			{[]string{"busbw"}, "FILE", "busbw.yaml of fixed bus bandwidths (SimAI's historical input) instead of the computed ones", ""},
			{[]string{"allow-short-workload"}, "", "accept a workload whose count line promises more records than the file holds, using the records it holds", ""},
		}},
		{"Mode and outputs", []flagSpec{
			{[]string{"mode"}, "MODE", "analytical (SimAI_analytical's closed-form model); event and compare are not built yet", "analytical"},
			{[]string{"o"}, "DIR", "output folder", "results"},
			{[]string{"r", "result"}, "PREFIX", "output prefix: the report is DIR/PREFIXEndToEnd.csv", "derived from the workload file name, as SimAI_analytical"},
			{[]string{"r_f", "result_folder"}, "FOLDER", "folder inside DIR for the outputs", ""},
			{[]string{"v", "visual"}, "N", "N ≠ 0 also writes PREFIXchart.html, a pie chart of the time breakdown", "0"},
			{[]string{"l", "lang"}, "LANG", "language of the chart: en or ja", "en"},
			{[]string{"log-level"}, "LEVEL", "debug, info, warn or error (log lines go to stderr)", "info"},
		}},
		{"Cluster (SimAI_analytical's flags, same meaning)", []flagSpec{
			{[]string{"g", "gpus"}, "N", "number of GPUs (if repeated, the first counts)", "the topology's, else the workload's all_gpus"},
			{[]string{"g_p_s", "gpus-per-server"}, "N", "GPUs per server (scale-up domain)", "the topology's, else 8"},
			{[]string{"nv", "nvlink"}, "GBPS", "NVLink bus bandwidth per GPU, GB/s", "the topology's NVLink rate / 8, else from -g_type"},
			{[]string{"nic", "nic_busbw"}, "GBPS", "bandwidth of one NIC, GB/s", "the topology's NIC rate / 8, else from -nic_t"},
			{[]string{"n_p_s", "nic_per_server"}, "N", "NICs per server", "the topology's, else GPUs per server"},
			{[]string{"nic_t", "nic_type"}, "TYPE", "cx6 (23.5 GB/s), cx7 or bf3 (48.5 GB/s); used when -nic is not given", "cx7 without a NIC in the topology"},
			{[]string{"g_type", "gpu_type"}, "TYPE", "A100, A800, H100, H800 or H20; gives -nv (240, 160, 370.8, 164.8, 370.8) when -nv is not given", "the topology's"},
		}},
		{"Overlap ratios (share of a group's communication hidden behind compute, 0 to 1)", []flagSpec{
			{[]string{"dp_o", "dp_overlap"}, "R", "DP and DP_EP", "0"},
			{[]string{"ep_o", "ep_overlap"}, "R", "EP", "0"},
			{[]string{"tp_o", "tp_overlap"}, "R", "TP", "0"},
			{[]string{"pp_o", "pp_overlap"}, "R", "PP", "1"},
		}},
	}
	bind := func(names []string, f func(name string)) {
		for _, n := range names {
			f(n)
		}
	}
	for _, g := range groups {
		for _, s := range g.flags {
			names := s.names
			switch names[0] {
			case "w":
				bind(names, func(n string) { fs.StringVar(&o.workload, n, "", s.usage) })
			case "n":
				bind(names, func(n string) { fs.StringVar(&o.topology, n, "", s.usage) })
			case "c":
				bind(names, func(n string) { fs.StringVar(&o.conf, n, "", s.usage) })
			case "busbw":
				bind(names, func(n string) { fs.StringVar(&o.busbw, n, "", s.usage) })
			case "allow-short-workload":
				bind(names, func(n string) { fs.BoolVar(&o.allowShortWorkload, n, false, s.usage) })
			case "mode":
				bind(names, func(n string) { fs.StringVar(&o.mode, n, o.mode, s.usage) })
			case "o":
				bind(names, func(n string) { fs.StringVar(&o.outDir, n, o.outDir, s.usage) })
			case "r":
				bind(names, func(n string) { fs.StringVar(&o.result, n, "", s.usage) })
			case "r_f":
				bind(names, func(n string) { fs.StringVar(&o.resultFolder, n, "", s.usage) })
			case "v":
				bind(names, func(n string) { fs.IntVar(&o.visual, n, 0, s.usage) })
			case "l":
				bind(names, func(n string) { fs.StringVar(&o.lang, n, o.lang, s.usage) })
			case "log-level":
				bind(names, func(n string) { fs.StringVar(&o.logLevel, n, o.logLevel, s.usage) })
			case "g":
				bind(names, func(n string) { fs.Var(&o.gpus, n, s.usage) })
			case "g_p_s":
				bind(names, func(n string) { fs.IntVar(&o.gpusPerServer, n, 0, s.usage) })
			case "nv":
				bind(names, func(n string) { fs.Var(&o.nvlink, n, s.usage) })
			case "nic":
				bind(names, func(n string) { fs.Var(&o.nic, n, s.usage) })
			case "n_p_s":
				bind(names, func(n string) { fs.IntVar(&o.nicsPerServer, n, 0, s.usage) })
			case "nic_t":
				bind(names, func(n string) { fs.StringVar(&o.nicType, n, "", s.usage) })
			case "g_type":
				bind(names, func(n string) { fs.StringVar(&o.gpuType, n, "", s.usage) })
			case "dp_o":
				bind(names, func(n string) { fs.Var(&o.dpo, n, s.usage) })
			case "ep_o":
				bind(names, func(n string) { fs.Var(&o.epo, n, s.usage) })
			case "tp_o":
				bind(names, func(n string) { fs.Var(&o.tpo, n, s.usage) })
			case "pp_o":
				bind(names, func(n string) { fs.Var(&o.ppo, n, s.usage) })
			default:
				panic("flag without a binding: " + names[0])
			}
		}
	}
	return fs, groups
}

// usage writes -h: every flag with its aliases, meaning and default.
func usage(w io.Writer, groups []group) {
	fmt.Fprint(w, `simd — a fast network simulator for AI training clusters that reads SimAI's files.

Usage:
  simd [-w WORKLOAD] [-n TOPO] [-c SimAI.conf] [-mode analytical] [-o DIR] [-r PREFIX] [flags]

With no flags simd runs a shipped example and prints where the results are.
Flags take one dash or two (-g or --gpus). Exit status: 0 success, 2 bad input or usage, 1 other failures.
`)
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, s := range g.flags {
			var names []string
			for i, n := range s.names {
				dash := "-"
				if i > 0 {
					dash = "--" // SimAI's long names
				}
				names = append(names, dash+n)
			}
			head := strings.Join(names, ", ")
			if s.arg != "" {
				head += " " + s.arg
			}
			fmt.Fprintf(w, "  %s\n      %s", head, s.usage)
			if s.def != "" {
				fmt.Fprintf(w, " (default: %s)", s.def)
			}
			fmt.Fprintln(w)
		}
	}
}

// parseFlags reads the command line. flag.ErrHelp is returned for -h.
func parseFlags(args []string) (*options, error) {
	o := new(options)
	fs, groups := newFlagSet(o)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (simd -h lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (simd -h lists the flags)", fs.Arg(0))
	}
	canonical := map[string]string{}
	for _, g := range groups {
		for _, s := range g.flags {
			for _, n := range s.names {
				canonical[n] = s.names[0]
			}
		}
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[canonical[f.Name]] = true })
	return o, nil
}

// helpText is the -h output.
func helpText() string {
	var b strings.Builder
	_, groups := newFlagSet(new(options))
	usage(&b, groups)
	return b.String()
}
