package cc

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"simd/engine"
)

// pfcSimAIBuffer is BUFFER_SIZE 32 of SimAI.conf: 32 × 1024 × 1024 bytes.
const pfcSimAIBuffer = 32 * 1024 * 1024

// pfcFourPorts400G is a switch with four 400 Gb/s ports on 1 µs links, nic_rate 400 Gb/s.
func pfcFourPorts400G(t *testing.T) *SwitchBuffer {
	t.Helper()
	rates := []float64{400e9, 400e9, 400e9, 400e9}
	delays := []engine.Time{engine.Microsecond, engine.Microsecond, engine.Microsecond, engine.Microsecond}
	cfg := DefaultSwitchBuffer(pfcSimAIBuffer, rates, delays, 400e9)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return NewSwitchBuffer(&cfg)
}

func TestPFCConstants(t *testing.T) {
	cfg := DefaultSwitchBuffer(pfcSimAIBuffer, []float64{400e9}, []engine.Time{engine.Microsecond}, 400e9)
	if cfg.ReserveBytes != 4096 || cfg.ResumeOffset != 3072 || cfg.BufferBytes != 33554432 {
		t.Fatalf("defaults: reserve %v resume %v buffer %v, want 4096, 3072, 33554432", cfg.ReserveBytes, cfg.ResumeOffset, cfg.BufferBytes)
	}
}

func TestPFCHeadroomAndShiftPerPort(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		delay    engine.Time
		nic      float64
		headroom float64
		shift    uint
	}{
		// headroom = 3·⌊rate·delay_ns/8e9⌋; shift starts at 3, −1 per halving while rate > nic.
		{"400G 1us, nic 400G", 400e9, engine.Microsecond, 400e9, 3 * 50000, 3},          // 400e9·1000/8e9 = 50000
		{"400G 500ns", 400e9, 500 * engine.Nanosecond, 400e9, 3 * 25000, 3},             // 25000
		{"100G 1us", 100e9, engine.Microsecond, 400e9, 3 * 12500, 3},                    // 12500; slower than nic: 3
		{"800G 1us", 800e9, engine.Microsecond, 400e9, 3 * 100000, 2},                   // 800>400 → 2, 400 stops
		{"1600G 1us", 1600e9, engine.Microsecond, 400e9, 3 * 200000, 1},                 // 1600→800→400: 2 steps
		{"2880G 25ns NVLink", 2880e9, 25 * engine.Nanosecond, 400e9, 3 * 9000, 0},       // 2880→1440→720→360: 3 steps
		{"400G, nic is the NVLink", 400e9, engine.Microsecond, 2880e9, 3 * 50000, 3},    // SimAI's usual nic_rate
		{"100G 1ns floors before ×3", 100e9, engine.Nanosecond, 400e9, 3 * 12, 3},       // 12.5 → 12, not 37.5
		{"sub-ns delay truncates to 0 ns", 400e9, 999 * engine.Picosecond, 400e9, 0, 3}, // ns-3 time step is 1 ns
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultSwitchBuffer(pfcSimAIBuffer, []float64{tc.rate}, []engine.Time{tc.delay}, tc.nic)
			b := NewSwitchBuffer(&cfg)
			if got := b.Headroom(0); got != tc.headroom {
				t.Errorf("Headroom = %v, want %v", got, tc.headroom)
			}
			if got := b.Shift(0); got != tc.shift {
				t.Errorf("Shift = %v, want %v", got, tc.shift)
			}
		})
	}
}

func TestPFCThresholdsAndLevels(t *testing.T) {
	// Four 400G/1µs ports, 32 MB: Σheadroom = 4·150000 = 600000, Σreserve = 4·4096 = 16384,
	// pool P = 33554432 − 600000 − 16384 = 32938048, shift 3 (divide by 8).
	b := pfcFourPorts400G(t)
	const pool = 32938048.0
	near := func(t *testing.T, what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %.6f, want %.6f", what, got, want)
		}
	}
	near(t, "Threshold(empty)", b.Threshold(0, 0), pool/8)                         // 4117256
	near(t, "Threshold(1 MB shared)", b.Threshold(0, 1e6), 3992256)                // (P − 1e6)/8
	near(t, "Threshold(overdrawn)", b.Threshold(0, pool+1), 0)                     // floored at 0
	near(t, "PauseLevel(others empty)", b.PauseLevel(0), 4096+pool/9)              // 4096 + 3659783.111
	near(t, "ResumeLevel(others empty)", b.ResumeLevel(0), 4096+(pool-3072*8)/9)   // 4096 + 3657052.444
	b.SetIngress(1, 1004096)                                                       // port 1 shares 1e6 bytes
	near(t, "SharedUsed", b.SharedUsed(), 1e6)                                     //
	near(t, "PauseLevel(port 1 shares 1e6)", b.PauseLevel(0), 4096+3548672)        // (P − 1e6)/9 = 3548672
	near(t, "ResumeLevel(port 1 shares 1e6)", b.ResumeLevel(0), 4096+31913472.0/9) // (P − 1e6 − 24576)/9

	// The level really is the threshold crossing: shared use = threshold there.
	x := b.PauseLevel(0)
	b.SetIngress(0, x)
	near(t, "shared use at the pause level", b.PortSharedUsed(0), b.Threshold(0, b.SharedUsed()))
}

func TestPFCHysteresis(t *testing.T) {
	// Same switch, other ports empty. Pause level 3663879.11, resume level 3661148.44: the
	// 3 KB resume offset makes the port drain 8/9·3072 = 2730.67 bytes below the pause level.
	b := pfcFourPorts400G(t)
	steps := []struct {
		ingress      float64
		pause        bool // ShouldPause after the step
		resume       bool // ShouldResume after the step
		setPaused    *bool
		headroomUsed float64
	}{
		{ingress: 1e6},
		{ingress: 3663879},              // y = 3659783 < (P − y)/8 = 3659783.125
		{ingress: 3663880, pause: true}, // y = 3659784 ≥ 3659783.0
		{ingress: 3663880, setPaused: pfcPtr(true)},
		// In-flight bytes after XOFF land in the headroom: shared use stays 3659784.
		{ingress: 3763880, headroomUsed: 100000},
		// Headroom drained, shared 3658904 + 3072 = 3661976 > (P − 3658904)/8 = 3659893: no resume yet.
		{ingress: 3663000},
		// y = 3657053: 3660125 > (P − 3657053)/8 = 3660124.375.
		{ingress: 3661149},
		// y = 3657052: 3660124 ≤ (P − 3657052)/8 = 3660124.5.
		{ingress: 3661148, resume: true},
		{ingress: 3661148, setPaused: pfcPtr(false)},
		{ingress: 3663879},
		{ingress: 3663880, pause: true},
	}
	for i, s := range steps {
		b.SetIngress(0, s.ingress)
		if s.setPaused != nil {
			b.SetPaused(0, *s.setPaused)
		}
		if got := b.ShouldPause(0); got != s.pause {
			t.Errorf("step %d (ingress %v): ShouldPause = %v, want %v", i, s.ingress, got, s.pause)
		}
		if got := b.ShouldResume(0); got != s.resume {
			t.Errorf("step %d (ingress %v): ShouldResume = %v, want %v", i, s.ingress, got, s.resume)
		}
		if got := b.HeadroomUsed(0); got != s.headroomUsed {
			t.Errorf("step %d: HeadroomUsed = %v, want %v", i, got, s.headroomUsed)
		}
	}
}

func TestPFCHeadroomDoesNotLowerOthersThreshold(t *testing.T) {
	// ns-3 keeps hdrm_bytes out of shared_used_bytes: bytes that arrive after a pause must not
	// lower the other ports' thresholds.
	b := pfcFourPorts400G(t)
	b.SetIngress(0, 2004096)
	b.SetPaused(0, true)
	b.SetIngress(0, 2104096) // 100000 bytes of headroom
	if got := b.SharedUsed(); got != 2e6 {
		t.Errorf("SharedUsed = %v, want 2e6 (headroom excluded)", got)
	}
	if got, want := b.PauseLevel(1), 4096+(32938048-2e6)/9; math.Abs(got-want) > 1e-6 {
		t.Errorf("PauseLevel(1) = %v, want %v", got, want)
	}
	// Draining takes the headroom first.
	b.SetIngress(0, 2054096)
	if b.HeadroomUsed(0) != 50000 || b.PortSharedUsed(0) != 2e6 {
		t.Errorf("after draining 50000: headroom %v shared %v, want 50000 and 2e6", b.HeadroomUsed(0), b.PortSharedUsed(0))
	}
	b.SetIngress(0, 1004096)
	if b.HeadroomUsed(0) != 0 || b.PortSharedUsed(0) != 1e6 {
		t.Errorf("after draining below the cap: headroom %v shared %v, want 0 and 1e6", b.HeadroomUsed(0), b.PortSharedUsed(0))
	}
}

func TestPFCResumeNeedsEmptyShareWhenOffsetExceedsThreshold(t *testing.T) {
	// One 400G/1µs port, buffer = headroom 150000 + reserve 4096 + pool 9000. Pause at
	// y = 9000/9 = 1000 (x = 5096). Resume: (9000 − 3072·8)/9 < 0, so only an empty shared
	// share resumes (ns-3: shared_used == 0), i.e. x ≤ 4096.
	cfg := DefaultSwitchBuffer(150000+4096+9000, []float64{400e9}, []engine.Time{engine.Microsecond}, 400e9)
	b := NewSwitchBuffer(&cfg)
	if got := b.PauseLevel(0); math.Abs(got-5096) > 1e-9 {
		t.Fatalf("PauseLevel = %v, want 5096", got)
	}
	if got := b.ResumeLevel(0); got != 4096 {
		t.Fatalf("ResumeLevel = %v, want 4096", got)
	}
	b.SetIngress(0, 5096)
	b.SetPaused(0, true)
	for _, x := range []float64{5000, 4200, 4097} {
		b.SetIngress(0, x)
		if b.ShouldResume(0) {
			t.Errorf("ShouldResume at %v, want false until the shared share is empty", x)
		}
	}
	b.SetIngress(0, 4096)
	if !b.ShouldResume(0) {
		t.Errorf("ShouldResume at the reserve = false, want true")
	}
}

func TestPFCLevelsMatchPredicates(t *testing.T) {
	// Property: with random other-port occupancies (some paused with headroom), ShouldPause is
	// false just below PauseLevel and true at and above it; ShouldResume is true at and below
	// ResumeLevel and false just above it.
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []float64{100e9, 200e9, 400e9, 800e9, 1600e9}
	delays := []engine.Time{500 * engine.Nanosecond, engine.Microsecond, 2 * engine.Microsecond}
	for trial := 0; trial < 500; trial++ {
		n := 2 + rng.IntN(15)
		pr := make([]float64, n)
		pd := make([]engine.Time, n)
		for i := range pr {
			pr[i] = rates[rng.IntN(len(rates))]
			pd[i] = delays[rng.IntN(len(delays))]
		}
		nic := []float64{400e9, 2880e9}[rng.IntN(2)]
		cfg := DefaultSwitchBuffer(pfcSimAIBuffer, pr, pd, nic)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		b := NewSwitchBuffer(&cfg)
		port := rng.IntN(n)
		for i := 0; i < n; i++ {
			if i == port {
				continue
			}
			b.SetIngress(i, rng.Float64()*3e6)
			if rng.IntN(3) == 0 {
				b.SetPaused(i, true)
				b.SetIngress(i, b.Ingress(i)+rng.Float64()*2e5)
			}
		}

		pl := b.PauseLevel(port)
		for _, x := range []float64{pl, pl * (1 + 1e-9), pl + 1} {
			b.SetIngress(port, x)
			if !b.ShouldPause(port) {
				t.Fatalf("trial %d: ShouldPause false at %v (PauseLevel %v)", trial, x, pl)
			}
		}
		for _, x := range []float64{math.Nextafter(pl, 0), pl * (1 - 1e-9), pl - 1} {
			if pl == 0 {
				break // the pool is exhausted: even an empty port pauses
			}
			b.SetIngress(port, x)
			if b.ShouldPause(port) {
				t.Fatalf("trial %d: ShouldPause true at %v below PauseLevel %v", trial, x, pl)
			}
		}

		// Pause at the level plus some in-flight bytes, then look for the resume level.
		b.SetIngress(port, pl)
		b.SetPaused(port, true)
		b.SetIngress(port, pl+rng.Float64()*1e5)
		rl := b.ResumeLevel(port)
		if pl > PFCReserveBytes && !(rl < pl) {
			// (With the pool exhausted an empty port both pauses and resumes, as in ns-3.)
			t.Fatalf("trial %d: ResumeLevel %v not below PauseLevel %v", trial, rl, pl)
		}
		for _, x := range []float64{rl, rl * (1 - 1e-9), rl - 1} {
			b.SetIngress(port, x)
			if !b.ShouldResume(port) {
				t.Fatalf("trial %d: ShouldResume false at %v (ResumeLevel %v)", trial, x, rl)
			}
		}
		for _, x := range []float64{math.Nextafter(rl, math.Inf(1)), rl * (1 + 1e-9), rl + 1} {
			b.SetIngress(port, x)
			if b.ShouldResume(port) {
				t.Fatalf("trial %d: ShouldResume true at %v above ResumeLevel %v", trial, x, rl)
			}
		}
	}
}

func TestSwitchBufferValidate(t *testing.T) {
	us := engine.Microsecond
	tests := []struct {
		name string
		cfg  SwitchBufferConfig
		want string // substring of the error; "" = valid
	}{
		{"ok", DefaultSwitchBuffer(pfcSimAIBuffer, []float64{400e9}, []engine.Time{us}, 400e9), ""},
		{"zero buffer", DefaultSwitchBuffer(0, []float64{400e9}, []engine.Time{us}, 400e9), "BufferBytes"},
		{"NaN buffer", DefaultSwitchBuffer(math.NaN(), []float64{400e9}, []engine.Time{us}, 400e9), "BufferBytes"},
		{"no ports", DefaultSwitchBuffer(pfcSimAIBuffer, nil, nil, 400e9), "no ports"},
		{"length mismatch", DefaultSwitchBuffer(pfcSimAIBuffer, []float64{400e9, 400e9}, []engine.Time{us}, 400e9), "port delays"},
		{"zero rate", DefaultSwitchBuffer(pfcSimAIBuffer, []float64{0}, []engine.Time{us}, 400e9), "PortRate[0]"},
		{"negative delay", DefaultSwitchBuffer(pfcSimAIBuffer, []float64{400e9}, []engine.Time{-us}, 400e9), "PortDelay[0]"},
		{"zero nic", DefaultSwitchBuffer(pfcSimAIBuffer, []float64{400e9}, []engine.Time{us}, 0), "NICRate"},
		// 1 MB cannot hold 8 × 150000 bytes of headroom.
		{"buffer below headroom", DefaultSwitchBuffer(1<<20, []float64{400e9, 400e9, 400e9, 400e9, 400e9, 400e9, 400e9, 400e9},
			[]engine.Time{us, us, us, us, us, us, us, us}, 400e9), "BUFFER_SIZE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate() = %v, want an error mentioning %q", err, tc.want)
			}
			// Only an overdrawn pool is the error callers run without PFC on (as SimAI's ns-3
			// does, its threshold wrapping around).
			if got, want := errors.Is(err, ErrNoSharedPool), tc.name == "buffer below headroom"; got != want {
				t.Fatalf("errors.Is(%v, ErrNoSharedPool) = %v, want %v", err, got, want)
			}
		})
	}
}

func TestSwitchBufferNoAllocs(t *testing.T) {
	b := pfcFourPorts400G(t)
	b.SetIngress(1, 2e6)
	x := 0.0
	allocs := testing.AllocsPerRun(100, func() {
		x += 1000
		b.SetIngress(0, x)
		_ = b.ShouldPause(0)
		_ = b.ShouldResume(0)
		_ = b.PauseLevel(0)
		_ = b.ResumeLevel(0)
		_ = b.SharedUsed()
		b.SetPaused(2, true)
		b.SetPaused(2, false)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
}

func pfcPtr[T any](v T) *T { return &v }

// TestSwitchBufferSumsOverHeldPorts checks the shared-use sums kept over the ports that hold
// shared bytes against the sums over every port in port order (prefix below the port, suffix
// above it), bit for bit, through random occupancies, pauses and resumes on a 64-port switch.
func TestSwitchBufferSumsOverHeldPorts(t *testing.T) {
	const ports = 64
	rates := make([]float64, ports)
	delays := make([]engine.Time, ports)
	for i := range rates {
		rates[i], delays[i] = 400e9, engine.Microsecond
	}
	cfg := DefaultSwitchBuffer(pfcSimAIBuffer, rates, delays, 400e9)
	b := NewSwitchBuffer(&cfg)
	rng := rand.New(rand.NewPCG(7, 11))
	everyPort := func(port int) (others, total float64) {
		pre, suf := 0.0, 0.0
		for i := range port {
			pre += b.PortSharedUsed(i)
		}
		for i := ports - 1; i > port; i-- {
			suf += b.PortSharedUsed(i)
		}
		for i := ports - 1; i >= 0; i-- {
			total += b.PortSharedUsed(i)
		}
		return pre + suf, total
	}
	for step := range 20000 {
		p := rng.IntN(ports)
		switch r := rng.IntN(10); {
		case r < 6: // mostly small ports' worth, sometimes empty or below the reserve
			x := rng.Float64() * 3e5
			if rng.IntN(4) == 0 {
				x = rng.Float64() * cfg.ReserveBytes
			}
			b.SetIngress(p, x)
		case r < 8:
			b.SetPaused(p, !b.Paused(p))
		default:
			b.SetIngress(p, 0)
		}
		q := rng.IntN(ports)
		others, total := everyPort(q)
		if got := b.othersShared(q); got != others {
			t.Fatalf("step %d: othersShared(%d) = %v, every port gives %v", step, q, got, others)
		}
		if got := b.SharedUsed(); got != total {
			t.Fatalf("step %d: SharedUsed = %v, every port gives %v", step, got, total)
		}
		if got, want := b.ShouldPause(q), !b.Paused(q) && b.pauseAt(&b.ports[q], b.Ingress(q), others); got != want {
			t.Fatalf("step %d: ShouldPause(%d) = %v, want %v", step, q, got, want)
		}
		if b.CannotPause() {
			for p := range ports {
				if b.ShouldPause(p) || b.Paused(p) {
					t.Fatalf("step %d: CannotPause, but port %d pauses or is paused", step, p)
				}
			}
		}
	}
}

// TestSwitchBufferCannotPause checks the shortcut's answers where they are known: a switch
// holding a little from many ports cannot pause; one port near its pause level can; any paused
// port makes it ask every port.
func TestSwitchBufferCannotPause(t *testing.T) {
	b := pfcFourPorts400G(t)
	if !b.CannotPause() {
		t.Fatal("an empty switch: CannotPause = false")
	}
	for p := range 4 {
		b.SetIngress(p, 1e6) // 4 MB in all, each port far below (P − T)/8 ≈ 3.6 MB
	}
	if !b.CannotPause() {
		t.Fatal("1 MB on each port: CannotPause = false")
	}
	b.SetIngress(0, b.PauseLevel(0)*(1-1e-12)) // just below its level: the exact test must decide
	if b.ShouldPause(0) || b.CannotPause() {
		t.Fatalf("just below the level: ShouldPause %v, CannotPause %v; want false, false", b.ShouldPause(0), b.CannotPause())
	}
	b.SetIngress(0, 1e6)
	b.SetPaused(2, true)
	if b.CannotPause() {
		t.Fatal("port 2 paused: CannotPause = true")
	}
	b.SetPaused(2, false)
	if !b.CannotPause() {
		t.Fatal("port 2 resumed: CannotPause = false")
	}
}
