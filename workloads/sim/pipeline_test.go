package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/engine"
	"simd/netmodel"
)

// An AICB-style workload with pp 2, vpp 2 and ga 4 (TP 4, DP 2 on 16 GPUs, 8 per server: one
// stage per server) runs to completion in the compare mode: every stage sends 3·ga messages
// of 8 flows, the report's parts add up to the iteration, every stage's do, and EndToEnd.csv
// and compare.csv match their golden files.
func TestPipelineAICBWorkload(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSimulation(t, string(text), 16, "CC_MODE 0\n")
	cmp, err := s.Compare(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	r := cmp.Event
	if r.Stopped != nil || len(r.Run.Stages) != 2 {
		t.Fatalf("stopped %v, %d stages", r.Stopped, len(r.Run.Stages))
	}
	sends := [2]int{}
	for _, c := range r.Finished() {
		if c.Op != "send" {
			continue
		}
		if c.Flows != 8 || c.Stage == nil || c.ToStage == nil || *c.Stage == *c.ToStage || c.Bytes != 8388608 {
			t.Errorf("send %+v", c)
			continue
		}
		sends[*c.Stage]++
	}
	if sends != [2]int{12, 12} {
		t.Errorf("sends per stage %v, want 12 each", sends)
	}
	sm := r.Report.Summary
	if d := sm.Compute + sm.Exposed + sm.Bubble + float64(sm.PPComm) - r.End.Microseconds(); math.Abs(d) > 1e-6 {
		t.Errorf("compute %g + exposed %g + bubble %g + PP %d = end %g + %g", sm.Compute, sm.Exposed, sm.Bubble, sm.PPComm, r.End.Microseconds(), d)
	}
	g := sm.TPComm + sm.DPComm + sm.DPEPComm + sm.EPComm
	if math.Abs(g-sm.Exposed) > 1e-6 {
		t.Errorf("groups add up to %g, exposed %g", g, sm.Exposed)
	}
	js, err := r.SummaryJSON(SummaryHeader{Mode: "event", Workload: "pp2-aicb.txt", GPUs: 16})
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Breakdown breakdownJSON `json:"breakdown"`
	}
	if err := json.Unmarshal(js, &sj); err != nil {
		t.Fatal(err)
	}
	b := sj.Breakdown
	if len(b.Stages) != 2 || b.ReportedStage == nil {
		t.Fatalf("breakdown %+v", b)
	}
	for _, st := range b.Stages {
		if d := st.ComputeUs + st.ExposedCommUs + st.BubbleUs + st.PPUs - b.IterationUs; math.Abs(d) > 1e-6 {
			t.Errorf("stage %+v adds up to the iteration %g + %g", st, b.IterationUs, d)
		}
		if st.Sends != 12 || st.SendUs <= 0 {
			t.Errorf("stage %d: %d sends taking %g us", st.Stage, st.Sends, st.SendUs)
		}
	}
	var e2e, cmpCSV bytes.Buffer
	if err := r.Report.WriteCSV(&e2e); err != nil {
		t.Fatal(err)
	}
	cmp.WriteCSV(&cmpCSV)
	golden(t, "pp2-aicb-EndToEnd.csv", e2e.Bytes())
	golden(t, "pp2-aicb-compare.csv", cmpCSV.Bytes())
	if !strings.Contains(cmpCSV.String(), "-1,pipeline,bubble,,PP,") {
		t.Errorf("compare.csv has no pipeline rows")
	}
	// Same inputs, same outputs.
	again, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	var e2e2 bytes.Buffer
	again.Report.WriteCSV(&e2e2)
	if !bytes.Equal(e2e.Bytes(), e2e2.Bytes()) {
		t.Error("a second run wrote a different EndToEnd.csv")
	}
}

// A send on an idle fabric costs its latency plus its way through the network: two stages on
// two servers (TP 8), one micro-batch, no collectives, one-packet sends (8,192 bytes, 8,244 on
// the wire with PACKET_PAYLOAD_SIZE 9000) completed at arrival. Rank i of stage 0 and rank i + 8 of stage 1 share a rail:
// NIC to ASW to NIC, two 400 Gb/s, 500 ns links the packet is stored and forwarded over, so
// c = the send's hand-over (10 ns, netmodel.IssueGap) + latency + 2·8,244·8/C + 2·500 ns and
// the iteration is 2(t_f + t_b) + 2c. C is what ns-3's
// clock makes of 400 Gb/s for full packets (9,052 bytes in 181 ns, not 181.04): the model sends
// every byte at it, so this packet takes 164.84 ns a link where ns-3 takes 164.
func TestPipelineSendOnIdleFabric(t *testing.T) {
	const tf, tb = 30000, 50000 // ns per layer forward, backward (ig + wg)
	text := fmt.Sprintf("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 1 ga: 1 all_gpus: 16 pp_comm: 8192\n2\n"+
		"a -1 %d NONE 0 %d NONE 0 %d NONE 0 0\nb -1 %d NONE 0 %d NONE 0 %d NONE 0 0\n", tf/2, tb/4, tb/4, tf/2, tb/4, tb/4)
	s := newTestSimulation(t, text, 16, "CC_MODE 0\nPACKET_PAYLOAD_SIZE 9000\n")
	const lat = 3 * engine.Microsecond
	r, err := s.Event(context.Background(), EventOptions{SendLatency: lat, AtArrival: true}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	c := netmodel.IssueGap + lat + engine.Time(math.Ceil(2*8244*8/(9052*8/181e-9)*1e12)) + 1000*engine.Nanosecond
	want := 2*(tf+tb)*engine.Nanosecond + 2*c
	if r.End != want {
		t.Errorf("iteration %d ps, want 2(t_f+t_b) + 2c = %d ps (c = %d ps)", r.End, want, c)
	}
	n := 0
	for _, rec := range r.Finished() {
		if rec.Op != "send" {
			continue
		}
		n++
		if d := rec.EndUs - rec.StartUs; math.Abs(d-c.Microseconds()) > 1e-6 {
			t.Errorf("send %s took %g us, want %g", rec.Phase, d, c.Microseconds())
		}
	}
	if n != 2 {
		t.Errorf("%d sends, want 2", n)
	}
	st := r.Run.Stages[0]
	if st.PPExposed != c || st.PPComm != c || st.Bubble != (tf+tb)*engine.Nanosecond+c {
		t.Errorf("stage 0: %+v", st)
	}
}

// A pipelined run stopped part way reports what it did: every stage's time still adds up to
// the time reached, and the reports say they are incomplete.
func TestPipelineStopped(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSimulation(t, string(text), 16, "CC_MODE 0\n")
	for _, n := range []uint64{1, 500, 5000} {
		r, err := s.Event(context.Background(), EventOptions{SendLatency: -1, MaxEvents: n}, Attachments{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Stopped == nil || r.Report.Incomplete == "" || len(r.Run.Stages) != 2 {
			t.Fatalf("-max-events %d: stopped %v, note %q", n, r.Stopped, r.Report.Incomplete)
		}
		for i, st := range r.Run.Stages {
			var sum engine.Time
			for _, l := range st.Layers {
				for _, ph := range l {
					sum += ph.Compute + ph.Exposed
				}
			}
			if sum += st.Bubble + st.PPExposed; sum != r.End {
				t.Errorf("-max-events %d stage %d: %v of %v accounted for", n, i, sum, r.End)
			}
		}
		var b bytes.Buffer
		if err := r.Report.WriteCSV(&b); err != nil || !strings.HasPrefix(b.String(), "# incomplete: ") {
			t.Errorf("-max-events %d: EndToEnd.csv %v %q", n, err, b.String()[:min(60, b.Len())])
		}
	}
}
