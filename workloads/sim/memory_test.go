package sim

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"simd/ccl/algo"
)

// The estimate is the sum of its closed-form parts: the base, the links, and the widest
// collective's flows in flight (a direct all-to-all: n(n−1), all at once; its DAG is
// arithmetic, so none is stored).
func TestEstimateMemoryParts(t *testing.T) {
	s := newTestSimulation(t, "MICRO\n1\na2a -1 1 NONE 0 1 NONE 0 1 ALLTOALL 1048576 1\n", 64, "CC_MODE 0\n")
	sel, err := algo.NewSelector(algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const links, n = 1000, 64
	est, err := s.estimateMemory(sel, links, n, false, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(bytesBase + links*bytesPerLink + n*(n-1)*bytesPerFlowMaxMin)
	if est.Bytes != want {
		t.Errorf("estimate %d B, want %d", est.Bytes, want)
	}
	if cc, _ := s.estimateMemory(sel, links, n, true, 0, 1); cc.Bytes-est.Bytes != n*(n-1)*(bytesPerFlowCC-bytesPerFlowMaxMin) {
		t.Errorf("congestion control adds %d B", cc.Bytes-est.Bytes)
	}
	// With 4 QPs per connection every flow in flight may be 4 flows of the network.
	if q, _ := s.estimateMemory(sel, links, n, false, 0, 4); q.Bytes-est.Bytes != n*(n-1)*3*bytesPerFlowMaxMin {
		t.Errorf("4 QPs per connection add %d B", q.Bytes-est.Bytes)
	}
}

// On Linux the machine's available memory is known and plausible.
func TestAvailableMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/meminfo")
	}
	b, source, ok := AvailableMemory()
	if !ok || b <= 0 || source == "" {
		t.Errorf("AvailableMemory() = %d, %q, %v", b, source, ok)
	}
}

// The estimate's flow count (the progress report's yardstick) counts every collective each time
// the iteration issues it: in a pipeline, the micro-batches' copies and the sends between
// stages, one flow per rank of the job, however many GPUs the fabric has.
func TestEstimateFlowsCountsEveryIssue(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "pp2-aicb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSimulation(t, string(text), 16, "CC_MODE 0\n")
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	var flows int64
	for _, c := range r.Finished() {
		flows += c.Flows
	}
	sel, err := algo.NewSelector(algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, fabricGPUs := range []int{16, 32} {
		est, err := s.estimateMemory(sel, 1000, fabricGPUs, false, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if est.Flows != flows || flows == 0 {
			t.Errorf("on a fabric of %d GPUs: estimate %d flows, the run has %d", fabricGPUs, est.Flows, flows)
		}
	}
}
