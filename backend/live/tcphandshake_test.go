package liverun

import (
	"strings"
	"testing"

	"cclab/plan"
	"cclab/scenario"
)

// TestCheckLiveTCPHandshake: the live backend refuses a flow with
// tcp_handshake, naming the setting (a receiver on a real network
// rejects an unpadded Initial: RFC 9000 §8.1, §14.1), and runs the same
// flow without it.
func TestCheckLiveTCPHandshake(t *testing.T) {
	for _, tc := range []struct {
		unpadded bool
		want     string // in the error; "" = none
	}{
		{false, ""},
		{true, "tcp_handshake is simulation-only"},
	} {
		p := &plan.Plan{Flows: []plan.Flow{{ID: 1, Name: "bulk", Mode: scenario.ModeStream, Traffic: "greedy", TCPHandshake: tc.unpadded}}}
		err := checkLive(p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("unpadded %v: got error %v, want none", tc.unpadded, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("unpadded %v: got error %v, want one containing %q", tc.unpadded, err, tc.want)
		}
	}
}
