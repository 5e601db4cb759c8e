package liverun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"cclab/transport"
)

// TestStreamEnd: how a stream flow's end is classified. A stateless reset
// before the receiver confirmed the handshake makes the flow unconnected
// (counted, the run goes on) with the reset kept in the message; after
// confirmation it, like any other error, fails the run; the drain running
// out is no error.
func TestStreamEnd(t *testing.T) {
	wrapped := fmt.Errorf("udp: %w", transport.ErrStatelessReset)
	for _, tc := range []struct {
		name            string
		err             error
		confirmed       bool
		wantNil         bool
		wantUnconnected bool
		wantReset       bool
	}{
		{"completed", nil, true, true, false, false},
		{"drain ran out", context.DeadlineExceeded, true, true, false, false},
		{"reset before confirmation", transport.ErrStatelessReset, false, false, true, true},
		{"wrapped reset before confirmation", wrapped, false, false, true, true},
		{"reset after confirmation", transport.ErrStatelessReset, true, false, false, false},
		{"give-up before confirmation", transport.ErrGiveUp, false, false, false, false},
		{"peer aborted", transport.ErrPeerAborted, true, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := streamEnd("f1", tc.err, tc.confirmed)
			if (got == nil) != tc.wantNil {
				t.Fatalf("streamEnd(%v, confirmed %v) = %v, want nil: %v", tc.err, tc.confirmed, got, tc.wantNil)
			}
			if got == nil {
				return
			}
			if u := errors.Is(got, errNotConnected); u != tc.wantUnconnected {
				t.Errorf("unconnected = %v, want %v (%v)", u, tc.wantUnconnected, got)
			}
			if r := errors.Is(got, errResetUnconfirmed); r != tc.wantReset {
				t.Errorf("reset before confirmation = %v, want %v (%v)", r, tc.wantReset, got)
			}
			if !strings.Contains(got.Error(), tc.err.Error()) || !strings.Contains(got.Error(), "f1") {
				t.Errorf("message %q lost the flow's name or its cause %q", got, tc.err)
			}
		})
	}
}
