package cc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"simd/engine"
)

const (
	nsec = engine.Nanosecond
	usec = engine.Microsecond
	msec = engine.Millisecond
)

// simaiDCQCN is SimAI's repo SimAI.conf on a 400 Gb/s NIC.
func simaiDCQCN() DCQCNConfig {
	return DCQCNConfig{
		LineRate:             400e9,
		MinRate:              100e6,
		RateAI:               50e6,
		RateHAI:              100e6,
		G:                    0.00390625, // 1/256
		AlphaResumeInterval:  1 * usec,
		RateDecreaseInterval: 4 * usec,
		RPTimer:              900 * usec,
		FastRecoveryTimes:    1,
		RateOnFirstCNP:       1,
	}
}

// ns3DefaultDCQCN is ns-3's RdmaHw attribute defaults on a 100 Gb/s NIC.
func ns3DefaultDCQCN() DCQCNConfig {
	return DCQCNConfig{
		LineRate:             100e9,
		MinRate:              100e6,
		RateAI:               5e6,
		RateHAI:              50e6,
		G:                    1.0 / 16,
		AlphaResumeInterval:  55 * usec,
		RateDecreaseInterval: 4 * usec,
		RPTimer:              1500 * usec,
		FastRecoveryTimes:    5,
		RateOnFirstCNP:       1,
	}
}

// state is what a step of a hand-computed sequence expects.
type dcqcnState struct {
	rate, target, alpha float64
	stage               int
	next                engine.Time
}

func expectDCQCN(t *testing.T, step string, d *DCQCN, want dcqcnState) {
	t.Helper()
	if d.Rate() != want.rate || d.TargetRate() != want.target || d.Alpha() != want.alpha ||
		d.Stage() != want.stage || d.Next() != want.next {
		t.Fatalf("%s:\n got rate %v target %v alpha %v stage %d next %v\nwant rate %v target %v alpha %v stage %d next %v",
			step, d.Rate(), d.TargetRate(), d.Alpha(), d.Stage(), d.Next(),
			want.rate, want.target, want.alpha, want.stage, want.next)
	}
}

func expectRateChange(t *testing.T, step string, got, want bool) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: reported rate change %v, want %v", step, got, want)
	}
}

func TestDCQCNConfigValidate(t *testing.T) {
	for _, c := range []DCQCNConfig{simaiDCQCN(), ns3DefaultDCQCN()} {
		if err := c.Validate(); err != nil {
			t.Fatalf("valid config rejected: %v", err)
		}
	}
	cases := []struct {
		name   string
		modify func(*DCQCNConfig)
		want   string
	}{
		{"zero line rate", func(c *DCQCNConfig) { c.LineRate = 0 }, "line rate"},
		{"NaN line rate", func(c *DCQCNConfig) { c.LineRate = math.NaN() }, "line rate"},
		{"zero min rate", func(c *DCQCNConfig) { c.MinRate = 0 }, "MIN_RATE"},
		{"min above line", func(c *DCQCNConfig) { c.MinRate = 500e9 }, "MIN_RATE"},
		{"negative AI", func(c *DCQCNConfig) { c.RateAI = -1 }, "RATE_AI"},
		{"infinite HAI", func(c *DCQCNConfig) { c.RateHAI = math.Inf(1) }, "RATE_HAI"},
		{"gain above 1", func(c *DCQCNConfig) { c.G = 1.5 }, "EWMA_GAIN"},
		{"NaN gain", func(c *DCQCNConfig) { c.G = math.NaN() }, "EWMA_GAIN"},
		{"zero alpha interval", func(c *DCQCNConfig) { c.AlphaResumeInterval = 0 }, "ALPHA_RESUME_INTERVAL"},
		{"negative decrease interval", func(c *DCQCNConfig) { c.RateDecreaseInterval = -usec }, "RATE_DECREASE_INTERVAL"},
		{"SimAI's default RP_TIMER 0", func(c *DCQCNConfig) { c.RPTimer = 0 }, "RP_TIMER"},
		{"negative recovery", func(c *DCQCNConfig) { c.FastRecoveryTimes = -1 }, "FAST_RECOVERY_TIMES"},
		{"zero first-CNP rate", func(c *DCQCNConfig) { c.RateOnFirstCNP = 0 }, "RateOnFirstCnp"},
		{"first-CNP rate above 1", func(c *DCQCNConfig) { c.RateOnFirstCNP = 1.5 }, "RateOnFirstCnp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := simaiDCQCN()
			tc.modify(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
	// Every problem is reported, not just the first.
	c := simaiDCQCN()
	c.G, c.RPTimer = 2, 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "EWMA_GAIN") || !strings.Contains(err.Error(), "RP_TIMER") {
		t.Fatalf("Validate() = %v, want both EWMA_GAIN and RP_TIMER", err)
	}
}

func TestDCQCNBeforeFirstCNP(t *testing.T) {
	cfg := simaiDCQCN()
	d := NewDCQCN(&cfg, 3*usec)
	expectDCQCN(t, "new", &d, dcqcnState{rate: 400e9, target: 400e9, alpha: 1, next: engine.Never})
	expectRateChange(t, "advance 1 s", d.Advance(engine.Second), false)
	expectDCQCN(t, "after 1 s without a CNP", &d, dcqcnState{rate: 400e9, target: 400e9, alpha: 1, next: engine.Never})
}

// SimAI's repo values: the first CNP, the first decrease 4 µs + 1 ns later with α after exactly
// four updates, then fast recovery, active increase and hyper increase back to the line rate.
func TestDCQCNSimAISequence(t *testing.T) {
	cfg := simaiDCQCN()
	const L = 400e9
	t0 := 10 * usec
	d := NewDCQCN(&cfg, 0)

	// First CNP: α = 1 with its CNP bit cleared, rate = target = 1.0·L, timers start.
	expectRateChange(t, "first CNP", d.OnCNP(t0), false)
	expectDCQCN(t, "first CNP", &d, dcqcnState{rate: L, target: L, alpha: 1, next: t0 + 4*usec + 1*nsec})

	// α updates at t0+1, 2, 3, 4 µs, no CNP since the first: α = (255/256)^4
	// = 4228250625/4294967296 ≈ 0.984466 (exact in float64). The decrease is 1 ns later.
	a4 := 4228250625.0 / 4294967296.0
	expectRateChange(t, "t0+4us", d.Advance(t0+4*usec), false)
	expectDCQCN(t, "t0+4us", &d, dcqcnState{rate: L, target: L, alpha: a4, next: t0 + 4*usec + 1*nsec})

	// First decrease (the first CNP left the decrease bit set): stage 0 and no clamp, so the
	// target stays L; rate = L·(1 − α/2) = 400e9·4361683967/8589934592 ≈ 203.106737 Gb/s. The
	// increase timer is armed RP_TIMER later.
	r1 := L * (1 - a4/2)
	if math.Abs(r1-203.106737090e9) > 1 {
		t.Fatalf("hand value off: %v", r1)
	}
	td := t0 + 4*usec + 1*nsec
	expectRateChange(t, "first decrease", d.Advance(td), true)
	expectDCQCN(t, "first decrease", &d, dcqcnState{rate: r1, target: L, alpha: a4, next: td + 900*usec})

	// Nothing changes until the increase event, however often the caller looks.
	for _, at := range []engine.Time{td + 1*nsec, td + 100*usec, td + 900*usec - 1} {
		expectRateChange(t, "between", d.Advance(at), false)
	}

	// Fast recovery (stage 0 < FAST_RECOVERY_TIMES 1): rate = r1/2 + L/2 ≈ 301.553 Gb/s.
	r2 := r1/2 + L/2
	expectRateChange(t, "fast recovery", d.Advance(td+900*usec), true)
	if want := math.Pow(255.0/256, 904); math.Abs(d.Alpha()-want) > 1e-12*want {
		t.Fatalf("alpha after 904 updates = %v, want (255/256)^904 = %v", d.Alpha(), want)
	}
	if d.Rate() != r2 || d.TargetRate() != L || d.Stage() != 1 || d.Next() != td+1800*usec {
		t.Fatalf("fast recovery: rate %v target %v stage %d next %v", d.Rate(), d.TargetRate(), d.Stage(), d.Next())
	}

	// Active increase (stage 1): target = min(L + 50 Mb/s, L) = L, rate = r2/2 + L/2.
	r3 := r2/2 + L/2
	expectRateChange(t, "active increase", d.Advance(td+1800*usec), true)
	if d.Rate() != r3 || d.TargetRate() != L || d.Stage() != 2 || d.Next() != td+2700*usec {
		t.Fatalf("active increase: rate %v target %v stage %d next %v", d.Rate(), d.TargetRate(), d.Stage(), d.Next())
	}

	// Hyper increases (stage ≥ 2) with the target pinned at L: the gap to L halves each
	// event until it is below half an ulp and the rate is exactly L; then nothing can change
	// and Next is Never.
	rate, stage, at := r3, 2, td+2700*usec
	for rate != L {
		if stage > 80 {
			t.Fatal("rate never reached the line rate")
		}
		if d.Next() != at {
			t.Fatalf("stage %d: next %v, want %v", stage, d.Next(), at)
		}
		rate = rate/2 + L/2
		stage++
		expectRateChange(t, "hyper increase", d.Advance(at), true)
		if d.Rate() != rate || d.TargetRate() != L || d.Stage() != stage {
			t.Fatalf("hyper increase: rate %v target %v stage %d, want %v %v %d", d.Rate(), d.TargetRate(), d.Stage(), rate, L, stage)
		}
		at += 900 * usec
	}
	if d.Next() != engine.Never {
		t.Fatalf("at the line rate: next %v, want never", d.Next())
	}
	// The increase events keep counting stages while changing nothing.
	expectRateChange(t, "idle", d.Advance(at+10*900*usec), false)
	if d.Stage() != stage+11 {
		t.Fatalf("stage %d, want %d", d.Stage(), stage+11)
	}
}

// ns-3's own defaults: α = 1 at the first decrease (the first α update is 55 µs away), so the
// rate halves exactly; five fast-recovery events each halve the gap to the target.
func TestDCQCNNs3DefaultsSequence(t *testing.T) {
	cfg := ns3DefaultDCQCN()
	const L = 100e9
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(0)
	td := 4*usec + 1*nsec
	expectDCQCN(t, "first CNP", &d, dcqcnState{rate: L, target: L, alpha: 1, next: td})
	expectRateChange(t, "first decrease", d.Advance(td), true)
	expectDCQCN(t, "first decrease", &d, dcqcnState{rate: 50e9, target: L, alpha: 1, next: td + 1500*usec})

	// α updates at 55 µs, 110 µs, ...: (15/16)^k, no CNP after the first.
	d.Advance(55 * usec)
	if d.Alpha() != 0.9375 {
		t.Fatalf("alpha at 55us = %v, want 15/16", d.Alpha())
	}

	// Fast recovery 5 times: rate = L − (L/2)/2^n.
	for n, want := range []float64{75e9, 87.5e9, 93.75e9, 96.875e9, 98.4375e9} {
		at := td + engine.Time(n+1)*1500*usec
		expectRateChange(t, "fast recovery", d.Advance(at), true)
		alpha := math.Pow(15.0/16, float64(at/(55*usec)))
		if d.Rate() != want || d.TargetRate() != L || d.Stage() != n+1 || d.Next() != at+1500*usec ||
			math.Abs(d.Alpha()-alpha) > 1e-12*alpha {
			t.Fatalf("fast recovery %d: rate %v target %v stage %d next %v alpha %v (want %v)",
				n+1, d.Rate(), d.TargetRate(), d.Stage(), d.Next(), d.Alpha(), alpha)
		}
	}
	// Active increase at stage 5: target = min(L + 5 Mb/s, L) = L, rate = 99.21875 Gb/s.
	d.Advance(td + 6*1500*usec)
	if d.Rate() != 99.21875e9 || d.TargetRate() != L || d.Stage() != 6 {
		t.Fatalf("active increase: rate %v target %v stage %d", d.Rate(), d.TargetRate(), d.Stage())
	}
	// Hyper increase at stage 6: rate = 99.609375 Gb/s.
	d.Advance(td + 7*1500*usec)
	if d.Rate() != 99.609375e9 || d.Stage() != 7 {
		t.Fatalf("hyper increase: rate %v stage %d", d.Rate(), d.Stage())
	}
}

// CLAMP_TARGET_RATE only matters for a decrease with no increase event since the previous
// decrease (stage 0); after an increase event the target is clamped either way.
func TestDCQCNClampTargetRate(t *testing.T) {
	const L = 100e9
	for _, tc := range []struct {
		clamp            bool
		target2          float64 // target after the second decrease
		fastRecoveryRate float64 // rate after the first increase event
	}{
		// Second decrease at 8.001 µs, stage 0: target stays L unclamped, becomes 50e9 clamped.
		// α is still 1 (no α update before 55 µs), so rate 50e9 → 25e9 either way.
		// Fast recovery at 1508.001 µs: (25e9 + 100e9)/2 = 62.5e9 or (25e9 + 50e9)/2 = 37.5e9.
		{clamp: false, target2: L, fastRecoveryRate: 62.5e9},
		{clamp: true, target2: 50e9, fastRecoveryRate: 37.5e9},
	} {
		cfg := ns3DefaultDCQCN()
		cfg.ClampTargetRate = tc.clamp
		d := NewDCQCN(&cfg, 0)
		d.OnCNP(0)
		d.OnCNP(5 * usec)
		d.Advance(8*usec + 1*nsec)
		if d.Rate() != 25e9 || d.TargetRate() != tc.target2 || d.Stage() != 0 {
			t.Fatalf("clamp %v, second decrease: rate %v target %v stage %d", tc.clamp, d.Rate(), d.TargetRate(), d.Stage())
		}
		if d.Next() != 1508*usec+1*nsec {
			t.Fatalf("clamp %v: next %v", tc.clamp, d.Next())
		}
		d.Advance(1508*usec + 1*nsec)
		if d.Rate() != tc.fastRecoveryRate || d.Stage() != 1 {
			t.Fatalf("clamp %v, fast recovery: rate %v stage %d", tc.clamp, d.Rate(), d.Stage())
		}
		// A CNP at 1510 µs during recovery (stage 1): the check at 1512.001 µs clamps the target
		// to the current rate in both modes. α: the CNP at 5 µs made the update at 55 µs
		// (15/16)·1 + 1/16 = 1; the 26 updates at 110..1485 µs decayed it to (15/16)^26.
		r := d.Rate()
		d.OnCNP(1510 * usec)
		if d.Next() != 1512*usec+1*nsec {
			t.Fatalf("clamp %v: next %v, want the decrease check at 1512.001us", tc.clamp, d.Next())
		}
		d.Advance(1512*usec + 1*nsec)
		alpha := math.Pow(15.0/16, 26)
		if math.Abs(d.Alpha()-alpha) > 1e-15 {
			t.Fatalf("clamp %v: alpha %v, want %v", tc.clamp, d.Alpha(), alpha)
		}
		want := r * (1 - d.Alpha()/2)
		if d.TargetRate() != r || d.Rate() != want || d.Stage() != 0 {
			t.Fatalf("clamp %v, decrease during recovery: rate %v target %v stage %d, want %v %v 0",
				tc.clamp, d.Rate(), d.TargetRate(), d.Stage(), want, r)
		}
	}
}

// Hyper increase raises the target by RATE_HAI per event and caps it at the line rate.
func TestDCQCNHyperIncrease(t *testing.T) {
	const L = 100e9
	cfg := DCQCNConfig{
		LineRate: L, MinRate: 100e6, RateAI: 1e9, RateHAI: 2e9, G: 1.0 / 16,
		AlphaResumeInterval: 1000 * usec, RateDecreaseInterval: 4 * usec, RPTimer: 10 * usec,
		FastRecoveryTimes: 1, ClampTargetRate: true, RateOnFirstCNP: 1,
	}
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(0)
	d.OnCNP(5 * usec)
	// Decreases at 4.001 µs (target L, rate 50e9) and 8.001 µs (clamped target 50e9, rate 25e9),
	// α = 1 throughout (first α update at 1 ms).
	d.Advance(8*usec + 1*nsec)
	expectDCQCN(t, "second decrease", &d, dcqcnState{rate: 25e9, target: 50e9, alpha: 1, next: 18*usec + 1*nsec})
	steps := []dcqcnState{
		{rate: 37.5e9, target: 50e9, stage: 1},   // fast recovery: (25 + 50)/2
		{rate: 44.25e9, target: 51e9, stage: 2},  // active increase: target 50 + 1, (37.5 + 51)/2
		{rate: 48.625e9, target: 53e9, stage: 3}, // hyper: target 51 + 2, (44.25 + 53)/2
		{rate: 51.8125e9, target: 55e9, stage: 4},
	}
	at := 18*usec + 1*nsec
	for i, s := range steps {
		expectRateChange(t, "increase", d.Advance(at), true)
		s.alpha, s.next = 1, at+10*usec
		expectDCQCN(t, "increase "+string(rune('1'+i)), &d, s)
		at += 10 * usec
	}
	// 55 + 2m reaches 101 > L at m = 23: the target is capped at L.
	target := 55e9
	for m := 1; m <= 23; m++ {
		d.Advance(at)
		target = min(target+2e9, L)
		if d.TargetRate() != target {
			t.Fatalf("hyper %d: target %v, want %v", m, d.TargetRate(), target)
		}
		at += 10 * usec
	}
	if d.TargetRate() != L {
		t.Fatalf("target %v, want capped at %v", d.TargetRate(), L)
	}
	for d.Next() != engine.Never {
		d.Advance(d.Next())
		if d.Rate() > L || d.TargetRate() != L {
			t.Fatalf("rate %v target %v above the line rate", d.Rate(), d.TargetRate())
		}
	}
	if d.Rate() != L {
		t.Fatalf("settled at %v, want %v", d.Rate(), L)
	}
}

// Repeated CNPs halve the rate (α stays exactly 1) down to MIN_RATE, which floors it.
func TestDCQCNMinRateFloor(t *testing.T) {
	cfg := ns3DefaultDCQCN()
	d := NewDCQCN(&cfg, 0)
	want := []float64{50e9, 25e9, 12.5e9, 6.25e9, 3.125e9, 1.5625e9, 781.25e6, 390.625e6, 195.3125e6,
		100e6, // 97.65625e6 floored
		100e6, // 50e6 floored
		100e6,
	}
	d.OnCNP(0)
	for j, w := range want {
		// Checks at 4(j+1) µs + 1 ns, each with a CNP since the previous one, all before the
		// first α update at 55 µs.
		at := engine.Time(j+1)*4*usec + 1*nsec
		d.Advance(at)
		if d.Rate() != w || d.Alpha() != 1 {
			t.Fatalf("decrease %d: rate %v alpha %v, want %v and 1", j+1, d.Rate(), d.Alpha(), w)
		}
		d.OnCNP(at + 499*nsec)
	}
}

// Fast-recovery events with rate == target change nothing; Next looks past them to the active
// increase. α = 0 makes the first decrease a no-op: g = 1 and no CNP before the first update
// at 1 µs give α = 0, and RateOnFirstCnp 0.5 leaves rate = target = L/2.
func TestDCQCNSkipsIdleFastRecovery(t *testing.T) {
	cfg := simaiDCQCN()
	cfg.G = 1
	cfg.RateOnFirstCNP = 0.5
	cfg.FastRecoveryTimes = 5
	d := NewDCQCN(&cfg, 0)
	expectRateChange(t, "first CNP", d.OnCNP(0), true)
	expectDCQCN(t, "first CNP", &d, dcqcnState{rate: 200e9, target: 200e9, alpha: 1, next: 4*usec + 1*nsec})
	expectRateChange(t, "decrease with alpha 0", d.Advance(4*usec+1*nsec), false)
	// Increase events at 904.001, 1804.001, ... µs; stages 0..4 are idle fast recovery, the
	// sixth event (stage 5) is the active increase: target 200e9 + 50e6, rate 200.025e9.
	ai := 4*usec + 1*nsec + 6*900*usec
	expectDCQCN(t, "after decrease", &d, dcqcnState{rate: 200e9, target: 200e9, alpha: 0, next: ai})
	expectRateChange(t, "idle recovery", d.Advance(ai-1), false)
	if d.Stage() != 5 {
		t.Fatalf("stage %d, want 5", d.Stage())
	}
	expectRateChange(t, "active increase", d.Advance(ai), true)
	expectDCQCN(t, "active increase", &d, dcqcnState{rate: 200.025e9, target: 200.05e9, alpha: 0, stage: 6, next: ai + 900*usec})
}

// Equal-time ordering, each case checked against what the other order would give.
func TestDCQCNEqualTimeOrdering(t *testing.T) {
	const L = 100e9
	base := func() DCQCNConfig {
		return DCQCNConfig{
			LineRate: L, MinRate: 100e6, RateAI: 5e6, RateHAI: 50e6, G: 1.0 / 16,
			AlphaResumeInterval: 1000 * usec, RateDecreaseInterval: 4 * usec, RPTimer: 1000 * usec,
			FastRecoveryTimes: 5, RateOnFirstCNP: 1,
		}
	}
	cases := []struct {
		name   string
		modify func(*DCQCNConfig)
		cnps   []engine.Time
		until  engine.Time
		want   dcqcnState // next is not checked
	}{
		{
			// Both armed by the first CNP, α first: α = 15/16 (bit cleared) at the decrease,
			// rate = L·(1 − 15/32) = 53.125e9. (Decrease first would give L/2.)
			name:   "alpha update before the first check when A = D + 1ns",
			modify: func(c *DCQCNConfig) { c.AlphaResumeInterval = 4*usec + 1*nsec },
			cnps:   []engine.Time{0},
			until:  4*usec + 1*nsec,
			want:   dcqcnState{rate: 53.125e9, target: L, alpha: 15.0 / 16},
		},
		{
			// A = D = 1 ns: the check at 2 ns was armed at 0, the α update due at 2 ns at 1 ns,
			// so the check runs with α = 15/16 and the update after it: α = (15/16)^2.
			name:   "first check before the alpha update armed later",
			modify: func(c *DCQCNConfig) { c.AlphaResumeInterval, c.RateDecreaseInterval = 1*nsec, 1*nsec },
			cnps:   []engine.Time{0},
			until:  2 * nsec,
			want:   dcqcnState{rate: 53.125e9, target: L, alpha: 225.0 / 256},
		},
		{
			// A = D = 1 ns, CNP at 2.5 ns: at 3 ns the check and the update were both armed at
			// 2 ns, the check first (it ran first at 2 ns). The check sees α = (15/16)^2:
			// rate = 53.125e9·(1 − 225/512) = 29.78515625e9; the update then adds the CNP:
			// α = (15/16)^3 + 1/16 = 3631/4096.
			name:   "check before the alpha update when A = D",
			modify: func(c *DCQCNConfig) { c.AlphaResumeInterval, c.RateDecreaseInterval = 1*nsec, 1*nsec },
			cnps:   []engine.Time{0, 2*nsec + 500},
			until:  3 * nsec,
			want:   dcqcnState{rate: 53.125e9 * (1 - 225.0/512), target: L, alpha: 3631.0 / 4096},
		},
		{
			// RP_TIMER 8 µs > D: the increase due at 12.001 µs (armed at 4.001) runs before the
			// check armed at 8.001: fast recovery 50e9 → 75e9 (stage 1), then the decrease
			// clamps the target to 75e9 and halves the rate (α = 1).
			// (Check first would cancel the increase: target L, rate 25e9.)
			name:   "increase before the check when RP_TIMER > D",
			modify: func(c *DCQCNConfig) { c.RPTimer = 8 * usec },
			cnps:   []engine.Time{0, 9 * usec},
			until:  12*usec + 1*nsec,
			want:   dcqcnState{rate: 37.5e9, target: 75e9, alpha: 1},
		},
		{
			// RP_TIMER = D = 4 µs: the check at 8.001 µs was armed before the increase (same
			// instant, the check re-arms itself first), so it runs first and cancels the
			// increase: stage 0, no clamp, rate 50e9 → 25e9.
			name:   "check before the increase when RP_TIMER = D",
			modify: func(c *DCQCNConfig) { c.RPTimer = 4 * usec },
			cnps:   []engine.Time{0, 5 * usec},
			until:  8*usec + 1*nsec,
			want:   dcqcnState{rate: 25e9, target: L, alpha: 1},
		},
		{
			// CNP at the instant of an α update: the update runs first (with the bit cleared by
			// the first CNP): α(1µs) = 15/16; then α(2µs) = (15/16)^2 + 1/16 = 241/256, and two
			// plain decays: α(4µs) = 241·225/65536 = 54225/65536. The decrease at 4.001 µs:
			// rate = L·(1 − 54225/131072).
			name:   "CNP after an alpha update at the same instant",
			modify: func(c *DCQCNConfig) { c.AlphaResumeInterval = 1 * usec },
			cnps:   []engine.Time{0, 1 * usec},
			until:  4*usec + 1*nsec,
			want:   dcqcnState{rate: L * (1 - 54225.0/131072), target: L, alpha: 54225.0 / 65536},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.modify(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			d := NewDCQCN(&cfg, 0)
			ref := newRefDCQCN(&cfg)
			for _, c := range tc.cnps {
				d.OnCNP(c)
				ref.cnp(c)
			}
			d.Advance(tc.until)
			ref.runUntil(tc.until)
			if d.Rate() != tc.want.rate || d.TargetRate() != tc.want.target || d.Alpha() != tc.want.alpha {
				t.Fatalf("rate %v target %v alpha %v, want %v %v %v",
					d.Rate(), d.TargetRate(), d.Alpha(), tc.want.rate, tc.want.target, tc.want.alpha)
			}
			if ref.rate != d.Rate() || ref.target != d.TargetRate() || ref.alpha != d.Alpha() {
				t.Fatalf("reference disagrees: rate %v target %v alpha %v", ref.rate, ref.target, ref.alpha)
			}
		})
	}
}

// One call that spans a second: 10^6 α updates folded, α compared with (1−g)^k computed
// directly and with an eager loop; the rate is back at the line rate after 1111 increase events.
func TestDCQCNAdvanceOneSecondLazily(t *testing.T) {
	cfg := simaiDCQCN()
	cfg.G = 1.0 / 65536 // small enough that (1−g)^(10^6) ≈ 2.4e-7 does not underflow
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(0)
	d.Advance(engine.Second)

	const k = 1_000_000 // updates at 1, 2, ..., 10^6 µs; the first decays (bit cleared)
	direct := math.Pow(1-cfg.G, k)
	if rel := math.Abs(d.Alpha()-direct) / direct; rel > 1e-12 {
		t.Fatalf("alpha %v, (1-g)^%d = %v, relative difference %v", d.Alpha(), k, direct, rel)
	}
	eager := 1.0
	for range k {
		eager *= 1 - cfg.G
	}
	if rel := math.Abs(d.Alpha()-eager) / eager; rel > 1e-9 {
		t.Fatalf("alpha %v, eager loop %v, relative difference %v", d.Alpha(), eager, rel)
	}
	// Increase events at 4.001 µs + m·900 µs ≤ 1 s: m = 1..1111.
	if d.Rate() != 400e9 || d.TargetRate() != 400e9 || d.Stage() != 1111 || d.Next() != engine.Never {
		t.Fatalf("after 1 s: rate %v target %v stage %d next %v", d.Rate(), d.TargetRate(), d.Stage(), d.Next())
	}
}

// ns-3's DataRate is a uint64: with IntegerRates every result is truncated.
func TestDCQCNIntegerRates(t *testing.T) {
	cfg := simaiDCQCN()
	cfg.IntegerRates = true
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(0)
	td := 4*usec + 1*nsec
	d.Advance(td)
	// trunc(400e9·(1 − (255/256)^4/2)) = trunc(203106737090.27) = 203106737090
	if d.Rate() != 203106737090 {
		t.Fatalf("decrease: rate %v", d.Rate())
	}
	// Fast recovery: 203106737090/2 + 400e9/2 = 101553368545 + 200e9
	d.Advance(td + 900*usec)
	if d.Rate() != 301553368545 {
		t.Fatalf("fast recovery: rate %v", d.Rate())
	}
	// Active increase: trunc(301553368545/2) + 200e9 = 150776684272 + 200e9
	d.Advance(td + 1800*usec)
	if d.Rate() != 350776684272 {
		t.Fatalf("active increase: rate %v", d.Rate())
	}
}

func TestDCQCNTimeGoingBackwardsPanics(t *testing.T) {
	cfg := simaiDCQCN()
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(10 * usec)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	d.Advance(5 * usec)
}

// Advancing to the end of time terminates (no timer arithmetic wraps around) and leaves
// nothing to do.
func TestDCQCNAdvanceToNever(t *testing.T) {
	cfg := simaiDCQCN()
	d := NewDCQCN(&cfg, 0)
	d.OnCNP(0)
	d.Advance(engine.Never)
	if d.Rate() != cfg.LineRate || d.Alpha() != 0 || d.Next() != engine.Never {
		t.Fatalf("rate %v alpha %v next %v", d.Rate(), d.Alpha(), d.Next())
	}
}

func TestDCQCNDoesNotAllocate(t *testing.T) {
	cfg := simaiDCQCN()
	d := NewDCQCN(&cfg, 0)
	now := engine.Time(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += 3 * usec
		d.OnCNP(now)
		now += 977 * usec
		d.Advance(now)
		_ = d.Next()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per OnCNP+Advance+Next", allocs)
	}
}

// refDCQCN is ns-3's reaction point stepped eagerly: three timers ordered by (time, schedule
// sequence) exactly as ns-3's scheduler orders them, every α update run one by one. It shares
// no code with DCQCN.
type refDCQCN struct {
	cfg                         *DCQCNConfig
	rate, target, alpha         float64
	stage                       int
	alphaBit, decreaseBit, seen bool
	alphaEv, decreaseEv, incEv  dcqcnRefEvent
	seq                         uint64
	changes                     []engine.Time // times at which the rate changed
}

type dcqcnRefEvent struct {
	at    engine.Time
	seq   uint64
	armed bool
}

func newRefDCQCN(cfg *DCQCNConfig) *refDCQCN {
	return &refDCQCN{cfg: cfg, rate: cfg.LineRate, target: cfg.LineRate, alpha: 1}
}

func (r *refDCQCN) schedule(ev *dcqcnRefEvent, at engine.Time) {
	r.seq++
	*ev = dcqcnRefEvent{at: at, seq: r.seq, armed: true}
}

func (r *refDCQCN) trunc(x float64) float64 {
	if r.cfg.IntegerRates {
		return math.Trunc(x)
	}
	return x
}

func (r *refDCQCN) runUntil(now engine.Time) {
	c := r.cfg
	for {
		var ev *dcqcnRefEvent
		for _, e := range [...]*dcqcnRefEvent{&r.alphaEv, &r.decreaseEv, &r.incEv} {
			if e.armed && e.at <= now && (ev == nil || e.at < ev.at || e.at == ev.at && e.seq < ev.seq) {
				ev = e
			}
		}
		if ev == nil {
			return
		}
		at, before := ev.at, r.rate
		switch ev {
		case &r.alphaEv: // UpdateAlphaMlx
			if r.alphaBit {
				r.alpha = float64((1-c.G)*r.alpha) + c.G
			} else {
				r.alpha = (1 - c.G) * r.alpha
			}
			r.alphaBit = false
			r.schedule(&r.alphaEv, at+c.AlphaResumeInterval)
		case &r.decreaseEv: // CheckRateDecreaseMlx
			r.schedule(&r.decreaseEv, at+c.RateDecreaseInterval)
			if r.decreaseBit {
				if c.ClampTargetRate || r.stage != 0 {
					r.target = r.rate
				}
				r.rate = math.Max(c.MinRate, r.trunc(r.rate*(1-r.alpha/2)))
				r.stage = 0
				r.decreaseBit = false
				r.schedule(&r.incEv, at+c.RPTimer) // cancels the pending one
			}
		case &r.incEv: // RateIncEventTimerMlx
			r.schedule(&r.incEv, at+c.RPTimer)
			switch {
			case r.stage < c.FastRecoveryTimes:
			case r.stage == c.FastRecoveryTimes:
				r.target = min(r.trunc(r.target+c.RateAI), c.LineRate)
			default:
				r.target = min(r.trunc(r.target+c.RateHAI), c.LineRate)
			}
			r.rate = r.trunc(r.rate/2) + r.trunc(r.target/2)
			r.stage++
		}
		if r.rate != before {
			r.changes = append(r.changes, at)
		}
	}
}

// cnp is cnp_received_mlx, after the timers due at the same instant.
func (r *refDCQCN) cnp(now engine.Time) {
	r.runUntil(now)
	r.alphaBit, r.decreaseBit = true, true
	if !r.seen {
		r.seen = true
		r.alpha = 1
		r.alphaBit = false
		r.schedule(&r.alphaEv, now+r.cfg.AlphaResumeInterval)
		r.schedule(&r.decreaseEv, now+r.cfg.RateDecreaseInterval+1*nsec)
		before := r.rate
		r.rate = r.trunc(r.cfg.RateOnFirstCNP * r.rate)
		r.target = r.rate
		if r.rate != before {
			r.changes = append(r.changes, now)
		}
	}
}

// randomDCQCNConfig draws a configuration, either SimAI-like (µs intervals) or with intervals of a
// few ns chosen to collide, so that every equal-time rule gets exercised.
func randomDCQCNConfig(rng *rand.Rand, tiny bool) DCQCNConfig {
	pick := func(xs ...engine.Time) engine.Time { return xs[rng.IntN(len(xs))] }
	pickF := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	c := DCQCNConfig{
		LineRate:          pickF(400e9, 100e9, 25e9),
		MinRate:           pickF(100e6, 5e9),
		RateAI:            pickF(50e6, 5e6, 2e9, 0),
		RateHAI:           pickF(100e6, 50e6, 5e9, 0),
		G:                 pickF(1.0/256, 1.0/16, 0.5, 1, 0, 0.3),
		FastRecoveryTimes: rng.IntN(6),
		ClampTargetRate:   rng.IntN(2) == 0,
		RateOnFirstCNP:    pickF(1, 1, 0.5, 0.8),
		IntegerRates:      rng.IntN(3) == 0,
	}
	if tiny {
		c.AlphaResumeInterval = pick(500, 1*nsec, 2*nsec, 3*nsec, 1*nsec+500)
		c.RateDecreaseInterval = pick(500, 1*nsec, 2*nsec, 3*nsec)
		c.RPTimer = pick(1*nsec, 2*nsec, 3*nsec, 4*nsec, 10*nsec)
	} else {
		c.AlphaResumeInterval = pick(1*usec, 2*usec, 4*usec, 4*usec+1*nsec, 55*usec, 3*usec)
		c.RateDecreaseInterval = pick(4*usec, 1*usec, 2*usec, 8*usec)
		c.RPTimer = pick(4*usec, 8*usec, 12*usec, 100*usec, 900*usec, 1500*usec)
	}
	return c
}

// randomCNPTimes draws CNP times in [0, horizon): bursts and isolated ones, many on round times
// (multiples of unit, or 1 ns past one) where they tie with timers.
func randomCNPTimes(rng *rand.Rand, horizon, unit engine.Time) []engine.Time {
	var times []engine.Time
	t := engine.Time(rng.Int64N(int64(horizon / 10)))
	for t < horizon {
		switch rng.IntN(4) {
		case 0:
			t = t / unit * unit
		case 1:
			t = t/unit*unit + 1*nsec
		}
		if n := len(times); n > 0 && t < times[n-1] {
			t = times[n-1] // rounding down must not reorder
		}
		times = append(times, t)
		if rng.IntN(3) == 0 {
			t += engine.Time(rng.Int64N(int64(horizon / 5))) // quiet period
		} else {
			t += engine.Time(rng.Int64N(int64(unit*8))) + 1 // burst
		}
	}
	return times
}

func dcqcnClose(a, b, rel, abs float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+abs
}

// runDCQCNAgainstReference drives the lazy machine only at CNPs, at its own Next() and at random
// probe times, and the eager reference alongside it, comparing their states after every call.
// With exact set, α folding is forced onto the exact path and the states must be identical,
// and every instant at which the reference's rate changed must be one the lazy machine was
// called at (so Next never skipped a change).
func runDCQCNAgainstReference(t *testing.T, rng *rand.Rand, cfg DCQCNConfig, horizon, unit engine.Time, exact bool) {
	t.Helper()
	cnps := randomCNPTimes(rng, horizon, unit)
	d := NewDCQCN(&cfg, 0)
	ref := newRefDCQCN(&cfg)
	called := map[engine.Time]bool{}
	probe := engine.Time(rng.Int64N(int64(horizon / 4)))
	ci := 0
	for {
		cnpAt := engine.Never
		if ci < len(cnps) {
			cnpAt = cnps[ci]
		}
		at := min(d.Next(), cnpAt, probe)
		if at >= horizon {
			break
		}
		before := ref.rate
		var changed bool
		if at == cnpAt {
			changed = d.OnCNP(at)
			ref.cnp(at)
			ci++
		} else {
			changed = d.Advance(at)
			ref.runUntil(at)
		}
		if at == probe {
			probe += engine.Time(rng.Int64N(int64(horizon/4))) + 1
		}
		called[at] = true
		if d.Stage() != ref.stage {
			t.Fatalf("%+v\nat %v: stage %d, reference %d", cfg, at, d.Stage(), ref.stage)
		}
		if exact {
			// α is flushed to 0 where ns-3's sinks into subnormals; nothing else may differ.
			sameAlpha := d.Alpha() == ref.alpha || d.Alpha() == 0 && ref.alpha < minNormalAlpha
			if d.Rate() != ref.rate || d.TargetRate() != ref.target || !sameAlpha {
				t.Fatalf("%+v\nat %v: rate %v target %v alpha %v\nreference rate %v target %v alpha %v",
					cfg, at, d.Rate(), d.TargetRate(), d.Alpha(), ref.rate, ref.target, ref.alpha)
			}
			if changed != (ref.rate != before) {
				t.Fatalf("%+v\nat %v: reported change %v, reference went %v -> %v", cfg, at, changed, before, ref.rate)
			}
		} else if !dcqcnClose(d.Rate(), ref.rate, 1e-12, 0) || !dcqcnClose(d.TargetRate(), ref.target, 1e-12, 0) ||
			!dcqcnClose(d.Alpha(), ref.alpha, 1e-12, 1e-300) {
			t.Fatalf("%+v\nat %v: rate %v target %v alpha %v\nreference rate %v target %v alpha %v",
				cfg, at, d.Rate(), d.TargetRate(), d.Alpha(), ref.rate, ref.target, ref.alpha)
		}
	}
	if exact {
		for _, c := range ref.changes {
			if !called[c] {
				t.Fatalf("%+v\nreference rate changed at %v, which Next never announced", cfg, c)
			}
		}
	}
}

func TestDCQCNMatchesEagerReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	saved := exactAlphaTicks
	defer func() { exactAlphaTicks = saved }()
	for _, exact := range []bool{true, false} {
		exactAlphaTicks = saved
		if exact {
			exactAlphaTicks = math.MaxInt64
		}
		for i := range 300 {
			tiny := i%3 == 0
			cfg := randomDCQCNConfig(rng, tiny)
			if !exact {
				cfg.IntegerRates = false // truncation can amplify a 1e-16 difference to 1 bit/s
			}
			if err := cfg.Validate(); err != nil {
				continue
			}
			horizon, unit := 20*msec, 1*usec
			if tiny {
				horizon, unit = 3*usec, 1*nsec
			}
			runDCQCNAgainstReference(t, rng, cfg, horizon, unit, exact)
		}
	}
	// SimAI's own values over a longer stretch.
	for range 20 {
		cfg := simaiDCQCN()
		exactAlphaTicks = math.MaxInt64
		runDCQCNAgainstReference(t, rng, cfg, 50*msec, 1*usec, true)
		exactAlphaTicks = saved
		runDCQCNAgainstReference(t, rng, cfg, 50*msec, 1*usec, false)
	}
}

// Advance at any instant strictly before Next() changes nothing.
func TestDCQCNNothingChangesBeforeNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		cfg := randomDCQCNConfig(rng, false)
		if cfg.Validate() != nil {
			continue
		}
		d := NewDCQCN(&cfg, 0)
		cnps := randomCNPTimes(rng, 20*msec, usec)
		now := engine.Time(0)
		for _, c := range cnps {
			for {
				next := d.Next()
				if next > c {
					break
				}
				if next-now > 1 {
					probe := d
					at := now + 1 + engine.Time(rng.Int64N(int64(next-now-1)))
					if probe.Advance(at) {
						t.Fatalf("%+v\nrate changed at %v before Next() = %v", cfg, at, next)
					}
				}
				d.Advance(next)
				now = next
			}
			d.OnCNP(c)
			now = c
		}
	}
}

// recoveredDCQCN is a flow that saw one CNP and is back at the line rate, with α still
// decaying and all three timers running.
func recoveredDCQCN(cfg *DCQCNConfig) DCQCN {
	d := NewDCQCN(cfg, 0)
	d.OnCNP(0)
	for d.Next() != engine.Never {
		d.Advance(d.Next())
	}
	return d
}

// BenchmarkDCQCNIdleGap is one Advance over a gap from 1 µs to 1000 s, from the same recovered
// state each time: the α updates, decrease checks and increase events in the gap are folded,
// so the cost does not grow with the gap.
func BenchmarkDCQCNIdleGap(b *testing.B) {
	cfg := simaiDCQCN()
	start := recoveredDCQCN(&cfg)
	for _, gap := range []engine.Time{1 * usec, 1 * msec, engine.Second, 1000 * engine.Second} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := start
				d.Advance(start.now + gap)
			}
		})
	}
}

// BenchmarkDCQCNCNPGap is one CNP on a recovered flow and one Advance a gap later: the
// decrease, the α updates in the gap and the increase events that recover the rate. The cost
// grows with the number of increase events that move the rate (about 45 with SimAI's values,
// the last one 40 ms after the CNP) and not with the gap beyond that.
func BenchmarkDCQCNCNPGap(b *testing.B) {
	cfg := simaiDCQCN()
	start := recoveredDCQCN(&cfg)
	for _, gap := range []engine.Time{5 * usec, 100 * usec, 10 * msec, 100 * msec, engine.Second, 1000 * engine.Second} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := start
				d.OnCNP(start.now)
				d.Advance(start.now + gap)
			}
		})
	}
}
