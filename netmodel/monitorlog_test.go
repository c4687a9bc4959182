package netmodel

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"simd/configs"
	"simd/engine"
)

// The four monitor files in SimAI's formats: two flows from GPUs 0 and 1 into GPU 2 of a star
// queue at the switch's port to GPU 2 (node 3, device 3); rows name flows by node ids and
// ports.
func TestMonitorLogs(t *testing.T) {
	fab, err := NewFabric(star(t, 3, "400Gbps", "0.001ms"))
	if err != nil {
		t.Fatal(err)
	}
	conf, err := configs.ShippedSimAIConf()
	if err != nil {
		t.Fatal(err)
	}
	// Without SimAI's window: with it the two flows would hold the queue at two windows less
	// a round trip's worth (window.go), below KMIN, and send no CNP for the monitor to log.
	conf.HasWin = false
	cfg, on, err := CCConfig(&conf, fab, 1)
	if err != nil || !on {
		t.Fatal(on, err)
	}
	s := engine.NewScheduler()
	sim, err := NewCCSimulator(s, fab, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var qb, bb, rb, cb bytes.Buffer
	ql, bl, rl, cl := NewQlenLog(&qb), NewBWLog(&bb), NewRateLog(&rb, sim), NewCNPLog(&cb, sim)
	conf.QlenMonInterval, conf.BWMonInterval, conf.QPMonInterval = 5*engine.Microsecond, 5*engine.Microsecond, 5*engine.Microsecond
	mon := MonitorTimes(&conf)
	mon.Qlen, mon.BW, mon.Rate, mon.CNP = ql, bl, rl, cl
	if err := sim.Monitor(mon); err != nil {
		t.Fatal(err)
	}
	const S = 4 << 20
	sim.StartRaw([]RawFlow{{Src: 0, Dst: 2, Bytes: S, Sport: 10000, DPort: DPort}, {Src: 1, Dst: 2, Bytes: S, Sport: 10000, DPort: DPort}})
	s.Run()
	for _, l := range []interface{ Flush() error }{ql, bl, rl, cl} {
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name, text, header string, row *regexp.Regexp, must ...string) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if lines[0] != header {
			t.Errorf("%s header %q", name, lines[0])
		}
		if len(lines) < 2 {
			t.Errorf("%s has no rows", name)
		}
		for _, l := range lines[1:] {
			if !row.MatchString(l) {
				t.Errorf("%s row %q", name, l)
			}
		}
		for _, m := range must {
			if !strings.Contains(text, m) {
				t.Errorf("%s lacks %q:\n%s", name, m, text)
			}
		}
	}
	// 5 µs in, the switch port has queued 5 µs of 800 − 400 Gb/s.
	check("qlen", qb.String(), "time, sw_id, port_id, q_id, q_len, port_len", regexp.MustCompile(`^(0|\d+000), 3, 3, 3, (\d+), (\d+)$`), "5000, 3, 3, 3, 250000, 250000\n")
	check("bw", bb.String(), "time, node_id, port_id, bandwidth", regexp.MustCompile(`^(0|\d+000), [0-3], [1-3], \d+\.\d{6}$`), "10000, 3, 3, 400.000000\n", "10000, 0, 1, ")
	check("rate", rb.String(), "time, src, dst, sport, dport, size, curr_rate", regexp.MustCompile(`^(0|\d+000), [01], 2, 10000, 100, 4194304, \d+$`),
		"0, 0, 2, 10000, 100, 4194304, 400000000000\n", "0, 1, 2, 10000, 100, 4194304, 400000000000\n")
	// The queue passes KMIN (800 KB at 400 Gb/s): the senders get CNPs.
	if st := sim.CCNetwork().Stats(); st.CNPs == 0 {
		t.Errorf("no CNP: %+v", st)
	}
	check("cnp", cb.String(), "time, src, dst, sport, dport, size, cnp_number", regexp.MustCompile(`^(0|\d+000), [01], 2, 10000, 100, 4194304, [1-9]\d*$`))
	if rl.Rows() == 0 || ql.Rows() == 0 {
		t.Error("no rows counted")
	}

	ideal := NewSimulator(engine.NewScheduler(), fab, Options{})
	if err := ideal.Monitor(mon); err == nil {
		t.Error("the ideal model accepted monitors")
	}
}
