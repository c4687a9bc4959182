package algo

import (
	"slices"
	"strings"
	"testing"

	"simd/ccl"
	"simd/ccl/nccl"
)

func request(op ccl.Op, n, gps int, bytes int64) ccl.Request {
	r := ccl.Request{Op: op, GPUsPerServer: gps, TotalGPUs: ((n + gps - 1) / gps) * gps, Bytes: bytes}
	for i := range n {
		r.Ranks = append(r.Ranks, int32(i))
	}
	return r
}

// Every algorithm builds a DAG that passes the checker for every operation it supports, inside
// one server and across servers (NVLS only inside one), with both PXN variants; only SimCCL's
// PXN all-reduce needs redundant deliveries allowed.
func TestEveryAlgorithmIsCorrect(t *testing.T) {
	ops := []ccl.Op{ccl.OpAllReduce, ccl.OpAllGather, ccl.OpReduceScatter, ccl.OpAllToAll}
	for _, a := range Names {
		for _, op := range ops {
			if !Supports(a, op) {
				if _, err := Generate(a, request(op, 8, 8, 1<<20), Params{}); err == nil {
					t.Errorf("%s %s: generated an unsupported pair", a, op)
				}
				continue
			}
			for _, shape := range [][2]int{{8, 8}, {16, 8}, {12, 4}} {
				if (a == NVLS && shape[0] > shape[1]) || (a == NVLSTree && shape[0] <= shape[1]) {
					continue // NVLS is for one server, NVLS-Tree for several
				}
				req := request(op, shape[0], shape[1], 3<<20)
				for _, p := range []Params{{}, {PXN: nccl.PXNNCCL}} {
					d, err := Generate(a, req, p)
					if err != nil {
						t.Errorf("%s %s %v %+v: %v", a, op, shape, p, err)
						continue
					}
					opt := CheckOptions(a, op, p)
					if opt.AllowRedundant != (a == PXN && p.PXN == nccl.PXNSimCCL && op == ccl.OpAllReduce) {
						t.Errorf("%s %s %+v: check options %+v", a, op, p, opt)
					}
					if err := ccl.CheckWith(d, opt); err != nil {
						t.Errorf("%s %s %v %+v: %v", a, op, shape, p, err)
					}
				}
			}
		}
	}
}

func TestParseNameAndForce(t *testing.T) {
	if a, err := ParseName("NVLSTree"); err != nil || a != NVLSTree {
		t.Errorf("ParseName(NVLSTree) = %v, %v", a, err)
	}
	if _, err := ParseName("bruck"); err == nil || !strings.Contains(err.Error(), "multiring") {
		t.Errorf("ParseName(bruck) = %v", err)
	}
	f, err := ParseForce("TP=nvls, dp=ring,DP_EP=rhd")
	if err != nil || f[ccl.GroupTP] != NVLS || f[ccl.GroupDP] != Ring || f[ccl.GroupDPEP] != RHD || len(f) != 3 {
		t.Errorf("ParseForce = %v, %v", f, err)
	}
	for _, bad := range []string{"TP", "XX=ring", "TP=bruck"} {
		if _, err := ParseForce(bad); err == nil {
			t.Errorf("ParseForce(%q) accepted", bad)
		}
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{"AS_NVLS_ENABLE": "1", "AS_PXN_ENABLE": "0"}
	o := OptionsFromEnv(func(k string) string { return env[k] })
	if !o.NVLS || o.PXN || o.Policy != PolicySimCCL {
		t.Errorf("%+v", o)
	}
}

// SimCCL's rule (ccl-facts.md §1.5), the options that change it, and forcing.
func TestSimCCLSelection(t *testing.T) {
	cases := []struct {
		name  string
		opt   Options
		op    ccl.Op
		group ccl.GroupKind
		n     int
		gps   int
		want  Name
	}{
		{"TP AR H100 NVLS on", Options{GPUType: "H100", NVLS: true}, ccl.OpAllReduce, ccl.GroupTP, 8, 8, NVLS},
		{"TP AR H100 NVLS off", Options{GPUType: "H100"}, ccl.OpAllReduce, ccl.GroupTP, 8, 8, Ring},
		{"TP AR A100 NVLS on", Options{GPUType: "A100", NVLS: true}, ccl.OpAllReduce, ccl.GroupTP, 8, 8, Ring},
		{"TP AR 4 ranks", Options{GPUType: "H100", NVLS: true}, ccl.OpAllReduce, ccl.GroupTP, 4, 8, Ring},
		{"TP AR across servers", Options{GPUType: "H800", NVLS: true}, ccl.OpAllReduce, ccl.GroupTP, 16, 8, NVLSTree},
		{"DP AR NVLS on", Options{GPUType: "H100", NVLS: true}, ccl.OpAllReduce, ccl.GroupDP, 16, 8, Ring},
		{"TP AG NVLS on", Options{GPUType: "H100", NVLS: true}, ccl.OpAllGather, ccl.GroupTP, 8, 8, Ring},
		{"DP AR PXN across servers", Options{PXN: true}, ccl.OpAllReduce, ccl.GroupDP, 16, 8, PXN},
		{"TP AR PXN one server", Options{PXN: true}, ccl.OpAllReduce, ccl.GroupTP, 8, 8, Ring},
		{"all-to-all", Options{}, ccl.OpAllToAll, ccl.GroupEP, 16, 8, Direct},
		{"all-to-all PXN", Options{PXN: true}, ccl.OpAllToAll, ccl.GroupEP, 16, 8, Direct}, // SimCCL has no PXN all-to-all
		{"all-to-all NCCL-like PXN", Options{PXN: true, PXNVariant: nccl.PXNNCCL}, ccl.OpAllToAll, ccl.GroupEP, 16, 8, PXN},
		{"AG PXN", Options{PXN: true}, ccl.OpAllGather, ccl.GroupDP, 16, 8, Ring}, // SimCCL never turns PXN on for all-gather
		{"AG NCCL-like PXN", Options{PXN: true, PXNVariant: nccl.PXNNCCL}, ccl.OpAllGather, ccl.GroupDP, 16, 8, PXN},
		{"RS PXN", Options{PXN: true}, ccl.OpReduceScatter, ccl.GroupDP, 16, 8, PXN},
		{"forced", Options{Force: map[ccl.GroupKind]Name{ccl.GroupDP: RHD}}, ccl.OpAllReduce, ccl.GroupDP, 16, 8, RHD},
	}
	for _, c := range cases {
		s, err := NewSelector(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		req := request(c.op, c.n, c.gps, 64<<20)
		got, err := s.Choose(c.op, c.group, &req)
		if err != nil || got.Algorithm != c.want {
			t.Errorf("%s: %v (%s), %v; want %s", c.name, got.Algorithm, got.Reason, err, c.want)
		}
	}
	s, _ := NewSelector(Options{Force: map[ccl.GroupKind]Name{ccl.GroupTP: Tree}})
	req := request(ccl.OpAllGather, 8, 8, 1<<20)
	if _, err := s.Choose(ccl.OpAllGather, ccl.GroupTP, &req); err == nil {
		t.Error("a forced tree all-gather was accepted")
	}
	if _, err := NewSelector(Options{Policy: "fastest"}); err == nil {
		t.Error("unknown policy accepted")
	}
	if _, err := NewSelector(Options{PXNVariant: 5}); err == nil {
		t.Error("unknown PXN variant accepted")
	}
}

// NCCL's model (ccl-facts.md §7.2): on 8 H100s of one server an all-reduce runs the ring (LL,
// then LL128, then Simple as the size grows); on 4 servers small all-reduces use the tree.
func TestNCCLSelection(t *testing.T) {
	s, err := NewSelector(Options{Policy: PolicyNCCL, GPUType: "H100"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		n, gps int
		bytes  int64
		want   Name
		proto  nccl.Protocol
	}{
		{8, 8, 1 << 20, Ring, nccl.ProtoLL},
		{8, 8, 16 << 20, Ring, nccl.ProtoLL128},
		{8, 8, 256 << 20, Ring, nccl.ProtoSimple},
		{32, 8, 64 << 10, Tree, nccl.ProtoLL},
	}
	for _, c := range cases {
		req := request(ccl.OpAllReduce, c.n, c.gps, c.bytes)
		got, err := s.Choose(ccl.OpAllReduce, ccl.GroupDP, &req)
		if err != nil || got.Algorithm != c.want || got.Protocol != c.proto {
			t.Errorf("%d ranks %d bytes: %s/%s (%s), %v; want %s/%s", c.n, c.bytes, got.Algorithm, got.Protocol, got.Reason, err, c.want, c.proto)
		}
	}
	// With NVLS enabled it beats the ring from about 1.1 MB on one server.
	s, _ = NewSelector(Options{Policy: PolicyNCCL, GPUType: "H100", NVLS: true})
	req := request(ccl.OpAllReduce, 8, 8, 16<<20)
	if got, err := s.Choose(ccl.OpAllReduce, ccl.GroupTP, &req); err != nil || got.Algorithm != NVLS {
		t.Errorf("16 MiB with NVLS: %s (%s), %v", got.Algorithm, got.Reason, err)
	}
}

// Time dispatches to each package's closed form: a one-server ring all-reduce of S bytes over n
// ranks costs 2(n−1)α + 2(n−1)/n·S·β (+ (n−1)/n·S·γ).
func TestTime(t *testing.T) {
	c := ccl.LinkCosts{Intra: ccl.AlphaBeta{Alpha: 1e-6, Beta: 1e-9}, Inter: ccl.AlphaBeta{Alpha: 5e-6, Beta: 4e-9}}
	got, err := Time(Ring, ccl.OpAllReduce, 8, 8, 8<<20, Params{}, Switch, c)
	want := 2*7*1e-6 + 2*7.0/8*float64(8<<20)*1e-9
	if err != nil || abs(got-want) > 1e-12 {
		t.Errorf("ring: %v, %v; want %v", got, err, want)
	}
	// RHD on 8 = 2^3 ranks: 2·log p·α + 2(p−1)/p·S·β.
	got, err = Time(RHD, ccl.OpAllReduce, 8, 8, 8<<20, Params{}, Switch, c)
	want = 2*3*1e-6 + 2*7.0/8*float64(8<<20)*1e-9
	if err != nil || abs(got-want) > 1e-12 {
		t.Errorf("rhd: %v, %v; want %v", got, err, want)
	}
	if _, err := Time(Tree, ccl.OpAllGather, 8, 8, 1, Params{}, Switch, c); err == nil {
		t.Error("tree all-gather priced")
	}
	if _, err := Time(Ring, ccl.OpAllReduce, 12, 8, 1, Params{}, Switch, c); err == nil {
		t.Error("uneven servers priced")
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Plan covers every group of the kind with a checked DAG.
func TestPlan(t *testing.T) {
	s, _ := NewSelector(Options{GPUType: "H100"})
	l := ccl.Layout{GPUs: 32, GPUsPerServer: 8, TP: 4, PP: 1, EP: 2}
	cases := []struct {
		kind   ccl.GroupKind
		op     ccl.Op
		groups int
		size   int
	}{
		{ccl.GroupTP, ccl.OpAllReduce, 8, 4},
		{ccl.GroupDP, ccl.OpAllGather, 4, 8},
		{ccl.GroupEP, ccl.OpAllToAll, 16, 2},
		{ccl.GroupDPEP, ccl.OpReduceScatter, 8, 4},
		{ccl.GroupPP, ccl.OpAllReduce, 0, 0},
	}
	for _, c := range cases {
		plans, err := s.Plan(l, 32, c.op, c.kind, 1<<20, 0)
		if err != nil || len(plans) != c.groups {
			t.Fatalf("%s: %d plans, %v", c.kind, len(plans), err)
		}
		for _, p := range plans {
			if len(p.Ranks) != c.size {
				t.Errorf("%s group %v", c.kind, p.Ranks)
			}
			if err := ccl.Check(p.DAG); err != nil {
				t.Errorf("%s %v: %v", c.kind, p.Ranks, err)
			}
		}
	}
	// Placed on some of a cluster's GPUs, a job's groups are its ranks' GPUs: a TP group of 4
	// spread one GPU per server becomes a ring across servers, checked like any other.
	placed := ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 4, PP: 1, EP: 1, Placement: []int32{0, 8, 16, 24, 1, 9, 17, 25}}
	if err := placed.Validate(); err != nil {
		t.Fatal(err)
	}
	plans, err := s.Plan(placed, 32, ccl.OpAllReduce, ccl.GroupTP, 1<<20, 0)
	if err != nil || len(plans) != 2 {
		t.Fatalf("placed TP: %d plans, %v", len(plans), err)
	}
	for i, want := range [][]int32{{0, 8, 16, 24}, {1, 9, 17, 25}} {
		if !slices.Equal(plans[i].Ranks, want) {
			t.Errorf("placed TP group %d: %v, want %v", i, plans[i].Ranks, want)
		}
		if err := ccl.Check(plans[i].DAG); err != nil {
			t.Errorf("placed TP group %d: %v", i, err)
		}
		for f := range plans[i].DAG.NumFlows() {
			if fl := plans[i].DAG.Flow(ccl.FlowID(f)); fl.Src < 32 && !slices.Contains(want, fl.Src) {
				t.Fatalf("placed TP group %d has a flow from GPU %d", i, fl.Src)
			}
		}
	}
	for _, bad := range [][]int32{{0, 1}, {0, 8, 16, 24, 1, 9, 17, 17}, {0, 8, 16, 24, 1, 9, 17, -1}} {
		if err := (ccl.Layout{GPUs: 8, GPUsPerServer: 8, TP: 4, PP: 1, EP: 1, Placement: bad}).Validate(); err == nil {
			t.Errorf("placement %v accepted", bad)
		}
	}
	if got := (Choice{Algorithm: Ring, Protocol: nccl.ProtoSimple}).SendLatencyNs(false); got != 22400 {
		t.Errorf("ring simple network latency %d", got)
	}
	if got := (Choice{Algorithm: RHD}).SendLatencyNs(true); got != nccl.DefaultSendLatencyNs {
		t.Errorf("rhd latency %d", got)
	}
}
