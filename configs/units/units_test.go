package units

import (
	"testing"

	"simd/engine"
)

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"400Gbps", 400e9},
		{"2880Gbps", 2880e9},
		{"50Mb/s", 50e6},
		{"100Mb/s", 100e6},
		{"1.6Tbps", 1.6e12},
		{"25000000000", 25e9},
		{"1GBps", 8e9},
		{"1Kibps", 1024},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "Gbps", "400Xbps", "-1Gbps", "0Gbps", "abc", "1e999Gbps"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted a bad rate", bad)
		}
	}
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want engine.Time
	}{
		{"0.0005ms", 500 * engine.Nanosecond},
		{"0.000025ms", 25 * engine.Nanosecond},
		{"0.001ms", engine.Microsecond},
		{"1s", engine.Second},
		{"2", 2 * engine.Second},
		{"25ns", 25 * engine.Nanosecond},
		{"3ps", 3},
		{"1e-3ms", engine.Microsecond},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "ms", "1parsec", "-1ms", "1e30s"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted a bad time", bad)
		}
	}
}

func TestFromMicroseconds(t *testing.T) {
	got, err := FromMicroseconds("900")
	if err != nil || got != 900*engine.Microsecond {
		t.Fatalf("FromMicroseconds(900) = %v, %v", got, err)
	}
	if _, err := FromMicroseconds("x"); err == nil {
		t.Fatal("accepted x")
	}
}
