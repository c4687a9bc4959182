package process

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestHeapAdviceMarksNewMemory checks that memory the runtime maps for the heap after a look is
// advised for huge pages by the next look (its mapping carries the kernel's "hg" flag), and
// that a look with nothing new does nothing.
func TestHeapAdviceMarksNewMemory(t *testing.T) {
	if _, err := os.Stat(thpSetting); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	var h heapAdvice
	h.advise()
	big := make([]byte, 3*arenaBytes/2) // more than the heap holds free: new mapped memory
	if !h.advise() {
		t.Fatal("the look after a 96 MiB allocation found no growth")
	}
	if h.advise() {
		t.Error("a look with nothing new advised again")
	}
	addr := uintptr(unsafe.Pointer(&big[len(big)/2]))
	flags, err := vmFlags(addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping of the new memory has flags %q, without hg (huge pages advised)", flags)
	}
	runtime.KeepAlive(big)
}

// TestWatcherAdvisesGrowth starts the watcher, grows the heap and waits for the new memory to
// be advised, then stops the watcher (where the kernel's setting makes advice count).
func TestWatcherAdvisesGrowth(t *testing.T) {
	if !adviceHelps() {
		t.Skip("transparent huge pages are not on \"madvise\" here: the watcher does not run")
	}
	stop := AdviseHugePages()
	defer stop()
	big := make([]byte, 3*arenaBytes/2)
	addr := uintptr(unsafe.Pointer(&big[len(big)/2]))
	deadline := time.Now().Add(5 * time.Second)
	for {
		flags, err := vmFlags(addr)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(" "+flags+" ", " hg ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after a 96 MiB allocation its mapping has flags %q, without hg", flags)
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(big)
}

// TestAdviceOff checks the cases where advice changes nothing: the runtime's disablethp set.
func TestAdviceOff(t *testing.T) {
	t.Setenv("GODEBUG", "disablethp=1")
	if adviceHelps() {
		t.Error("advice helps under GODEBUG=disablethp=1")
	}
	AdviseHugePages()() // starts nothing, stops nothing
}

// vmFlags returns the VmFlags of the mapping that holds addr, from /proc/self/smaps.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", os.ErrNotExist
}

// mappingRange parses the address range of a mapping's first line, "lo-hi perms ...".
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
