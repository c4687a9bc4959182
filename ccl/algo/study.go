package algo

import (
	"fmt"
	"io"

	"simd/ccl"
	"simd/configs/lex"
	"simd/configs/units"
)

// Study is one collective decomposed into its flow DAG by one algorithm, as simd dag shows it:
// the DAG with its size and critical path, its closed-form time on a Machine, and the proof that
// it does what the collective promises.
type Study struct {
	Algorithm Name
	Request   ccl.Request
	Params    Params
	DAG       ccl.DAG
}

// GroupRequest is the request of op on the group of ranks 0 to n-1 of servers of perServer GPUs
// (the last one possibly partial), for bytes.
func GroupRequest(op ccl.Op, n, perServer int, bytes int64) ccl.Request {
	req := ccl.Request{Op: op, GPUsPerServer: perServer, TotalGPUs: ((n + perServer - 1) / perServer) * perServer, Bytes: bytes}
	for i := range n {
		req.Ranks = append(req.Ranks, int32(i))
	}
	return req
}

// NewStudy generates the DAG of algorithm a for req with parameters p (Generate). An error says
// which algorithm, operation and group refused.
func NewStudy(a Name, req ccl.Request, p Params) (*Study, error) {
	d, err := Generate(a, req, p)
	if err != nil {
		return nil, fmt.Errorf("%s %s on %d ranks: %w", a, req.Op, len(req.Ranks), err)
	}
	return &Study{Algorithm: a, Request: req, Params: p, DAG: d}, nil
}

// WriteText writes what the DAG is: the collective, algorithm, group and bytes on one line, then
// its size (ccl.StatsOf: flows, bytes sent and critical path) on the next.
func (s *Study) WriteText(w io.Writer) error {
	req := &s.Request
	fmt.Fprintf(w, "%s %s on %d ranks (%d servers of up to %d GPUs), %d bytes\n", req.Op, s.Algorithm, len(req.Ranks), req.Servers(), req.GPUsPerServer, req.Bytes)
	st, err := ccl.StatsOf(s.DAG)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "flows: %d, bytes sent: %d, critical path: %d flows\n", st.Flows, st.Bytes, st.CriticalPath)
	return err
}

// Machine is what a closed-form time is priced on: the NVLink and network bandwidth of a GPU, the
// latency of a message, and how a server's GPUs are wired.
type Machine struct {
	NVLinkGBps, NetworkGBps float64 // GB/s
	AlphaUs                 float64 // µs per message
	Mesh                    bool    // a link per pair of GPUs (FullMesh), else an NVSwitch (Switch)
}

// WriteTime writes the DAG's closed-form time on m (Time) with the algorithmic and bus bandwidth
// it gives, or why there is none. A group whose servers do not hold equal shares has no closed
// form, and nothing is written.
func (s *Study) WriteTime(w io.Writer, m Machine) error {
	req := &s.Request
	n, servers := len(req.Ranks), req.Servers()
	if n%servers != 0 || n/servers > req.GPUsPerServer {
		return nil
	}
	fabric, wiring := Switch, "switch"
	if m.Mesh {
		fabric, wiring = FullMesh, "mesh"
	}
	costs := ccl.LinkCosts{
		Intra: ccl.AlphaBeta{Alpha: m.AlphaUs * 1e-6, Beta: 1 / (m.NVLinkGBps * 1e9)},
		Inter: ccl.AlphaBeta{Alpha: m.AlphaUs * 1e-6, Beta: 1 / (m.NetworkGBps * 1e9)},
	}
	t, err := Time(s.Algorithm, req.Op, n, n/servers, req.Bytes, s.Params, fabric, costs)
	if err != nil {
		_, err = fmt.Fprintf(w, "closed form: %v\n", err)
		return err
	}
	algbw := float64(req.Bytes) / t / 1e9
	_, err = fmt.Fprintf(w, "closed form: %.3f us (NVLink %g GB/s, network %g GB/s, %g us per message, %s); algbw %.2f GB/s, busbw %.2f GB/s\n",
		t*1e6, m.NVLinkGBps, m.NetworkGBps, m.AlphaUs, wiring, algbw, algbw*ccl.BusFactor(req.Op, n))
	return err
}

// Check proves the DAG correct (ccl.CheckWith with the algorithm's CheckOptions) and says so on
// w: every rank ends with what the collective promises, no flow is sent before its parents
// arrive, no byte is invented or lost (or sent twice, unless the algorithm, as SimCCL's PXN does,
// delivers some finished chunks to ranks that hold them).
func (s *Study) Check(w io.Writer) error {
	opt := CheckOptions(s.Algorithm, s.Request.Op, s.Params)
	if err := ccl.CheckWith(s.DAG, opt); err != nil {
		return fmt.Errorf("check failed: %w", err)
	}
	if c := s.DAG.Collective(); c.Truncate {
		// The promise is about the pieces SimCCL's integer chunks make (-chunk-bytes simccl);
		// an all-to-all's Bytes is what each rank sends, its first P/n pieces.
		pieces, of := c.Pieces, ""
		if c.Op == ccl.OpAllToAll {
			pieces, of = c.Pieces/len(c.Ranks), " each rank sends"
		}
		if sent := c.RangeBytes(0, int32(pieces)); sent < c.Bytes {
			if _, err := fmt.Fprintf(w, "note: SimCCL's integer chunks leave %d of the %d bytes%s unsent (-chunk-bytes exact sends them)\n",
				c.Bytes-sent, c.Bytes, of); err != nil {
				return err
			}
		}
	}
	if opt.AllowRedundant {
		_, err := fmt.Fprintln(w, "check: ok (every rank ends with what the collective promises; no flow is sent before its parents arrive; no byte is invented or lost; as in SimCCL, some finished chunks are sent to ranks that already hold them)")
		return err
	}
	_, err := fmt.Fprintln(w, "check: ok (every rank ends with what the collective promises; no flow is sent before its parents arrive; no byte is invented, lost or sent twice)")
	return err
}

// StudyRequest is simd dag's question as values, with its flags' values as they were given: a
// collective on a group of ranks, the algorithm (or auto: the selector's choice) and the machine
// its closed-form time is priced on. Run answers it. It lives here, with the Study it builds and
// the Selector it asks, so that simd dag keeps only its flags; like sim.Request it mirrors the
// command line, and its errors name the flags that gave the values.
type StudyRequest struct {
	Op            string  // allreduce, allgather, reducescatter or alltoall (-op)
	Algorithm     string  // a Name, or auto (-algo)
	Size          string  // bytes of the whole buffer, with an optional unit (-size; units.ParseBytes)
	Ranks         int     // ranks of the group, GPUs 0 to Ranks-1 (-n)
	GPUsPerServer int     // -gps
	Params        Params  // -chunks, -pxn-variant (also the selector's PXNVariant)
	Machine       Machine // -nvbw, -bw, -alpha; Mesh comes from Fabric
	Fabric        string  // how a server's GPUs are wired: switch or mesh (-fabric)
	Check         bool    // prove the DAG correct (-check)
	// ChunkBytes is how the data is cut (-chunk-bytes): simccl ("" too: ccl.Request.Truncate)
	// or exact.
	ChunkBytes string
	// With auto, what the selector looks at: -policy, -group, -gpu, -force (ParseForce), -nvls
	// and -pxn.
	Policy, Group, GPUType, Force string
	NVLS, PXN                     bool
}

// Run builds the Study r asks for and writes it on w: with auto, the selector's choice and its
// reason first; then the DAG (Study.WriteText), its closed-form time (Study.WriteTime) and, with
// Check, the proof (Study.Check). It returns the study, for what else the caller writes. The
// request's mistakes are input errors (lex.InputError).
func (r StudyRequest) Run(w io.Writer) (*Study, error) {
	op, ok := ccl.ParseOp(r.Op)
	if !ok {
		return nil, lex.BadInputf("-op %q: expected allreduce, allgather, reducescatter or alltoall", r.Op)
	}
	bytes, err := units.ParseBytes(r.Size)
	if err != nil {
		return nil, lex.BadInputf("-size %q: %v", r.Size, err)
	}
	m := r.Machine
	switch {
	case r.Ranks < 1 || r.Ranks > 1<<16:
		return nil, lex.BadInputf("-n %d: expected 1 to 65536 ranks", r.Ranks)
	case r.GPUsPerServer < 1:
		return nil, lex.BadInputf("-gps %d: expected at least 1", r.GPUsPerServer)
	case !(m.NetworkGBps > 0) || !(m.NVLinkGBps > 0) || !(m.AlphaUs >= 0):
		return nil, lex.BadInputf("-bw and -nvbw must be positive and -alpha not negative")
	case r.Fabric != "switch" && r.Fabric != "mesh":
		return nil, lex.BadInputf("-fabric %q: expected switch or mesh", r.Fabric)
	}
	m.Mesh = r.Fabric == "mesh"
	req := GroupRequest(op, r.Ranks, r.GPUsPerServer, bytes)
	exact, err := ParseChunkBytes(r.ChunkBytes, false)
	if err != nil {
		return nil, lex.BadInputf("%v", err)
	}
	req.Truncate = !exact
	a, err := r.choose(op, &req, w)
	if err != nil {
		return nil, err
	}
	st, err := NewStudy(a, req, r.Params)
	if err != nil {
		return nil, lex.BadInput(err)
	}
	if err := st.WriteText(w); err != nil {
		return nil, err
	}
	if err := st.WriteTime(w, m); err != nil {
		return nil, err
	}
	if r.Check {
		if err := st.Check(w); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// choose is -algo, or with auto the selector's choice, written on w with its reason.
func (r StudyRequest) choose(op ccl.Op, req *ccl.Request, w io.Writer) (Name, error) {
	if r.Algorithm != "auto" {
		a, err := ParseName(r.Algorithm)
		if err != nil {
			return "", lex.BadInputf("-algo: %v", err)
		}
		return a, nil
	}
	force, err := ParseForce(r.Force)
	if err != nil {
		return "", lex.BadInputf("-force: %v", err)
	}
	sel, err := NewSelector(Options{Policy: Policy(r.Policy), GPUType: r.GPUType, NVLS: r.NVLS, PXN: r.PXN,
		PXNVariant: r.Params.PXN, Force: force, ExactBytes: !req.Truncate})
	if err != nil {
		return "", lex.BadInputf("-policy: %v", err)
	}
	group, ok := ccl.ParseGroupKind(r.Group)
	if !ok {
		return "", lex.BadInputf("-group %q: expected TP, DP, PP, EP or DP_EP", r.Group)
	}
	c, err := sel.Choose(op, group, req)
	if err != nil {
		return "", lex.BadInput(err)
	}
	fmt.Fprintf(w, "selected %s (%s)\n", c.Algorithm, c.Reason)
	return c.Algorithm, nil
}
