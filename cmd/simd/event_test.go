package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"simd/engine"
	"simd/netmodel"
	"simd/netmodel/fluid"
	"simd/topo"
	"simd/topo/route"
)

var wallClock = regexp.MustCompile(`"wall_clock_seconds": [0-9.e+-]+`)

// idealConf writes to dir a SimAI.conf with congestion control off (ideal max-min sharing),
// SimAI's packets and an FCT log, and returns its path: the configuration of the CLI tests that
// compare a run's outputs under two settings.
func idealConf(t *testing.T, dir string) string {
	t.Helper()
	return writeFile(t, dir, "ideal.conf", "CC_MODE 0\nPACKET_PAYLOAD_SIZE 9000\nFCT_OUTPUT_FILE fct.txt\n")
}

// ringWorkload writes to dir a one-layer workload of a 16 MiB ring all-reduce and returns its
// path.
func ringWorkload(t *testing.T, dir string) string {
	t.Helper()
	return writeFile(t, dir, "ring.txt", "MICRO\n1\nring -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 16777216 0\n")
}

// outputsOf reads every file of output directory dir, by name, summary.json's wall clock taken
// out.
func outputsOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range listFiles(t, dir) {
		got[f] = wallClock.ReplaceAllString(readFile(t, filepath.Join(dir, f)), "")
	}
	return got
}

// Two event runs of the same inputs write the same bytes, but for summary.json's wall clock.
func TestEventDeterministic(t *testing.T) {
	var outs [2]string
	for i := range outs {
		dir := t.TempDir()
		if code, _, errOut := runCLI(t, dir, "-o", "out", "-w", "example:microAllReduce.txt", "-g", "16", "-v", "1"); code != 0 {
			t.Fatal(errOut)
		}
		for _, f := range []string{"EndToEnd.csv", "fct.txt", "pfc.txt", "qlen.txt", "bw.txt", "rate.txt", "cnp.txt", "summary.json", "chart.html"} {
			outs[i] += f + "\n" + readFile(t, filepath.Join(dir, "out", f))
		}
		outs[i] = wallClock.ReplaceAllString(outs[i], "")
	}
	if outs[0] != outs[1] {
		t.Error("two runs wrote different files")
	}
}

// -send-lat sets every flow's start latency in ns; AS_SEND_LAT does it in µs, as SimAI reads it.
// Without latency the 16 MiB all-reduce of the example is 14 steps in which every GPU sends 2 MiB
// as 8 flows of 256 KiB (30 packets, 263,704 bytes on the wire each), one per channel, over its
// 2880 Gbps port. ns-3's clock (-packet-time ns) sends a 9,052-byte packet there in 25 ns, not
// 25.14, so the port sends C' = 9052·8/25 ns = 2,896.6 Gb/s, and the ACKs of the 8 flows coming
// in, which it sends first, take 0 ns each (60 bytes: 0.17 ns, rounded down). The port serves
// the 8 flows in turn (-nic-sharing turns), a packet each: after 29 rounds of full packets their
// last packets (1,196 bytes, L) leave one after another, so the first channel's flow is sent
// after 8·263,704·8/C' − 7·L/C' and the last channel's 7·L/C' later; the NVSwitch stores the
// last packet and sends it after the full packet before it, another flow's
// (fluid.Transport.Tail at the port's rate); then 25 + 25 ns there, 25 + 25 ns and two ACKs of
// 0 ns back, which find the ports they wait at idle. The next step's flows start as their
// channels' flows end, L/C' apart in the ports' order, and each again ends when the round
// robin that began with it has sent 8 flows' worth less 7 last packets: every step of a
// channel takes the first channel's time, and the layer ends with the last channel, 7·L/C'
// after the first; every step's sends are handed to the network 10 ns after their data
// (astra-sim's memory-bus delay, netmodel.IssueGap): 14 × (5.928 + 0.010) µs + 23 ns (+1 ns of
// update time) = 83.16 µs. With -packet-time exact (C, ACKs of 60·8/C, the port's data
// C·9052/9112) 84.18 µs. Sharing the port instead (-nic-sharing fair) ends the 8 flows at their
// mean, 3.5 last packets early, in every step: 83.30 µs. The pure fluid's 14 × (5.825 + 0.1 +
// 0.01) µs; with the 6 µs latency, 14 × 6 µs more. (To 1 ns: under turns the layer comes 0.8
// ns later than this sum.) Packet by packet (-nvlink-model packets) every time is ns-3's whole
// nanoseconds (packetLayer).
func TestSendLatency(t *testing.T) {
	firstLayer := func(csv string) float64 {
		t.Helper()
		for _, line := range strings.Split(csv, "\n") {
			if f := strings.Split(line, ","); len(f) > 8 && f[0] == "embedding_layer" {
				v, err := strconv.ParseFloat(f[8], 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no layer row in\n%s", csv)
		return 0
	}
	const c = 2880e9
	tr := fluid.SimAITransport(9000, 0)
	last := float64(tr.Last(256<<10) * 8)
	// layer is the layer's time in µs from the port's rate for the data, the ACK's time, and
	// how many last packets before the round's last the first channel's flow ends (early) and
	// the last channel's does (lastEarly).
	layer := func(c, port, ack, early, lastEarly float64) float64 {
		step := float64(8*tr.Wire(256<<10)*8)/port + float64(tr.Tail(256<<10, port, []float64{c, c}))/1e12 -
			early*last/port + 100e-9 + 2*ack + float64(netmodel.IssueGap)/1e12
		return (14*step+(early-lastEarly)*last/port)*1e6 + 0.001
	}
	var none float64 // the layer with no send latency, SimAI's rules
	for _, r := range []struct {
		name string
		args []string
		want float64
	}{
		{"with no send latency", nil, layer(2896.64e9, 2896.64e9, 0, 7, 0)},
		{"with no send latency, exact packet times", []string{"-packet-time", "exact"}, layer(c, c*9052/9112, 60*8/c, 7, 0)},
		{"with no send latency, the port shared", []string{"-nic-sharing", "fair"}, layer(2896.64e9, 2896.64e9, 0, 3.5, 3.5)},
		{"with no send latency, the NVLink packet by packet", []string{"-nvlink-model", "packets"}, packetLayer()},
	} {
		dir := t.TempDir()
		if code, _, errOut := runCLI(t, dir, append([]string{"-send-lat", "0", "-o", "out"}, r.args...)...); code != 0 {
			t.Fatal(errOut)
		}
		got := firstLayer(readFile(t, filepath.Join(dir, "out", "EndToEnd.csv")))
		if math.Abs(got-r.want) > 1e-3 {
			t.Errorf("%s: %.6f µs, want %.6f µs", r.name, got, r.want)
		}
		if r.args == nil {
			none = got
		}
	}
	t.Setenv("AS_SEND_LAT", "6")
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "-o", "out"); code != 0 {
		t.Fatal(errOut)
	}
	// 6 µs is also the default (SimAI's table falls back to 6000 ns for the legacy protocol).
	if got := firstLayer(readFile(t, filepath.Join(dir, "out", "EndToEnd.csv"))); math.Abs(got-none-84) > 1e-6 {
		t.Errorf("AS_SEND_LAT=6: %.6f µs, want %.6f + 14 × 6 µs", got, none)
	}
	t.Setenv("AS_SEND_LAT", "six")
	if code, _, errOut := runCLI(t, t.TempDir()); code != 2 || !strings.Contains(errOut, "AS_SEND_LAT") {
		t.Errorf("AS_SEND_LAT=six: exit %d, %s", code, errOut)
	}
}

// Where outputs go: with -o everything in the folder under standard names, the SimAI.conf keys
// only switching outputs on; without -o a user's SimAI.conf paths are used as they are, and a
// missing folder is refused before anything runs.
func TestEventOutputs(t *testing.T) {
	dir := t.TempDir()
	fctDir := filepath.Join(dir, "sim")
	if err := os.Mkdir(fctDir, 0o755); err != nil {
		t.Fatal(err)
	}
	withFCT := writeFile(t, dir, "with.conf", "CC_MODE 0\nFCT_OUTPUT_FILE "+filepath.Join(fctDir, "my_fct.txt")+"\n")
	without := writeFile(t, dir, "without.conf", "CC_MODE 0\n")
	missing := writeFile(t, dir, "missing.conf", "FCT_OUTPUT_FILE /nonexistent-simd-dir/fct.txt\n")

	if code, _, errOut := runCLI(t, dir, "-c", withFCT); code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(filepath.Join(fctDir, "my_fct.txt")); err != nil {
		t.Errorf("the conf's FCT path was not used: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "EndToEnd.csv")); err != nil {
		t.Errorf("EndToEnd.csv not in results/: %v", err)
	}

	if code, _, errOut := runCLI(t, dir, "-c", withFCT, "-o", "o1"); code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "o1", "fct.txt")); err != nil {
		t.Errorf("-o did not take fct.txt: %v", err)
	}

	if code, _, errOut := runCLI(t, dir, "-c", without, "-o", "o2"); code != 0 {
		t.Fatal(errOut)
	}
	if files := listFiles(t, filepath.Join(dir, "o2")); strings.Join(files, " ") != "EndToEnd.csv summary.json" {
		t.Errorf("without FCT/PFC keys: %v", files)
	}

	code, _, errOut := runCLI(t, dir, "-c", missing)
	if code != 2 || !strings.Contains(errOut, "/nonexistent-simd-dir") {
		t.Errorf("missing folder: exit %d, %s", code, errOut)
	}
}

// -mode compare writes compare.csv with both times, their ratio and the bottleneck links.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, "-mode", "compare", "-o", "out")
	if code != 0 {
		t.Fatal(errOut)
	}
	csv := strings.Split(readFile(t, filepath.Join(dir, "out", "compare.csv")), "\n")
	if csv[0] != "layer,name,phase,op,group,bytes,analytical_us,event_us,event/analytical,bottleneck_links" {
		t.Fatalf("header %q", csv[0])
	}
	// The analytical time is SimAI_analytical's; the event time is the layer's in EndToEnd.csv
	// (TestSendLatency), and the ratio theirs.
	row := strings.Split(csv[1], ",")
	if !strings.HasPrefix(csv[1], "0,embedding_layer,fwd,allreduce,TP,16777216,75.954,") || !strings.Contains(csv[1], "nvs8") {
		t.Errorf("row %q", csv[1])
	}
	if ev, err := strconv.ParseFloat(row[7], 64); err != nil || math.Abs(ev-(14*(float64(2<<20)*8/2880e3+0.1)+84)) > 1 {
		t.Errorf("event time %q", row[7])
	} else if ratio, _ := strconv.ParseFloat(row[8], 64); math.Abs(ratio-ev/75.954) > 0.001 {
		t.Errorf("ratio %q, want %.3f", row[8], ev/75.954)
	}
	for _, f := range []string{"compare.csv", "EndToEnd.csv", "analytical-EndToEnd.csv", "summary.json"} {
		if !strings.Contains(out, filepath.Join("out", f)) {
			t.Errorf("stdout lacks %s:\n%s", f, out)
		}
	}
}

// -flows runs an ns-3 flow file, SimAI's ACKs and all, on ns-3's clock (a 9,052-byte packet takes
// 181 ns at 400 Gbps, 25 ns at 2880 Gbps; a 60-byte ACK 1 ns and 0 ns). Two 1 MB flows into GPU 9
// share its 400 Gbps NIC link: they are sent after 2·1,005,824·8/C (the payload and 112 packets'
// headers each, C = 9052·8/181 ns), their last packet crosses the ToR (at C/2 it waits behind the
// full packet before it, fluid.Transport.Tail), 1 µs there, 1 µs and two ACKs back. The NVLink
// flow: its wire bytes at 9052·8/25 ns, the NVSwitch storing the last packet, 50 ns there and 50
// ns back. Flow i has source port 40000 + i, as SimAI sends a flow file's flows.
func TestFlowFile(t *testing.T) {
	dir := t.TempDir()
	flows := writeFile(t, dir, "flow.txt", "3\n0 1 3 100 1000000 0.000001\n0 9 3 100 1000000 0.000001\n2 9 3 100 1000000 0.000001\n")
	tp := mustAbs(t, "../../topo/testdata/DCN+SingleToR_16g_8gps_400Gbps_H100")
	code, out, errOut := runCLI(t, dir, "-flows", flows, "-n", tp, "-o", "out")
	if code != 0 {
		t.Fatal(errOut)
	}
	fct := readFile(t, filepath.Join(dir, "out", "fct.txt"))
	tr := fluid.SimAITransport(9000, 0)
	wire := float64(tr.Wire(1e6) * 8)
	nv, nic := 9052*8/25.0, 9052*8/181.0 // Gb/s
	nvlink := wire/nv + float64(tr.Tail(1e6, nv*1e9, []float64{nv * 1e9, nv * 1e9}))/1000 + 100 + 2*0
	shared := 2*wire/nic + float64(tr.Tail(1e6, nic/2*1e9, []float64{nic * 1e9, nic * 1e9}))/1000 + 2000 + 2*1
	want := fmt.Sprintf("0b000001 0b000101 40000 100 1000000 1000 %d 2943\n", int(nvlink)) +
		fmt.Sprintf("0b000001 0b000901 40001 100 1000000 1000 %d 22476\n", int(shared)) +
		fmt.Sprintf("0b000201 0b000901 40002 100 1000000 1000 %d 22476\n", int(shared))
	if fct != want {
		t.Errorf("fct.txt:\n%s\nwant:\n%s", fct, want)
	}
	if last := fmt.Sprintf("3 flows, the last arriving at %.3f us", (1000+shared)/1000); !strings.Contains(out, last) {
		t.Errorf("stdout lacks %q:\n%s", last, out)
	}
	for _, args := range [][]string{
		{"-flows", flows},
		{"-flows", flows, "-n", tp, "-w", "x.txt"},
		{"-flows", writeFile(t, dir, "bad.txt", "1\n0 99 3 100 10 0\n"), "-n", tp},
	} {
		if code, _, _ := runCLI(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// SimAI.conf's monitors run with congestion control: with -o the four keys only switch them on,
// and their files take the standard names. Two flows into GPU 9 meet at the ToR's port to it
// (switch 18, device 10). SimAI's window is maxBdp, 2·1 µs + 2·9000·8/C at C = 118,000 bytes:
// 14 packets, W = 126,728 bytes on the wire in flight; the base round trip a is 2·1 µs, two full
// packets and two ACKs. Each flow opens at line rate (-first-window burst): the port queues
// 2·400 − 400 Gb/s from 1 µs until the first ACKs are back, a later, when it holds C·a/8; from
// then on each flow is held to W over its round trip through the queue, 2·8W/(a + 8q/C) − C
// more than the port sends, and the queue goes linearly, at that rate, to the level their
// windows leave there, two windows less a round trip at C (window.go), and keeps it until the
// flows are sent. (ns-3's senders, whose first window is not out by the first ACK, go on at
// line rate until it is, and reach that level within the 5 µs; the window's cap counts the
// queue as it is now, not as the bytes being acknowledged saw it, docs/models.md.) It then
// drains, and is empty once the port has sent both flows' wire bytes, 2·1,005,824·8/C after the
// first arrived at 1 µs. QLEN_MON_INTERVAL 5 samples it every 5 µs, and logs it when it changed.
// On ns-3's clock a full packet takes 181 ns and an ACK 1 ns at 400 Gbps: C is 9052·8/181 ns,
// 400.088 Gb/s, and a packet and an ACK take those times in a (SimAI's window is its own,
// computed at 400 Gbps).
func TestMonitors(t *testing.T) {
	dir := t.TempDir()
	shipped := readFile(t, "../../configs/data/SimAI.conf")
	var on, off strings.Builder
	for _, line := range strings.Split(shipped, "\n") {
		switch {
		case strings.HasPrefix(line, "QLEN_MON_INTERVAL"), strings.HasPrefix(line, "QP_MON_INTERVAL"):
			line = strings.Fields(line)[0] + " 5"
		case strings.HasPrefix(line, "BW_MON_INTERVAL"):
			line = "BW_MON_INTERVAL 10"
		}
		on.WriteString(line + "\n")
		if !strings.Contains(line, "_MON_FILE") {
			off.WriteString(line + "\n")
		}
	}
	withMon := writeFile(t, dir, "mon.conf", on.String())
	noMon := writeFile(t, dir, "nomon.conf", off.String())
	ideal := writeFile(t, dir, "ideal.conf", strings.Replace(on.String(), "CC_MODE 1", "CC_MODE 0", 1))
	zero := writeFile(t, dir, "zero.conf", strings.Replace(on.String(), "QP_MON_INTERVAL 5", "QP_MON_INTERVAL 0", 1))
	flows := writeFile(t, dir, "flow.txt", "3\n0 1 3 100 1000000 0.000001\n0 9 3 100 1000000 0.000001\n2 9 3 100 1000000 0.000001\n")
	tp := mustAbs(t, "../../topo/testdata/DCN+SingleToR_16g_8gps_400Gbps_H100")

	code, out, errOut := runCLI(t, dir, "-flows", flows, "-n", tp, "-c", withMon, "-o", "on")
	if code != 0 {
		t.Fatal(errOut)
	}
	headers := map[string]string{
		"qlen.txt": "time, sw_id, port_id, q_id, q_len, port_len\n",
		"bw.txt":   "time, node_id, port_id, bandwidth\n",
		"rate.txt": "time, src, dst, sport, dport, size, curr_rate\n",
		"cnp.txt":  "time, src, dst, sport, dport, size, cnp_number\n",
	}
	files := map[string]string{}
	for name, h := range headers {
		files[name] = readFile(t, filepath.Join(dir, "on", name))
		if !strings.HasPrefix(files[name], h) {
			t.Errorf("%s starts %q", name, files[name])
		}
		if !strings.Contains(out, filepath.Join("on", name)) {
			t.Errorf("stdout does not name %s:\n%s", name, out)
		}
	}
	const c = 9052 * 8 / 181e-9
	const w = 14 * 9052
	a := 2e-6 + 2*181e-9 + 2*1e-9
	held := 2*w - int(c*a/8)
	opened := c * a / 8 // at 1 µs + a
	at5 := int(math.Round(opened + (2*8*w/(a+8*opened/c)-c)/8*(4e-6-a)))
	empty := 1e-6 + 2*1005824*8/c
	at40 := int(math.Round(c * (empty - 40e-6) / 8))
	rows := strings.Split(strings.TrimPrefix(files["qlen.txt"], headers["qlen.txt"]), "\n")
	want := []struct {
		row string
		q   int
	}{{"5000, 18, 10, 3", at5}, {"10000, 18, 10, 3", held}, {"40000, 18, 10, 3", at40}, {"45000, 18, 10, 3", 0}}
	if len(rows) != len(want)+1 || rows[len(want)] != "" {
		t.Errorf("qlen.txt has %d rows, want %d:\n%s", len(rows)-1, len(want), files["qlen.txt"])
	} else {
		for i, wr := range want {
			var q, pq int
			if !strings.HasPrefix(rows[i], wr.row+", ") {
				t.Errorf("qlen.txt row %d is %q, want it to start %q", i+1, rows[i], wr.row)
			} else if _, err := fmt.Sscanf(strings.TrimPrefix(rows[i], wr.row+", "), "%d, %d", &q, &pq); err != nil || q != pq || q < wr.q-16 || q > wr.q+16 {
				t.Errorf("qlen.txt row %d is %q, want a backlog of %d bytes (±16)", i+1, rows[i], wr.q)
			}
		}
	}
	// The ToR's port sends at line rate while its queue lasts (bw.txt: Gb/s over the interval,
	// to a millionth, so the bytes of an interval round to either side).
	for _, at := range []string{"20000", "40000"} {
		var v float64
		i := strings.Index(files["bw.txt"], "\n"+at+", 18, 10, ")
		if i < 0 {
			t.Errorf("bw.txt lacks port 10 of switch 18 at %s:\n%s", at, files["bw.txt"])
		} else if _, err := fmt.Sscanf(files["bw.txt"][i+len(at)+11:], "%f", &v); err != nil || math.Abs(v-c/1e9) > 0.001 {
			t.Errorf("bw.txt at %s: %v Gb/s, want %.4f:\n%s", at, v, c/1e9, files["bw.txt"])
		}
	}
	if !strings.Contains(files["rate.txt"], "5000, 0, 9, 40001, 100, 1000000, 400000000000\n") {
		t.Errorf("rate.txt:\n%s", files["rate.txt"])
	}

	if code, _, errOut := runCLI(t, dir, "-flows", flows, "-n", tp, "-c", noMon, "-o", "off"); code != 0 {
		t.Fatal(errOut)
	}
	if files := listFiles(t, filepath.Join(dir, "off")); strings.Join(files, " ") != "fct.txt pfc.txt summary.json" {
		t.Errorf("without the monitor keys: %v", files)
	}

	code, _, errOut = runCLI(t, dir, "-flows", flows, "-n", tp, "-c", ideal, "-o", "ideal")
	if code != 0 {
		t.Fatal(errOut)
	}
	if files := listFiles(t, filepath.Join(dir, "ideal")); strings.Join(files, " ") != "fct.txt pfc.txt summary.json" {
		t.Errorf("with CC_MODE 0: %v", files)
	}
	if strings.Count(errOut, "monitors") != 1 || !strings.Contains(errOut, "QLEN_MON_FILE") {
		t.Errorf("with CC_MODE 0, stderr:\n%s", errOut)
	}

	code, _, errOut = runCLI(t, dir, "-flows", flows, "-n", tp, "-c", zero, "-o", "zero")
	if code != 2 || !strings.Contains(errOut, "zero.conf:") || !strings.Contains(errOut, "QP_MON_INTERVAL 0") {
		t.Errorf("QP_MON_INTERVAL 0: exit %d, %s", code, errOut)
	}
	if files := listFiles(t, filepath.Join(dir, "zero")); len(files) != 0 {
		t.Errorf("files left behind: %v", files)
	}
}

// SimAI.conf's LINK_DOWN t a b takes link a–b down at 2 s + t µs, as SimAI does, and moves the
// flows on it. On the dual-ToR fabric GPU 0 has two 200 Gbps NICs (to ASWs 36 and 44, 500 ns
// each); two 10 MB flows from it (SimAI's default 1,000-byte packets: 10,520,000 bytes on the
// wire), starting at 2 s, leave on different NICs and are sent after 420.0 µs (ns-3's clock
// sends a 1,052-byte packet in 42 ns, not 42.08: C = 200.38 Gb/s), done once their last packet
// has crossed the ASW, 1 µs there and the ACK's 1 µs (and 2 ns) back. With LINK_DOWN 100 0 <the
// first flow's ASW>, each has 8,015,238 wire bytes left at 2 s + 100 µs and the two then share
// the other NIC at C/2 each: sent 640.0 µs later. "LINK_DOWN 0 a b" is SimAI's "no failure",
// whatever a and b are.
func TestLinkDownFlows(t *testing.T) {
	dir := t.TempDir()
	tpPath := mustAbs(t, "../../topo/testdata/AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	f, err := os.Open(tpPath)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Parse(f, tpPath)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := route.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	// Two destinations on GPU 0's rail whose flows (first QP of each pair) leave on
	// different NICs.
	nic := func(dst int32) int32 {
		p, err := r.Route(nil, 0, dst, route.QPSport(0), 100)
		if err != nil {
			t.Fatal(err)
		}
		return r.Graph().To(p[0])
	}
	d1, d2 := int32(-1), int32(-1)
	for _, a := range []int32{8, 16, 24} {
		for _, b := range []int32{8, 16, 24} {
			if d1 < 0 && nic(a) != nic(b) {
				d1, d2 = a, b
			}
		}
	}
	if d1 < 0 {
		t.Fatal("every flow from GPU 0 to its rail leaves on the same NIC")
	}
	flows := writeFile(t, dir, "flow.txt", fmt.Sprintf("2\n0 %d 3 100 10000000 2\n0 %d 3 100 10000000 2\n", d1, d2))
	tr := fluid.SimAITransport(1000, 0)
	// On ns-3's clock a 1,052-byte packet takes 42 ns at 200 Gb/s (not 42.08), a 60-byte ACK 2.
	const c = 1052 * 8 / 42e-9
	done := func(sentUs, rate float64) string {
		tail := float64(tr.Tail(10e6, rate, []float64{c, c})) / 1e6
		return fmt.Sprintf("%.3f us", 2e6+sentUs+tail+2+2*2e-3)
	}
	for _, c := range []struct {
		name, conf, last string
	}{
		{"no failure", "CC_MODE 0\n", done(float64(tr.Wire(10e6))*8/c*1e6, c)},
		{"LINK_DOWN", fmt.Sprintf("CC_MODE 0\nLINK_DOWN 100 0 %d\n", nic(d1)), done(100+(float64(tr.Wire(10e6)*8)-100e-6*c)/(c/2)*1e6, c/2)},
		{"LINK_DOWN 0 is none", "CC_MODE 0\nLINK_DOWN 0 0 1\n", done(float64(tr.Wire(10e6))*8/c*1e6, c)},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := writeFile(t, dir, "SimAI.conf", c.conf)
			code, out, errOut := runCLI(t, dir, "-flows", flows, "-n", tpPath, "-c", conf, "-o", "out")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, "2 flows, the last arriving at "+c.last) {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}

// LINK_DOWN on two nodes that are not linked is bad input naming the file, line and key; so is
// one that cuts a GPU off while a flow to it is in flight, and one the run never reaches warns.
func TestLinkDownErrors(t *testing.T) {
	dir := t.TempDir()
	hpn := mustAbs(t, "../../topo/testdata/AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100")
	single := mustAbs(t, "../../topo/testdata/DCN+SingleToR_16g_8gps_400Gbps_H100")
	flows := writeFile(t, dir, "flow.txt", "1\n0 9 3 100 10000000 2\n")
	for _, c := range []struct {
		name, topo, conf string
		want             []string
	}{
		{"not linked", hpn, "CC_MODE 0\n# two GPUs\nLINK_DOWN 100 0 1\n", []string{"bad.conf:3: LINK_DOWN 100 0 1: nodes 0 and 1 are not linked"}},
		{"no such node", hpn, "CC_MODE 0\nLINK_DOWN 100 0 4000000000\n", []string{"bad.conf:2: LINK_DOWN 100 0 4000000000:", "nodes are 0 to 55"}},
		{"GPU cut off", single, "CC_MODE 0\nLINK_DOWN 10 9 18\n", []string{"bad.conf:2: LINK_DOWN 10 9 18: link 9–18 went down at 2.00001s", "flow 0 (node 0 → 9)", "no route"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := writeFile(t, dir, "bad.conf", c.conf)
			out := t.TempDir()
			code, _, errOut := runCLI(t, dir, "-flows", flows, "-n", c.topo, "-c", conf, "-o", out)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if files := listFiles(t, out); len(files) != 0 {
				t.Errorf("files left behind: %v", files)
			}
		})
	}
	// The workload mode checks the link before it runs.
	conf := writeFile(t, dir, "bad.conf", "CC_MODE 0\nLINK_DOWN 100 0 1\n")
	if code, _, errOut := runCLI(t, dir, "-c", conf, "-o", t.TempDir()); code != 2 || !strings.Contains(errOut, "bad.conf:2: LINK_DOWN 100 0 1: nodes 0 and 1 are not linked") {
		t.Errorf("event mode: exit %d, %s", code, errOut)
	}
	// The flow is over by 2 s + 500 µs.
	late := writeFile(t, dir, "late.conf", "CC_MODE 0\nLINK_DOWN 500 9 18\n")
	code, _, errOut := runCLI(t, dir, "-flows", flows, "-n", single, "-c", late, "-o", "late")
	if code != 0 || !strings.Contains(errOut, "changed nothing") || !strings.Contains(errOut, "late.conf:2: LINK_DOWN 500 9 18") {
		t.Errorf("a failure after the run: exit %d, stderr:\n%s", code, errOut)
	}
}

// In the workload mode LINK_DOWN counts from the start of the iteration, as SimAI's does from
// its workload's: here 2 s of forward compute, then a data-parallel ring all-reduce over the 16
// GPUs of a Spectrum-X fabric with two PSWs, whose cross-rail hops climb to them. Rail 0's ASW
// (node 18) losing its link to the second PSW (node 27) 100 µs into the all-reduce squeezes the
// flows onto the other uplink: the iteration takes longer, and nothing fails.
func TestLinkDownIteration(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runTopoCLI("-topo", "Spectrum-X", "-g", "16", "-psn", "2", "-o", dir); code != 0 {
		t.Fatal(errOut)
	}
	tp := filepath.Join(dir, "Spectrum-X_16g_8gps_400Gbps_H100")
	w := writeFile(t, dir, "dp.txt", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n1\n"+
		"layer -1 2000000000 NONE 0 1 NONE 0 1 ALLREDUCE 67108864 1\n")
	var totals []float64
	for _, conf := range []string{"CC_MODE 0\n", "CC_MODE 0\nLINK_DOWN 100 18 27\n"} {
		c := writeFile(t, dir, "SimAI.conf", conf)
		code, out, errOut := runCLI(t, dir, "-w", w, "-n", tp, "-c", c, "-o", "out")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", conf, code, errOut)
		}
		if strings.Contains(errOut, "changed nothing") {
			t.Errorf("%q: the failure came after the iteration:\n%s", conf, errOut)
		}
		i := strings.Index(out, "iteration: ")
		if i < 0 {
			t.Fatalf("stdout:\n%s", out)
		}
		v, err := strconv.ParseFloat(strings.Fields(out[i:])[1], 64)
		if err != nil {
			t.Fatalf("stdout:\n%s", out)
		}
		totals = append(totals, v)
	}
	if !(totals[1] > totals[0]) || totals[0] < 2e6 {
		t.Errorf("iteration %v µs without the failure, %v µs with it", totals[0], totals[1])
	}
}

// -ep-dispatch runs a workload's EP all-to-all as a DeepEP or FAST dispatch on 16 GPUs (EP 16
// over 2 servers): summary.json names the plan, the dispatch takes simulated time, and a bad
// value is refused.
func TestEPDispatch(t *testing.T) {
	dir := t.TempDir()
	w := writeFile(t, dir, "ep.txt", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 16 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n1\n"+
		"moe -1 1000 ALLTOALL_EP 8388608 1 NONE 0 1 NONE 0 1\n")
	c := writeFile(t, dir, "SimAI.conf", "CC_MODE 0\n")
	ends := map[string]float64{}
	for _, d := range []string{"nccl", "deepep", "fast"} {
		code, _, errOut := runCLI(t, dir, "-w", w, "-g", "16", "-c", c, "-o", "out-"+d, "-ep-dispatch", d)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", d, code, errOut)
		}
		var sum struct {
			Collectives []struct {
				Op, Group, Algorithm string
				StartUs              float64 `json:"start_us"`
				EndUs                float64 `json:"end_us"`
			} `json:"collectives"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "out-"+d, "summary.json"))), &sum); err != nil {
			t.Fatal(err)
		}
		if len(sum.Collectives) != 1 || sum.Collectives[0].Group != "EP" {
			t.Fatalf("%s: collectives %+v", d, sum.Collectives)
		}
		cl := sum.Collectives[0]
		if d != "nccl" && cl.Algorithm != d {
			t.Errorf("%s: algorithm %q", d, cl.Algorithm)
		}
		if !(cl.EndUs > cl.StartUs) {
			t.Errorf("%s: the dispatch took no time: %+v", d, cl)
		}
		ends[d] = cl.EndUs - cl.StartUs
	}
	if ends["deepep"] == ends["nccl"] || ends["fast"] == ends["nccl"] {
		t.Errorf("dispatch times %v: the plans did not replace the all-to-all", ends)
	}
	if code, _, errOut := runCLI(t, dir, "-w", w, "-g", "16", "-c", c, "-o", "bad", "-ep-dispatch", "magic"); code != 2 || !strings.Contains(errOut, "-ep-dispatch") {
		t.Errorf("bad value: exit %d, %s", code, errOut)
	}
}

// A flow file's flow i has source port 40000 + i, which picks its ECMP path, as in SimAI's
// ns-3 with the raw-flow patch. On the 16-GPU Spectrum-X fabric 3→12 and 11→4 cross from rail
// 3 to rail 4 through one of the PSWs: as flows 0 and 1 (ports 40000, 40001) they take
// different PSWs and each runs alone (ns-3: 15,091 ns each); as flows 2 and 1 (ports 40002,
// 40001, behind a small NVLink flow 0) they meet on one ASW uplink and share it, each sending
// its wire bytes at C/2, one more serialisation at C than alone (ns-3: 25,454 and 25,589 ns).
// With the ports of a collective's QPs (10000 for the first flow of a pair) both pairs
// collide in both files.
func TestFlowFileSourcePorts(t *testing.T) {
	dir := t.TempDir()
	tp := mustAbs(t, "testdata/ns3ref/topo/Spectrum-X_16g_8gps_400Gbps_H100")
	ports := map[string]string{}
	run := func(name, text string) map[string]float64 {
		t.Helper()
		flows := writeFile(t, dir, name, text)
		out := filepath.Join(dir, name+".out")
		if code, _, errOut := runCLI(t, dir, "-flows", flows, "-n", tp, "-o", out); code != 0 {
			t.Fatal(errOut)
		}
		fct := map[string]float64{}
		for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, "fct.txt"))), "\n") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[6], 64)
			if err != nil {
				t.Fatal(err)
			}
			fct[f[0]+" "+f[1]] = v
			ports[f[0]+" "+f[1]] = f[2]
		}
		return fct
	}
	apart := run("apart.txt", "2\n3 12 3 100 524288 0.000006\n11 4 3 100 524288 0.000006\n")
	met := run("met.txt", "3\n0 1 3 100 1000 0.0001\n11 4 3 100 524288 0.000006\n3 12 3 100 524288 0.000006\n")
	extra := float64(fluid.SimAITransport(9000, 0).Wire(524288)*8) / 400
	alone := apart["0b000301 0b000c01"]
	if d := apart["0b000b01 0b000401"] - alone; math.Abs(d) > 1 || alone > 1.5*extra {
		t.Errorf("flows on different PSWs: FCTs %v and %v, want both alone (about %.0f ns of serialisation and ~4.5 µs more)", alone, alone+d, extra)
	}
	if ports["0b000301 0b000c01"] != "40002" || ports["0b000b01 0b000401"] != "40001" {
		t.Errorf("source ports %v, want 40000 + the flow's index", ports)
	}
	for _, k := range []string{"0b000301 0b000c01", "0b000b01 0b000401"} {
		got, ok := met[k]
		if !ok {
			t.Fatalf("no flow %s in %v", k, met)
		}
		if math.Abs(got-(alone+extra)) > 0.03*extra {
			t.Errorf("flow %s met another on a PSW uplink: FCT %.0f ns, want about %.0f (alone %.0f + %.0f)", k, got, alone+extra, alone, extra)
		}
	}
}

// -qps-per-conn splits flows between servers into QPs; NCCL_IB_QPS_PER_CONNECTION does the same
// when the flag is not given, read as NCCL reads it (base prefixes allowed, 1 to 128). On a
// DCN+ dual-ToR fabric (two 200 Gbps ports per GPU) a 256 MiB all-reduce over the 16 GPUs is
// faster with 2 QPs than with SimAI's one, and the flag and the variable give the same files.
func TestQPsPerConnection(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, dir, "topo", "-topo", "DCN+", "--dt", "-g", "16", "-o", "."); code != 0 {
		t.Fatal(errOut)
	}
	topoFile := "DCN+DualToR_16g_8gps_200Gbps_H100"
	writeFile(t, dir, "ar.txt", "MICRO\n1\nar\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t268435456\t1\n")
	conf := readFile(t, filepath.Join("..", "..", "configs", "data", "SimAI.conf"))
	writeFile(t, dir, "cc0.conf", regexp.MustCompile(`(?m)^CC_MODE .*$`).ReplaceAllString(conf, "CC_MODE 0"))
	iteration := func(out string, args ...string) (float64, string) {
		t.Helper()
		code, stdout, errOut := runCLI(t, dir, append([]string{"-w", "ar.txt", "-n", topoFile, "-c", "cc0.conf", "-quiet", "-o", out}, args...)...)
		if code != 0 {
			t.Fatal(errOut)
		}
		m := regexp.MustCompile(`iteration: ([0-9]+) us`).FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no iteration time in\n%s", stdout)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v, readFile(t, filepath.Join(dir, out, "fct.txt"))
	}
	one, fct1 := iteration("q1")
	flag1, _ := iteration("q1f", "-qps-per-conn", "1")
	two, fct2 := iteration("q2", "-qps-per-conn", "2")
	t.Setenv("NCCL_IB_QPS_PER_CONNECTION", "0x2")
	env, fctEnv := iteration("q2env")
	if flag1 != one {
		t.Errorf("-qps-per-conn 1: %v µs, default %v µs", flag1, one)
	}
	if !(two < 0.85*one) {
		t.Errorf("2 QPs: %v µs, 1 QP: %v µs; want 2 QPs faster by the second port", two, one)
	}
	if env != two || fctEnv != fct2 {
		t.Errorf("NCCL_IB_QPS_PER_CONNECTION=0x2 gives %v µs, -qps-per-conn 2 %v µs", env, two)
	}
	if n1, n2 := strings.Count(fct1, "\n"), strings.Count(fct2, "\n"); n2 <= n1 {
		t.Errorf("fct.txt has %d lines with 2 QPs and %d with 1: want a line per QP", n2, n1)
	}
	for _, bad := range []struct{ env, flag string }{{"two", ""}, {"0", ""}, {"129", ""}, {"", "0"}, {"", "x"}} {
		args := []string{"-w", "ar.txt", "-n", topoFile, "-c", "cc0.conf", "-quiet", "-o", "bad"}
		want := "NCCL_IB_QPS_PER_CONNECTION"
		if bad.flag != "" {
			args = append(args, "-qps-per-conn", bad.flag)
			want = "-qps-per-conn"
		}
		t.Setenv("NCCL_IB_QPS_PER_CONNECTION", bad.env)
		if code, _, errOut := runCLI(t, dir, args...); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%+v: exit %d, %s", bad, code, errOut)
		}
	}
}

// -chunk-order: channel, SimAI's rule, is the default (the same fct.txt byte for byte), and
// arrival changes the 64 MiB ring over four AlibabaHPN servers, whose chunks overtake each
// other on their ECMP paths (the rule itself: netmodel's TestIssueInOrder).
func TestChunkOrderFlag(t *testing.T) {
	dir := t.TempDir()
	ref := mustAbs(t, "testdata/ns3ref")
	c := filepath.Join(ref, "tp32_allreduce_64MB__HPNS32_noqcn")
	t.Setenv("AS_SEND_LAT", "6")
	fct := func(out string, args ...string) string {
		t.Helper()
		args = append([]string{"-w", filepath.Join(ref, "workloads", "tp32_allreduce_64MB.txt"),
			"-n", filepath.Join(ref, "topo", "AlibabaHPN_32g_8gps_DualToR_SinglePlane_200Gbps_H100"),
			"-c", filepath.Join(c, "SimAI.conf"), "-quiet", "-o", out}, args...)
		if code, _, errOut := runCLI(t, dir, args...); code != 0 {
			t.Fatal(errOut)
		}
		return readFile(t, filepath.Join(dir, out, "fct.txt"))
	}
	def := fct("default")
	if ch := fct("channel", "-chunk-order", "channel"); ch != def {
		t.Error("-chunk-order channel differs from the default")
	}
	if arr := fct("arrival", "-chunk-order", "arrival"); arr == def {
		t.Error("-chunk-order arrival gives the default's flows: no chunk waited for an earlier one")
	}
}

// packetLayer is TestSendLatency's layer, µs, with the NVLink packet by packet (package
// packets): full packets of T = 25 ns, last packets of L = 3 ns (1,196 bytes, rounded down),
// 25 ns links (d), ACKs of 0 ns. A step's 8 × 29 full packets leave a GPU's port in turn, then
// the 8 last ones, L apart. The first channel's last packet reaches the NVSwitch while the
// port there still sends the round's last full packet (the last channel's, stored since 8·29·T
// + d), so it leaves at 8·29·T + d + T, reaches its GPU d + L later, and its ACK is back after
// 2d more: 8·29·T + T + L + 4d = 5,928 ns. The other channels' last packets follow L apart, so
// the last channel's flow ends 7L later. Each step starts 10 ns after the one before ended
// (netmodel.IssueGap), and the layer ends with the last channel's flow of the 14th step, plus
// the 1 ns of the update: 14 × (5,928 + 10) + 7 × 3 + 1 ns.
func packetLayer() float64 {
	const full, last, d = 25, 3, 25
	first := 8*29*full + full + last + 4*d
	return float64(14*(first+int(netmodel.IssueGap/engine.Nanosecond))+7*last+1) / 1000
}
