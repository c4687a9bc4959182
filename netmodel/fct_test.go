package netmodel

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
	"simd/engine"
	"simd/topo"
	"simd/topo/route"
)

// fctRun runs a ring all-reduce over 64 GPUs (64,512 flows: every batch of the pipe is reused) and
// writes its FCT log to w, formatted on the simulation's goroutine or, concurrent, on the
// log's own; it returns Flush's error.
func fctRun(t *testing.T, w *bytes.Buffer, concurrent bool, stop bool) error {
	t.Helper()
	tp, err := topo.DefaultFabric(64, 8)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := NewFabric(tp)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nccl.Ring(ccl.Request{Op: ccl.OpAllReduce, Ranks: ranks(64), GPUsPerServer: 8, TotalGPUs: 64, Bytes: 64 << 20}, nccl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler()
	sim := NewSimulator(s, fab, Options{})
	var log *FCTLog
	if w != nil {
		log = NewFCTLog(w, fab, 9000)
	} else {
		log = NewFCTLog(failAfter{}, fab, 9000)
	}
	if concurrent {
		log.Concurrent()
	}
	sim.Observe(log)
	sim.Run(d, Latency{Intra: 6 * engine.Microsecond, Inter: 6 * engine.Microsecond}, nil)
	s.Run()
	if err := sim.Err(); err != nil {
		t.Fatal(err)
	}
	if stop {
		log.Stop()
		log.Stop()
		return nil
	}
	return log.Flush()
}

// failAfter is a writer that always fails.
type failAfter struct{}

func (failAfter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A Concurrent FCT log writes the same bytes as one formatted on the simulation's goroutine,
// reports the writer's error from Flush, and stops without flushing on Stop.
func TestFCTLogConcurrent(t *testing.T) {
	var serial, conc bytes.Buffer
	if err := fctRun(t, &serial, false, false); err != nil {
		t.Fatal(err)
	}
	if err := fctRun(t, &conc, true, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(serial.String(), "\n"); n != 2*63*64*8 {
		t.Fatalf("%d lines", n)
	}
	if serial.String() != conc.String() {
		t.Error("the concurrent FCT log differs")
	}
	for _, c := range []bool{false, true} {
		if err := fctRun(t, nil, c, false); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("concurrent %v: Flush returned %v", c, err)
		}
	}
	var stopped bytes.Buffer
	fctRun(t, &stopped, true, true)
	if stopped.Len() > conc.Len() || !strings.HasPrefix(conc.String(), stopped.String()) {
		t.Error("Stop wrote something else")
	}
}

// A pair's figures come from the routes when its first flow arrives. With a link down, a
// Concurrent log takes them from the fabric's router for the pairs it meets for the first
// time, as one formatting on the simulation's goroutine does: here GPU 1 → GPU 0 is first
// seen after the direct switch link failed, so its ideal FCT counts four hops where GPU 0 →
// GPU 1's, first seen before, counts three.
func TestFCTLogConcurrentLinkDown(t *testing.T) {
	// GPUs 0 and 1 on switches 2 and 3, joined directly and through switch 4.
	tp, err := topo.Parse(strings.NewReader("5 1 0 3 5 H100\n2 3 4\n"+
		"0 2 400Gbps 0.001ms 0\n1 3 400Gbps 0.001ms 0\n2 3 400Gbps 0.001ms 0\n2 4 400Gbps 0.001ms 0\n4 3 400Gbps 0.001ms 0\n"), "detour")
	if err != nil {
		t.Fatal(err)
	}
	var out [2]bytes.Buffer
	for i, concurrent := range []bool{false, true} {
		fab, err := NewFabric(tp)
		if err != nil {
			t.Fatal(err)
		}
		s := engine.NewScheduler()
		sim := NewSimulator(s, fab, Options{})
		log := NewFCTLog(&out[i], fab, 9000)
		if concurrent {
			log.Concurrent()
		}
		sim.Observe(log)
		if err := sim.LinkDown(50*engine.Microsecond, 2, 3); err != nil {
			t.Fatal(err)
		}
		sim.StartRaw([]RawFlow{
			{Src: 0, Dst: 1, Bytes: 1 << 20, DPort: DPort},
			{Src: 1, Dst: 0, Bytes: 1 << 20, DPort: DPort, Start: 100 * engine.Microsecond},
			{Src: 0, Dst: 1, Bytes: 1 << 20, DPort: DPort, Start: 100 * engine.Microsecond},
		})
		s.Run()
		if err := sim.Err(); err != nil {
			t.Fatal(err)
		}
		if err := log.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if out[0].String() != out[1].String() {
		t.Errorf("one core:\n%s\nconcurrent:\n%s", &out[0], &out[1])
	}
	lines := strings.Split(strings.TrimSpace(out[0].String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("fct.txt:\n%s", &out[0])
	}
	ideal := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		ideal[f[0]] = f[7]
	}
	if ideal["0b000101"] <= ideal["0b000001"] {
		t.Errorf("ideal FCT from GPU 1 %s, from GPU 0 %s: the detour is not counted\n%s", ideal["0b000101"], ideal["0b000001"], &out[0])
	}
}

// Every line of fct.txt is what C's printf makes of ns-3's format (simai-formats.md §6.3),
// however large its numbers, and no longer than the room the log keeps for one line before
// writing out its buffer.
func TestFCTLineFormat(t *testing.T) {
	const payload = 9000
	l := &FCTLog{payload: payload}
	rng := rand.New(rand.NewPCG(7, 7))
	pick := func(max uint64) uint64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return max
		default:
			return rng.Uint64N(max)
		}
	}
	for i := range 20000 {
		r := fctLine{src: rng.Int32N(1 << 20), dst: rng.Int32N(1 << 20), sport: uint16(pick(1<<16 - 1)), dport: uint16(pick(1<<16 - 1)),
			size: pick(1 << 63), startNs: int64(pick(1<<63 - 1)), fctNs: int64(pick(1<<63 - 1))}
		st := l.pairs.get(r.src, r.dst)
		if !st.known {
			*st = pairFigures{rttNs: pick(1 << 40), bw: pick(1 << 45), known: true}
		}
		pf := *st // the pointer is valid until the next lookup, appendLine's
		got := string(l.appendLine(nil, &r))
		// The ideal FCT in 128 bits (big.Int): rtt + (size + ⌈size/payload⌉·52)·8e9/bw.
		total := new(big.Int).SetUint64(r.size)
		total.Add(total, new(big.Int).Mul(new(big.Int).SetUint64((r.size+payload-1)/payload), big.NewInt(52)))
		var tx uint64
		if pf.bw > 0 {
			q := new(big.Int).Div(new(big.Int).Mul(total, big.NewInt(8_000_000_000)), new(big.Int).SetUint64(pf.bw))
			if q.IsUint64() {
				tx = q.Uint64()
			}
		}
		want := fmt.Sprintf("%08x %08x %d %d %d %d %d %d\n", route.NodeIP(r.src), route.NodeIP(r.dst), r.sport, r.dport,
			r.size, r.startNs, r.fctNs, pf.rttNs+tx)
		if got != want {
			t.Fatalf("line %d: %q, want %q", i, got, want)
		}
		if len(got) > fctLineMax {
			t.Fatalf("line %d: %d bytes, the log keeps room for %d", i, len(got), fctLineMax)
		}
	}
}

// appendDecimal and appendSigned write what strconv does at every power of ten and on either
// side of it, and at the ends of the ranges.
func TestAppendDecimal(t *testing.T) {
	vals := []uint64{0, 1<<64 - 1, 1 << 63}
	for p := uint64(1); p <= 1e19; p *= 10 {
		vals = append(vals, p-1, p, p+1)
	}
	for _, v := range vals {
		if got, want := string(appendDecimal([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Errorf("appendDecimal(%d) = %q, want %q", v, got, want)
		}
		for _, s := range []int64{int64(v), -int64(v)} {
			if got, want := string(appendSigned(nil, s)), strconv.FormatInt(s, 10); got != want {
				t.Errorf("appendSigned(%d) = %q, want %q", s, got, want)
			}
		}
	}
	for _, s := range []int64{math.MinInt64, math.MaxInt64} {
		if got, want := string(appendSigned(nil, s)), strconv.FormatInt(s, 10); got != want {
			t.Errorf("appendSigned(%d) = %q, want %q", s, got, want)
		}
	}
}
