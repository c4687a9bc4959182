// Package workloads reads SimAI/AICB workload files and runs one training iteration of them.
//
// Parse reads the file format of simai-formats.md §2: a header line (parallelism policy and
// keys), a count line, then that many 12-token layer records (13 for HYBRID_CUSTOMIZED) in which
// line breaks do not matter. Plan turns a workload into the ordered steps SimAI's Workload state
// machine takes for its policy (§2.6): compute delays, blocking and non-blocking collectives, and
// waits. Runner executes a plan on the engine's clock against a Network — the only thing this
// package needs from a network model, so it never imports one — and measures compute, total and
// exposed communication per layer. With pipeline parallelism (PP > 1) in the event mode a
// Pipeline runs one Runner per stage on Megatron's 1F1B schedule (PipelineSchedule, StagePlan),
// with the sends between stages as point-to-point collectives (ccl.OpSend) through the same
// Network, and measures each stage's bubble and pipeline communication. The analytical report (SimAI's EndToEnd.csv, §5.4 and §6.1) is
// built from a run and a CostModel.
//
// workloads knows collectives, groups and layers, never links.
package workloads
