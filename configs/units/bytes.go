package units

import (
	"errors"
	"strconv"
	"strings"
)

// byteUnits are ParseBytes's suffixes, binary ones first so that "KiB" is not read as "Ki" and
// "B".
var byteUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1}}

// ParseBytes reads a byte count as simd's flags take it (simd dag -size, simd -max-memory):
// a non-negative decimal integer with an optional suffix, K, M, G, T (×1000) or KiB, MiB, GiB,
// TiB (×1024) or B, as in "4096", "64MiB" or "1G". Counts above 2⁶² bytes are refused: no buffer
// or memory is that large, and the headroom keeps the sum of a few counts within an int64.
func ParseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = num, u.mult
			break
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || (v > 0 && mult > (1<<62)/v) {
		return 0, errors.New("expected a byte count such as 4096 or 64MiB")
	}
	return v * mult, nil
}

// FormatBytes writes a byte count in binary units with one decimal, as messages show it:
// "1023 B", "1.5 GiB", "768.0 MiB". It reads back with ParseBytes only below 1 KiB.
func FormatBytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatInt(b, 10) + " B"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}
