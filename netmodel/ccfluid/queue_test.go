package ccfluid

import (
	"math"
	"testing"

	"simd/cc"
	"simd/engine"
)

// markIn against the closed forms: a constant probability gives need·packet/(rate·p); a queue
// rising linearly through the band gives the time at which ∫p reaches the wanted amount. A
// slope too small for the primitive's difference to survive rounding once returned 0 and made
// the network mark forever at one instant; it must fall back to the constant-probability time,
// and no positive need may give 0.
func TestMarkIn(t *testing.T) {
	m := &cc.ECNMarker{KMin: 800e3, KMax: 3200e3, PMax: 0.2}
	const out, pkt = 400e9, 9000.0
	want := pkt * 8 / out // seconds of sending at probability 1 per marked packet
	for _, tc := range []struct {
		name         string
		q, slope     float64
		need         float64
		wantSeconds  float64 // 0: Never
		tolPicoconds float64
	}{
		{"above KMax, constant", 4e6, 0, 1, want, 1},
		{"mid band, constant", 2e6, 0, 1, want / (0.2 * 1.2e6 / 2.4e6), 1},
		{"below KMin, constant", 500e3, 0, 1, 0, 0},
		{"below KMin, draining", 500e3, -1e9, 1, 0, 0},
		{"tiny slope above KMax", 5e6, 1e-9, 1, want, 1},
		{"tiny negative slope above KMax", 5e6, -1e-9, 1, want, 1},
		{"half a mark above KMax", 4e6, 0, 0.5, want / 2, 1},
	} {
		got := markIn(m, tc.q, tc.slope, out, pkt, tc.need)
		if tc.wantSeconds == 0 {
			if got != engine.Never {
				t.Errorf("%s: %d ps, want Never", tc.name, got)
			}
			continue
		}
		if w := tc.wantSeconds * 1e12; math.Abs(float64(got)-w) > tc.tolPicoconds+1 || got < 1 {
			t.Errorf("%s: %d ps, want %.1f", tc.name, got, w)
		}
	}
	// Rising through the band from KMin at s bytes/s: ∫p dt = PMax·s·t²/(2(KMax−KMin)).
	s := 1e9
	got := markIn(m, 800e3, s, out, pkt, 1)
	w := math.Sqrt(2*want*(3200e3-800e3)/(0.2*s)) * 1e12
	if math.Abs(float64(got)-w) > 2 {
		t.Errorf("rising: %d ps, want %.1f", got, w)
	}
	// The integral over that time is what was wanted.
	if v := markIntegral(m, 800e3, s, float64(got)/1e12); math.Abs(v-want) > 1e-6*want {
		t.Errorf("integral %g, want %g", v, want)
	}
}
