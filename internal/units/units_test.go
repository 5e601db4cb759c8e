package units

import (
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"16Mbit", 16e6},
		{"1.5Gbit", 1.5e9},
		{"500kbit", 500e3},
		{"500Kbit", 500e3},
		{"10M", 10e6},
		{"10", 10},
		{"0", 0},
		{"100mbit", 100e6},
		{"2Mbps", 2e6},
		{"2MB/s", 16e6},
		{"2MBps", 16e6},
		{"1Kibit", 1024},
		{"1Mibit/s", 1 << 20},
		{" 7.5 Mbit ", 7.5e6},
		{"1e6bit", 1e6},
	}
	for _, tc := range tests {
		got, err := ParseRate(tc.in)
		if err != nil {
			t.Errorf("ParseRate(%q) error %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseRate(%q) got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseRateErrors(t *testing.T) {
	for _, in := range []string{"", "fast", "10Mbyte/x", "-5Mbit", "Mbit", "10 furlongs", "NaN", "Inf", "1e308Gbit"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) got nil error, want an error", in)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1500", 1500},
		{"1500B", 1500},
		{"100M", 100e6},
		{"100MB", 100e6},
		{"1G", 1e9},
		{"64KiB", 64 << 10},
		{"64Ki", 64 << 10},
		{"2MiB", 2 << 20},
		{"1GiB", 1 << 30},
		{"30kB", 30000},
		{"30k", 30000},
		{"1.5K", 1500},
		{"0", 0},
	}
	for _, tc := range tests {
		got, err := ParseBytes(tc.in)
		if err != nil {
			t.Errorf("ParseBytes(%q) error %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseBytes(%q) got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseBytesErrors(t *testing.T) {
	for _, in := range []string{"", "lots", "-1", "10Mbit", "5 parsecs", "1e30G"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) got nil error, want an error", in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"7.5ms", 7500 * time.Microsecond},
		{"0", 0},
		{"1s", time.Second},
		{"250us", 250 * time.Microsecond},
	}
	for _, tc := range tests {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) got %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseDuration("7.5"); err == nil {
		t.Errorf("ParseDuration(%q) got nil error, want an error", "7.5")
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{16e6, "16Mbit"},
		{1.5e9, "1.5Gbit"},
		{500e3, "500kbit"},
		{999, "999bit"},
		{0, "0bit"},
		{2.5e12, "2.5Tbit"},
	}
	for _, tc := range tests {
		if got := FormatRate(tc.in); got != tc.want {
			t.Errorf("FormatRate(%v) got %q, want %q", tc.in, got, tc.want)
		}
		back, err := ParseRate(FormatRate(tc.in))
		if err != nil || back != tc.in {
			t.Errorf("ParseRate(FormatRate(%v)) got %v, %v, want round trip", tc.in, back, err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{1500, "1.5kB"},
		{100e6, "100MB"},
		{64 << 10, "64KiB"},
		{1 << 30, "1GiB"},
		{999, "999B"},
		{0, "0B"},
		{1e9, "1GB"},
	}
	for _, tc := range tests {
		if got := FormatBytes(tc.in); got != tc.want {
			t.Errorf("FormatBytes(%v) got %q, want %q", tc.in, got, tc.want)
		}
		back, err := ParseBytes(FormatBytes(tc.in))
		if err != nil || back != tc.in {
			t.Errorf("ParseBytes(FormatBytes(%v)) got %v, %v, want round trip", tc.in, back, err)
		}
	}
}
