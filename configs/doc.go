// Package configs reads SimAI's configuration files into typed Go structs, applying SimAI's own
// defaults and units, and carries the default files SimAI ships, embedded in the binary.
//
// It holds no simulation logic: nothing here decides how a value is used, only what the file
// says and what SimAI would have assumed had the file said nothing. Bad input is reported as a
// *lex.Error naming the file, the line and the key or column, and saying what was expected.
//
// # Files
//
//   - SimAI.conf (ns-3 backend settings): SimAIConf, ParseSimAIConf, DefaultSimAIConf,
//     ShippedSimAIConf.
//   - Ratio tables nic_ratio.csv, nvlink_ratio.csv, ata_ratio.csv (analytical backend
//     efficiency factors): RatioTable, ParseRatioCSV, ShippedRatioTables.
//   - busbw.yaml (historical analytical bus bandwidths, accepted with -busbw): BusBW, ParseBusBW.
//   - Example workloads: ExampleWorkload, ExampleWorkloadNames.
//
// # Units inside the structs
//
//   - Rates: bits per second, float64 (ns-3 DataRate strings such as "50Mb/s" are converted with
//     units.ParseRate; the rate keys of the ECN maps are already integers in bit/s).
//   - Times: engine.Time picoseconds. SimAI.conf writes its intervals in microseconds; they are
//     converted exactly with units.FromMicroseconds.
//   - Sizes: bytes. BUFFER_SIZE is MB in the file (× 1024 × 1024); KMAX_MAP and KMIN_MAP values
//     are KB in the file (× 1000), as ns-3's switch MMU takes them.
//   - busbw.yaml bandwidths: GB/s as written (0 = null or not given).
//   - Ratio tables: the numbers as written; column 0 is a message size in bytes.
//   - Flags that SimAI reads as 0/1 integers: bool.
//   - File paths: strings, verbatim. SimAIConf.Raw also keeps every key's value tokens verbatim.
//
// # Provenance of the embedded files
//
// Copied byte for byte from public repositories:
//
//   - data/SimAI.conf: aliyun/SimAI @ cef83f9 : astra-sim-alibabacloud/inputs/config/SimAI.conf
//   - data/ratio/{nic,nvlink,ata}_ratio.csv: aliyun/SimAI @ cef83f9 : astra-sim-alibabacloud/inputs/ratio/
//   - examples/microAllReduce.txt, examples/workload_analytical.txt: aliyun/SimAI @ cef83f9 : example/
//   - testdata/busbw.yaml (tests only): aliyun/SimAI @ cef83f9 : example/busbw.yaml
//
// The meaning of every SimAI.conf key, its code default and the repository value are described
// in the project's SimAI format notes (simai-formats.md §4, taken from SimAI's
// network_frontend/ns3/common.h: ReadConf, SetConfig, SetupNetwork); the ratio tables in §5.2
// and busbw.yaml in §5.5.
package configs
