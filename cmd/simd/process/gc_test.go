package process

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestDeferFirstCollection checks that the collector waits for a 16 MiB heap until the first
// collection and has its usual setting back after it.
func TestDeferFirstCollection(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: DeferFirstCollection leaves it alone")
	}
	usual := debug.SetGCPercent(100)
	defer debug.SetGCPercent(usual)
	DeferFirstCollection()
	if got := gogc(); got != firstCollectionPercent {
		t.Fatalf("GOGC before the first collection = %d, want %d", got, firstCollectionPercent)
	}
	// The finalizer that restores the setting runs on its own goroutine after a collection.
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		got := gogc()
		if got == 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC after collections = %d, want 100", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gogc reads the collector's setting without changing it (the finalizer may change it at any time).
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
