package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{3, 1, 2}, 2},
		{[]time.Duration{4, 1, 3, 2}, 2}, // (2+3)/2 in integer nanoseconds
		{[]time.Duration{7}, 7},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		a, b string
		want string
	}{
		{"missing b", 1, "true", "", "-a and -b"},
		{"zero pairs", 0, "true", "true", "at least 1"},
		{"failing command", 1, "true", "exit 3", "exit 3"},
	} {
		err := run(&bytes.Buffer{}, tc.n, tc.a, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestRunCountsCPU runs a command that burns CPU against one that sleeps:
// the CPU ratio must come out above 1 and the report must name both.
func TestRunCountsCPU(t *testing.T) {
	var out bytes.Buffer
	busy := "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"
	if err := run(&out, 2, busy, "true"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"A cpu", "B cpu", "A/B cpu", "pair by pair"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(strings.SplitN(s, "pair by pair:", 2)[1], ".") != 2 {
		t.Errorf("want 2 pair ratios:\n%s", s)
	}
	as, bs, err := collect(3, busy, "true")
	if err != nil {
		t.Fatal(err)
	}
	cpuA, _ := split(as)
	cpuB, _ := split(bs)
	if got, want := median(cpuA), median(cpuB); got <= want {
		t.Errorf("CPU of a busy loop %v, want more than that of true (%v)", got, want)
	}
}
