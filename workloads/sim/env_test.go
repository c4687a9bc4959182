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
