package transport

import (
	"reflect"
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
		{"newreno:dupthresh=4,atrecover", nil},
		{"reno:atrecover", []string{"atrecover"}},
		{"ratehalving:maxburst=4,lostretx", nil},
		{"prr:bound=crb,dupthresh=2", nil},
		{"newreno:dupthresh=0", []string{"newreno", "dupthresh=0", "1..16384 packets"}},
		{"sack:dupthresh=99999", []string{"sack", "dupthresh=99999", "1..16384"}},
		{"ratehalving:maxburst=0", []string{"maxburst=0", "1..16384"}},
		{"prr:bound=fast", []string{"bound", "ssrb, crb or ns3"}},
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

// lossOf returns the SACK-family machinery of a strategy built on it.
func (r *sackLoss) lossOf() *sackLoss { return r }

// TestStrategyReuse: a strategy built in a recycled connection's former
// strategy (RecoveryEnv.reuse) is exactly a freshly built one, whatever
// state the former one was left in; a strategy of another type is not
// reused.
func TestStrategyReuse(t *testing.T) {
	for _, s := range []string{"sack", "fack", "prr", "rack", "ratehalving:maxburst=2", "sack:rack,frto,lostretx"} {
		t.Run(s, func(t *testing.T) {
			env := RecoveryEnv{MSS: 1000}
			fresh, err := newRecovery(s, env)
			if err != nil {
				t.Fatal(err)
			}
			old, _ := newRecovery(s, env)
			l := old.(interface{ lossOf() *sackLoss }).lossOf()
			l.inRec, l.dupAcks, l.recPoint, l.highRxt, l.rescues = true, 7, 12345, 999, 3
			l.dbl = append(l.dbl, 1, 2, 3)
			l.rackSt.lost, l.rackSt.reordSeen, l.frto.on = 5, true, !l.frto.on
			env.reuse = old
			got, err := newRecovery(s, env)
			if err != nil {
				t.Fatal(err)
			}
			if got != old {
				t.Errorf("the former strategy of the same type was not reused")
			}
			if !reflect.DeepEqual(got, fresh) {
				t.Errorf("strategy built in a used one:\n%+v\nwant as fresh:\n%+v", got, fresh)
			}
		})
	}
	other, _ := newRecovery("prr", RecoveryEnv{MSS: 1000})
	got, err := newRecovery("rack", RecoveryEnv{MSS: 1000, reuse: other})
	if err != nil || any(got) == any(other) {
		t.Errorf("rack built with a prr to reuse: %v, reused %v; want a new rack", err, any(got) == any(other))
	}
}
