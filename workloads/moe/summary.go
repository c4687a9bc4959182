package moe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText writes m as seed 000's scripts print it: a title between rules of '=' naming the
// plan kind and how the layers were timed, then the total latency (s), the average layer
// latency (ms), the inter-node traffic (GB) and the algorithmic bandwidth (GB/s). model is Seed
// (the seed's own title), Exact, or 0 for layer times simulated on a fabric (event mode).
func (m Metrics) WriteText(w io.Writer, kind Kind, model Model) error {
	title := kind.String() + " Final Results"
	switch model {
	case Seed:
	case 0:
		title += " (event mode)"
	default:
		title += " (" + model.String() + " model)"
	}
	rule := strings.Repeat("=", 50)
	_, err := fmt.Fprintf(w, "%s\n%s\n%s\n"+
		"Total Latency            : %.6f s\n"+
		"Avg Layer Latency        : %.4f ms\n"+
		"Total Inter-node Traffic : %.4f GB\n"+
		"Algorithmic Bandwidth    : %.4f GB/s\n"+
		"%s\n",
		rule, title, rule, m.TotalLatencyS, m.AvgLayerLatencyMs, m.InterNodeTrafficGB, m.AlgoBWGBps, rule)
	return err
}

// WriteJSON writes m as metrics.json: its fields indented by two spaces, then, when incomplete
// is not empty, "incomplete": incomplete (a stopped run's note of what it finished), and a
// newline.
func (m Metrics) WriteJSON(w io.Writer, incomplete string) error {
	b, err := json.MarshalIndent(struct {
		Metrics
		Incomplete string `json:"incomplete,omitempty"`
	}{m, incomplete}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteStages writes the FAST stages of the layer (Estimate.Stages): a line naming the
// iteration, the layer, the number of stages and the last one with real traffic (when one
// has), then a line per stage with its weight in tokens per GPU and where each server sends
// (s→s is padding only, an idle server).
func (r LayerResult) WriteStages(w io.Writer) error {
	e := r.Estimate
	var b strings.Builder
	fmt.Fprintf(&b, "iteration %d layer %d: %d stages (weight: tokens per GPU; s→t: server s sends to server t)", r.Iteration, r.Layer, len(e.Stages))
	if e.LastStage >= 0 {
		fmt.Fprintf(&b, ", last with real traffic: %d", e.LastStage)
	}
	b.WriteByte('\n')
	for k, st := range e.Stages {
		fmt.Fprintf(&b, "  stage %d  weight %g ", k, st.Weight)
		for s, t := range st.Perm {
			fmt.Fprintf(&b, " %d→%d", s, t)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
