package testenv

import (
	"strings"
	"testing"
)

func TestProgram(t *testing.T) {
	if err := Program("sh"); err != nil {
		t.Errorf("Program(sh): got %v, want nil", err)
	}
	if err := Program("no-such-program-cclab"); err == nil || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("Program(no-such-program-cclab): got %v, want a not-on-PATH error", err)
	}
}

func TestCI(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"true", true}, {"", false}, {"1", false}} {
		t.Setenv("CI", tc.env)
		if got := CI(); got != tc.want {
			t.Errorf("CI=%q: got %v, want %v", tc.env, got, tc.want)
		}
	}
}
