package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

var chartLabels = map[string][]string{
	"en": {"Expose DP comm", "Expose DP_EP comm", "Expose TP comm", "Expose_EP_comm", "Total compute", "PP Bubble time", "Expose PP comm"},
	"ja": {"DP通信（露出）", "DP_EP通信（露出）", "TP通信（露出）", "EP通信（露出）", "計算時間合計", "PPバブル時間", "PP通信（露出）"},
}

// WriteChart writes SimAI_analytical's chart.html (-v): a pie chart of the time breakdown, in µs
// (SimAI's page says ns, but its numbers are µs), titled fileName, labelled in lang (en or ja).
func (s EndToEndSummary) WriteChart(w io.Writer, fileName, lang string) error {
	values := []float64{s.DPComm, s.DPEPComm, s.TPComm, s.EPComm, s.Compute, s.Bubble, float64(s.PPComm)}
	labels, _ := json.Marshal(chartLabels[lang])
	data, _ := json.Marshal(values)
	title, _ := json.Marshal(fileName)
	_, err := fmt.Fprintf(w, `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>simd time breakdown</title>
<script src="https://cdn.jsdelivr.net/npm/chart.js"></script>
<style>
body { display: flex; flex-direction: column; align-items: center; margin: 0; padding-top: 5%%; font-family: sans-serif; }
canvas { width: 50%%; max-width: 400px; height: auto; }
h2 { margin: 5px 0; }
</style>
</head>
<body>
<canvas id="breakdown"></canvas>
<h2>Total time: %s us</h2>
<h2 id="model"></h2>
<script>
document.getElementById('model').textContent = 'model: ' + %s;
new Chart(document.getElementById('breakdown').getContext('2d'), {
  type: 'pie',
  data: { labels: %s, datasets: [{ data: %s,
    backgroundColor: ['#FF6384', '#36A2EB', '#FFCE56', '#4BC0C0', '#9966FF', '#FF9F40', '#FF5733'] }] },
  options: { responsive: true, plugins: { tooltip: { callbacks: {
    label: function(c) { return c.label + ': ' + c.parsed + ' us'; } } } } }
});
</script>
</body>
</html>
`, strconv.FormatFloat(s.Total, 'f', 0, 64), title, labels, data)
	return err
}
