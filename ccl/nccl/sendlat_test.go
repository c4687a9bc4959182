package nccl

import "testing"

// The entries of simai-formats.md §7.3 and the fallbacks.
func TestSendLatencyNs(t *testing.T) {
	cases := []struct {
		a    Algorithm
		p    Protocol
		same bool
		want int64
	}{
		{AlgoRing, ProtoLL, true, 7200},
		{AlgoRing, ProtoLL128, false, 18000},
		{AlgoRing, ProtoSimple, false, 22400},
		{AlgoTree, ProtoLL128, true, 15250},
		{AlgoNVLS, ProtoSimple, true, 25000},
		{AlgoNVLSTree, ProtoSimple, false, 20900},
		{AlgoPAT, ProtoSimple, false, 22000},
		{AlgoNVLS, ProtoLL, true, DefaultSendLatencyNs}, // a '–' entry
		{AlgoRing, ProtoUndef, true, DefaultSendLatencyNs},
	}
	for _, c := range cases {
		if got := SendLatencyNs(c.a, c.p, c.same); got != c.want {
			t.Errorf("%s/%s same=%v: %d, want %d", c.a, c.p, c.same, got, c.want)
		}
	}
}
