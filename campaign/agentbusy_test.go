package campaign

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cclab/agent"
)

// TestAgentRunnerBusyRetry: an agent whose only handshake slot is held
// refuses the runner's dial as busy; the runner dials again after the
// backoff and gets through once the slot is free.
func TestAgentRunnerBusyRetry(t *testing.T) {
	key := writeKey(t, t.TempDir(), "campaign.psk", strings.Repeat("ab", 32))
	creds, err := agent.LoadCredentials(key, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.NewServer(agent.Config{Listen: "127.0.0.1:0", Creds: creds, MaxHandshakes: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	addr := s.Addr().String()
	// A finished TLS handshake means the agent holds this connection's
	// handshake slot (taken before TLS) until the cclab handshake ends.
	hold, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true, NextProtos: []string{"cclab-agent/2"}})
	if err != nil {
		t.Fatal(err)
	}
	r := NewAgentRunner(creds)
	defer r.Close()
	busy := 0
	r.onBusy = func(err error, wait time.Duration) {
		if busy == 0 {
			hold.Close() // frees the slot
		}
		busy++
		if !errors.Is(err, agent.ErrBusy) || wait < busyBackoffMin {
			t.Errorf("busy refusal %d: %v, wait %v; want agent.ErrBusy, wait >= %v", busy, err, wait, busyBackoffMin)
		}
	}
	if _, err := r.client(context.Background(), Host{Name: "h", Agent: addr}); err != nil {
		t.Fatalf("dial after the slot freed: %v", err)
	}
	if busy == 0 {
		t.Errorf("no busy refusal seen while the slot was held")
	}
}

// TestAgentRunnerBusyBackoff: the waits between dials of a busy agent
// double from busyBackoffMin; when the transfer's context ends (here at the
// third dial) the attempt fails with the busy error as dial_error.
func TestAgentRunnerBusyBackoff(t *testing.T) {
	busyErr := fmt.Errorf("agent x: %w: %q", agent.ErrBusy, "1 handshakes already in progress (-max-handshakes)")
	var dials int
	var waits []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := NewAgentRunner(nil)
	r.dialFn = func(context.Context, string, *agent.Credentials) (*agent.Client, error) {
		if dials++; dials == 3 {
			cancel()
		}
		return nil, busyErr
	}
	r.onBusy = func(_ error, wait time.Duration) { waits = append(waits, wait) }
	_, err := r.client(ctx, Host{Agent: "x"})
	var f *Failure
	if !errors.As(err, &f) || f.Cause != CauseDial || !errors.Is(err, agent.ErrBusy) {
		t.Errorf("got %v, want a dial_error failure wrapping agent.ErrBusy", err)
	}
	want := []time.Duration{busyBackoffMin, 2 * busyBackoffMin, 4 * busyBackoffMin}
	if fmt.Sprint(waits) != fmt.Sprint(want) || dials != len(want) {
		t.Errorf("waits %v after %d dials, want %v after %d", waits, dials, want, len(want))
	}
}
