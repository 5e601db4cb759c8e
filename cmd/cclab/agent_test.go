package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		if code := runAgent(args, &errb, nil); code != 0 {
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
			if code := runAgent(tc.args, &errb, nil); code != 2 {
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
