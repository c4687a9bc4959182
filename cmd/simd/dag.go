package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/ccl/nccl"
	"simd/configs/atomicfile"
	"simd/configs/units"
)

// simd dag decomposes one collective into its flow DAG with a chosen algorithm, prints its
// size, critical path and closed-form time, optionally proves it correct (-check) and writes it
// as CSV (-o).

type dagOptions struct {
	op, algorithm, size, out, fabric string
	n, gps, chunks                   int
	bw, nvbw, alpha                  float64
	check                            bool
	// For -algo auto: what the selector looks at.
	group, gpu, policy, force string
	nvls, pxn                 bool
	pxnVariant                nccl.PXNVariant
}

// params are the DAG parameters the flags give.
func (o *dagOptions) params() algo.Params {
	return algo.Params{Chunks: o.chunks, PXN: o.pxnVariant}
}

func dagFlagSet(o *dagOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("simd dag", flag.ContinueOnError)
	fs.StringVar(&o.op, "op", "allreduce", "the collective `OP`: allreduce, allgather, reducescatter or alltoall")
	fs.StringVar(&o.algorithm, "algo", "ring", "the algorithm `ALGO`: ring, tree, nvls, nvlstree, pxn, multiring, rhd, direct or pairwise; auto lets the selector choose (see -policy)")
	fs.StringVar(&o.policy, "policy", "simccl", "with -algo auto, the selector's `POLICY`: simccl (SimAI's rule) or nccl (NCCL's tuning model)")
	fs.StringVar(&o.group, "group", "TP", "with -algo auto: the group `KIND`, TP, DP, EP, DP_EP or PP")
	fs.StringVar(&o.gpu, "gpu", "H100", "with -algo auto: the GPU `TYPE`")
	fs.BoolVar(&o.nvls, "nvls", os.Getenv("AS_NVLS_ENABLE") == "1", "with -algo auto: NVLS enabled (default from AS_NVLS_ENABLE=1)")
	fs.BoolVar(&o.pxn, "pxn", os.Getenv("AS_PXN_ENABLE") == "1", "with -algo auto: PXN enabled (default from AS_PXN_ENABLE=1)")
	fs.Var(value[nccl.PXNVariant]{&o.pxnVariant, nccl.ParsePXNVariant}, "pxn-variant", "`VARIANT`: "+pxnVariantUsage+"; applies to -algo pxn and -algo auto")
	fs.StringVar(&o.force, "force", "", "with -algo auto: algorithms forced per group kind, a `LIST` such as TP=nvls,DP=rhd")
	fs.IntVar(&o.n, "n", 8, "`N` ranks in the group (GPUs 0..N-1)")
	fs.IntVar(&o.gps, "gps", 8, "`G` GPUs per server")
	fs.StringVar(&o.size, "size", "64MiB", "`BYTES` of the whole buffer (all-gather: the gathered output; all-to-all: what each rank sends); a number with an optional K, M, G (×1000) or KiB, MiB, GiB (×1024) suffix")
	fs.IntVar(&o.chunks, "chunks", 0, "`N` chunks per channel for tree, nvls and nvlstree (0: the algorithm's default)")
	fs.StringVar(&o.out, "o", "", "write the DAG as CSV to the `FILE` ("+ccl.CSVHeader+")")
	fs.BoolVar(&o.check, "check", false, "prove the DAG correct: every rank ends with what the collective promises, nothing sent before its parents arrive, no bytes invented or lost")
	fs.Float64Var(&o.bw, "bw", 50, "network bandwidth per GPU for the closed-form time, `GBPS` (GB/s)")
	fs.Float64Var(&o.nvbw, "nvbw", 360, "NVLink bandwidth for the closed-form time, `GBPS` (GB/s): of a GPU's port into the NVSwitch with -fabric switch, of each GPU-to-GPU link with -fabric mesh")
	fs.Float64Var(&o.alpha, "alpha", 0, "latency per message for the closed-form time, `US` (µs)")
	fs.StringVar(&o.fabric, "fabric", "switch", "how a server's GPUs are wired for the closed form, `WIRING`: switch (NVSwitch) or mesh (a link per pair)")
	return fs
}

const dagAbout = `simd dag decomposes one collective into point-to-point flows with a chosen algorithm (or the
one the selector picks) and prints the DAG's size, its critical path and the closed-form time;
-check proves it correct and -o writes it as CSV.`

func runDAG(args []string, stdout, stderr io.Writer) int {
	var o dagOptions
	fs := dagFlagSet(&o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(stdout, []string{"simd dag [-op OP] [-algo ALGO] [-n N] [-gps G] [-size BYTES] [-check] [-o FILE]"}, dagAbout, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "simd dag: %v (simd dag -h lists the flags)\n", err)
		return exitBadInput
	}
	return exitStatus("simd dag", o.run(stdout), stderr)
}

func (o *dagOptions) run(w io.Writer) error {
	op, ok := ccl.ParseOp(o.op)
	if !ok {
		return badInputf("-op %q: expected allreduce, allgather, reducescatter or alltoall", o.op)
	}
	bytes, err := units.ParseBytes(o.size)
	if err != nil {
		return badInputf("-size %q: %v", o.size, err)
	}
	switch {
	case o.n < 1 || o.n > 1<<16:
		return badInputf("-n %d: expected 1 to 65536 ranks", o.n)
	case o.gps < 1:
		return badInputf("-gps %d: expected at least 1", o.gps)
	case !(o.bw > 0) || !(o.nvbw > 0) || !(o.alpha >= 0):
		return badInputf("-bw and -nvbw must be positive and -alpha not negative")
	case o.fabric != "switch" && o.fabric != "mesh":
		return badInputf("-fabric %q: expected switch or mesh", o.fabric)
	}
	req := algo.GroupRequest(op, o.n, o.gps, bytes)
	a, err := o.choose(op, &req, w)
	if err != nil {
		return err
	}
	st, err := algo.NewStudy(a, req, o.params())
	if err != nil {
		return badInput(err)
	}
	if err := st.WriteText(w); err != nil {
		return err
	}
	if err := st.WriteTime(w, algo.Machine{NVLinkGBps: o.nvbw, NetworkGBps: o.bw, AlphaUs: o.alpha, Mesh: o.fabric == "mesh"}); err != nil {
		return err
	}
	if o.check {
		if err := st.Check(w); err != nil {
			return err
		}
	}
	if o.out != "" {
		if err := atomicfile.Write(o.out, func(f *os.File) error { return ccl.WriteCSV(f, st.DAG) }); err != nil {
			return err
		}
		fmt.Fprintf(w, "flows written to %s\n", o.out)
	}
	return nil
}

// choose is -algo, or with -algo auto the selector's choice (printed with its reason).
func (o *dagOptions) choose(op ccl.Op, req *ccl.Request, w io.Writer) (algo.Name, error) {
	if o.algorithm != "auto" {
		a, err := algo.ParseName(o.algorithm)
		if err != nil {
			return "", badInputf("-algo: %v", err)
		}
		return a, nil
	}
	force, err := algo.ParseForce(o.force)
	if err != nil {
		return "", badInputf("-force: %v", err)
	}
	sel, err := algo.NewSelector(algo.Options{Policy: algo.Policy(o.policy), GPUType: o.gpu, NVLS: o.nvls, PXN: o.pxn,
		PXNVariant: o.pxnVariant, Force: force})
	if err != nil {
		return "", badInputf("-policy: %v", err)
	}
	group, ok := ccl.ParseGroupKind(o.group)
	if !ok {
		return "", badInputf("-group %q: expected TP, DP, PP, EP or DP_EP", o.group)
	}
	c, err := sel.Choose(op, group, req)
	if err != nil {
		return "", badInput(err)
	}
	fmt.Fprintf(w, "selected %s (%s)\n", c.Algorithm, c.Reason)
	return c.Algorithm, nil
}
