package sim

import (
	"encoding/json"
	"time"

	"simd/engine"
	"simd/netmodel"
	"simd/workloads"
)

// breakdownJSON is summary.json's breakdown of a workload's iteration: EndToEnd.csv's summary
// line in µs, unrounded. The exposed time by group adds up to exposed_comm_us; PP communication
// and the bubble are outside it.
type breakdownJSON struct {
	IterationUs   float64 `json:"iteration_us"`
	ComputeUs     float64 `json:"compute_us"`
	ExposedCommUs float64 `json:"exposed_comm_us"`
	TPUs          float64 `json:"exposed_tp_us"`
	DPUs          float64 `json:"exposed_dp_us"`
	DPEPUs        float64 `json:"exposed_dp_ep_us"`
	EPUs          float64 `json:"exposed_ep_us"`
	PPUs          float64 `json:"exposed_pp_us"`
	BubbleUs      float64 `json:"bubble_us"`
	// Stages is every pipeline stage's own breakdown when the pipeline was simulated; the
	// figures above are those of the stage that ended last (reported_stage).
	ReportedStage *int        `json:"reported_stage,omitempty"`
	Stages        []stageJSON `json:"stages,omitempty"`
}

// stageJSON is one pipeline stage's time: compute, exposed communication of its collectives,
// the bubble (waiting for a neighbour that had not sent yet, and idle after the stage's end
// until the iteration's) and exposed pipeline communication add up to iteration_us.
type stageJSON struct {
	Stage         int     `json:"stage"`
	EndUs         float64 `json:"end_us"`
	ComputeUs     float64 `json:"compute_us"`
	ExposedCommUs float64 `json:"exposed_comm_us"`
	BubbleUs      float64 `json:"bubble_us"`
	PPUs          float64 `json:"exposed_pp_us"`
	Sends         int     `json:"pp_sends"`
	SendUs        float64 `json:"pp_send_us"` // the sends' times, issue to arrival, summed
}

// SummaryHeader is what summary.json says of a run's inputs.
type SummaryHeader struct {
	Mode     string // event, or flows for a flow file
	Workload string // the workload (or flow file) as the user named it
	Topology string
	GPUs     int
}

// SummaryJSON is summary.json: every finished collective (group, algorithm, bytes, start, end,
// flows), the breakdown of the iteration's time when the run has a report (a workload run), and
// the run's totals. wall_clock_seconds is the one field that differs between two runs of the
// same inputs.
func (r *Result) SummaryJSON(h SummaryHeader) ([]byte, error) {
	summary := struct {
		Mode        string         `json:"mode"`
		Workload    string         `json:"workload"`
		Topology    string         `json:"topology"`
		GPUs        int            `json:"gpus"`
		Collectives []Collective   `json:"collectives"`
		Breakdown   *breakdownJSON `json:"breakdown,omitempty"`
		Run         runJSON        `json:"run"`
	}{Mode: h.Mode, Workload: h.Workload, Topology: h.Topology, GPUs: h.GPUs, Collectives: r.Finished(),
		Run: totals(r.Stopped, r.Note, r.End, r.Events, r.Sim, r.Wall)}
	if r.Report != nil {
		sm := &r.Report.Summary
		summary.Breakdown = breakdown(sm)
		if r.Run != nil && r.Run.Stages != nil {
			summary.Breakdown.addStages(r.Run)
		}
	}
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func breakdown(sm *workloads.EndToEndSummary) *breakdownJSON {
	return &breakdownJSON{IterationUs: sm.Total, ComputeUs: sm.Compute, ExposedCommUs: sm.Exposed,
		TPUs: sm.TPComm, DPUs: sm.DPComm, DPEPUs: sm.DPEPComm, EPUs: sm.EPComm, PPUs: float64(sm.PPComm), BubbleUs: sm.Bubble}
}

// runJSON is summary.json's "run": the totals of a run.
type runJSON struct {
	Complete         bool    `json:"complete"`
	Incomplete       string  `json:"incomplete,omitempty"`
	EndUs            float64 `json:"end_us"`
	Events           uint64  `json:"events"`
	Flows            uint64  `json:"flows"`
	WallClockSeconds float64 `json:"wall_clock_seconds"`
}

func totals(stopped error, note string, end engine.Time, events uint64, sim *netmodel.Simulator, wall time.Duration) runJSON {
	return runJSON{Complete: stopped == nil, Incomplete: note, EndUs: end.Microseconds(), Events: events,
		Flows: sim.Flows(), WallClockSeconds: wall.Seconds()}
}

// addStages adds a pipelined run's stages.
func (b *breakdownJSON) addStages(run *workloads.RunResult) {
	rs := run.Reported
	b.ReportedStage = &rs
	for i, st := range run.Stages {
		var comp, exp engine.Time
		for _, l := range st.Layers {
			for _, ph := range l {
				comp += ph.Compute
				exp += ph.Exposed
			}
		}
		b.Stages = append(b.Stages, stageJSON{Stage: i, EndUs: st.End.Microseconds(), ComputeUs: comp.Microseconds(),
			ExposedCommUs: exp.Microseconds(), BubbleUs: (st.Bubble + run.End - st.End).Microseconds(),
			PPUs: st.PPExposed.Microseconds(), Sends: st.Sends, SendUs: st.PPComm.Microseconds()})
	}
}
