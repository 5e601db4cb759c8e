package link

import (
	"strings"
	"testing"
)

// FuzzTraceFromReader checks that any trace file either parses into a valid
// looping schedule or is rejected with an error, never panics.
func FuzzTraceFromReader(f *testing.F) {
	for _, s := range []string{"1\n1\n3\n10\n", "", "abc", "5\n3\n", "0\n", "# c\n\n7\n", "99999999999999999999\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := TraceFromReader(strings.NewReader(s))
		if err != nil {
			return
		}
		if len(tr.Offsets) == 0 || tr.Period <= 0 || tr.Period != tr.Offsets[len(tr.Offsets)-1] {
			t.Fatalf("accepted trace with %d offsets and period %v", len(tr.Offsets), tr.Period)
		}
		for i := 1; i < len(tr.Offsets); i++ {
			if tr.Offsets[i] < tr.Offsets[i-1] {
				t.Fatalf("accepted decreasing offsets")
			}
		}
	})
}

// FuzzLossSpec checks that any loss spec is accepted or rejected without panicking.
func FuzzLossSpec(f *testing.F) {
	for _, s := range []string{"0.02", "bernoulli:p=0.1", "ge:p=0.01,r=0.3,h=0,k=1", "ge:", "x:y", "", "none", "ge:p=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseLoss(s, 0)
		if err == nil && m != nil {
			switch lm := m.(type) {
			case *bernoulli:
				if !(lm.p >= 0 && lm.p <= 1) {
					t.Fatalf("accepted p=%v", lm.p)
				}
			case *gilbertElliott:
				c := lm.cfg
				for _, v := range []float64{c.P, c.R, c.H, c.K} {
					if !(v >= 0 && v <= 1) {
						t.Fatalf("accepted %+v", c)
					}
				}
			}
		}
	})
}
