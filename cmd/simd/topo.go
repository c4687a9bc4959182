package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"simd/cmd/simd/flagtable"
	"simd/topo"
	"simd/topo/route"
	"simd/workloads/sim"
)

// simd topo writes a SimAI topology file the way SimAI's gen_Topo_Template.py does: the same
// flags with the same defaults and template overrides, the same file name and bytes, the same
// console lines; plus simd's additions (multi-pod, oversubscription, meshed servers), which are
// off by default. The generator itself, with the file it writes and the lines it prints
// (GeneratorOptions.GenerateFile), lives in package topo; this file is only its command line.

// topoCommand is a parsed simd topo command line.
type topoCommand struct {
	gen    topo.GeneratorOptions // the template's defaults with the given flags applied
	outDir string
	info   route.Info // set when -info asks to describe an existing file instead
	given  []string   // the flags given, by canonical name
}

// topoRaw holds the values of simd topo's flags: the generator's options, one field per flag
// (see topo.GeneratorOptions), and the flags that are not options.
type topoRaw struct {
	gen                 topo.GeneratorOptions
	outDir, info, paths string
	pathLimit           int
}

// newTopoFlagSet defines simd topo's flags on a new flag set, storing the values in r. The
// generator's options keep the values r holds until their flags are given; -o and -path-limit
// start at their defaults.
func newTopoFlagSet(r *topoRaw) (*flag.FlagSet, []flagtable.Group) {
	r.outDir, r.pathLimit = ".", 16
	o := &r.gen
	fs := flag.NewFlagSet("simd topo", flag.ContinueOnError)
	val := func(v flag.Value) func(string, string) { return func(n, u string) { fs.Var(v, n, u) } }
	str := func(p *string) func(string, string) { return val(flagtable.Text(p)) }
	num := func(p *int) func(string, string) { return val(flagtable.Decimal(p)) }
	sw := func(p *bool) func(string, string) { return val(flagtable.Switch(p)) }
	groups := []flagtable.Group{
		{Title: "Structure", Flags: []flagtable.Spec{
			{Names: []string{"-topo", "--topology"}, Arg: "NAME",
				Usage: "template: Spectrum-X (rail-optimised single ToR), AlibabaHPN (rail-optimised dual ToR; dual plane with --dp) or DCN+ (not rail-optimised; dual ToR with --dt). " +
					"Case-sensitive; any other value is no template. A template fixes the structure flags (only AlibabaHPN takes --dp, only DCN+ takes --dt) and changes some defaults, as listed with each flag",
				Default: "none", Define: str(&o.Topology)},
			{Names: []string{"--ro"}, Usage: "rail-optimised: GPU i's NIC goes to the ASW of rail i mod gps; without it (and without a template) the fabric is not rail-optimised", Default: "off", Define: sw(&o.RailOptimized)},
			{Names: []string{"--dt"}, Usage: "dual ToR: two NICs per GPU, to an A-side and a B-side ASW", Default: "off", Define: sw(&o.DualToR)},
			{Names: []string{"--dp"}, Usage: "dual plane: A-side ASWs reach only the first half of the PSWs, B-side ASWs only the rest (needs --ro --dt, or -topo AlibabaHPN)", Default: "off", Define: sw(&o.DualPlane)},
			{Names: []string{"-g", "--gpu"}, Arg: "N", Usage: "number of GPUs, a multiple of -gps", Default: "32; Spectrum-X: 4096, AlibabaHPN: 15360, DCN+: 512", Define: num(&o.GPUs)},
			{Names: []string{"-er", "--error_rate"}, Arg: "P", Usage: "packet loss probability written into every link", Default: "0", Define: str(&o.ErrorRate)},
		}},
		{Title: "Servers", Flags: []flagtable.Spec{
			{Names: []string{"-gps", "--gpu_per_server"}, Arg: "N", Usage: "GPUs per server", Default: "8", Define: num(&o.GPUsPerServer)},
			{Names: []string{"-gt", "--gpu_type"}, Arg: "TYPE", Usage: "GPU type, written into the header and the file name", Default: "H100", Define: str(&o.GPUType)},
			{Names: []string{"-nsps", "--nv_switch_per_server"}, Arg: "N", Usage: "NVSwitches per server (ignored with --mesh)", Default: "1", Define: num(&o.NVSwitchesPerServer)},
			{Names: []string{"-nvbw", "--nvlink_bw"}, Arg: "RATE", Usage: "GPU–NVSwitch link rate; with --mesh the rate of each GPU–GPU link", Default: "2880Gbps", Define: str(&o.NVLinkRate)},
			{Names: []string{"-nl", "--nv_latency"}, Arg: "TIME", Usage: "GPU–NVSwitch (or GPU–GPU) link delay", Default: "0.000025ms", Define: str(&o.NVLinkDelay)},
			{Names: []string{"-l", "--latency"}, Arg: "TIME", Usage: "delay of the GPU–ASW, ASW–PSW and PSW–core links", Default: "0.0005ms", Define: str(&o.NICDelay)},
		}},
		{Title: "Segments", Flags: []flagtable.Spec{
			{Names: []string{"-bw", "--bandwidth"}, Arg: "RATE", Usage: "GPU–ASW (NIC) rate, also written into the file name", Default: "400Gbps; AlibabaHPN, DCN+ --dt: 200Gbps", Define: str(&o.NICRate)},
			{Names: []string{"-asn", "--asw_switch_num"}, Arg: "N", Usage: "ASW count: it follows from -g, -gps, -npa and the wiring, so the file always has the count the fabric needs; an -asn that differs gets a warning on stderr saying why (SimAI's generator defaults -asn to 8 and warns even then)", Default: "the count the fabric needs", Define: num(&o.ASWs)},
			{Names: []string{"-npa", "--nics_per_aswitch"}, Arg: "N", Usage: "NICs per ASW: a segment holds npa·gps GPUs rail-optimised, npa otherwise", Default: "64; AlibabaHPN, DCN+ --dt: 128", Define: num(&o.NICsPerASW)},
		}},
		{Title: "Pod", Flags: []flagtable.Spec{
			{Names: []string{"-psn", "--psw_switch_num"}, Arg: "N", Usage: "PSW count (per pod)", Default: "64; AlibabaHPN: 120, DCN+: 8", Define: num(&o.PSWs)},
			{Names: []string{"-apbw", "--ap_bandwidth"}, Arg: "RATE", Usage: "ASW–PSW link rate", Default: "400Gbps", Define: str(&o.ASWPSWRate)},
			{Names: []string{"-app", "--asw_per_psw"}, Arg: "N", Usage: "PSW ports toward ASWs: one pod holds at most app/gps segments rail-optimised, app/(ASWs per segment) otherwise", Default: "64; AlibabaHPN: 240 (--dp: 120), DCN+: 8", Define: num(&o.ASWsPerPSW)},
		}},
		{Title: "simd's additions (off by default: the file is then the generator's)", Flags: []flagtable.Spec{
			{Names: []string{"-pods"}, Arg: "N|auto", Usage: "split the GPUs into N pods of equal size, each wired as above, joined by a core layer (PSW k of every pod to every core of group k); auto: as few pods as the capacity check allows", Default: "1", Define: val(flagtable.NewValue(&o.Pods, topo.ParsePods))},
			{Names: []string{"-csn", "--core_switch_num"}, Arg: "N", Usage: "core switches with more than one pod, a multiple of the PSWs of a pod; 0: just enough for each PSW to send up what its ASWs send it", Default: "0", Define: num(&o.Cores)},
			{Names: []string{"-pcbw", "--pc_bandwidth"}, Arg: "RATE", Usage: "PSW–core link rate", Default: "the -apbw rate", Define: str(&o.CoreRate)},
			{Names: []string{"-os", "--oversubscription"}, Arg: "R", Usage: "divide each ASW's uplink capacity by R (R times the generator's downlink/uplink ratio) by using PSWs/R PSWs per plane, each still wired to every ASW; PSWs/R must be whole", Default: "1", Define: val(flagtable.NewValue(&o.Oversubscription, topo.ParseOversubscription))},
			{Names: []string{"--mesh"}, Usage: "servers without NVSwitch: every pair of a server's GPUs gets one link at -nvbw and -nl (AMD MI300X-style)", Default: "off", Define: sw(&o.Mesh)},
		}},
		{Title: "Output", Flags: []flagtable.Spec{
			{Names: []string{"-o"}, Arg: "DIR", Usage: "folder to write the file into, under the generator's name", Default: "the current folder", Define: str(&r.outDir)},
		}},
		{Title: "Inspecting a topology file (instead of generating one)", Flags: []flagtable.Spec{
			{Names: []string{"-info"}, Arg: "FILE", Usage: "print the topology's node counts by kind, a GPU's NIC (its ports — 2 on a dual-ToR fabric, each to a different ToR, else 1 — with the rate of a port and of the NIC), link counts by rate, switch tiers with their oversubscription, and bisection bandwidth", Default: "none", Define: str(&r.info)},
			{Names: []string{"-paths"}, Arg: "SRC,DST", Usage: "with -info: also list the equal-cost paths between GPUs SRC and DST", Default: "none", Define: str(&r.paths)},
			{Names: []string{"-path-limit"}, Arg: "N", Usage: "with -info -paths: list at most N paths", Default: "16", Define: num(&r.pathLimit)},
		}},
	}
	flagtable.Define(fs, groups)
	return fs, groups
}

// parseTopoFlags reads simd topo's command line; flag.ErrHelp is returned for -h. The template's
// defaults depend on -topo, --ro, --dt and --dp, which may come after the flags they change, so
// the line is read twice: once for those four, then again over the template's defaults.
func parseTopoFlags(args []string) (*topoCommand, error) {
	var first topoRaw
	if _, _, err := parseTopoArgs(args, &first); err != nil {
		return nil, err
	}
	o := &first.gen
	r := topoRaw{gen: topo.NewGeneratorOptions(o.Topology, o.RailOptimized, o.DualToR, o.DualPlane)}
	fs, groups, err := parseTopoArgs(args, &r)
	if err != nil {
		return nil, err
	}
	c := &topoCommand{gen: r.gen, outDir: r.outDir}
	for _, s := range flagtable.Given(fs, groups) {
		c.given = append(c.given, s.Names[0])
	}
	if r.info != "" || r.paths != "" {
		req, err := newTopoInfoRequest(r.info, r.paths, r.pathLimit, c.given)
		if err != nil {
			return nil, err
		}
		c.info = req
	}
	return c, nil
}

// parseTopoArgs reads args into r, over the values r holds.
func parseTopoArgs(args []string, r *topoRaw) (*flag.FlagSet, []flagtable.Group, error) {
	fs, groups := newTopoFlagSet(r)
	err := parseArgs(fs, args, " (simd topo -h lists the flags)", " (simd topo -h lists the flags)")
	return fs, groups, err
}

// runTopo is simd topo: it returns the exit status.
func runTopo(args []string, stdout, stderr io.Writer) int {
	c, err := parseTopoFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, topoHelpText())
		return exitOK
	}
	if err == nil {
		if c.info.File != "" {
			err = c.info.WriteText(stdout)
		} else {
			_, err = c.gen.GenerateFile(c.outDir, stdout, stderr)
		}
	}
	return topoStatus(err, c == nil, stderr)
}

// topoStatus reports simd topo's error on stderr and returns the exit status: 2 for bad input
// or flags that could not be read (unparsed), 1 for other failures.
func topoStatus(err error, unparsed bool, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "simd topo: %s\n", strings.TrimPrefix(err.Error(), "topo: "))
	var ie sim.InputError
	if errors.As(err, &ie) || unparsed {
		return exitBadInput
	}
	return exitFailure
}

// topoHelpText is simd topo -h: every flag with its aliases, meaning and default.
func topoHelpText() string {
	var b strings.Builder
	flagtable.WriteUsage(&b, "simd topo [-topo Spectrum-X|AlibabaHPN|DCN+] [--ro] [--dt] [--dp] [-g N] [flags] [-o DIR]",
		"simd topo -info FILE [-paths SRC,DST [-path-limit N]]")
	b.WriteString(`
simd topo writes a SimAI topology file, as SimAI's gen_Topo_Template.py does: the flags, their
defaults, the file name and the file's bytes are the generator's. The file is written to DIR;
the generator's lines go to stdout and a warning about -asn to stderr. simd topo -info describes
an existing file instead. Flags take one dash or two. Rates and delays are ns-3 strings
(400Gbps, 1.6Tbps, 0.0005ms) copied into the file verbatim. Exit status: 0 success; 2 bad flags
or a topology the generator refuses (nothing is written); 1 other failures.
`)
	var r topoRaw
	_, groups := newTopoFlagSet(&r)
	flagtable.WriteGroups(&b, groups)
	b.WriteString("\n")
	flagtable.WriteFlag(&b, "-h, --help", "", "print this help", "")
	return b.String()
}
