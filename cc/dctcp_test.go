package cc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// dctcpSimAI is SimAI.conf's DCTCP on a 400 Gb/s NIC, with g = 1/16 for readable arithmetic.
var dctcpSimAI = DCTCPConfig{LineRate: 400e9, MinRate: 100e6, RateAI: 1e9, G: 1.0 / 16}

func TestDCTCPRounds(t *testing.T) {
	cfg := dctcpSimAI
	d := NewDCTCP(&cfg)
	if d.Rate() != 400e9 || d.Alpha() != 1 {
		t.Fatalf("start: rate %v α %v, want 400e9 and 1", d.Rate(), d.Alpha())
	}
	rounds := []struct {
		fraction float64
		marked   bool
		rate     float64
		alpha    float64
		changed  bool
	}{
		// Cut with the α of the round's start, then α ← 15/16·α + f/16, then AI only without a cut.
		{1, true, 200e9, 1, true},                           // 400·(1 − 1/2); α = 15/16 + 1/16
		{0.5, true, 100e9, 0.96875, true},                   // 200·(1 − 1/2); α = 15/16 + 0.5/16
		{0, false, 101e9, 0.908203125, true},                // +1G; α = 0.96875·15/16
		{0, false, 102e9, 0.8514404296875, true},            // +1G; α = 0.908203125·15/16
		{0.25, true, 58576538085, 0.8138504028320312, true}, // ⌊102e9·(1 − 0.85144/2)⌋ = ⌊58576538085.9375⌋; α = 0.85144·15/16 + 0.25/16
	}
	for i, r := range rounds {
		changed := d.OnRound(r.fraction, r.marked)
		if d.Rate() != r.rate || math.Abs(d.Alpha()-r.alpha) > 1e-15 || changed != r.changed {
			t.Errorf("round %d: rate %v α %v changed %v, want %v %v %v", i, d.Rate(), d.Alpha(), changed, r.rate, r.alpha, r.changed)
		}
	}
}

func TestDCTCPCutsOncePerRoundWhateverTheFraction(t *testing.T) {
	// Only the first marked ACK of a round cuts: a round with 1 % or 100 % marks cuts by the
	// same factor (1 − α/2); the fraction only moves α.
	for _, f := range []float64{0.01, 0.5, 1} {
		cfg := dctcpSimAI
		d := NewDCTCP(&cfg)
		d.OnRound(f, true)
		if d.Rate() != 200e9 {
			t.Errorf("fraction %v: rate %v, want one halving to 200e9", f, d.Rate())
		}
		if want := 15.0/16 + f/16; d.Alpha() != want {
			t.Errorf("fraction %v: α %v, want %v", f, d.Alpha(), want)
		}
	}
}

func TestDCTCPFloorAndCap(t *testing.T) {
	// g = 0 keeps α at 1 (SimAI's default EWMA_GAIN is the integer 1/16 = 0): every marked round
	// halves. 400e9 / 2^11 = 195.3125e6, / 2^12 = 97.66e6 < MinRate = 100e6.
	cfg := dctcpSimAI
	cfg.G = 0
	d := NewDCTCP(&cfg)
	for i := 0; i < 11; i++ {
		d.OnRound(1, true)
	}
	if d.Rate() != 195.3125e6 {
		t.Fatalf("after 11 halvings rate %v, want 195.3125e6", d.Rate())
	}
	if !d.OnRound(1, true) || d.Rate() != 100e6 {
		t.Fatalf("12th cut: rate %v, want the 100e6 floor", d.Rate())
	}
	if d.OnRound(1, true) {
		t.Fatalf("a cut at the floor reported a change")
	}
	// Unmarked at line rate: α decays, the rate stays capped.
	cfg = dctcpSimAI
	d = NewDCTCP(&cfg)
	if d.OnRound(0, false) || d.Rate() != 400e9 || d.Alpha() != 0.9375 {
		t.Fatalf("unmarked round at line rate: rate %v α %v, want 400e9 unchanged and α 0.9375", d.Rate(), d.Alpha())
	}
	// 399.5e9 + 1e9 is capped at 400e9.
	cfg = dctcpSimAI
	cfg.G = 0
	d = NewDCTCP(&cfg)
	d.OnRound(0, true) // 200e9
	for i := 0; i < 200; i++ {
		d.OnRound(0, false)
	}
	if d.Rate() != 400e9 {
		t.Fatalf("after 200 AIs from 200e9 rate %v, want the 400e9 cap", d.Rate())
	}
}

// dctcpPerACK is a reference copy of ns-3's per-ACK HandleAckDctcp for a window-limited sender of
// w one-unit packets: before ACK j (acknowledging seq j+1) the sender has sent j+w packets.
type dctcpPerACK struct {
	cfg                    DCTCPConfig
	w                      uint64
	rate, alpha            float64
	lastUpdateSeq, highSeq uint64
	cwr                    bool
	ecnCnt, batch          uint64
}

func (r *dctcpPerACK) onACK(j uint64, cnp bool) (newBatch bool) {
	ack, sndNxt := j+1, j+r.w
	if cnp {
		r.ecnCnt++
	}
	if ack > r.lastUpdateSeq {
		newBatch = true
		if r.lastUpdateSeq == 0 {
			r.lastUpdateSeq = sndNxt
			r.batch = sndNxt + 1
		} else {
			frac := math.Min(1, float64(r.ecnCnt)/float64(r.batch))
			r.alpha = (1-r.cfg.G)*r.alpha + r.cfg.G*frac
			r.lastUpdateSeq = sndNxt
			r.ecnCnt = 0
			r.batch = sndNxt - ack + 1
		}
	}
	if r.cwr && ack > r.highSeq {
		r.cwr = false
	}
	if cnp && !r.cwr {
		r.rate = math.Max(r.cfg.MinRate, math.Trunc(r.rate*(1-r.alpha/2))) // DataRate * double truncates
		r.cwr = true
		r.highSeq = sndNxt
	}
	if !r.cwr && newBatch {
		r.rate = math.Min(r.cfg.LineRate, r.rate+r.cfg.RateAI)
	}
	return newBatch
}

func TestDCTCPMatchesPerACKMachine(t *testing.T) {
	// Replay random mark patterns through the per-ACK reference and through OnRound, comparing
	// rate and α at every batch start. Patterns respect the documented exactness conditions: no
	// mark on a round's first ACK, and a marked round after a cut has its first mark at or after
	// the previous cut's position (where that CWR ends). Round 0 is unmarked (its batch also
	// counts the first ACK of round 1).
	const w = 26 // SimAI's window: maxBdp 236000 B / 9000 B packets
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := dctcpSimAI
		cfg.G = 1.0 / 256
		ref := dctcpPerACK{cfg: cfg, w: w, rate: cfg.LineRate, alpha: 1}
		fluid := NewDCTCP(&cfg)
		prevCut := uint64(0) // position of the previous round's cut, 0 = none
		ref.onACK(0, false)  // round 0's first ACK: the first batch start
		j := uint64(1)
		for round := 0; round < 400; round++ {
			var marks [w]bool
			count := 0
			cut := uint64(0)
			if round > 0 && rng.IntN(2) == 0 {
				from := max(prevCut, 1)
				first := from + uint64(rng.IntN(int(w-from)))
				marks[first] = true
				count = 1
				cut = first
				q := rng.Float64()
				for p := first + 1; p < w; p++ {
					if rng.Float64() < q {
						marks[p] = true
						count++
					}
				}
			}
			prevCut = cut
			for p := 1; p < w; p++ {
				ref.onACK(j, marks[p])
				j++
			}
			// The next round's first ACK (never marked) is the batch start that ends this round.
			if !ref.onACK(j, false) {
				t.Fatalf("seed %d round %d: ACK %d did not start a batch", seed, round, j)
			}
			j++
			fluid.OnRound(float64(count)/w, count > 0)
			if fluid.Rate() != ref.rate || fluid.Alpha() != ref.alpha {
				t.Fatalf("seed %d round %d (%d marks from position %d): fluid rate %v α %v, per-ACK rate %v α %v",
					seed, round, count, cut, fluid.Rate(), fluid.Alpha(), ref.rate, ref.alpha)
			}
		}
	}
}

func TestDCTCPValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*DCTCPConfig)
		want string
	}{
		{"ok", func(*DCTCPConfig) {}, ""},
		{"zero line rate", func(c *DCTCPConfig) { c.LineRate = 0 }, "LineRate"},
		{"min above line", func(c *DCTCPConfig) { c.MinRate = 500e9 }, "MinRate"},
		{"negative AI", func(c *DCTCPConfig) { c.RateAI = -1 }, "RateAI"},
		{"gain above 1", func(c *DCTCPConfig) { c.G = 2 }, "G"},
		{"NaN gain", func(c *DCTCPConfig) { c.G = math.NaN() }, "G"},
	}
	for _, tc := range tests {
		cfg := dctcpSimAI
		tc.edit(&cfg)
		err := cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDCTCPNoAllocs(t *testing.T) {
	cfg := dctcpSimAI
	d := NewDCTCP(&cfg)
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		d.OnRound(0.1, i%3 == 0)
		_ = d.Rate()
		_ = d.Alpha()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per OnRound, want 0", allocs)
	}
}
