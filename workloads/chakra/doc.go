// Package chakra reads, checks, writes and runs MLCommons Chakra execution traces (.et), the
// workload format of ASTRA-sim 2.x: one file per rank, <prefix>.<rank>.et.
//
//   - decode.go: the wire format, decoded by hand with protowire (schema ChakraProtoMsg of
//     mlcommons/chakra's et_def.proto): records varint32(length) ‖ message, a GlobalMetadata
//     first (absent in legacy traces of 2023), then Nodes, up to the end or a record of length
//     0; gzip detected by its magic; packed and unpacked repeated scalars; unknown fields
//     skipped; every member of AttributeProto's value oneof.
//   - write.go: Write, the same format, for tests and for generating traces.
//   - trace.go, compile.go: Load finds the rank files, reads the communicator groups (ASTRA-sim's
//     JSON file, or PyTorch's process groups in a METADATA_NODE) and checks everything a run
//     relies on before it starts — dependencies inside the file and acyclic, SEND/RECV pairs,
//     the attributes each node type needs (read by name with ASTRA-sim's FeederV3 integer
//     conversions), supported collectives, pg_name, group members issuing the same collectives
//     in the same order — each error naming the file, rank, node id and field.
//   - exec.go: the Executor runs a checked trace on an engine.Scheduler with ASTRA-sim's issue
//     rules, through a Network this package defines (collectives on explicit ranks,
//     point-to-point sends); workloads/sim implements it over the event or analytical model.
//
// The package knows ranks and nodes, never links.
package chakra
