package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"cclab/agent"

	"cclab/internal/cli"
)

// TestAgentFlagsDocumented keeps docs/campaigns.md's flag tables complete.
func TestAgentFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/campaigns.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-h"}, {"keygen", "-h"}} {
		var errb bytes.Buffer
		if code := runAgent(context.Background(), args, &errb, nil); code != 0 {
			t.Fatalf("cclab agent %v: exit %d", args, code)
		}
		if m := cli.Undocumented(errb.String(), string(doc)); len(m) > 0 {
			t.Errorf("cclab agent %v: flags missing from docs/campaigns.md: %v", args, m)
		}
	}
}

// TestAgentBadFlags: each bad value exits 2 with one line naming the flag,
// before anything listens.
func TestAgentBadFlags(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "psk")
	if err := os.WriteFile(key, []byte("lab 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("lab 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-max-transfers", "0", "-psk-file", key}, []string{"-max-transfers", "at least 1"}},
		{[]string{"-max-transfers", "5000", "-psk-file", key}, []string{"-max-transfers", "between 1 and 1024"}},
		{[]string{"-max-seconds", "2h", "-psk-file", key}, []string{"-max-seconds", "3600s"}},
		{[]string{"-max-bytes", "0", "-psk-file", key}, []string{"-max-bytes", "positive"}},
		{[]string{"-qlog-max", "1GiB", "-psk-file", key}, []string{"-qlog-max", "between 0 and"}},
		{[]string{"-data-port", "70000", "-psk-file", key, "-listen", "127.0.0.1:0"}, []string{"-data-port", "between 0 and 65535"}},
		{[]string{"-max-conns", "0", "-psk-file", key}, []string{"-max-conns", "at least 1"}},
		{[]string{"-max-conns", "9999", "-psk-file", key}, []string{"-max-conns", "between 1 and 4096"}},
		{[]string{"-max-handshakes", "100", "-max-conns", "10", "-psk-file", key}, []string{"-max-handshakes", "-max-conns"}},
		{[]string{"-listen", "nonsense", "-psk-file", key}, []string{"-listen", "host:port"}},
		{[]string{}, []string{"-psk-file", "-identity"}},
		{[]string{"-psk-file", open}, []string{"-psk-file", "chmod 600"}},
		{[]string{"-identity", key}, []string{"-identity", "-authorized-keys"}},
		{[]string{"-psk-file", key, "-nope"}, []string{"-nope"}},
		{[]string{"keygen"}, []string{"-out"}},
		{[]string{"keygen", "-out", filepath.Join(dir, "k"), "-name", "two words"}, []string{"-name"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			if code := runAgent(context.Background(), tc.args, &errb, nil); code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errb.String())
			}
			msg := errb.String()
			if strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q: want exactly one line", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q: want it to contain %q", msg, w)
				}
			}
		})
	}
}

// TestAgentCommand runs cclab agent with keys from cclab agent keygen and
// a scheduler that authenticates with its own key: an Ed25519 transfer
// through the command, and a scheduler whose key the agent does not list
// refused.
func TestAgentCommand(t *testing.T) {
	dir := t.TempDir()
	key := func(name string) string {
		var errb bytes.Buffer
		f := filepath.Join(dir, name+".key")
		if code := runAgent(context.Background(), []string{"keygen", "-out", f, "-name", name}, &errb, nil); code != 0 {
			t.Fatalf("keygen: exit %d: %s", code, errb.String())
		}
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("keygen: %s: %v, mode %v, want 0600", f, err, st.Mode())
		}
		return f
	}
	agentKey, schedKey, strangerKey := key("host-a"), key("scheduler"), key("stranger")
	cat := func(name string, files ...string) string {
		var b []byte
		for _, f := range files {
			p, err := os.ReadFile(f + ".pub")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, p...)
		}
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}
	agentAuth, schedAuth := cat("agent-authorized", schedKey), cat("sched-authorized", agentKey)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	exit := make(chan int, 1)
	var logb syncBuffer
	go func() {
		exit <- runAgent(ctx, []string{"-listen", "127.0.0.1:0", "-data-port", "0", "-identity", agentKey, "-authorized-keys", agentAuth}, &logb, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-exit:
		t.Fatalf("cclab agent: exit %d: %s", code, logb.String())
	}
	defer func() {
		cancel()
		if code := <-exit; code != 0 {
			t.Errorf("cclab agent: exit %d after cancel: %s", code, logb.String())
		}
	}()
	sched, err := agent.LoadCredentials("", schedKey, schedAuth)
	if err != nil {
		t.Fatal(err)
	}
	c, err := agent.Dial(ctx, addr, sched)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if got, want := c.Name(), "host-a"; got != want {
		t.Errorf("agent name %q, want %q", got, want)
	}
	// The agent sends to itself: one host is enough for the command.
	res, err := agent.RunTransfer(ctx, c, c, agent.TransferSpec{ID: "cmd", ReceiverHost: "127.0.0.1", CC: "reno", Recovery: "newreno", Bytes: 1 << 20})
	if err != nil {
		t.Fatalf("RunTransfer: %v", err)
	}
	if !res.Sender.End.Verified {
		t.Errorf("transfer not verified: %+v", res.Sender.End)
	}
	stranger, err := agent.LoadCredentials("", strangerKey, schedAuth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Dial(ctx, addr, stranger); !errors.Is(err, agent.ErrUnauthorized) {
		t.Errorf("Dial with an unlisted key: got %v, want ErrUnauthorized", err)
	}
	// The log names the prefix once and the key's name beside its fingerprint.
	log := logb.String()
	if strings.Contains(log, "cclab agent: agent:") || !strings.Contains(log, "cclab agent: 127.0.0.1:") ||
		!regexp.MustCompile(`identity SHA256:\S+ \(name host-a\)`).MatchString(log) {
		t.Errorf("agent log: want \"cclab agent:\" once per line and \"identity SHA256:... (name host-a)\":\n%s", log)
	}
}

// syncBuffer is a bytes.Buffer safe for the agent's log goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
