package units

import (
	"strings"
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
		{"10bit", 10},
		{"0", 0},
		{"0bit", 0},
		{"100mbit", 100e6},
		{"2Mbps", 2e6},
		{"2mbps", 2e6},
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

// TestParseRateFootguns: a bare number and byte units are errors whose
// message names the unit to write ("rate: 10" was 10 bit/s and
// "10MBps" silently 80 Mbit/s).
func TestParseRateFootguns(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10", "write 10Mbit, 10kbit or 10bit"},
		{"1.5", "write 1.5Mbit"},
		{"10MBps", "write 80Mbit for 10MBps, or 10Mbit if you meant bits"},
		{"2MB/s", "write 16Mbit"},
		{"100B", "write 800bit"},
		{"1GiB/s", "bytes per second are not accepted"},
	} {
		_, err := ParseRate(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRate(%q): got %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"1500B", 1500}, {"1.5kB", 1500}, {"64KiB", 64 << 10}, {"1M", 1e6}, {"0", 0}} {
		if got, err := ParseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseSize(%q): got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseSize("1500"); err == nil || !strings.Contains(err.Error(), "write 1500B") {
		t.Errorf("ParseSize(\"1500\"): got %v, want an error suggesting 1500B", err)
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

// TestParseBytesIEC: iperf3's one-letter prefixes are binary.
func TestParseBytesIEC(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"20M", 20 << 20}, {"20m", 20 << 20}, {"20MB", 20 << 20}, {"1.5K", 1536}, {"2G", 2 << 30}, {"1T", 1 << 40},
		{"64KiB", 64 << 10}, {"1000", 1000}, {"7B", 7},
	} {
		if got, err := ParseBytesIEC(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseBytesIEC(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseBytesIEC("20X"); err == nil {
		t.Errorf("ParseBytesIEC(20X): got no error, want one")
	}
}
