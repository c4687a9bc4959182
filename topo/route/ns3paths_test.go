package route

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRoutesAgainstNS3Paths routes every flow of testdata/ns3_paths_AlibabaHPN_64g.txt — the
// paths SimAI's ns-3 took, read from per-hop prints — and wants the same nodes hop for hop:
// the NIC a dual-ToR GPU sends on, the PSW its ToR sends to and the ToR the PSW sends down to.
// With the candidates in ascending order instead of SimAI's none of the cross-rail paths match.
func TestRoutesAgainstNS3Paths(t *testing.T) {
	r := mustRouter(t, loadTopo(t, filepath.Join("testdata", "AlibabaHPN_64g_8gps_DualToR_SinglePlane_200Gbps_H100")))
	g := r.Graph()
	f, err := os.Open(filepath.Join("testdata", "ns3_paths_AlibabaHPN_64g.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, line := 0, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		var v []int32
		for _, w := range strings.Fields(text) {
			x, err := strconv.Atoi(w)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			v = append(v, int32(x))
		}
		src, dst, sport, want := v[0], v[1], uint16(v[2]), v[3:]
		path, err := r.Route(nil, src, dst, sport, DefaultDport)
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if got := nodes(g, path); !equalInt32s(got, want) {
			t.Errorf("line %d: %d → %d sport %d: %v, ns-3 %v", line, src, dst, sport, got, want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 7000 {
		t.Fatalf("only %d paths read", n)
	}
}
