package cc

import (
	"math"
	"strings"
	"testing"

	"simd/engine"
)

// hpccTestConfig is SimAI.conf's HPCC (U_TARGET 0.95, RATE_AI 50Mb/s, MIN_RATE 100Mb/s) on a
// 100 Gb/s NIC with a 10 µs base RTT and its BDP as window (100e9·10e-6/8 = 125000 bytes), with
// MI_THRESH 5 (the ns-3 default) so that stages are visible.
func hpccTestConfig() HPCCConfig {
	return HPCCConfig{
		LineRate:    100e9,
		MinRate:     100e6,
		RateAI:      50e6,
		UTarget:     0.95,
		MaxStage:    5,
		BaseRTT:     10 * engine.Microsecond,
		WindowBytes: 125000,
	}
}

func oneHop(queue, tx float64) []HopState {
	return []HopState{{QueueBytes: queue, TxRate: tx, LinkRate: 100e9}}
}

func TestHPCCSingleBottleneckRounds(t *testing.T) {
	// FAST_REACT off: each round replaces u by the round's sample (τ = one base RTT).
	// u = Tx/C + min(q, q_prev)·LineRate/C/win; k = u/0.95.
	cfg := hpccTestConfig()
	h := NewHPCC(&cfg)
	rounds := []struct {
		queue, tx float64
		u         float64
		rate      float64
		stage     int
	}{
		{0, 100e9, 1, 100e9, 0},             // first ACK: INT stored, nothing else (u stays 1)
		{62500, 100e9, 1, 95050000000, 0},   // q = min(62500, 0) = 0: u = 1, k ≥ 1: ⌊100e9·0.95⌋ + 50e6
		{62500, 100e9, 1.5, 60248333333, 0}, // u = 1 + 62500/125000: ⌊95.05e9/(1.5/0.95)⌋ + 50e6
		{0, 80e9, 0.8, 60298333333, 1},      // q = min(0, 62500): u = 0.8 < η, stage 0 < 5: + 50e6
		{0, 80e9, 0.8, 60348333333, 2},      //
		{0, 80e9, 0.8, 60398333333, 3},      //
		{0, 80e9, 0.8, 60448333333, 4},      //
		{0, 80e9, 0.8, 60498333333, 5},      // five additive steps
		{0, 80e9, 0.8, 71891770832, 0},      // stage 5 = MI_THRESH: ⌊60498333333/(0.8/0.95)⌋ + 50e6
		{1250000, 100e9, 1, 68347182290, 0}, // q = min(1.25e6, 0) = 0, u = 1: ⌊71891770832·0.95⌋ + 50e6
	}
	for i, r := range rounds {
		now := engine.Time(i) * cfg.BaseRTT
		before := h.Rate()
		changed := h.OnRound(now, oneHop(r.queue, r.tx))
		if h.Rate() != r.rate || h.CommittedRate() != r.rate || h.Stage() != r.stage || math.Abs(h.Utilization()-r.u) > 1e-12 {
			t.Errorf("round %d: rate %v committed %v stage %d u %v, want rate %v stage %d u %v",
				i, h.Rate(), h.CommittedRate(), h.Stage(), h.Utilization(), r.rate, r.stage, r.u)
		}
		if changed != (h.Rate() != before) {
			t.Errorf("round %d: rateChanged %v but rate went %v → %v", i, changed, before, h.Rate())
		}
	}
}

func TestHPCCPartialRoundWeight(t *testing.T) {
	// FAST_REACT off, a sample after half a base RTT: u ← u·(T−τ)/T + U·τ/T = 1·0.5 + 0.5·0.5.
	cfg := hpccTestConfig()
	h := NewHPCC(&cfg)
	h.OnRound(0, oneHop(0, 50e9))
	h.OnRound(5*engine.Microsecond, oneHop(0, 50e9))
	if got := h.Utilization(); got != 0.75 {
		t.Fatalf("u = %v, want 0.75", got)
	}
	// A sample older than T is capped at τ = T: u = U.
	h.OnRound(30*engine.Microsecond, oneHop(0, 50e9))
	if got := h.Utilization(); got != 0.5 {
		t.Fatalf("u = %v, want 0.5", got)
	}
}

func TestHPCCFastReactPerPacketWeight(t *testing.T) {
	// FAST_REACT on, 12500-byte packets at 100 Gb/s: one ACK per τ = 1 µs, each u ← u·(1 − τ/T) +
	// U·τ/T, so over 10 µs u = 0.9^10·1 + (1 − 0.9^10)·0.5 = 0.67433922005.
	cfg := hpccTestConfig()
	cfg.FastReact = true
	cfg.PacketBytes = 12500
	h := NewHPCC(&cfg)
	h.OnRound(0, oneHop(0, 50e9))
	h.OnRound(10*engine.Microsecond, oneHop(0, 50e9))
	if got := h.Utilization(); math.Abs(got-0.67433922005) > 1e-12 {
		t.Fatalf("u = %v, want 0.67433922005", got)
	}
	// k = 0.674/0.95 < 1, stage 0: additive, capped at line rate.
	if h.Rate() != 100e9 || h.Stage() != 1 {
		t.Fatalf("rate %v stage %d, want 100e9 and 1", h.Rate(), h.Stage())
	}
}

func TestHPCCFastReact(t *testing.T) {
	// FAST_REACT on, many small packets (PacketBytes 0): u ← U + (u − U)·e^(−elapsed/T).
	cfg := hpccTestConfig()
	cfg.FastReact = true
	h := NewHPCC(&cfg)
	h.OnRound(0, oneHop(0, 100e9))
	// Mid-round ACK: u = 1·e^−0.5 + 1·(1 − e^−0.5) = 1, k = 1/0.95: the sending rate reacts from
	// the committed 100e9, which stays.
	if !h.OnFastReact(5*engine.Microsecond, oneHop(62500, 100e9)) {
		t.Fatalf("fast react did not change the rate")
	}
	if h.Rate() != 95050000000 || h.CommittedRate() != 100e9 || h.Stage() != 0 {
		t.Fatalf("after fast react: rate %v committed %v stage %d, want 95.05e9, 100e9, 0", h.Rate(), h.CommittedRate(), h.Stage())
	}
	// Round end: q = min(62500, 62500) → U = 1.5; u = 1·e^−0.5 + 1.5·(1 − e^−0.5) = 1.19673467;
	// the rate is computed from the committed 100e9, not from the fast-reacted 95.05e9:
	// ⌊100e9·0.95/1.19673467⌋ + 50e6 = 79432675517.
	h.OnRound(10*engine.Microsecond, oneHop(62500, 100e9))
	if math.Abs(h.Utilization()-1.1967346701436834) > 1e-12 || math.Abs(h.Rate()-79432675517) > 1 || h.CommittedRate() != h.Rate() {
		t.Fatalf("after the round: u %v rate %v committed %v, want 1.19673467, 79432675517 (±1), committed = rate",
			h.Utilization(), h.Rate(), h.CommittedRate())
	}

	// With FAST_REACT off, mid-round ACKs do nothing: not even the stored INT moves, so the
	// round's sample spans the whole round.
	cfg.FastReact = false
	h = NewHPCC(&cfg)
	h.OnRound(0, oneHop(0, 100e9))
	if h.OnFastReact(5*engine.Microsecond, oneHop(62500, 100e9)) || h.Rate() != 100e9 {
		t.Fatalf("fast react with FAST_REACT off changed the rate to %v", h.Rate())
	}
	h.OnRound(10*engine.Microsecond, oneHop(62500, 100e9)) // q = min(62500, 0) = 0: u = 1
	if h.Utilization() != 1 || h.Rate() != 95050000000 {
		t.Fatalf("round after ignored fast react: u %v rate %v, want 1 and 95.05e9", h.Utilization(), h.Rate())
	}
}

func TestHPCCMultiRate(t *testing.T) {
	// Two hops. Round 1: hop A u = 1 + 25000/125000 = 1.2, hop B u = 0.5. Round 2: A u = 0.5,
	// B u = 1.0. Per hop (MULTI_RATE 1) each hop reacts from its own committed rate; single rate
	// reacts to the worst hop from one committed rate.
	hops := [][]HopState{
		{{QueueBytes: 25000, TxRate: 100e9, LinkRate: 100e9}, {QueueBytes: 0, TxRate: 50e9, LinkRate: 100e9}},
		{{QueueBytes: 25000, TxRate: 100e9, LinkRate: 100e9}, {QueueBytes: 0, TxRate: 50e9, LinkRate: 100e9}},
		{{QueueBytes: 0, TxRate: 50e9, LinkRate: 100e9}, {QueueBytes: 0, TxRate: 100e9, LinkRate: 100e9}},
	}
	tests := []struct {
		multi bool
		rates []float64
	}{
		// A: ⌊100e9/(1.2/0.95)⌋ + 50e6 = 79216666666; B: 100e9 + 50e6 capped, stage 1.
		// Round 2: A additive from its own 79216666666; B: ⌊100e9·0.95⌋ + 50e6 = 95.05e9. min = A.
		{true, []float64{100e9, 79216666666, 79266666666}},
		// Round 2 single rate: U = 1.0 from 79216666666: ⌊79216666666·0.95⌋ + 50e6 = 75305833332.
		{false, []float64{100e9, 79216666666, 75305833332}},
	}
	for _, tc := range tests {
		cfg := hpccTestConfig()
		cfg.MultiRate = tc.multi
		h := NewHPCC(&cfg)
		for i, hs := range hops {
			h.OnRound(engine.Time(i)*cfg.BaseRTT, hs)
			if h.Rate() != tc.rates[i] {
				t.Errorf("multi %v round %d: rate %v, want %v", tc.multi, i, h.Rate(), tc.rates[i])
			}
		}
	}
}

func TestHPCCNoUsableINT(t *testing.T) {
	cfg := hpccTestConfig()
	h := NewHPCC(&cfg)
	// A path with no switch (NVLink only) carries no INT: the rate never moves.
	for i := 0; i < 3; i++ {
		if h.OnRound(engine.Time(i)*cfg.BaseRTT, nil) || h.Rate() != 100e9 {
			t.Fatalf("no hops: rate %v", h.Rate())
		}
	}
	// More hops than an INT header holds: ns-3 ignores the INT entirely.
	long := make([]HopState, HPCCMaxHops+1)
	for i := range long {
		long[i] = HopState{QueueBytes: 1e6, TxRate: 100e9, LinkRate: 100e9}
	}
	h = NewHPCC(&cfg)
	for i := 0; i < 3; i++ {
		if h.OnRound(engine.Time(i)*cfg.BaseRTT, long) || h.Rate() != 100e9 {
			t.Fatalf("%d hops: rate %v, want no change", len(long), h.Rate())
		}
	}
}

func TestHPCCWindow(t *testing.T) {
	cfg := hpccTestConfig()
	h := NewHPCC(&cfg)
	h.OnRound(0, oneHop(0, 100e9))
	h.OnRound(cfg.BaseRTT, oneHop(62500, 100e9))
	h.OnRound(2*cfg.BaseRTT, oneHop(62500, 100e9)) // rate 60248333333 (see the rounds test)
	if got := h.Window(); got != 125000 {
		t.Errorf("fixed window = %v, want 125000", got)
	}
	cfg.VarWin = true
	hv := NewHPCC(&cfg)
	hv.OnRound(0, oneHop(0, 100e9))
	hv.OnRound(cfg.BaseRTT, oneHop(62500, 100e9))
	hv.OnRound(2*cfg.BaseRTT, oneHop(62500, 100e9))
	if got := hv.Window(); got != 75310 { // ⌊125000·60248333333/100e9⌋ = ⌊75310.4⌋
		t.Errorf("VAR_WIN window = %v, want 75310", got)
	}
	cfg.WindowBytes = 0
	hn := NewHPCC(&cfg)
	if got := hn.Window(); got != 0 {
		t.Errorf("HAS_WIN 0 window = %v, want 0", got)
	}
}

// hpccOneLink runs flows through one fluid bottleneck link of the flows' line rate, one round (a
// base RTT) at a time: the queue integrates arrivals minus capacity, and every active flow gets
// the link's queue and average transmit rate over the round. Flow i joins at round i·joinEvery
// (all at round 0 when joinEvery is 0).
func hpccOneLink(cfg HPCCConfig, n, joinEvery, rounds int) (flows []HPCC, queue float64) {
	capacity := cfg.LineRate
	T := cfg.BaseRTT.Seconds()
	flows = make([]HPCC, 0, n)
	hop := make([]HopState, 1)
	for r := 0; r < rounds; r++ {
		for len(flows) < n && r == len(flows)*joinEvery {
			flows = append(flows, NewHPCC(&cfg))
		}
		var arrivals float64
		for i := range flows {
			arrivals += flows[i].Rate()
		}
		next := math.Max(0, queue+(arrivals-capacity)*T/8)
		sent := queue + arrivals*T/8 - next
		queue = next
		hop[0] = HopState{QueueBytes: queue, TxRate: sent * 8 / T, LinkRate: capacity}
		now := engine.Time(r+1) * cfg.BaseRTT
		for i := range flows {
			flows[i].OnRound(now, hop)
		}
	}
	return flows, queue
}

func TestHPCCConvergesToFairShare(t *testing.T) {
	// Fixed point with the queue empty: u = Σr/C and r = r·η/u + RATE_AI, so every flow settles
	// at ηC/N + RATE_AI (the AI overshoots η by N·RATE_AI/C).
	tests := []struct {
		name      string
		fastReact bool
		n         int
		joinEvery int
	}{
		{"8 flows start together", false, 8, 0},
		{"8 flows start together, fast react", true, 8, 0},
		{"4 flows join one by one", false, 4, 50},
		{"4 flows join one by one, fast react", true, 4, 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hpccTestConfig()
			cfg.FastReact = tc.fastReact
			cfg.PacketBytes = 9000
			flows, queue := hpccOneLink(cfg, tc.n, tc.joinEvery, 4000)
			want := cfg.UTarget*cfg.LineRate/float64(tc.n) + cfg.RateAI
			var total float64
			for i := range flows {
				total += flows[i].Rate()
				if math.Abs(flows[i].Rate()-want) > 0.01*want {
					t.Errorf("flow %d: rate %.4g, want %.4g ± 1%%", i, flows[i].Rate(), want)
				}
			}
			if queue > 1 {
				t.Errorf("queue %v bytes at the end, want empty", queue)
			}
			if total > cfg.LineRate {
				t.Errorf("total %v exceeds the link", total)
			}
		})
	}
}

func TestHPCCValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*HPCCConfig)
		want string
	}{
		{"ok", func(*HPCCConfig) {}, ""},
		{"zero line rate", func(c *HPCCConfig) { c.LineRate = 0 }, "LineRate"},
		{"min above line", func(c *HPCCConfig) { c.MinRate = 200e9 }, "MinRate"},
		{"negative AI", func(c *HPCCConfig) { c.RateAI = -1 }, "RateAI"},
		{"zero target", func(c *HPCCConfig) { c.UTarget = 0 }, "UTarget"},
		{"negative stage", func(c *HPCCConfig) { c.MaxStage = -1 }, "MaxStage"},
		{"zero RTT", func(c *HPCCConfig) { c.BaseRTT = 0 }, "BaseRTT"},
		{"negative window", func(c *HPCCConfig) { c.WindowBytes = -1 }, "WindowBytes"},
		{"NaN packet", func(c *HPCCConfig) { c.PacketBytes = math.NaN() }, "PacketBytes"},
	}
	for _, tc := range tests {
		cfg := hpccTestConfig()
		tc.edit(&cfg)
		err := cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestHPCCNoAllocs(t *testing.T) {
	for _, multi := range []bool{false, true} {
		cfg := hpccTestConfig()
		cfg.FastReact = true
		cfg.PacketBytes = 9000
		cfg.MultiRate = multi
		h := NewHPCC(&cfg)
		hops := []HopState{{QueueBytes: 1000, TxRate: 90e9, LinkRate: 100e9}, {QueueBytes: 0, TxRate: 40e9, LinkRate: 100e9}}
		now := engine.Time(0)
		allocs := testing.AllocsPerRun(100, func() {
			now += cfg.BaseRTT / 2
			h.OnFastReact(now, hops)
			now += cfg.BaseRTT / 2
			h.OnRound(now, hops)
			_ = h.Window()
		})
		if allocs != 0 {
			t.Fatalf("multi %v: %v allocations per round, want 0", multi, allocs)
		}
	}
}
