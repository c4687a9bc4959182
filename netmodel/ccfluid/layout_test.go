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

// TestFlowFillsWholeCacheLines keeps flow's size a multiple of 64 bytes, its reaction point in
// the third and fourth lines, its window (window.go) on the line of the reaction point's rate,
// and its paced rate on the line of its port's cap: windowTarget reads them for every flow on
// a link (network.go).
func TestFlowFillsWholeCacheLines(t *testing.T) {
	if s := unsafe.Sizeof(flow{}); s%64 != 0 {
		t.Errorf("flow is %d bytes, not a multiple of 64: regroup its fields", s)
	}
	rp := unsafe.Offsetof(flow{}.rp)
	if end := rp + unsafe.Sizeof(flow{}.rp); rp < 128 || end > 256 {
		t.Errorf("flow's reaction point is at bytes [%d, %d), want it within [128, 256)", rp, end)
	}
	if pr, lim := unsafe.Offsetof(flow{}.pr), unsafe.Offsetof(flow{}.lim); pr/64 != lim/64 {
		t.Errorf("flow's paced rate is at byte %d, not on the line of its cap (byte %d): windowTarget reads both", pr, lim)
	}
	rate := rp + unsafe.Sizeof(uintptr(0)) // DCQCN's rate follows its config pointer
	for _, o := range []uintptr{unsafe.Offsetof(flow{}.win), unsafe.Offsetof(flow{}.winAt)} {
		if o/64 != rate/64 {
			t.Errorf("flow's window is at byte %d, not on the line of its rate (byte %d)", o, rate)
		}
	}
}

// TestPFCPortStateFitsACacheLine keeps a switch port's PFC state in one cache line: a check
// walks tens of active ports several times (pfc.go).
func TestPFCPortStateFitsACacheLine(t *testing.T) {
	if s := unsafe.Sizeof(pfcPortState{}); s > 64 {
		t.Errorf("pfcPortState is %d bytes, more than a cache line", s)
	}
}
