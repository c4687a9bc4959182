package workloads

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var autoNameParam = regexp.MustCompile(`(world_size|tp|pp|ep|gbs|mbs|seq)(\d+)`)

// ResultPrefix is the prefix of a run's result files that SimAI_analytical derives from an AICB
// workload file name (its -r default), for gps GPUs per server, NICs of nic GB/s and a DP
// overlap ratio dpo:
// {model}-tp{tp}-pp{pp}-dp{dp}-ga{ga}-ep{ep}-NVL{gps}-{nic·8}G-DP{dp_o}-. SimAI divides by zero
// when the name lacks tpN, ppN or mbsN; simd then uses the file's base name and a dash.
func ResultPrefix(workload string, gps int, nic, dpo float32) string {
	base := filepath.Base(workload)
	vals := map[string]int{}
	for _, m := range autoNameParam.FindAllStringSubmatch(base, -1) {
		v, err := strconv.Atoi(m[2])
		if err == nil {
			vals[m[1]] = v
		}
	}
	tp, pp, mbs := vals["tp"], vals["pp"], vals["mbs"]
	if tp > 0 && pp > 0 && mbs > 0 {
		if dp := vals["world_size"] / (tp * pp); dp > 0 {
			model := ""
			if i := strings.Index(base, "world_size"); i > 0 {
				model = base[:i-1]
			}
			ga := int(float64(vals["gbs"]) / float64(dp*mbs))
			return fmt.Sprintf("%s-tp%d-pp%d-dp%d-ga%d-ep%d-NVL%d-%.1fG-DP%.1f-", model, tp, pp, dp, ga, vals["ep"], gps, nic*8, dpo)
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base)) + "-"
}
