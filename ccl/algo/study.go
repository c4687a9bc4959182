package algo

import (
	"fmt"
	"io"

	"simd/ccl"
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
	if opt.AllowRedundant {
		_, err := fmt.Fprintln(w, "check: ok (every rank ends with what the collective promises; no flow is sent before its parents arrive; no byte is invented or lost; as in SimCCL, some finished chunks are sent to ranks that already hold them)")
		return err
	}
	_, err := fmt.Fprintln(w, "check: ok (every rank ends with what the collective promises; no flow is sent before its parents arrive; no byte is invented, lost or sent twice)")
	return err
}
