package nccl

// SimAI's per-flow start latency (network_frontend/ns3/entry.h, SendFlow; simai-formats.md §7.3
// and ccl-facts.md §1.6): NCCL 2.30's base plus hardware latency of the flow's algorithm and
// protocol, from the NVLink table when sender and receiver share a server and from the network
// table otherwise; a zero entry, or an undefined algorithm or protocol (SimCCL's basic version
// always reports ProtoUndef), falls back to 6000.
//
// The table's unit is nanoseconds (7200 is Ring/LL's 6.6 µs base + 0.6 µs NVLink). SimAI
// multiplies by 1000 believing it converts ns to ps, but ns-3's Time(int) counts ns, so SimAI in
// effect waits 7.2 ms; simd applies the table in nanoseconds, as meant
// (docs/differences-from-simai.md).

// sendLatNVLink and sendLatNet are indexed by Algorithm (TREE … PAT) and Protocol (LL, LL128,
// Simple), in ns.
var sendLatNVLink = [7][3]int64{
	AlgoTree:          {7400, 15250, 12400},
	AlgoRing:          {7200, 15900, 11800},
	AlgoCollNetDirect: {0, 0, 3700},
	AlgoCollNetChain:  {0, 0, 2800},
	AlgoNVLS:          {0, 0, 25000},
	AlgoNVLSTree:      {0, 0, 25000},
	AlgoPAT:           {0, 0, 12000},
}

var sendLatNet = [7][3]int64{
	AlgoTree:          {11800, 22500, 22400},
	AlgoRing:          {9300, 18000, 22400},
	AlgoCollNetDirect: {0, 0, 31000},
	AlgoCollNetChain:  {0, 0, 30000},
	AlgoNVLS:          {0, 0, 18000},
	AlgoNVLSTree:      {0, 0, 20900},
	AlgoPAT:           {0, 0, 22000},
}

// DefaultSendLatencyNs is SimAI's fallback start latency, 6000 ns.
const DefaultSendLatencyNs = 6000

// SendLatencyNs is SimAI's start latency of a flow of algorithm a and protocol p, in ns, for a
// flow inside one server (sameServer) or between servers.
func SendLatencyNs(a Algorithm, p Protocol, sameServer bool) int64 {
	if a < 0 || int(a) >= len(sendLatNVLink) || p < 0 || int(p) >= 3 {
		return DefaultSendLatencyNs
	}
	v := sendLatNet[a][p]
	if sameServer {
		v = sendLatNVLink[a][p]
	}
	if v <= 0 {
		return DefaultSendLatencyNs
	}
	return v
}
