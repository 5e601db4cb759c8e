package perf

import "testing"

// TestFormatSize: summaries print three significant digits, not the exact
// byte count's decimals.
func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{512, "512 B"}, {1500, "1.50 kB"}, {254599500, "255 MB"}, {268435456, "268 MB"}, {1073741824, "1.07 GB"}, {25e6, "25.0 MB"},
	} {
		if got := FormatSize(tc.n); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
