package eval

import (
	"context"
	"sync/atomic"
	"testing"

	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/scenario"
)

// starvedRunner marks its first limited calls host-limited.
type starvedRunner struct {
	calls   atomic.Int32
	limited int32
}

func (r *starvedRunner) Run(ctx context.Context, s scenario.RunSpec) (metrics.RunResult, error) {
	n := r.calls.Add(1)
	info, ev := evaltest.SyntheticRun()
	res := metrics.RunResult{Info: info, Metrics: metrics.Compute(info, ev), Notes: map[string]float64{noteHostLimited: 0}}
	if n <= r.limited {
		res.Notes[noteHostLimited] = 1
	}
	return res, nil
}

// TestSweepRetriesHostLimited: a run marked host-limited runs again up to
// RetryHostLimited more times; the last attempt is stored with the number
// of attempts; without the option it runs once.
func TestSweepRetriesHostLimited(t *testing.T) {
	exp, err := scenario.ParseScenario("hl.yaml", []byte("name: hl\nduration: 2s\nbackends: [live]\ntopology: {kind: dumbbell, bottleneck: {rate: 16Mbit}}\nflows: [{cc: reno}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		retry, limited       int
		calls                int32
		wantLimited, attempt float64 // attempt 0: no note
	}{
		{0, 5, 1, 1, 0},
		{3, 2, 3, 0, 3},
		{2, 5, 3, 1, 3},
	}
	for _, c := range cases {
		st := openTestStore(t)
		r := &starvedRunner{limited: int32(c.limited)}
		if _, err := Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendLive: r}, RetryHostLimited: c.retry}); err != nil {
			t.Fatal(err)
		}
		runs, err := st.Runs(context.Background(), "hl", 0)
		if err != nil || len(runs) != 1 {
			t.Fatalf("retry %d: %d runs, %v", c.retry, len(runs), err)
		}
		n := runs[0].Notes
		if got := r.calls.Load(); got != c.calls || n[noteHostLimited] != c.wantLimited || n["host_limited_attempts"] != c.attempt {
			t.Errorf("retry %d, %d limited: %d calls, notes %v; want %d calls, host_limited %v, attempts %v", c.retry, c.limited, got, n, c.calls, c.wantLimited, c.attempt)
		}
	}
}
