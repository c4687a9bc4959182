package multiring

import (
	"fmt"
	"math"

	"simd/ccl"
)

// Fabric is how the GPUs inside a server are wired, for the closed forms.
type Fabric uint8

// Fabrics.
const (
	// FullMesh: every ordered pair of GPUs has its own link (AMD MI300X's xGMI): Beta is the
	// seconds per byte of one such link.
	FullMesh Fabric = iota
	// Switch: every GPU has one port into a switch (NVSwitch): Beta is the seconds per byte of
	// that port, shared by everything the GPU sends at once.
	Switch
)

func (f Fabric) String() string {
	if f == FullMesh {
		return "full-mesh"
	}
	return "switch"
}

func checkArgs(op ccl.Op, n int, bytes int64) error {
	switch {
	case op != ccl.OpAllGather && op != ccl.OpReduceScatter && op != ccl.OpAllReduce:
		return fmt.Errorf("multiring: no closed form for %s", op)
	case n < 1:
		return fmt.Errorf("multiring: %d GPUs", n)
	case bytes < 0:
		return fmt.Errorf("multiring: %d bytes", bytes)
	}
	return nil
}

// phases is the number of reduce-scatter and all-gather passes of op.
func phases(op ccl.Op) (rs, ag int) {
	switch op {
	case ccl.OpReduceScatter:
		return 1, 0
	case ccl.OpAllGather:
		return 0, 1
	}
	return 1, 1
}

// Time is the α-β-γ time of Multi-Ring op on n GPUs of one server wired by fabric f, for a
// buffer of S = bytes (the gathered output for all-gather). With R = n−1 rings every GPU holds
// R chunks of c = S/(n(n−1)); every one of the n−1 steps of a pass sends one chunk per ring:
//
//	full mesh, per step:  α + c·β              (each link carries one chunk)
//	switch, per step:     α + (n−1)·c·β = α + S/n·β   (the port carries all n−1 chunks)
//
// and a reduce-scatter step adds (S/n)·γ, the n−1 chunks reduced. So, on a full mesh,
//
//	AllGather      (n−1)·α + S/n·β
//	ReduceScatter  (n−1)·α + S/n·β + (n−1)/n·S·γ
//	AllReduce      2(n−1)·α + 2·S/n·β + (n−1)/n·S·γ
//
// against RingTime's (n−1)·α + (n−1)/n·S·β for an all-gather: Multi-Ring moves the same bytes
// over n−1 links at once. On a switch the β terms equal the ring's: both put S/n through the
// port per step (ccl-facts.md §6.6).
func Time(op ccl.Op, n int, bytes int64, f Fabric, ab ccl.AlphaBeta) (float64, error) {
	if err := checkArgs(op, n, bytes); err != nil {
		return 0, err
	}
	if n == 1 {
		return 0, nil
	}
	S, nf := float64(bytes), float64(n)
	c := S / (nf * (nf - 1))
	link := c // bytes on the busiest link per step
	if f == Switch {
		link = (nf - 1) * c
	}
	rs, ag := phases(op)
	steps := nf - 1
	t := float64(float64(rs+ag) * steps * (ab.Alpha + float64(link*ab.Beta)))
	t += float64(float64(rs) * steps * (S / nf) * ab.Gamma)
	return t, nil
}

// RingTime is the α-β-γ time of one ring (NCCL-style, one chunk of S/n per step to one
// neighbour) on n GPUs, the same on a full mesh and a switch: per pass (n−1)·(α + S/n·β), and
// (n−1)/n·S·γ for the reduce-scatter. The TASP comparison: on a full mesh Multi-Ring's
// all-gather takes (n−1)·(α + S/(n(n−1))·β), the ring's (n−1)·(α + S/n·β).
func RingTime(op ccl.Op, n int, bytes int64, ab ccl.AlphaBeta) (float64, error) {
	if err := checkArgs(op, n, bytes); err != nil {
		return 0, err
	}
	if n == 1 {
		return 0, nil
	}
	S, nf := float64(bytes), float64(n)
	rs, ag := phases(op)
	return float64(float64(rs+ag)*(nf-1)*(ab.Alpha+float64(S/nf*ab.Beta))) + float64(float64(rs)*(nf-1)*(S/nf)*ab.Gamma), nil
}

// ServerTime is the α-β-γ time of the multi-server Multi-Ring ((m−K_m−m)^u, ServerCycles) on u
// servers of m GPUs, n = m·u, with intra-server fabric intra and costs c. There are m rings and
// chunks of c = S/(n·m); in each of the n−1 steps of a pass every GPU sends one chunk over its
// NIC and m−1 over NVLink, so a step takes
//
//	max(α_intra, α_inter) + max(c·β_inter, L·c·β_intra)
//
// with L = 1 on a full mesh and L = m−1 on a switch (ccl-facts.md §6.6(c): from S/n·β_nic down
// to max(S/(n·m)·β_nic, (m−1)·S/(n·m)·β_nvl)), plus (S/n)·γ_intra for a reduce-scatter step.
// u = 1 is Time with c.Intra.
func ServerTime(op ccl.Op, m, u int, bytes int64, intra Fabric, c ccl.LinkCosts) (float64, error) {
	if err := checkArgs(op, m*u, bytes); err != nil {
		return 0, err
	}
	if m < 1 || u < 1 {
		return 0, fmt.Errorf("multiring: %d servers of %d GPUs", u, m)
	}
	if u == 1 {
		return Time(op, m, bytes, intra, c.Intra)
	}
	S, n, mf := float64(bytes), float64(m*u), float64(m)
	chunk := S / (n * mf)
	L := 1.0
	if intra == Switch {
		L = mf - 1
	}
	step := math.Max(c.Intra.Alpha, c.Inter.Alpha) + math.Max(float64(chunk*c.Inter.Beta), float64(L*chunk*c.Intra.Beta))
	rs, ag := phases(op)
	return float64(float64(rs+ag)*(n-1)*step) + float64(float64(rs)*(n-1)*(S/n)*c.Intra.Gamma), nil
}

// ServerRingTime is one ring through u servers of m GPUs, the baseline of ServerTime: every step
// sends S/n to the next GPU, and u of the hops cross a NIC, so a step takes
// max(α_intra, α_inter) + S/n·max(β_intra, β_inter).
func ServerRingTime(op ccl.Op, m, u int, bytes int64, c ccl.LinkCosts) (float64, error) {
	if err := checkArgs(op, m*u, bytes); err != nil {
		return 0, err
	}
	if m < 1 || u < 1 {
		return 0, fmt.Errorf("multiring: %d servers of %d GPUs", u, m)
	}
	if u == 1 {
		return RingTime(op, m, bytes, c.Intra)
	}
	S, n := float64(bytes), float64(m*u)
	step := math.Max(c.Intra.Alpha, c.Inter.Alpha) + float64(S/n*math.Max(c.Intra.Beta, c.Inter.Beta))
	rs, ag := phases(op)
	return float64(float64(rs+ag)*(n-1)*step) + float64(float64(rs)*(n-1)*(S/n)*c.Intra.Gamma), nil
}
