package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "lots"},
		{"-acks", "sometimes"},
		{"-only", "tcp"},
		{"-vs", "tcp"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("run(%q): exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), args[0]) {
			t.Errorf("run(%q): stderr %q does not name the flag", args, errb.String())
		}
	}
}

// TestSmallRun runs both stacks once on a small transfer and checks that
// the summary names both cclab modes, quic-go and the ratios.
func TestSmallRun(t *testing.T) {
	if testing.Short() {
		t.Skip("transfers over loopback")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-n", "2MiB", "-runs", "1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	for _, want := range []string{"median goodput cclab ", "median goodput cclab-stretch", "median goodput quic-go",
		"ratio cclab/quic-go", "verified=true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v): got %v, want %v", tc.in, got, tc.want)
		}
	}
}
