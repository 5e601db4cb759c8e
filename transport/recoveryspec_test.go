package transport

import (
	"strings"
	"testing"
)

// TestRecoverySpecRanges: recovery specs are range-checked where parsed.
func TestRecoverySpecRanges(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string // substrings of the error; nil: valid
	}{
		{DefaultRecovery, nil},
		{"newreno:dupthresh=16384", nil},
		{"ratehalving:maxburst=4,lostretx", nil},
		{"prr:bound=crb,dupthresh=2", nil},
		{"newreno:dupthresh=0", []string{"newreno", "dupthresh=0", "1..16384 packets"}},
		{"sack:dupthresh=99999", []string{"sack", "dupthresh=99999", "1..16384"}},
		{"ratehalving:maxburst=0", []string{"maxburst=0", "1..16384"}},
		{"prr:bound=fast", []string{"bound", "ssrb or crb"}},
		{"fack:nokey", []string{"nokey"}},
		{"cubic", []string{"cubic", "newreno"}},
	} {
		_, err := ParseRecoverySpec(tc.spec)
		if tc.want == nil {
			if err != nil {
				t.Errorf("ParseRecoverySpec(%q): %v, want no error", tc.spec, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseRecoverySpec(%q): no error, want one naming %q", tc.spec, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseRecoverySpec(%q): %q lacks %q", tc.spec, err, w)
			}
		}
	}
	var s RecoverySpec
	if err := s.Set("sack:lostretx"); err != nil || s.String() != "sack:lostretx" {
		t.Errorf("Set(sack:lostretx): %v, %q", err, s)
	}
	if err := s.UnmarshalText([]byte("sack:dupthresh=0")); err == nil {
		t.Errorf("UnmarshalText(sack:dupthresh=0): no error")
	}
}

// TestDefaultsDefinedOnce: the package defaults are DefaultCC and
// DefaultRecovery, and both are valid specs.
func TestDefaultsDefinedOnce(t *testing.T) {
	d := DefaultConfig()
	if d.CC != DefaultCC || d.Recovery != DefaultRecovery {
		t.Errorf("DefaultConfig: cc %q recovery %q, want %q and %q", d.CC, d.Recovery, DefaultCC, DefaultRecovery)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate(): %v", err)
	}
}
