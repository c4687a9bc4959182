package packets

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"simd/engine"
)

// nvlinkFlow is a flow of an ns-3 fct.txt between two GPUs of one server.
type nvlinkFlow struct {
	src, dst, sport int32
	bytes           int64
	start, fct      engine.Time
}

// readNVLinkFlows reads the GPU-to-GPU flows inside a server (gpus per server) of a SimAI ns-3
// fct.txt(.gz): "sip dip sport dport size start_ns fct_ns standalone_fct_ns", node = (ip >> 8)
// & 0xffff.
func readNVLinkFlows(t *testing.T, path string, gpus int32) []nvlinkFlow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	node := func(hex string) int32 {
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return int32(v>>8) & 0xffff
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var out []nvlinkFlow
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		x := strings.Fields(sc.Text())
		if len(x) < 8 {
			continue
		}
		src, dst := node(x[0]), node(x[1])
		if src/gpus != dst/gpus {
			continue
		}
		out = append(out, nvlinkFlow{src, dst, int32(num(x[2])), num(x[4]),
			engine.Time(num(x[5])) * engine.Nanosecond, engine.Time(num(x[6])) * engine.Nanosecond})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The packet model, given the start times SimAI's ns-3 gave its NVLink flows, gives their FCTs
// to the nanosecond: the 16 MiB ring all-reduce over two servers of DCN+ (3,360 NVLink flows of
// 128 KiB, 15 packets each, 2,880 Gb/s links of 25 ns; the reference run of
// cmd/simd/testdata/ns3ref). The queue pairs a GPU makes at one instant are made in ns-3's
// mailbox order (docs/models.md, "The start's mailbox"): on the ring's first step every GPU's
// in reverse of its source ports, but GPUs 0 and 4 of each eight their first one first.
func TestReplaysNS3NVLinkFlows(t *testing.T) {
	path := filepath.Join("..", "..", "cmd", "simd", "testdata", "ns3ref", "tp16_allreduce_16MB__DCNS16", "fct.txt.gz")
	const gpus = 16
	flows := readNVLinkFlows(t, path, 8)
	if len(flows) != 3360 {
		t.Fatalf("%d NVLink flows, want 3360", len(flows))
	}
	// The same-instant starts of a GPU in mailbox order.
	slices.SortStableFunc(flows, func(a, b nvlinkFlow) int {
		if a.start != b.start {
			return int(a.start - b.start)
		}
		if a.src != b.src {
			return int(a.src - b.src)
		}
		return int(a.sport - b.sport)
	})
	for i := 0; i < len(flows); {
		j := i + 1
		for j < len(flows) && flows[j].start == flows[i].start && flows[j].src == flows[i].src {
			j++
		}
		if j-i > 1 {
			run := flows[i:j]
			first := run[0]
			slices.Reverse(run)
			if run[0].src%4 == 0 {
				copy(run[1:], run[:len(run)-1])
				run[0] = first
			}
		}
		i = j
	}
	st := newStar(t, gpus, 2880e9, 25*ns, Config{Transport: nvlinkTransport(), Window: 236000})
	for i, f := range flows {
		st.flow(int32(i), f.src, f.dst, f.bytes, f.start)
	}
	st.s.Run()
	exact := 0
	var off []float64
	for i, f := range flows {
		got := st.fct(int32(i))
		if got == f.fct {
			exact++
		}
		d := float64(got-f.fct) / float64(f.fct)
		off = append(off, max(d, -d))
	}
	slices.Sort(off)
	if med := off[len(off)/2]; med != 0 || exact < 3200 {
		t.Errorf("%d of %d flows to the nanosecond, median |error| %.4f; want at least 3,200 and 0", exact, len(flows), med)
	}
	t.Logf("%d of %d NVLink flows to the nanosecond; 99th percentile |error| %.4f", exact, len(flows), off[len(off)*99/100])
}
