package ccfluid

import (
	"testing"
	"unsafe"
)

// TestLinkFillsWholeCacheLines keeps link's size a multiple of 64 bytes, so that the groups its
// field order makes (network.go) each stay in one cache line of the links' slice.
func TestLinkFillsWholeCacheLines(t *testing.T) {
	if s := unsafe.Sizeof(link{}); s%64 != 0 {
		t.Errorf("link is %d bytes, not a multiple of 64: regroup its fields", s)
	}
	if o := unsafe.Offsetof(link{}.mkT); o != 64 {
		t.Errorf("link's timers start at byte %d, want 64 (the queue's line is full)", o)
	}
}

// TestFlowFillsWholeCacheLines keeps flow's size a multiple of 64 bytes and its reaction point
// at the start of the third line (network.go).
func TestFlowFillsWholeCacheLines(t *testing.T) {
	if s := unsafe.Sizeof(flow{}); s%64 != 0 {
		t.Errorf("flow is %d bytes, not a multiple of 64: regroup its fields", s)
	}
	if o := unsafe.Offsetof(flow{}.rp); o != 128 {
		t.Errorf("flow's reaction point starts at byte %d, want 128", o)
	}
}
