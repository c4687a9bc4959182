// Package topo is simd's model of a cluster's wiring: which nodes are GPUs, NVSwitches and
// network switches, and which point-to-point links join them, with each link's rate, delay and
// loss probability.
//
// It reads and writes the SimAI topology file (the format SimAI's ns-3 frontend reads and its
// gen_Topo_Template.py generator writes), builds the same wirings the generator builds, and
// derives from a topology the per-server bandwidth figures SimAI's analytical backend takes on
// its command line. Routing over a topology will live here as well. The package simulates
// nothing: it only describes the network.
//
// # The SimAI topology file
//
// The file is a stream of whitespace-separated tokens; line breaks carry no meaning:
//
//	<node_num> <gpus_per_server> <nvswitch_num> <switch_num> <link_num> <gpu_type>
//	<id> ... (nvswitch_num + switch_num ids: first the NVSwitches, then the network switches)
//	<src> <dst> <rate> <delay> <error_rate>   (link_num times)
//
// Every node id that line 2 does not list is a GPU. Rates are ns-3 DataRate strings
// ("400Gbps"), delays ns-3 Time strings ("0.0005ms"), and the error rate is a packet loss
// probability in [0,1]. Parse reads such a file and reports every bad input as a *lex.Error
// naming the file, the line and the field; Write writes a Topology back in exactly the layout
// the generator uses, so a generated file survives Parse and Write byte for byte.
//
// # Generators
//
// RailOptimizedSingleToR builds the rail-optimised single-ToR wiring (SimAI's
// Rail_Opti_SingleToR, the one behind the Spectrum-X template); DefaultFabric is the topology
// simd uses when the user gives none.
package topo
