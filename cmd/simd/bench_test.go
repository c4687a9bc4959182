package main

import (
	"io"
	"testing"
)

// BenchmarkAnalyticalCanonical is the whole analytical run of SimAI's canonical example
// (workload_analytical.txt, 1789 layers, 9216 GPUs): parsing, the default fabric, the
// compute-only iteration, pricing every collective, writing EndToEnd.csv.
//
//	go test -run '^$' -bench AnalyticalCanonical -benchmem ./cmd/simd
func BenchmarkAnalyticalCanonical(b *testing.B) {
	dir := b.TempDir()
	args := []string{"-mode", "analytical", "-w", "example:workload_analytical.txt", "-g", "9216",
		"-nv", "360", "-nic", "48.5", "-n_p_s", "8", "-g_p_s", "8", "-r", "example-", "-o", dir}
	for b.Loop() {
		if code := run(args, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
