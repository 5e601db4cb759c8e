package spec

import (
	"strings"
	"testing"
	"time"
)

type testConfig struct {
	X     int           `param:"x"`
	R     float64       `param:"reduction"`
	On    bool          `param:"on"`
	D     time.Duration `param:"d"`
	Limit string        `param:"limit,positional"`
}

func TestApply(t *testing.T) {
	cases := []struct {
		spec    string
		want    testConfig
		wantErr string
	}{
		{spec: "t:x=2,reduction=0.25,on,d=10ms,20p", want: testConfig{X: 2, R: 0.25, On: true, D: 10 * time.Millisecond, Limit: "20p"}},
		{spec: "t:on=false", want: testConfig{}},
		{spec: "t:y=1", wantErr: `unknown parameter "y" (allowed: d, limit, on, reduction, x)`},
		{spec: "t:x=abc", wantErr: `parameter x="abc": not an integer`},
		{spec: "t:reduction=NaN", wantErr: "not a finite number"},
		{spec: "t:reduction=+Inf", wantErr: "not a finite number"},
		{spec: "t:reduction=half", wantErr: "not a number"},
		{spec: "t:d=5", wantErr: "not a duration"},
		{spec: "t:x", wantErr: "needs a value"},
		{spec: "t:x=1,,on", wantErr: "empty parameter"},
	}
	for _, tc := range cases {
		name, params, err := Split(tc.spec)
		var got testConfig
		if err == nil {
			err = Apply(name, &got, params)
		}
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: got error %v, want none", tc.spec, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got error %v, want one containing %q", tc.spec, err, tc.wantErr)
		case tc.wantErr == "" && got != tc.want:
			t.Errorf("%s: got %+v, want %+v", tc.spec, got, tc.want)
		}
	}
}

// TestParseEnum: canonical spellings and aliases map to their index, case
// and surrounding space ignored; anything else is refused with the allowed
// canonical spellings.
func TestParseEnum(t *testing.T) {
	names := []string{"min", "mean|avg"}
	for _, tc := range []struct {
		in      string
		want    int
		wantErr string
	}{
		{in: "min", want: 0},
		{in: "mean", want: 1},
		{in: "avg", want: 1},
		{in: " MEAN ", want: 1},
		{in: "max", wantErr: "not a estimator (allowed: min, mean)"},
		{in: "", wantErr: "not a estimator (allowed: min, mean)"},
		{in: "mean|avg", wantErr: "not a estimator (allowed: min, mean)"},
	} {
		got, err := ParseEnum([]byte(tc.in), "estimator", names...)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseEnum(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseEnum(%q) = %d, %v; want %d, nil", tc.in, got, err, tc.want)
		}
	}
}
