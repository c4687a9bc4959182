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
// probability in [0,1]. Parse reads such a file (ReadFile a file by its path) and reports every bad input as a *lex.Error
// naming the file, the line and the field; Write writes a Topology back in exactly the layout
// the generator uses, so a generated file survives Parse and Write byte for byte.
//
// # Generators
//
// SimAI's generator, gen_Topo_Template.py, builds five wirings (see Wiring for the numbering,
// link order and counts of each):
//
//	Wiring                        generator function             template / flags                 generator type
//	WiringRailSingleToR           Rail_Opti_SingleToR            Spectrum-X, --ro                 RailOptimizedSingleToR
//	WiringRailDualToRSinglePlane  Rail_Opti_DualToR_SinglePlane  AlibabaHPN, --ro --dt            RailOptimizedDualToRSinglePlane
//	WiringRailDualToRDualPlane    Rail_Opti_DualToR_DualPlane    AlibabaHPN --dp, --ro --dt --dp  RailOptimizedDualToRDualPlane
//	WiringNonRailSingleToR        No_Rail_Opti_SingleToR         DCN+, no --ro                    NonRailOptimizedSingleToR
//	WiringNonRailDualToR          No_Rail_Opti_DualToR           DCN+ --dt, --dt                  NonRailOptimizedDualToR
//
// Each generator type builds its wiring from the generator's parameters (SpectrumXDefaults,
// AlibabaHPNDefaults and DCNPlusDefaults fill them in). GeneratorOptions is the generator's
// whole command line: NewGeneratorOptions applies a template's defaults, and Generate resolves
// the template, picks the wiring, and returns the topology with the generator's file name, its
// console lines and a warning when a given -asn differs from the ASW count the fabric needs, or the error the generator would raise — refusing, before
// anything is written, what it would choke on. For the generator's flags the result is the
// generator's file byte for byte; GenerateFile writes it into a folder and prints the console
// lines, as `simd topo` (this on the command line) and simd sweep's generated topologies do. DefaultFabric is the
// topology simd uses when the user gives none.
//
// Extensions, off by default so that SimAI's files stay identical, go beyond the generator:
// several pods under a core layer (Pods, Cores, CoreRate: 16,384 to 131,072 GPUs and more), an
// oversubscription ratio at the ASWs (Oversubscription), and servers whose GPUs are a full mesh
// of point-to-point links instead of NVSwitches (Mesh). Any link rate works ("800Gbps",
// "1.6Tbps": rates are strings copied verbatim and parsed with configs/units), and any number
// of NVSwitches per server. Extensions documents their numbering, link order and counts.
package topo
