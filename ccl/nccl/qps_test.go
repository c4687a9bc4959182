package nccl

import "testing"

// ParseQPsPerConnection reads NCCL's integers (base 0) within NCCL's bounds.
func TestParseQPsPerConnection(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{"4", 4, true}, {"0x4", 4, true}, {"04", 4, true}, {" 2 ", 2, true}, {"128", 128, true}, {"0", 0, false}, {"129", 0, false}, {"x", 0, false}} {
		got, err := ParseQPsPerConnection(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseQPsPerConnection(%q) = %d, %v", tc.in, got, err)
		}
	}
}
