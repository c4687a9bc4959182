package ccfluid

import (
	"math"
	"testing"

	"simd/engine"
	"simd/topo"
)

// monRows keeps what the samplers report.
type monRows struct {
	n    *Network
	t    *testing.T
	qlen []qlenRow
	bw   []bwRow
	rate []flowRow
	cnp  []flowRow
}

type qlenRow struct {
	at         engine.Time
	link, node int32
	port       int
	bytes      int64
}

type bwRow struct {
	at         engine.Time
	link, node int32
	port       int
	gbps       float64
}

type flowRow struct {
	at    engine.Time
	f     FlowID
	value int64
}

func (r *monRows) QueueLength(at engine.Time, link, node int32, port int, bytes int64) {
	// The sample is the queue the model has at that time.
	if q := r.n.Queue(link); int64(math.Round(q)) != bytes {
		r.t.Errorf("%v: link %d reported %d bytes, Queue says %v", at, link, bytes, q)
	}
	r.qlen = append(r.qlen, qlenRow{at, link, node, port, bytes})
}

func (r *monRows) Bandwidth(at engine.Time, link, node int32, port int, gbps float64) {
	r.bw = append(r.bw, bwRow{at, link, node, port, gbps})
}

func (r *monRows) FlowRate(at engine.Time, f FlowID, bps int64) {
	r.rate = append(r.rate, flowRow{at, f, bps})
}

func (r *monRows) FlowCNPs(at engine.Time, f FlowID, n int64) {
	r.cnp = append(r.cnp, flowRow{at, f, n})
}

// monitored returns a network over a star of k+1 hosts at 400 Gb/s with every sampler on.
func monitored(t *testing.T, k int, cfg Config, m Monitor) (*engine.Scheduler, *Network, *monRows) {
	t.Helper()
	s, n, _, _ := setup(t, star(t, k+1, G400, engine.Microsecond), cfg)
	r := &monRows{n: n, t: t}
	m.Qlen, m.BW, m.Rate, m.CNP = r, r, r, r
	if err := n.Monitor(m); err != nil {
		t.Fatal(err)
	}
	return s, n, r
}

// One flow at line rate: every full period its two ports (host 0's NIC, device 1; the switch's
// port to host 1, device 2) report exactly 400 Gb/s, the last period the rest of its bytes; the
// receiver sends nothing and reports nothing. Once the flow is done sampling stops, resumes on
// the grid when a second flow starts, and the run ends with the last flow, not at MON_END.
func TestMonitorBandwidthOfOneFlow(t *testing.T) {
	const every = 10 * engine.Microsecond
	s, n, r := monitored(t, 1, repoConfig(), Monitor{
		End: 2100000000 * engine.Microsecond, QlenInterval: every, BWInterval: every, QPInterval: every,
	})
	const size = 2 * MB // 41.94 µs at 400 Gb/s
	n.Start([]int32{0, 3}, nil, size, 1)
	s.AtFunc(195*engine.Microsecond, func() { n.Start([]int32{0, 3}, nil, size, 2) })
	s.Run()
	if s.Now() != 240*engine.Microsecond {
		t.Errorf("the run ended at %v, want 240 µs (the sample after the second flow)", s.Now())
	}
	var want []bwRow
	for _, start := range []engine.Time{0, 195 * engine.Microsecond} {
		at := start - start%every
		for left := float64(size); left > 0; {
			at += every
			// What the flow sends in (at-every, at].
			b := min(left, G400/8*float64(min(at-start, every))/1e12)
			left -= b
			g := b * 8 / 10e-6 / 1e9
			want = append(want, bwRow{at, 0, 0, 1, g}, bwRow{at, 3, 2, 2, g})
		}
	}
	if len(r.bw) != len(want) {
		t.Fatalf("bw rows %v\nwant %v", r.bw, want)
	}
	total := 0.0
	for i, w := range want {
		if got := r.bw[i]; got.at != w.at || got.link != w.link || got.node != w.node || got.port != w.port || math.Abs(got.gbps-w.gbps) > 1e-9 {
			t.Errorf("bw row %d: %+v, want %+v", i, got, w)
		}
		total += r.bw[i].gbps * 1e9 / 8 * 10e-6
	}
	for i := range 4 {
		if r.bw[i].gbps != 400 {
			t.Errorf("a full period at line rate reads %v Gb/s", r.bw[i].gbps)
		}
	}
	if math.Abs(total-4*size) > 1e-3 {
		t.Errorf("the rows add up to %v bytes, want %v", total, 4*size)
	}
	// Alone on its path the flow never queues, is never marked: its rate is reported once, at
	// line rate, and no CNP.
	if len(r.qlen) != 0 || len(r.cnp) != 0 {
		t.Errorf("qlen %v, cnp %v", r.qlen, r.cnp)
	}
	if len(r.rate) != 2 || r.rate[0] != (flowRow{0, 0, 400e9}) || r.rate[1].at != 200*engine.Microsecond || r.rate[1].value != 400e9 {
		t.Errorf("rate rows %v", r.rate)
	}
}

// MON_START and MON_END bound the samples: the first one, at MON_START, only sets the reference
// of the throughput; none is taken at or after MON_END.
func TestMonitorWindow(t *testing.T) {
	const every = 10 * engine.Microsecond
	s, n, r := monitored(t, 1, repoConfig(), Monitor{
		Start: 15 * engine.Microsecond, End: 55 * engine.Microsecond, QlenInterval: every, BWInterval: every, QPInterval: every,
	})
	n.Start([]int32{0, 3}, nil, 10*MB, 1)
	s.Run()
	var ats []engine.Time
	for _, row := range r.bw {
		if row.gbps != 400 {
			t.Errorf("row %+v", row)
		}
		if row.link == 0 {
			ats = append(ats, row.at)
		}
	}
	if len(ats) != 3 || ats[0] != 25*engine.Microsecond || ats[2] != 45*engine.Microsecond {
		t.Errorf("bw samples at %v, want 25, 35, 45 µs", ats)
	}
	if len(r.rate) != 1 || r.rate[0].at != 15*engine.Microsecond {
		t.Errorf("rate rows %v", r.rate)
	}
}

// An incast of 4 long flows into one port: at every sample the last queue length reported for
// each switch port is the queue the model has, the last rate reported for each flow its
// congestion-control rate, and the CNP counts, cumulative, add up to the CNPs the senders
// received; a row is written only when its value changed.
func TestMonitorIncast(t *testing.T) {
	const k = 4
	const every = 10 * engine.Microsecond
	s, n, r := monitored(t, k, repoConfig(), Monitor{
		End: engine.Second, QlenInterval: every, BWInterval: every, QPInterval: every,
	})
	ids := make([]FlowID, k)
	for i := range k {
		ids[i] = n.Start([]int32{int32(2 * i), int32(2*k + 1)}, nil, 1<<40, int64(i))
	}
	lastQ := map[int32]int64{}
	lastRate := map[FlowID]int64{}
	lastCNP := map[FlowID]int64{}
	var nq, nr, nc int
	decreased, queued := false, false
	for at := engine.Time(0); at <= 3*engine.Millisecond; at += every {
		s.RunUntil(at)
		for ; nq < len(r.qlen); nq++ {
			row := r.qlen[nq]
			if row.at != at {
				t.Fatalf("qlen row %+v at %v", row, at)
			}
			if n.g.Kind(row.node) != topo.Switch || row.node != k+1 || int(row.port) != n.IfIndex(row.link) {
				t.Errorf("qlen row %+v is not a switch port", row)
			}
			if prev, ok := lastQ[row.link]; (ok && prev == row.bytes) || (!ok && row.bytes == 0) {
				t.Errorf("qlen row %+v repeats %d", row, prev)
			}
			lastQ[row.link] = row.bytes
			queued = queued || row.bytes > 800*KB
		}
		for ; nr < len(r.rate); nr++ {
			row := r.rate[nr]
			if prev, ok := lastRate[row.f]; ok && prev == row.value {
				t.Errorf("rate row %+v repeats", row)
			}
			if !decreased && row.value < G400 {
				decreased = true
			}
			lastRate[row.f] = row.value
		}
		for ; nc < len(r.cnp); nc++ {
			row := r.cnp[nc]
			if prev := lastCNP[row.f]; row.value <= prev {
				t.Errorf("cnp row %+v after %d: not cumulative", row, prev)
			}
			lastCNP[row.f] = row.value
		}
		for l := range int32(n.g.NumDirLinks()) {
			if n.g.Kind(n.g.From(l)) == topo.Switch {
				if q := int64(math.Round(n.Queue(l))); q != lastQ[l] {
					t.Fatalf("%v: link %d holds %d bytes, last reported %d", at, l, q, lastQ[l])
				}
			}
		}
		var cnps int64
		for _, f := range ids {
			if rate := int64(math.Round(n.Rate(f))); rate != lastRate[f] {
				t.Fatalf("%v: flow %d at %d b/s, last reported %d", at, f, rate, lastRate[f])
			}
			cnps += lastCNP[f]
		}
		if uint64(cnps) != n.Stats().CNPs {
			t.Fatalf("%v: the CNP rows add up to %d, the senders received %d", at, cnps, n.Stats().CNPs)
		}
	}
	if !decreased || !queued || n.Stats().CNPs == 0 {
		t.Errorf("the incast did not congest: rate decreased %v, queue above KMIN %v, stats %+v", decreased, queued, n.Stats())
	}
	// No port sends faster than its line; the receiver's port sends in every period.
	down := 0
	for _, row := range r.bw {
		if row.gbps > 400 || row.gbps <= 0 {
			t.Errorf("bw row %+v", row)
		}
		if row.link == 2*k+1 {
			down++
		}
	}
	if down != 300 {
		t.Errorf("the receiver's port has %d rows in 3 ms, want 300", down)
	}
}

// Sampling reads the model without changing it: the same incast with and without monitors sends
// the same bytes and counts the same marks, CNPs and pauses.
func TestMonitorDoesNotPerturb(t *testing.T) {
	const k = 4
	run := func(on bool) (Stats, []float64) {
		s, n, _, _ := setup(t, star(t, k+1, G400, engine.Microsecond), repoConfig())
		if on {
			r := &monRows{n: n, t: t}
			m := Monitor{End: engine.Second, QlenInterval: 3 * engine.Microsecond, BWInterval: 1234567, QPInterval: engine.Microsecond,
				BW: r, Rate: r, CNP: r}
			if err := n.Monitor(m); err != nil {
				t.Fatal(err)
			}
		}
		var ids []FlowID
		for i := range k {
			ids = append(ids, n.Start([]int32{int32(2 * i), int32(2*k + 1)}, nil, 1<<40, int64(i)))
		}
		s.RunUntil(2 * engine.Millisecond)
		var inj []float64
		for _, f := range ids {
			inj = append(inj, n.Injected(f))
		}
		st := n.Stats()
		st.Events = 0
		return st, inj
	}
	st0, inj0 := run(false)
	st1, inj1 := run(true)
	if st0 != st1 {
		t.Errorf("stats without monitors %+v, with %+v", st0, st1)
	}
	for i := range inj0 {
		if inj0[i] != inj1[i] {
			t.Errorf("flow %d injected %v bytes without monitors, %v with", i, inj0[i], inj1[i])
		}
	}
}

func TestMonitorErrors(t *testing.T) {
	_, n, _, _ := setup(t, star(t, 2, G400, engine.Microsecond), repoConfig())
	r := &monRows{n: n, t: t}
	if err := n.Monitor(Monitor{End: engine.Second, BW: r}); err == nil {
		t.Error("a zero interval was accepted")
	}
	n.Start([]int32{0, 3}, nil, MB, 1)
	if err := n.Monitor(Monitor{End: engine.Second, BW: r, BWInterval: engine.Microsecond}); err == nil {
		t.Error("monitors were accepted after a flow started")
	}
}

// LinkBytesAt reads ahead without moving the link's state: at 10 µs, with the flow alone at
// line rate until its end, it gives what LinkBytes gives at 30 µs.
func TestLinkBytesAt(t *testing.T) {
	s, n, _, _ := setup(t, star(t, 2, G400, engine.Microsecond), repoConfig())
	n.Start([]int32{0, 3}, nil, 2*MB, 1)
	s.RunUntil(10 * engine.Microsecond)
	before := n.links[0].qs
	ahead := n.LinkBytesAt(0, 30*engine.Microsecond)
	if n.links[0].qs != before {
		t.Errorf("LinkBytesAt changed the link's state: %+v, was %+v", n.links[0].qs, before)
	}
	s.RunUntil(30 * engine.Microsecond)
	if got, want := n.LinkBytes(0), G400/8*30e-6; math.Abs(got-want) > 1e-6 || math.Abs(ahead-got) > 1e-6 {
		t.Errorf("LinkBytesAt(30us) from 10us %v, LinkBytes at 30us %v, want %v", ahead, got, want)
	}
}
