package units

import "testing"

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"4096", 4096},
		{"7B", 7},
		{"2KiB", 2048},
		{"64MiB", 64 << 20},
		{"1G", 1e9},
		{"3 T", 3e12},
		{"1TiB", 1 << 40},
		{"4194304TiB", 1 << 62}, // the largest count taken
	} {
		if got, err := ParseBytes(c.in); err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-1", "1XB", "1.5G", "GiB", "0x10", "4194305TiB", "99999999999TiB", "9223372036854775808"} {
		if _, err := ParseBytes(bad); err == nil || err.Error() != "expected a byte count such as 4096 or 64MiB" {
			t.Errorf("ParseBytes(%q): %v", bad, err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		b    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {3 << 29, "1.5 GiB"}, {1 << 62, "4.0 EiB"}} {
		if got := FormatBytes(tc.b); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
