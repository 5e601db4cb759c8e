// Package agenttest runs cclab agents on loopback for tests.
package agenttest

import (
	"context"
	"testing"

	"cclab/agent"
)

// Start runs n agents with creds on 127.0.0.1 (ephemeral ports) until the
// test ends, and returns their control addresses.
func Start(t testing.TB, n int, creds *agent.Credentials) []string {
	t.Helper()
	var addrs []string
	for i := 0; i < n; i++ {
		s, err := agent.NewServer(agent.Config{Listen: "127.0.0.1:0", Creds: creds})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent Serve: %v", err)
			}
		})
		addrs = append(addrs, s.Addr().String())
	}
	return addrs
}
