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
