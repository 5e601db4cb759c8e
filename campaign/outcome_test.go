package campaign

import (
	"testing"
	"time"

	"cclab/perf"
)

func TestSenderOutcome(t *testing.T) {
	good := perf.Result{Start: perf.Start{Timestamp: "2026-12-01T10:00:00Z"}, End: perf.End{Bytes: 100000, SenderBytes: 100000, MSS: 1448,
		Seconds: 0.5, ThroughputBps: 1.6e6, Retransmits: 4, Spurious: 2, RTOs: 1, RTOCauses: map[string]int64{"burst_loss": 1}, MinRTTms: 2, MeanSRTTms: 3, Verified: true}}
	o, err := SenderOutcome(time.Time{}, &good, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	// ceil(100000 / 1448) = 70 segments, plus 4 retransmissions.
	if o.PacketsSent != 74 || o.Unnecessary != 2 || o.Bytes != 100000 || o.GoodputBps != 1.6e6 || o.RTOCauses["burst_loss"] != 1 ||
		!o.Start.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) || len(o.SenderJSON) == 0 {
		t.Errorf("outcome %+v", o)
	}
	for _, tc := range []struct {
		name string
		mod  func(r *perf.Result)
	}{
		{"error", func(r *perf.Result) { r.End.Error = "peer reset" }},
		{"unverified", func(r *perf.Result) { r.End.Verified = false }},
	} {
		r := good
		tc.mod(&r)
		if _, err := SenderOutcome(time.Time{}, &r, nil); Classify(err) != CauseTransfer {
			t.Errorf("%s: got %v (cause %s), want a %s", tc.name, err, Classify(err), CauseTransfer)
		}
	}
	if _, err := SenderOutcome(time.Time{}, nil, nil); Classify(err) != CauseTransfer {
		t.Errorf("no summary: got %v, want a %s", err, CauseTransfer)
	}
}
