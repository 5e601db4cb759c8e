package units

import "testing"

// FuzzParse checks that rate and size parsing never panics and that accepted
// values are non-negative and finite.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"16Mbit", "1.5Gbit", "64KiB", "100M", "1e3", "10MBps", "1500B", "", "-1", "NaN", "1e400", "5 furlongs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := ParseRate(s); err == nil && !(r >= 0 && r < 1e308) {
			t.Fatalf("ParseRate(%q) accepted %v", s, r)
		}
		if n, err := ParseBytes(s); err == nil && n < 0 {
			t.Fatalf("ParseBytes(%q) accepted %v", s, n)
		}
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) accepted %v", s, n)
		}
	})
}
