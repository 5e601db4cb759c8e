package main

import (
	"context"
	"strings"
	"testing"

	"cclab/perf"
)

// TestPerfModes: cclab perf -c runs the sender (a verified transfer against
// a receiver), -s the receiver, both or neither is exit 2.
func TestPerfModes(t *testing.T) {
	srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done; srv.Close() }()

	var out, errb strings.Builder
	if code := runPerf([]string{"-c", srv.Addr().String(), "-n", "256KiB"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "verified=true") {
		t.Errorf("cclab perf -c: exit %d, output %q (stderr %q), want 0 and a verified transfer", code, out.String(), errb.String())
	}
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"-s", "-version"}, 0, "receiver: cclab "},
		{[]string{"--server", "--nosuch"}, 2, "receiver"},
		{[]string{"--client", "127.0.0.1", "-version"}, 0, "sender: cclab "},
		{[]string{"-s", "-c", "127.0.0.1"}, 2, "-s and -c"},
		{[]string{"-n", "1M"}, 2, "usage: cclab perf"},
		{[]string{"-v"}, 0, "cclab perf: cclab "},
	} {
		out.Reset()
		errb.Reset()
		if code := runPerf(tc.args, &out, &errb); code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("cclab perf %q: exit %d, output %q %q; want exit %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}
