package ccalgo

import (
	"strings"
	"testing"
)

// TestSpecRanges: a spec is range-checked where it is parsed
// (Registry.Validate), every parameter against its documented range, and the
// error names the controller, the parameter and the range.
func TestSpecRanges(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string // substrings of the error; nil: valid
	}{
		{"reno", nil},
		{"reno:iw=16384,ssthresh=16384,abc=1", nil},
		{"cubic:beta=0.8,c=100", nil},
		{"dca:x=2,w=10000,tick=1s", nil},
		{"vegas:alpha=1,beta=3,gamma=1", nil},
		{"bbr:margin=0,iw=4", nil},
		{"reno:iw=7930000000000000", []string{"reno", "iw=7930000000000000", "0..16384 packets"}},
		{"reno:iw=-1", []string{"iw=-1", "0..16384"}},
		{"newreno:ssthresh=16385", []string{"ssthresh=16385", "0..16384"}},
		{"reno:abc=3", []string{"abc=3", "1 or 2"}},
		{"cubic:beta=2", []string{"cubic", "beta=2", "between 0 and 1"}},
		{"cubic:beta=0", []string{"beta=0"}},
		{"cubic:c=0", []string{"c=0", "at most 100"}},
		{"cubic:c=1000", []string{"c=1000"}},
		{"cubic:iw=20000", []string{"iw=20000", "0..16384"}},
		{"dca:w=100000000", []string{"dca", "w=100000000", "2..10000"}},
		{"dca:w=1", []string{"w=1"}},
		{"dca:x=30,w=20", []string{"x=30", "w=20"}},
		{"dca:reduction=1", []string{"reduction=1"}},
		{"dca:tick=2s", []string{"tick=2s", "0..1s"}},
		{"vegas:alpha=5,beta=4", []string{"beta=4"}},
		{"vegas:gamma=1e9", []string{"gamma=1e+09", "0..16384"}},
		{"bbr:margin=100", []string{"margin=100", "below 100"}},
		{"bbr:iw=100000", []string{"iw=100000", "0..16384"}},
		{"reno:nokey=1", []string{"nokey"}},
		{"nosuch", []string{"nosuch", "reno"}},
	} {
		err := Registry.Validate(tc.spec)
		if tc.want == nil {
			if err != nil {
				t.Errorf("Registry.Validate(%q): %v, want no error", tc.spec, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Registry.Validate(%q): no error, want one naming %q", tc.spec, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Registry.Validate(%q): %q lacks %q", tc.spec, err, w)
			}
		}
	}
}

// TestDgramSpecRanges: the datagram-only controllers are range-checked the
// same way (DgramRegistry.Validate).
func TestDgramSpecRanges(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string // substring of the error; "": valid
	}{
		{"ccid2:ackratio=2,iw=4", ""},
		{"ccid3:nfbmin=1s", ""},
		{"ccid2:ackratio=0", "1..16384 packets"},
		{"ccid2:iw=20000", "iw=20000"},
		{"ccid3:nfbmin=2m", "nfbmin=2m0s"},
	} {
		err := DgramRegistry.Validate(tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("DgramRegistry.Validate(%q): %v, want no error", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("DgramRegistry.Validate(%q): %v, want an error with %q", tc.spec, err, tc.want)
		}
	}
}
