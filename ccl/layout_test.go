package ccl

import (
	"reflect"
	"testing"
)

// SimAI's MockNcclGroup layout (simai-formats.md §2.5) for 16 GPUs, TP 2, EP 2 (DP 8, DP_EP 4).
func TestGroupsMatchSimAI(t *testing.T) {
	l := Layout{GPUs: 16, GPUsPerServer: 8, TP: 2, PP: 1, EP: 2}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind GroupKind
		want [][]int
	}{
		{GroupTP, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}},
		{GroupDP, [][]int{{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}}},
		// EP: block b, local k: {(b·EP + m)·TP + k}.
		{GroupEP, [][]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}},
		// DP_EP: i < EP, k: {(i + m·EP)·TP + k}.
		{GroupDPEP, [][]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}},
		{GroupPP, nil},
		{GroupNone, nil},
	}
	for _, c := range cases {
		if got := l.Groups(c.kind); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s groups = %v, want %v", c.kind, got, c.want)
		}
	}
}

func TestPipelineStagesAreContiguous(t *testing.T) {
	l := Layout{GPUs: 16, GPUsPerServer: 8, TP: 2, PP: 2, EP: 1}
	want := map[GroupKind][][]int{
		GroupTP: {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}},
		GroupDP: {{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}},
		GroupPP: {{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}},
	}
	for kind, w := range want {
		if got := l.Groups(kind); !reflect.DeepEqual(got, w) {
			t.Errorf("%s groups = %v, want %v", kind, got, w)
		}
	}
}

// Property: for every kind, the groups have GroupSize ranks each and together hold every rank
// exactly once; EP and DP_EP groups split each DP group.
func TestGroupsPartitionRanks(t *testing.T) {
	for _, l := range []Layout{
		{GPUs: 64, GPUsPerServer: 8, TP: 8, PP: 1, EP: 1},
		{GPUs: 64, GPUsPerServer: 8, TP: 2, PP: 2, EP: 4},
		{GPUs: 96, GPUsPerServer: 8, TP: 4, PP: 3, EP: 2},
		{GPUs: 9216, GPUsPerServer: 8, TP: 2, PP: 12, EP: 16},
		{GPUs: 12, GPUsPerServer: 4, TP: 1, PP: 1, EP: 3},
	} {
		if err := l.Validate(); err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		for _, kind := range []GroupKind{GroupTP, GroupDP, GroupPP, GroupEP, GroupDPEP} {
			groups := l.Groups(kind)
			size := l.GroupSize(kind)
			if size <= 1 {
				if groups != nil {
					t.Errorf("%+v %s: size %d but %d groups", l, kind, size, len(groups))
				}
				continue
			}
			seen := make([]int, l.GPUs)
			for _, g := range groups {
				if len(g) != size {
					t.Fatalf("%+v %s: group of %d, want %d", l, kind, len(g), size)
				}
				for _, r := range g {
					seen[r]++
				}
			}
			for r, n := range seen {
				if n != 1 {
					t.Fatalf("%+v %s: rank %d in %d groups", l, kind, r, n)
				}
			}
		}
		// Every EP group and every DP_EP group lies inside one DP group.
		dpOf := make([]int, l.GPUs)
		for i, g := range l.Groups(GroupDP) {
			for _, r := range g {
				dpOf[r] = i
			}
		}
		for _, kind := range []GroupKind{GroupEP, GroupDPEP} {
			for _, g := range l.Groups(kind) {
				for _, r := range g {
					if dpOf[r] != dpOf[g[0]] {
						t.Fatalf("%+v %s group %v spans DP groups", l, kind, g)
					}
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Layout{
		{GPUs: 0, GPUsPerServer: 8, TP: 1, PP: 1, EP: 1},
		{GPUs: 8, GPUsPerServer: 0, TP: 1, PP: 1, EP: 1},
		{GPUs: 8, GPUsPerServer: 8, TP: 0, PP: 1, EP: 1},
		{GPUs: 12, GPUsPerServer: 8, TP: 1, PP: 1, EP: 1},
		{GPUs: 16, GPUsPerServer: 8, TP: 3, PP: 1, EP: 1},
		{GPUs: 16, GPUsPerServer: 8, TP: 2, PP: 1, EP: 3},
		{GPUs: 4, GPUsPerServer: 8, TP: 8, PP: 1, EP: 1},
	}
	for _, l := range bad {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	if err := (Layout{GPUs: 4, GPUsPerServer: 8, TP: 4, PP: 1, EP: 1}).Validate(); err != nil {
		t.Errorf("a part of one server: %v", err)
	}
}
