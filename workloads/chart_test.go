package workloads

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteChart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     EndToEndSummary
		lang  string
		holds []string
		paths int
	}{
		{"two slices", EndToEndSummary{TPComm: 25, Compute: 75, Total: 100}, "en",
			[]string{"Total time: 100 us", "model: run-", "Expose TP comm</td><td class=\"n\">25 us</td><td class=\"n\">25.00%",
				// TP: a quarter from 12 o'clock to 3 o'clock; compute the other three quarters.
				`d="M110.00,110.00 L110.00,10.00 A100.00,100.00 0 0 1 210.00,110.00 Z" fill="#FFCE56"`,
				`A100.00,100.00 0 1 1 110.00,10.00 Z" fill="#9966FF"`}, 2},
		{"one slice is a circle", EndToEndSummary{Compute: 7.5, Total: 8}, "ja",
			[]string{`<circle cx="110" cy="110" r="100" fill="#9966FF"`, "計算時間合計", "7.5 us"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.s.WriteChart(&b, "run-", tc.lang); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, want := range tc.holds {
				if !strings.Contains(page, want) {
					t.Errorf("the chart does not hold %q:\n%s", want, page)
				}
			}
			if n := strings.Count(page, "<path "); n != tc.paths {
				t.Errorf("%d slices, want %d", n, tc.paths)
			}
			for _, bad := range []string{"<script", "http"} {
				if strings.Contains(page, bad) {
					t.Errorf("the chart holds %q", bad)
				}
			}
		})
	}
}
