package analytical

import (
	"fmt"
	"math"

	"simd/ccl"
	"simd/configs"
)

// Ratios are SimAI's three efficiency tables (inputs/ratio/{nic,nvlink,ata}_ratio.csv).
type Ratios struct {
	NIC, NVLink, AllToAll configs.RatioTable
}

// Params is what SimAI_analytical's flags give the model.
type Params struct {
	Layout        ccl.Layout // GPUs (-g), GPUs per server (-g_p_s), TP, PP, EP (workload header)
	NICsPerServer int        // -n_p_s
	NVLinkGBps    float32    // -nv: NVLink bus bandwidth per GPU, GB/s
	NICGBps       float32    // -nic: bandwidth of one NIC, GB/s
	Ratios        Ratios
}

// Model prices collectives the way SimAI_analytical does.
type Model struct {
	p Params
}

// New checks the parameters and returns the model.
func New(p Params) (*Model, error) {
	if p.Layout.GPUsPerServer < 1 {
		return nil, fmt.Errorf("GPUs per server must be at least 1, not %d", p.Layout.GPUsPerServer)
	}
	if p.Layout.TP < 1 || p.Layout.EP < 1 {
		return nil, fmt.Errorf("TP (%d) and EP (%d) must be at least 1", p.Layout.TP, p.Layout.EP)
	}
	if !(p.NVLinkGBps > 0) || math.IsInf(float64(p.NVLinkGBps), 0) {
		return nil, fmt.Errorf("NVLink bandwidth %g GB/s must be positive (-nv)", p.NVLinkGBps)
	}
	if !(p.NICGBps > 0) || math.IsInf(float64(p.NICGBps), 0) {
		return nil, fmt.Errorf("NIC bandwidth %g GB/s must be positive (-nic)", p.NICGBps)
	}
	if p.NICsPerServer < 1 {
		return nil, fmt.Errorf("NICs per server must be at least 1, not %d (-n_p_s)", p.NICsPerServer)
	}
	for _, t := range []configs.RatioTable{p.Ratios.NIC, p.Ratios.NVLink, p.Ratios.AllToAll} {
		if len(t.Rows) < 2 {
			return nil, fmt.Errorf("ratio table %q has %d rows; need at least 2", t.Name, len(t.Rows))
		}
	}
	return &Model{p: p}, nil
}

// Cost is the price of one collective and how it was obtained.
type Cost struct {
	Ns       uint64  // whole nanoseconds, truncated as SimAI does
	BusGBps  float32 // SimAI's bus bandwidth (0 where the small-message table or a zero applies)
	Ratio    float32 // efficiency ratio applied to the bus bandwidth
	IsNVLink bool    // NVLink was the bottleneck in the bus bandwidth
	Small    bool    // priced by the small-message latency table
}

// smallMessageNs is SimAI's fixed time for messages of 2 B to 1 MiB − 1 B, by group size
// (Layer::compute_time); other group sizes cost 0.
func smallMessageNs(n int) uint64 {
	switch n {
	case 2:
		return 10000
	case 4:
		return 12000
	case 8:
		return 15000
	case 16:
		return 66000
	case 32:
		return 135000
	case 64:
		return 200000
	case 128:
		return 320000
	}
	return 0
}

// gib is SimAI's "GBps" constant, 1/2^30: its GB are GiB.
const gib = 1.0 / (1 << 30)

// CollectiveTime prices one collective (SimAI's Layer::compute_time, §5.3): op on a group of the
// given kind with n ranks, bytes the workload's size. An error means SimAI's model would compute a
// negative bandwidth for these inputs; the message names the inputs to change.
func (m *Model) CollectiveTime(op ccl.Op, group ccl.GroupKind, n int, bytes uint64) (Cost, error) {
	if op == ccl.OpNone {
		return Cost{}, nil
	}
	if 1 < bytes && bytes < 1048576 {
		return Cost{Ns: smallMessageNs(n), Small: true}, nil
	}
	if n <= 1 {
		// SimAI computes 0·∞ here (a group of one rank has nothing to send); the intended time is 0.
		return Cost{}, nil
	}
	p := m.p
	tp, ep := p.Layout.TP, p.Layout.EP
	gps := p.Layout.GPUsPerServer
	nps := p.NICsPerServer
	opName := op.String()
	var b busBW
	switch group {
	case ccl.GroupTP:
		if tp <= gps {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps), 1, opName, tp)
		} else {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps), tp/gps, opName, gps)
		}
	case ccl.GroupEP:
		if tp*n <= gps {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps), 1, opName, gps/tp)
		} else {
			perNode := max(gps/tp, 1)
			nics := nps / tp
			if tp > gps {
				nics = nps / gps
			}
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nics), tp*n/gps, opName, perNode)
		}
	case ccl.GroupDP:
		if tp <= gps {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps/tp), n, opName, gps/tp)
		} else {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps/gps), n, opName, 1)
		}
	case ccl.GroupDPEP:
		if tp*ep <= gps {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps/(tp*ep)), n, opName, gps/(tp*ep))
		} else {
			b = calBusBW(p.NVLinkGBps, p.NICGBps, float32(nps/gps), n, opName, 1)
		}
	default:
		return Cost{}, nil
	}
	if b.invalid != "" {
		return Cost{}, fmt.Errorf("%s %s of %d ranks (TP %d, EP %d, %d GPUs and %d NICs per server): SimAI's bus-bandwidth model has %s and would report a negative time; "+
			"give more NICs per server (-n_p_s) or a topology with more NICs", group, op, n, tp, ep, gps, nps, b.invalid)
	}
	if b.gbps == 0 {
		return Cost{}, nil
	}
	ratio, err := m.ratio(bytes, n, group, op, b.isNVLink)
	if err != nil {
		return Cost{}, err
	}
	ns := ringTimeNs(op, n, bytes, float32(ratio*b.gbps))
	return Cost{Ns: ns, BusGBps: b.gbps, Ratio: ratio, IsNVLink: b.isNVLink}, nil
}

// truncNs converts a non-negative time in ns to whole nanoseconds as C++'s conversion to uint64 does.
func truncNs(t float64) uint64 {
	if !(t >= 0) || t >= 1<<63 {
		return math.MaxInt64
	}
	return uint64(t)
}

// ratio is SimAI's cal_ratio (§5.2): which table and which column apply to this collective.
func (m *Model) ratio(bytes uint64, n int, group ccl.GroupKind, op ccl.Op, isNVLink bool) (float32, error) {
	tp, gps := m.p.Layout.TP, m.p.Layout.GPUsPerServer
	switch {
	case (op == ccl.OpAllGather || op == ccl.OpReduceScatter) && group == ccl.GroupTP:
		t := m.p.Ratios.NIC
		if isNVLink {
			t = m.p.Ratios.NVLink
		}
		nnode := 1
		if tp >= gps {
			nnode = tp / gps
		}
		return ratioValue(t, float64(bytes), nnode)
	case op == ccl.OpAllToAll && group == ccl.GroupEP:
		nnode := tp * n / gps
		switch {
		case tp*n <= gps:
			nnode = 1
		case tp >= gps:
			nnode = 9
		}
		return ratioValue(m.p.Ratios.AllToAll, float64(bytes), nnode)
	case op == ccl.OpAllToAll && group == ccl.GroupTP:
		nnode := 1
		if tp > gps {
			nnode = tp / gps
		}
		return ratioValue(m.p.Ratios.AllToAll, float64(bytes), nnode)
	}
	return 1, nil
}

// ratioColumn maps a node count to a table column (getValue): 1, 2, 4, ..., 128 nodes to
// columns 1..8, 9 ("Multi 16") to column 9, anything else to column 5.
func ratioColumn(nnode int) int {
	switch nnode {
	case 1:
		return 1
	case 2:
		return 2
	case 4:
		return 3
	case 8:
		return 4
	case 16:
		return 5
	case 32:
		return 6
	case 64:
		return 7
	case 128:
		return 8
	case 9:
		return 9
	}
	return 5
}

// ratioValue is SimAI's getValue: linear interpolation between the rows that bracket the size,
// divided by the last row's value, in double precision, returned in single precision. Below the
// first size the first row applies. Above the last size SimAI throws and aborts; simd uses the
// last row (ratio 1).
func ratioValue(t configs.RatioTable, size float64, nnode int) (float32, error) {
	col := ratioColumn(nnode)
	if size == 0 {
		return 1, nil
	}
	cell := func(row int) (float64, error) {
		r := t.Rows[row]
		if col >= len(r) {
			return 0, fmt.Errorf("ratio table %q row %d has no column %d", t.Name, row+1, col)
		}
		return r[col], nil
	}
	last := len(t.Rows) - 1
	lastVal, err := cell(last)
	if err != nil {
		return 0, err
	}
	if size < t.Rows[0][0] {
		v, err := cell(0)
		if err != nil {
			return 0, err
		}
		return float32(v / lastVal), nil
	}
	for i := 0; i < last; i++ {
		s1, s2 := t.Rows[i][0], t.Rows[i+1][0]
		if size >= s1 && size <= s2 {
			v1, err := cell(i)
			if err != nil {
				return 0, err
			}
			v2, err := cell(i + 1)
			if err != nil {
				return 0, err
			}
			step := float64(float64(v2-v1)*float64(size-s1)) / (s2 - s1)
			return float32(float64(v1+step) / lastVal), nil
		}
	}
	return float32(lastVal / lastVal), nil
}

// CollectiveNs is CollectiveTime's nanoseconds, for callers that need only the time.
func (m *Model) CollectiveNs(op ccl.Op, group ccl.GroupKind, n int, bytes uint64) (uint64, error) {
	c, err := m.CollectiveTime(op, group, n, bytes)
	return c.Ns, err
}

// ringTimeNs is SimAI's ring time for a collective at an effective bandwidth of eff GB/s (GiB/s
// in the arithmetic), in the order of operations of Layer::compute_time.
func ringTimeNs(op ccl.Op, n int, bytes uint64, eff float32) uint64 {
	t := float64(bytes) * gib
	t = t / float64(eff)
	t = float64(t * 1e9)
	if op == ccl.OpAllReduce {
		t = t * 2
	}
	t = t * float64(n-1)
	t = t / float64(n)
	return truncNs(t)
}
