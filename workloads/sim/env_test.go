package sim

import (
	"testing"

	"simd/engine"
)

// SetFromEnv fills only what the caller left unset, and names a variable that does not parse.
func TestSetFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	o := EventOptions{SendLatency: -1}
	if err := o.SetFromEnv(env(nil)); err != nil || o.SendLatency != -1 || o.QPsPerConnection != 1 {
		t.Errorf("no variables: %+v, %v", o, err)
	}
	o = EventOptions{SendLatency: -1}
	if err := o.SetFromEnv(env(map[string]string{"AS_SEND_LAT": "3", "NCCL_IB_QPS_PER_CONNECTION": "0x4"})); err != nil ||
		o.SendLatency != 3*engine.Microsecond || o.QPsPerConnection != 4 {
		t.Errorf("from the variables: %+v, %v", o, err)
	}
	o = EventOptions{SendLatency: 5, QPsPerConnection: 2}
	if err := o.SetFromEnv(env(map[string]string{"AS_SEND_LAT": "3", "NCCL_IB_QPS_PER_CONNECTION": "4"})); err != nil ||
		o.SendLatency != 5 || o.QPsPerConnection != 2 {
		t.Errorf("set by the caller: %+v, %v", o, err)
	}
	for _, m := range []map[string]string{{"AS_SEND_LAT": "-1"}, {"NCCL_IB_QPS_PER_CONNECTION": "0"}} {
		o = EventOptions{SendLatency: -1}
		if err := o.SetFromEnv(env(m)); err == nil || !IsInputError(err) {
			t.Errorf("%v: %v, want an input error", m, err)
		}
	}
}

// -chunk-bytes: unset, a SimAI workload's collectives are cut as SimCCL cuts them and a Chakra
// trace's send every byte (no SimCCL divided them); either is forced by name, anything else is
// refused.
func TestChunkBytesDefault(t *testing.T) {
	for _, c := range []struct {
		rule      string
		trace     bool
		exact, ok bool
	}{
		{"", false, false, true},
		{"", true, true, true},
		{"simccl", true, false, true},
		{"exact", false, true, true},
		{"Exact", false, false, false},
	} {
		r := Request{Event: EventRequest{ChunkBytes: c.rule, SendLatencyNs: -1, AlgoPolicy: "simccl", EPDispatch: "nccl",
			LookupEnv: func(string) (string, bool) { return "", false }}}
		o, err := r.eventOptions(c.trace)
		if (err == nil) != c.ok || (c.ok && o.Algorithms.ExactBytes != c.exact) {
			t.Errorf("-chunk-bytes %q (trace %v): exact %v, err %v; want exact %v, ok %v", c.rule, c.trace, o.Algorithms.ExactBytes, err, c.exact, c.ok)
		}
	}
}
