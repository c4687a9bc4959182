package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"simd/ccl"
	"simd/ccl/algo"
	"simd/ccl/nccl"
	"simd/cmd/simd/flagtable"
	"simd/configs/atomicfile"
)

// simd dag decomposes one collective into its flow DAG with a chosen algorithm, prints its
// size, critical path and closed-form time, optionally proves it correct (-check) and writes it
// as CSV (-o). The study itself, from the flags' values to the text, is algo.StudyRequest's.

type dagOptions struct {
	algo.StudyRequest
	out string
}

func dagFlagSet(o *dagOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("simd dag", flag.ContinueOnError)
	fs.StringVar(&o.Op, "op", "allreduce", "the collective `OP`: allreduce, allgather, reducescatter or alltoall")
	fs.StringVar(&o.Algorithm, "algo", "ring", "the algorithm `ALGO`: ring, tree, nvls, nvlstree, pxn, multiring, rhd, direct or pairwise; auto lets the selector choose (see -policy)")
	fs.StringVar(&o.Policy, "policy", "simccl", "with -algo auto, the selector's `POLICY`: simccl (SimAI's rule) or nccl (NCCL's tuning model)")
	fs.StringVar(&o.Group, "group", "TP", "with -algo auto: the group `KIND`, TP, DP, EP, DP_EP or PP")
	fs.StringVar(&o.GPUType, "gpu", "H100", "with -algo auto: the GPU `TYPE`")
	fs.BoolVar(&o.NVLS, "nvls", os.Getenv("AS_NVLS_ENABLE") == "1", "with -algo auto: NVLS enabled (default from AS_NVLS_ENABLE=1)")
	fs.BoolVar(&o.PXN, "pxn", os.Getenv("AS_PXN_ENABLE") == "1", "with -algo auto: PXN enabled (default from AS_PXN_ENABLE=1)")
	fs.Var(flagtable.NewValue(&o.Params.PXN, nccl.ParsePXNVariant), "pxn-variant", "`VARIANT`: "+pxnVariantUsage+"; applies to -algo pxn and -algo auto")
	fs.StringVar(&o.Force, "force", "", "with -algo auto: algorithms forced per group kind, a `LIST` such as TP=nvls,DP=rhd")
	fs.IntVar(&o.Ranks, "n", 8, "`N` ranks in the group (GPUs 0..N-1)")
	fs.IntVar(&o.GPUsPerServer, "gps", 8, "`G` GPUs per server")
	fs.StringVar(&o.Size, "size", "64MiB", "`BYTES` of the whole buffer (all-gather: the gathered output; all-to-all: what each rank sends); a number with an optional K, M, G (×1000) or KiB, MiB, GiB (×1024) suffix")
	fs.StringVar(&o.ChunkBytes, "chunk-bytes", "simccl", "`RULE`: "+chunkBytesUsage)
	fs.IntVar(&o.Params.Chunks, "chunks", 0, "`N` chunks per channel for tree, nvls and nvlstree (0: the algorithm's default)")
	fs.StringVar(&o.out, "o", "", "write the DAG as CSV to the `FILE` ("+ccl.CSVHeader+")")
	fs.BoolVar(&o.Check, "check", false, "prove the DAG correct: every rank ends with what the collective promises, nothing sent before its parents arrive, no bytes invented or lost")
	fs.Float64Var(&o.Machine.NetworkGBps, "bw", 50, "network bandwidth per GPU for the closed-form time, `GBPS` (GB/s)")
	fs.Float64Var(&o.Machine.NVLinkGBps, "nvbw", 360, "NVLink bandwidth for the closed-form time, `GBPS` (GB/s): of a GPU's port into the NVSwitch with -fabric switch, of each GPU-to-GPU link with -fabric mesh")
	fs.Float64Var(&o.Machine.AlphaUs, "alpha", 0, "latency per message for the closed-form time, `US` (µs)")
	fs.StringVar(&o.Fabric, "fabric", "switch", "how a server's GPUs are wired for the closed form, `WIRING`: switch (NVSwitch) or mesh (a link per pair)")
	return fs
}

const dagAbout = `simd dag decomposes one collective into point-to-point flows with a chosen algorithm (or the
one the selector picks) and prints the DAG's size, its critical path and the closed-form time;
-check proves it correct and -o writes it as CSV.`

func runDAG(args []string, stdout, stderr io.Writer) int {
	var o dagOptions
	fs := dagFlagSet(&o)
	err := parseArgs(fs, args, " (simd dag -h lists the flags)", ": every value follows its flag (simd dag -h lists the flags)")
	if err == nil {
		err = o.run(stdout)
	}
	return commandStatus("simd dag", err, func(w io.Writer) {
		flagtable.Help(w, []string{"simd dag [-op OP] [-algo ALGO] [-n N] [-gps G] [-size BYTES] [-check] [-o FILE]"}, dagAbout, fs)
	}, stdout, stderr)
}

func (o *dagOptions) run(w io.Writer) error {
	st, err := o.StudyRequest.Run(w)
	if err != nil || o.out == "" {
		return err
	}
	if err := atomicfile.Write(o.out, func(f *os.File) error { return ccl.WriteCSV(f, st.DAG) }); err != nil {
		return err
	}
	fmt.Fprintf(w, "flows written to %s\n", o.out)
	return nil
}
