package ccfluid

import (
	"math"
	"testing"

	"simd/cc"
	"simd/engine"
)

// zhuDCQCN integrates the DCQCN fluid model of Zhu, Ghobadi, Misra and Padhye ("ECN or Delay",
// CoNEXT'16, equations 1–5) for k identical flows into one port of capacity c bits/s, with
// RED marking m, and returns the mean queue (bytes) and the mean per-flow rate (bits/s) over
// [warm, end] seconds. Rates are in packets/s inside, as in the paper; pkt is the packet size
// in bytes. SimAI's DCQCN has no byte counter, so the byte-counter terms vanish (B → ∞):
//
//	dα/dt  = g/τ′·((1 − (1−p(t−τ*))^{τ′R_C(t−τ*)}) − α)
//	dR_T/dt = −(R_T − R_C)/τ·(1 − (1−p)^{τR_C}) + R_AI·R_C·p/((1−p)^{−T·R_C} − 1)
//	dR_C/dt = −R_C·α/(2τ)·(1 − (1−p)^{τR_C}) + (R_T − R_C)/2·R_C·p/((1−p)^{−T·R_C} − 1)
//	dq/dt  = k·R_C − C
//
// with p and R_C in the feedback terms delayed by τ* (the control loop's delay). Explicit
// Euler with step dt.
func zhuDCQCN(k int, c float64, m cc.ECNMarker, pkt float64, d *cc.DCQCNConfig, delay, warm, end, dt float64) (qmean, rmean float64) {
	C := c / 8 / pkt
	rai := d.RateAI / 8 / pkt
	g := d.G
	tauA := float64(d.AlphaResumeInterval) / 1e12
	tau := float64(d.RateDecreaseInterval) / 1e12
	T := float64(d.RPTimer) / 1e12
	lag := int(math.Round(delay / dt))
	steps := int(end / dt)
	ps := make([]float64, lag+1) // ring of delayed p
	rs := make([]float64, lag+1) // ring of delayed R_C
	rc, rt, alpha, q := C, C, 1.0, 0.0
	for i := range rs {
		rs[i] = rc
	}
	var qsum, rsum float64
	var n int
	for i := range steps {
		p := m.Probability(q * pkt)
		ps[i%(lag+1)], rs[i%(lag+1)] = p, rc
		pd, rd := ps[(i+1)%(lag+1)], rs[(i+1)%(lag+1)] // values lag steps ago
		if i < lag {
			pd, rd = 0, C
		}
		cut := 1 - math.Pow(1-pd, tau*rd)
		inc := 0.0
		if pd > 0 {
			inc = rd * pd / (math.Pow(1-pd, -T*rd) - 1)
		} else {
			inc = 1 / T // the limit p → 0: one increase per timer period
		}
		dAlpha := g / tauA * ((1 - math.Pow(1-pd, tauA*rd)) - alpha)
		dRT := -(rt-rc)/tau*cut + rai*inc
		dRC := -rc*alpha/(2*tau)*cut + (rt-rc)/2*inc
		dq := float64(k)*rc - C
		alpha += dAlpha * dt
		rt = min(rt+dRT*dt, C)
		rc = min(max(rc+dRC*dt, d.MinRate/8/pkt), C)
		q = max(q+dq*dt, 0)
		if t := float64(i) * dt; t >= warm {
			qsum += q
			rsum += rc
			n++
		}
	}
	return qsum / float64(n) * pkt, rsum / float64(n) * 8 * pkt
}

// The 2-flow case against Zhu et al.'s fluid model: the same parameters (the DCQCN paper's
// 55 µs α and increase timers, additive steps for 400 Gb/s) give both models the fair rate C/2
// and a mean queue inside the marking band. The event-driven model marks whole packets at the expected rate and
// applies SimAI's timer rules (decrease checks every 4 µs, the increase timer restarted by every
// decrease, fast recovery, hyper increase); the ODE averages all of that. The two mean queues
// are recorded in docs/congestion-model.md; they must agree within a factor of two.
func TestTwoFlowsAgainstZhuFluidModel(t *testing.T) {
	cfg := repoConfig()
	cfg.DCQCN.RPTimer, cfg.DCQCN.RateAI, cfg.DCQCN.RateHAI = 55*engine.Microsecond, 400e6, 4000e6
	cfg.DCQCN.AlphaResumeInterval = 55 * engine.Microsecond
	m, _ := cfg.ECN(G400)
	zq, zr := zhuDCQCN(2, G400, m, cfg.PacketBytes, &cfg.DCQCN, 4e-6, 0.010, 0.050, 10e-9)
	thr, qmean, _, _, _ := incast(t, 2, cfg, 10*engine.Millisecond, 50*engine.Millisecond)
	t.Logf("Zhu et al. fluid model: queue %.0f KB, rate %.2f Gb/s; simd: queue %.0f KB, rates %v Gb/s", zq/KB, zr/1e9, qmean/KB, gbps(thr))
	if math.Abs(zr-G400/2) > 0.05*G400/2 {
		t.Errorf("the ODE's rate %.2f Gb/s is not the fair 200 Gb/s", zr/1e9)
	}
	if zq < m.KMin || zq > m.KMax {
		t.Errorf("the ODE's mean queue %.0f KB is outside the marking band", zq/KB)
	}
	if r := qmean / zq; r < 0.5 || r > 2 {
		t.Errorf("mean queues differ by %.2f×: simd %.0f KB, ODE %.0f KB", r, qmean/KB, zq/KB)
	}
}
